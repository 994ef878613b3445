// Package ci_test checks tailguard-slo.yml, the GitHub Actions workflow a
// user copies: it parses, it sets only environment variables the library
// reads, and its shell steps do what their comments say when bash runs
// them as GitHub does (bash --noprofile --norc -eo pipefail).
package ci_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

const workflowFile = "tailguard-slo.yml"

// workflow holds the keys the template uses; decoding is strict, so a
// misspelt key in the template is an error here.
type workflow struct {
	Name        string            `yaml:"name"`
	On          triggers          `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency map[string]string `yaml:"concurrency"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]job    `yaml:"jobs"`
}

type triggers struct {
	Push struct {
		Branches []string `yaml:"branches"`
	} `yaml:"push"`
	PullRequest      yaml.Node `yaml:"pull_request"` // null, but present
	WorkflowDispatch struct {
		Inputs map[string]struct {
			Description string `yaml:"description"`
			Type        string `yaml:"type"`
			Default     any    `yaml:"default"`
		} `yaml:"inputs"`
	} `yaml:"workflow_dispatch"`
}

type job struct {
	Name           string            `yaml:"name"`
	If             string            `yaml:"if"`
	RunsOn         string            `yaml:"runs-on"`
	TimeoutMinutes int               `yaml:"timeout-minutes"`
	Permissions    map[string]string `yaml:"permissions"`
	Steps          []step            `yaml:"steps"`
}

