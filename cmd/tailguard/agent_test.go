package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// agentSteps is a plan, then three searches at once.
const agentSteps = "  steps:\n    - {name: plan}\n    - {name: search, after: [plan], fan_out: 3}\n"

// writeTasksFile runs n tasks of a plan and three searches on a fake
// whose every call takes 1 s (so every task takes exactly 2 s) and
// writes their tasks.json as a spec's run does.
func writeTasksFile(t *testing.T, path string, n int) {
	t.Helper()
	var buf bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		prof := fakeprovider.Profile{TTFT: fakeprovider.Fixed(time.Second), ITL: fakeprovider.Fixed(time.Duration(0)),
			OutputTokens: fakeprovider.Fixed(1), SlotsPerReplica: 64}
		prof.PrefixCache.Disabled = true
		f := fakeprovider.New(prof)
		defer f.Close()
		g := agent.Graph{Steps: []agent.Step{{Name: "plan"}, {Name: "search", After: []string{"plan"}, FanOut: agent.FanOut{N: 3}}}}
		res, err := agent.Runner{Graph: g, Tasks: n, Concurrency: 4}.Run(context.Background(), latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client())))
		if err != nil {
			t.Fatal(err)
		}
		if err := agent.WriteTasks(&buf, res); err != nil {
			t.Fatal(err)
		}
	})
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestJudgeAgentTasksExits: tailguard judge on an agent spec and the
// tasks.json its run wrote follows the command's one exit rule: 0 pass,
// 1 an objective failed on the task totals (or on the tasks' calls), 2
// cannot judge (not a tasks file, a total shorter than its critical
// path, too few tasks for the objective's quantile).
func TestJudgeAgentTasksExits(t *testing.T) {
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.json")
	writeTasksFile(t, tasks, 60)
	few := filepath.Join(dir, "few.json")
	writeTasksFile(t, few, 10)
	b, err := os.ReadFile(tasks)
	if err != nil {
		t.Fatal(err)
	}
	// the first task's total, 2 s, cut to 1.5 s: shorter than its critical path
	short := writeFile(t, filepath.Join(dir, "short.json"), strings.Replace(string(b), `"total_ns": 2000000000`, `"total_ns": 1500000000`, 1))
	notJSON := writeFile(t, filepath.Join(dir, "notjson.json"), "task00 2s\n")
	spec := func(name, task, objectives string) string {
		return writeFile(t, filepath.Join(dir, name), fmt.Sprintf("agent:\n%s  task: %s\n%s", agentSteps, task, objectives))
	}
	pass := spec("pass.yaml", "{budget: 3s, tail_tasks: 5%}", "")
	fail := spec("fail.yaml", "{budget: 1500ms, tail_tasks: 5%}", "")
	callsFail := spec("calls.yaml", "{budget: 3s, tail_tasks: 5%}", "objectives:\n  ttft: {p50: 500ms}\n")
	callsPass := spec("callspass.yaml", "{budget: 3s, tail_tasks: 5%}", "objectives:\n  ttft: {p50: 2s}\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		// 60 tasks of exactly 2 s: p95 2 s, within 3 s
		{"pass", []string{"judge", pass, tasks}, 0, "task total p95 <= 3000.0ms (95% of tasks)"},
		{"pass, with the calls", []string{"judge", callsPass, tasks}, 0, "calls: PASS"},
		// 2 s over 1.5 s on every task: failed on the data
		{"fail", []string{"judge", fail, tasks}, 1, "agent: FAIL"},
		// every call takes 1 s: a TTFT p50 of 500 ms fails on the calls
		{"fail on the calls", []string{"judge", callsFail, tasks}, 1, "calls: FAIL"},
		{"bad file: not JSON", []string{"judge", pass, notJSON}, 2, "agent: tasks " + notJSON + ": not a tasks file"},
		{"bad file: a total shorter than its critical path", []string{"judge", pass, short}, 2,
			"agent: tasks " + short + ": task task00: total 1.5s is shorter than its critical path (task00-plan -> task00-search-b02), which ends at 2s"},
		{"bad file: none", []string{"judge", pass, filepath.Join(dir, "missing.json")}, 2, "missing.json"},
		// p95 needs 20 tasks: 10 within budget cannot pass
		{"too few tasks", []string{"judge", pass, few}, 2, "CANNOT JUDGE agent_task: p95 of task totals needs n >= 20 (the tasks file holds 10 tasks)"},
		// 10 tasks of 2 s, all over 1.5 s: a failure proven on any n
		{"too few tasks, failure proven", []string{"judge", fail, few}, 1, "agent: FAIL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCmd(tc.args...)
			if code != tc.code || !strings.Contains(out+errs, tc.want) {
				t.Errorf("exit %d (want %d); output lacks %q:\n%s%s", code, tc.code, tc.want, out, errs)
			}
		})
	}
	// the report files: Markdown, the calls' charts, one HTML page
	md, svg, page := filepath.Join(dir, "agent.md"), filepath.Join(dir, "svg"), filepath.Join(dir, "agent.html")
	if code, out, errs := runCmd("judge", "-markdown", md, "-svg", svg, "-html", page, callsPass, tasks); code != 0 {
		t.Fatalf("judge with report files: exit %d\n%s%s", code, out, errs)
	}
	for _, f := range []string{md, page} {
		if b, err := os.ReadFile(f); err != nil || !strings.Contains(string(b), "task total p95") {
			t.Errorf("%s lacks the task objective (%v)", f, err)
		}
	}
	if charts, _ := filepath.Glob(filepath.Join(svg, "*.svg")); len(charts) == 0 {
		t.Error("no chart written")
	}
}
