package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// errorfT captures a failure report.
type errorfT struct{ msgs []string }

func (e *errorfT) Errorf(format string, args ...any) {
	e.msgs = append(e.msgs, fmt.Sprintf(format, args...))
}

// A task target judged on measured totals fails with a report that
// names the slowest tasks' critical paths, queueing included, and sets
// the prediction from independent copies beside the measured tail with
// the correlation warning: three tasks of 30 are slow in every call.
//
// Two slots: a plan (1 s), three searches of which the third waits for
// a slot (1 s queued), an answer: 4 s. The slow tasks' calls take 4 s:
// 4 + 8 (4 s queued) + 4 = 16 s.
func TestTargetReportNamesCriticalPaths(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fakeprovider.Profile{TTFT: fakeprovider.Fixed(time.Second), ITL: fakeprovider.Fixed(time.Duration(0)),
			OutputTokens: fakeprovider.Fixed(1), SlotsPerReplica: 2}
		prof.PrefixCache.Disabled = true
		for _, task := range []string{"task00", "task01", "task02"} {
			for _, step := range []string{"plan", "search-b00", "search-b01", "search-b02", "answer"} {
				prof.Script = append(prof.Script, fakeprovider.ScriptEntry{ID: task + "-" + step, TTFT: 4 * time.Second})
			}
		}
		f := fakeprovider.New(prof)
		t.Cleanup(f.Close)
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
		g := agent.Graph{Steps: []agent.Step{
			{Name: "plan"},
			{Name: "search", After: []string{"plan"}, FanOut: agent.FanOut{N: 3}},
			{Name: "answer", After: []string{"search"}},
		}}
		res, err := agent.Runner{Graph: g, Tasks: 30, Queueing: f.QueueTime}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := res.Tasks[0].Total, res.Tasks[3].Total; a != 16*time.Second || b != 4*time.Second {
			t.Fatalf("totals %v and %v, want 16s and 4s", a, b)
		}
		ft := &errorfT{}
		target := agent.Target{Budget: 5 * time.Second, TailTasks: 0.05}
		if agent.Check(ft, res, target.Objective()) || len(ft.msgs) != 1 {
			t.Fatalf("a 16 s p95 passed a 5 s target: %v", ft.msgs)
		}
		msg := ft.msgs[0]
		t.Log(msg)
		for _, want := range []string{
			"tasks: FAIL",
			"task total p95 <= 5000.0ms (95% of tasks)",
			"critical path of task task00 (16.000s): plan b0 4000.0ms -> search b2 8000.0ms (queued 4000.0ms) -> answer b0 4000.0ms",
			"critical path of task task01 (16.000s)",
			"critical path of task task02 (16.000s)",
			"slowest: task00 16.000s [injected: search-b02 queued=4s];",
			"(a prediction, not a measurement; 10000 draws, seed 1)",
			"the calls of a task are correlated",
			"task total",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("report lacks %q", want)
			}
		}
		if !agent.Check(ft, res, agent.Target{Budget: 17 * time.Second, TailTasks: 0.05}.Objective()) {
			t.Errorf("a 17 s target failed: %v", ft.msgs[len(ft.msgs)-1])
		}
		pc, ok := agent.Predict(res, 1)
		if !ok || pc.Measured.N != 30 || pc.Predicted.N != 10_000 || pc.CorrelationWarning == "" {
			t.Errorf("prediction %+v", pc)
		}
		t.Logf("measured p95 %v, predicted p95 %v", pc.Measured.P95, pc.Predicted.P95)
	})
}

// An invalid target never passes and says why; nothing to judge fails.
func TestTargetInvalid(t *testing.T) {
	ft := &errorfT{}
	res := &agent.Result{Tasks: []agent.TaskRun{{ID: "task00", Total: time.Second}}}
	if agent.Check(ft, res, agent.Target{Budget: time.Second, TailTasks: 5}.Objective()) ||
		!strings.Contains(ft.msgs[0], "tail tasks 5 a fraction in (0,1)") {
		t.Errorf("an invalid target: %v", ft.msgs)
	}
	if rep := agent.Evaluate(&agent.Result{}, agent.Target{Budget: time.Second, TailTasks: 0.05}.Objective()); rep.OK() || rep.Problem != "no task ran" {
		t.Errorf("no task: ok %v, problem %q", rep.OK(), rep.Problem)
	}
	if rep := agent.Evaluate(nil, agent.Target{Budget: time.Second, TailTasks: 0.05}.Objective()); rep.OK() {
		t.Error("a nil result passed")
	}
	if _, err := (agent.Target{Budget: time.Second, TailTasks: 0.05}).Budgets(agent.Graph{Steps: []agent.Step{
		{Name: "a", Tool: &agent.Tool{Latency: fakeprovider.Fixed(2 * time.Second)}}, {Name: "b", After: []string{"a"}}}}); err == nil ||
		!strings.Contains(err.Error(), "the tools on the path a -> b take 2000.0ms") {
		t.Errorf("tools over budget: %v", err)
	}
	if _, err := (agent.Target{Budget: time.Second, TailTasks: 0.05}).Budgets(agent.Graph{Steps: []agent.Step{
		{Name: "a", Tool: &agent.Tool{Run: func(context.Context, agent.Copy) error { return nil }}}}}); err == nil ||
		!strings.Contains(err.Error(), `step "a": a tool without a latency distribution`) {
		t.Errorf("a Run-only tool: %v", err)
	}
}