type step struct {
	Name  string            `yaml:"name"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	With  map[string]any    `yaml:"with"`
	Shell string            `yaml:"shell"`
	Env   map[string]string `yaml:"env"`
	Run   string            `yaml:"run"`
}

func load(t *testing.T) workflow {
	t.Helper()
	b, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var w workflow
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("%s: %v", workflowFile, err)
	}
	return w
}

// stepNamed returns the job's step of that name, and its index.
func stepNamed(t *testing.T, j job, name string) (step, int) {
	t.Helper()
	for i, s := range j.Steps {
		if s.Name == name {
			return s, i
		}
	}
	t.Fatalf("no step %q", name)
	return step{}, -1
}

func TestWorkflowShape(t *testing.T) {
	w := load(t)
	if w.On.PullRequest.Kind == 0 || !slices.Equal(w.On.Push.Branches, []string{"main"}) {
		t.Errorf("triggers: want pushes to main and pull requests, have %+v", w.On)
	}
	in, ok := w.On.WorkflowDispatch.Inputs["update_baselines"]
	if !ok || in.Type != "boolean" || in.Default != false {
		t.Errorf("workflow_dispatch input update_baselines: want a boolean, false by default; have %+v", in)
	}
	if w.Permissions["contents"] != "read" || len(w.Permissions) != 1 {
		t.Errorf("default permissions %v: want contents: read only", w.Permissions)
	}
	if !strings.Contains(w.Env["BASELINES"], "testdata/*.jsonl") {
		t.Errorf("BASELINES %q: want the testdata/*.jsonl files sloassert.SaveBaseline writes", w.Env["BASELINES"])
	}

	slo, upd := w.Jobs["slo"], w.Jobs["update-baselines"]
	if len(w.Jobs) != 2 || slo.Steps == nil || upd.Steps == nil {
		t.Fatalf("jobs %v: want slo and update-baselines", w.Jobs)
	}
	// The two jobs never run together: a manual run with the box ticked
	// updates, every other run checks.
	if !strings.Contains(slo.If, "!inputs.update_baselines") || !strings.Contains(upd.If, "&& inputs.update_baselines") {
		t.Errorf("job conditions do not exclude each other: slo %q, update-baselines %q", slo.If, upd.If)
	}
	if upd.Permissions["contents"] != "write" {
		t.Errorf("update-baselines permissions %v: it pushes a commit", upd.Permissions)
	}
	if _, refuse := stepNamed(t, upd, "Refuse the default branch"); refuse != 0 {
		t.Errorf("the default-branch guard is step %d of update-baselines, want the first", refuse)
	}

	for name, j := range w.Jobs {
		if j.TimeoutMinutes <= 30 {
			t.Errorf("%s: timeout-minutes %d does not cover go test -timeout 30m", name, j.TimeoutMinutes)
		}
		var run step
		for _, s := range j.Steps {
			if strings.Contains(s.Run, "\ngo test -") || strings.HasPrefix(s.Run, "go test -") {
				run = s
			}
			if strings.HasPrefix(s.Uses, "actions/setup-go@") && s.With["go-version"] != "1.26" {
				t.Errorf("%s: setup-go go-version %v: -artifacts needs Go 1.26", name, s.With["go-version"])
			}
			if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
				if s.If != "${{ !cancelled() }}" || s.With["path"] != "${{ runner.temp }}/tailguard" {
					t.Errorf("%s: upload step if %q path %v: want every finished run's $RUNNER_TEMP/tailguard", name, s.If, s.With["path"])
				}
			}
		}
		for _, flag := range []string{"-count=1", "-artifacts", `-outputdir "$RUNNER_TEMP/tailguard"`, `mkdir -p "$RUNNER_TEMP/tailguard"`, "| tee"} {
			if !strings.Contains(run.Run, flag) {
				t.Errorf("%s: the go test step lacks %s:\n%s", name, flag, run.Run)
			}
		}
		if run.Shell != "bash" {
			t.Errorf("%s: go test step shell %q: without bash's -o pipefail, tee hides a failure", name, run.Shell)
		}
	}
	rewrite, _ := stepNamed(t, upd, "Rerun the SLO tests, rewriting the baselines")
	if b, err := strconv.ParseBool(rewrite.Env[sloassert.EnvUpdateBaselines]); err != nil || !b {
		t.Errorf("%s=%q: want a true value", sloassert.EnvUpdateBaselines, rewrite.Env[sloassert.EnvUpdateBaselines])
	}
	if check, _ := stepNamed(t, slo, "Run the SLO tests"); check.Env[sloassert.EnvUpdateBaselines] != "" {
		t.Errorf("the checking job sets %s", sloassert.EnvUpdateBaselines)
	}
}

// TestWorkflowEnvNames: every TAILGUARD_ or OPENAI_ variable the template
// sets is one the library reads, under the name it reads.
func TestWorkflowEnvNames(t *testing.T) {
	known := []string{
		sloassert.EnvSummary, sloassert.EnvUpdateBaselines, latencytest.EnvLocation,
		latencytest.EnvBaseURL, latencytest.EnvModel, latencytest.EnvAPIKey,
	}
	w := load(t)
	envs := []map[string]string{w.Env}
	for _, j := range w.Jobs {
		for _, s := range j.Steps {
			envs = append(envs, s.Env)
		}
	}
	seen := map[string]bool{}
	for _, env := range envs {
		for k := range env {
			if strings.HasPrefix(k, "TAILGUARD_") || strings.HasPrefix(k, "OPENAI_") {
				seen[k] = true
				if !slices.Contains(known, k) {
					t.Errorf("the template sets %s, which tailguard does not read", k)
				}
			}
		}
	}
	for _, k := range known {
		if !seen[k] {
			t.Errorf("the template never sets %s", k)
		}
	}
	if v := w.Env[sloassert.EnvSummary]; v != "on" && v != "off" {
		t.Errorf("%s=%q: sloassert takes on or off", sloassert.EnvSummary, v)
	}
}

// runStep runs a step's script as GitHub's shell: bash does, in dir, with
// env added to an environment cleared of tailguard's, GitHub's and
// OpenAI's variables. It returns the combined output and the error.
func runStep(t *testing.T, s step, dir string, env ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := filepath.Join(t.TempDir(), "step.sh")
	if err := os.WriteFile(script, []byte(s.Run), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "TAILGUARD_") || strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "GIT_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCheckStep runs the checking job's go test step on this repository's
// quickstart (a pass), then on the regression example with an invalid
// TAILGUARD_UPDATE_BASELINES (a failure sloassert reports): the artifacts
// and the job summary are written, and the failure survives tee.
func TestCheckStep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs two example packages with go test")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	w := load(t)
	check, _ := stepNamed(t, w.Jobs["slo"], "Run the SLO tests")
	listFailed, _ := stepNamed(t, w.Jobs["slo"], "List the failed tests in the job summary")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("pass", func(t *testing.T) {
		tmp := t.TempDir()
		summary := filepath.Join(tmp, "summary.md")
		out, err := runStep(t, check, root, "RUNNER_TEMP="+tmp, "GITHUB_STEP_SUMMARY="+summary,
			"SLO_PACKAGES=./examples/quickstart", "RUN_PATTERN=^TestChatLatencySLO$", "TAILGUARD_SUMMARY=on")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		log, err := os.ReadFile(filepath.Join(tmp, "tailguard", "go-test.log"))
		if err != nil || !strings.Contains(string(log), "--- PASS: TestChatLatencySLO") || !strings.Contains(string(log), "=== ARTIFACTS TestChatLatencySLO") {
			t.Errorf("go-test.log (%v) lacks the pass and the artifact directory:\n%s", err, log)
		}
		for _, name := range []string{"records.jsonl", "summary.json", "report.md"} {
			if m, _ := filepath.Glob(filepath.Join(tmp, "tailguard", "_artifacts", "*", name)); len(m) == 0 {
				t.Errorf("no %s under %s/tailguard/_artifacts", name, tmp)
			}
		}
		if b, err := os.ReadFile(summary); err != nil || !strings.Contains(string(b), "TestChatLatencySLO") {
			t.Errorf("job summary (%v) has no report of TestChatLatencySLO:\n%s", err, b)
		}
	})

	t.Run("fail", func(t *testing.T) {
		tmp := t.TempDir()
		summary := filepath.Join(tmp, "summary.md")
		env := []string{"RUNNER_TEMP=" + tmp, "GITHUB_STEP_SUMMARY=" + summary,
			"SLO_PACKAGES=./examples/regression", "RUN_PATTERN=^TestTTFTBaseline$", sloassert.EnvUpdateBaselines + "=maybe"}
		out, err := runStep(t, check, root, env...)
		if err == nil {
			t.Fatalf("the step passed although go test failed:\n%s", out)
		}
		if !strings.Contains(out, "--- FAIL: TestTTFTBaseline") || !strings.Contains(out, "is not a boolean") {
			t.Errorf("output lacks the failure:\n%s", out)
		}
		if out, err := runStep(t, listFailed, root, env...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if b, _ := os.ReadFile(summary); !strings.Contains(string(b), "## Failed tests") || !strings.Contains(string(b), "--- FAIL: TestTTFTBaseline") {
			t.Errorf("job summary does not list the failed test:\n%s", b)
		}
	})
}

// git runs git in dir with no user or system configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCommitStep runs the update job's commit step in a clone of a
// scratch repository: it commits the rewritten and the new baselines and
// nothing else, pushes them to the branch, and commits nothing when no
// baseline changed.
func TestCommitStep(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	w := load(t)
	commit, _ := stepNamed(t, w.Jobs["update-baselines"], "Commit the rewritten baselines")

	tmp := t.TempDir()
	remote, work := filepath.Join(tmp, "remote.git"), filepath.Join(tmp, "work")
	git(t, tmp, "init", "-q", "--bare", "-b", "main", remote)
	git(t, tmp, "clone", "-q", remote, work)
	write(t, filepath.Join(work, "slo", "testdata", "our-model.jsonl"), "old\n")
	write(t, filepath.Join(work, "notes.txt"), "old\n")
	git(t, work, "add", ".")
	git(t, work, "commit", "-q", "-m", "start")
	git(t, work, "switch", "-q", "-c", "feature")
	git(t, work, "push", "-q", "origin", "feature")
	start := git(t, work, "rev-parse", "HEAD")

	// What the test run left behind: a rewritten baseline, a new one, and
	// a file that is no baseline.
	write(t, filepath.Join(work, "slo", "testdata", "our-model.jsonl"), "new\n")
	write(t, filepath.Join(work, "testdata", "first.jsonl"), "new\n")
	write(t, filepath.Join(work, "notes.txt"), "scratch\n")

	summary := filepath.Join(tmp, "summary.md")
	env := []string{"BRANCH=feature", "BASELINES=" + w.Env["BASELINES"], "GITHUB_RUN_ID=4242", "GITHUB_STEP_SUMMARY=" + summary,
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
	if out, err := runStep(t, commit, work, env...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	head := git(t, remote, "rev-parse", "refs/heads/feature")
	if head == start || git(t, remote, "rev-parse", head+"^") != start {
		t.Fatalf("feature at %s: want one commit on top of %s", head, start)
	}
	files := strings.Fields(git(t, remote, "diff-tree", "--no-commit-id", "--name-only", "-r", head))
	if want := []string{"slo/testdata/our-model.jsonl", "testdata/first.jsonl"}; !slices.Equal(files, want) {
		t.Errorf("committed %v, want %v", files, want)
	}
	if msg := git(t, remote, "log", "-1", "--format=%an <%ae>: %s", head); !strings.Contains(msg, "github-actions[bot]") || !strings.Contains(msg, "run 4242") {
		t.Errorf("commit %q", msg)
	}
	if b, _ := os.ReadFile(summary); !strings.Contains(string(b), "## Baselines rewritten") || !strings.Contains(string(b), "testdata/first.jsonl") {
		t.Errorf("job summary:\n%s", b)
	}

	// A second run finds nothing new: no commit, and it says so.
	if out, err := runStep(t, commit, work, env...); err != nil || !strings.Contains(out, "did not change") {
		t.Fatalf("%v\n%s", err, out)
	}
	if again := git(t, remote, "rev-parse", "refs/heads/feature"); again != head {
		t.Errorf("a run with no new baseline pushed %s", again)
	}
}
