package sloassert_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// The report is appended to the job summary when GITHUB_STEP_SUMMARY
// names a file, not otherwise, and not with TAILGUARD_SUMMARY=off; any
// other value of TAILGUARD_SUMMARY is an error.
func TestJobSummary(t *testing.T) {
	spec := []sloassert.Objective{sloassert.Q(sloassert.TTFT, 0.5, time.Second), sloassert.MaxErrorRate(0.05)}
	for _, tc := range []struct {
		name, summary, env string
		want               bool
		why                string
	}{
		{"set", "file", "", true, "GitHub Actions names the file: append"},
		{"on", "file", "on", true, "on is the default, said out loud"},
		{"off", "file", "off", false, "TAILGUARD_SUMMARY=off keeps reports out"},
		{"unset", "", "", false, "no GITHUB_STEP_SUMMARY: not in Actions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "summary.md")
			if err := os.WriteFile(path, []byte("# earlier step\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			env := ""
			if tc.summary == "file" {
				env = path
			}
			t.Setenv(sloassert.EnvStepSummary, env)
			t.Setenv(sloassert.EnvSummary, tc.env)
			r := mdRun()
			f := &fakeT{}
			sloassert.Check(f, r, spec...)
			sloassert.Check(f, r, sloassert.Q(sloassert.TTFT, 0.99, time.Millisecond))
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := string(b)
			if !strings.HasPrefix(got, "# earlier step\n") {
				t.Errorf("the summary lost what was there:\n%s", got)
			}
			if appended := strings.Count(got, "## result: "); tc.want != (appended == 2) || (!tc.want && appended != 0) {
				t.Errorf("%s: %d reports appended:\n%s", tc.why, appended, got)
			}
			if tc.want && (!strings.Contains(got, "## result: PASS") || !strings.Contains(got, "## result: FAIL")) {
				t.Errorf("the summary lacks a verdict:\n%s", got)
			}
		})
	}
}

// A *testing.T's summary names the test and where the charts are.
func TestJobSummaryNamesTheTest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.md")
	t.Setenv(sloassert.EnvStepSummary, path)
	t.Setenv(sloassert.EnvSummary, "")
	sloassert.Check(t, mdRun(), sloassert.Q(sloassert.TTFT, 0.5, time.Second))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## TestJobSummaryNamesTheTest (result): PASS", "`cdf-ttft.svg`", "go test -artifacts"} {
		if !strings.Contains(string(b), w) {
			t.Errorf("summary lacks %q:\n%s", w, b)
		}
	}
}

// A sweep's summary names its chart files (the summary cannot embed
// them) on a Charts line, and each level's report its own.
func TestJobSummaryOfASweepNamesTheCharts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.md")
	t.Setenv(sloassert.EnvStepSummary, path)
	t.Setenv(sloassert.EnvSummary, "")
	sr := &latencytest.SweepResult{Planned: []int{1, 8}}
	for _, c := range []int{1, 8} {
		sr.Levels, sr.Results = append(sr.Levels, c), append(sr.Results, synthRun(120, c, 10*time.Millisecond, 0, 0, false))
	}
	sloassert.Check(t, sr, sloassert.Q(sloassert.TTFT, 0.5, time.Second))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Charts: `sweep-ttft.svg`\n", "### Charts\n\n`cdf-ttft-c1.svg`, `cdf-total-c1.svg`\n\n"} {
		if !strings.Contains(string(b), w) {
			t.Errorf("summary lacks %q:\n%s", w, b)
		}
	}
}

// TAILGUARD_SUMMARY must be on or off: a typo is an error, not a silent
// default.
func TestJobSummaryBadSetting(t *testing.T) {
	t.Setenv(sloassert.EnvStepSummary, filepath.Join(t.TempDir(), "summary.md"))
	t.Setenv(sloassert.EnvSummary, "of")
	f := &fakeT{}
	sloassert.Check(f, mdRun(), sloassert.Q(sloassert.TTFT, 0.5, time.Second))
	if !strings.Contains(f.text(), `sloassert: TAILGUARD_SUMMARY="of" is neither on nor off`) {
		t.Errorf("errors: %s", f.text())
	}
}
