package agent_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// Each invalid graph is refused with an error that names what is wrong.
func TestValidate(t *testing.T) {
	sub := agent.Graph{Steps: []agent.Step{{Name: "a", After: []string{"nope"}}}}
	for _, tc := range []struct {
		name string
		g    agent.Graph
		want string
	}{
		{"empty graph", agent.Graph{}, "the graph has no step"},
		{"unknown after", agent.Graph{Steps: []agent.Step{{Name: "a"}, {Name: "b", After: []string{"c"}}}}, `step "b": after "c": no such step in the graph`},
		{"self", agent.Graph{Steps: []agent.Step{{Name: "a", After: []string{"a"}}}}, `step "a": after "a": a step cannot wait for itself`},
		{"cycle", agent.Graph{Steps: []agent.Step{{Name: "a", After: []string{"c"}}, {Name: "b", After: []string{"a"}}, {Name: "c", After: []string{"b"}}}},
			"the graph has a cycle: a -> b -> c -> a"},
		{"k > N", agent.Graph{Steps: []agent.Step{{Name: "a", FanOut: agent.FanOut{N: 3, First: 4}}}}, `step "a": done after the first 4 copies, but it runs 3`},
		{"k > 1 copy", agent.Graph{Steps: []agent.Step{{Name: "a", FanOut: agent.FanOut{First: 2}}}}, `step "a": done after the first 2 copies, but it runs 1`},
		{"negative N", agent.Graph{Steps: []agent.Step{{Name: "a", FanOut: agent.FanOut{N: -1}}}}, `step "a": fan_out -1 < 0`},
		{"N and drawn", agent.Graph{Steps: []agent.Step{{Name: "a", FanOut: agent.FanOut{N: 2, Drawn: fakeprovider.Fixed(3)}}}}, "both a fixed count (2) and a drawn one"},
		{"twice", agent.Graph{Steps: []agent.Step{{Name: "a"}, {Name: "a"}}}, `step "a" is named twice`},
		{"no name", agent.Graph{Steps: []agent.Step{{}}}, "a step has no name"},
		{"bad name", agent.Graph{Steps: []agent.Step{{Name: "web search"}}}, `step "web search": a name may hold letters, digits and _ only`},
		{"tool and agent", agent.Graph{Steps: []agent.Step{{Name: "a", Tool: &agent.Tool{Latency: fakeprovider.Fixed(time.Second)}, Agent: &sub}}}, `step "a" is both a tool step and a sub-agent`},
		{"empty tool", agent.Graph{Steps: []agent.Step{{Name: "a", Tool: &agent.Tool{}}}}, `step "a": a tool step needs a latency or a Run function`},
		{"bad tool latency", agent.Graph{Steps: []agent.Step{{Name: "a", Tool: &agent.Tool{Latency: fakeprovider.Uniform(2*time.Second, time.Second)}}}}, `step "a": tool:`},
		{"sub-agent", agent.Graph{Steps: []agent.Step{{Name: "r", Agent: &sub}}}, `step "r/a": after "nope": no such step in sub-agent "r"`},
		{"empty sub-agent", agent.Graph{Steps: []agent.Step{{Name: "r", Agent: &agent.Graph{}}}}, `sub-agent "r" has no step`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.g.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "agent: graph: ") {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
			if _, err := (agent.Runner{Graph: tc.g}).Run(context.Background(), latencytest.Func(func(context.Context, latencytest.Request) error { return nil })); err == nil {
				t.Error("Run accepted the graph")
			}
		})
	}
	ok := agent.Graph{Steps: []agent.Step{{Name: "a"}, {Name: "b", After: []string{"a"}, FanOut: agent.FanOut{N: 3, First: 3}}}}
	if err := ok.Validate(); err != nil {
		t.Errorf("a valid graph: %v", err)
	}
	for _, r := range []agent.Runner{{Graph: ok, Tasks: -1}, {Graph: ok, Rate: -1}, {Graph: ok, Label: "a b"}, {Graph: ok, HardCap: -time.Second}} {
		if _, err := r.Run(context.Background(), nil); err == nil || !strings.HasPrefix(err.Error(), "agent: runner: ") {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

// A failed step fails its task with the step's class; the copies the
// failure canceled are abandoned, not failures; a tool's error is
// tool_error with its text.
func TestStepFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, time.Second, nil)
		g := agent.Graph{Steps: []agent.Step{
			{Name: "plan"},
			{Name: "lookup", After: []string{"plan"}, Tool: &agent.Tool{Run: func(ctx context.Context, c agent.Copy) error {
				time.Sleep(200 * time.Millisecond)
				if c.Task == 1 {
					return errors.New("index offline")
				}
				return nil
			}}},
			{Name: "search", After: []string{"plan"}, FanOut: agent.FanOut{N: 2}},
			{Name: "answer", After: []string{"lookup", "search"}},
		}}
		res, err := agent.Runner{Graph: g, Tasks: 2}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := res.Tasks[0], res.Tasks[1]; !a.OK() || a.Total != 3*time.Second || b.Err != latencytest.ClassToolError || b.Total != 1200*time.Millisecond {
			t.Fatalf("task 0: %q %v (want ok, 3s); task 1: %q %v (want tool_error at 1.2s)", a.Err, a.Total, b.Err, b.Total)
		}
		tot := res.Totals()
		if len(tot) != 2 || tot[1] != latencytest.Failed {
			t.Errorf("totals %v", tot)
		}
		for _, s := range res.Tasks[1].Steps {
			switch s.Step {
			case "lookup":
				if s.Err != latencytest.ClassToolError || s.Detail != "index offline" {
					t.Errorf("%s: %q %q", s.ID, s.Err, s.Detail)
				}
			case "search":
				if !s.Abandoned || s.Err != latencytest.ClassCanceled {
					t.Errorf("%s: abandoned %v, err %q", s.ID, s.Abandoned, s.Err)
				}
			}
		}
	})
}

// Open loop: tasks start on Poisson arrivals from the seed, whatever
// their length; the same seed gives the same schedule, and a drawn
// fan-out draws the same copies.
func TestOpenLoopAndDrawnFanOut(t *testing.T) {
	run := func(seed uint64) *agent.Result {
		var res *agent.Result
		synctest.Test(t, func(t *testing.T) {
			_, p := fake(t, time.Second, nil)
			g := agent.Graph{Steps: []agent.Step{{Name: "plan"}, {Name: "search", After: []string{"plan"}, FanOut: agent.FanOut{Drawn: fakeprovider.Uniform(1, 6)}}}}
			var err error
			if res, err = (agent.Runner{Graph: g, Tasks: 20, Rate: 2, Seed: seed}).Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		})
		return res
	}
	a, b, c := run(3), run(3), run(4)
	copies := func(r *agent.Result) (out []int) {
		for _, task := range r.Tasks {
			out = append(out, len(task.Steps)-1)
		}
		return out
	}
	if len(a.Tasks) != 20 {
		t.Fatalf("%d tasks", len(a.Tasks))
	}
	distinct := map[int]bool{}
	for i := range a.Tasks {
		ta, tb := a.Tasks[i], b.Tasks[i]
		if ta.Scheduled != tb.Scheduled || ta.Start.Sub(a.Start) != ta.Scheduled || ta.Total != 2*time.Second || !ta.OK() {
			t.Errorf("task %d: scheduled %v / %v, started at %v, total %v", i, ta.Scheduled, tb.Scheduled, ta.Start.Sub(a.Start), ta.Total)
		}
		if i > 0 && ta.Scheduled <= a.Tasks[i-1].Scheduled {
			t.Errorf("task %d scheduled at %v, not after task %d", i, ta.Scheduled, i-1)
		}
		distinct[len(ta.Steps)-1] = true
	}
	if ca, cb, cc := copies(a), copies(b), copies(c); !slices.Equal(ca, cb) || slices.Equal(ca, cc) || len(distinct) < 3 {
		t.Errorf("copies: seed 3 %v, again %v, seed 4 %v", ca, cb, cc)
	}
	// 20 Poisson arrivals at 2/s: the last near 10 s, not all at once.
	if last := a.Tasks[19].Scheduled; last < 3*time.Second || last > 30*time.Second {
		t.Errorf("the 20th arrival at %v", last)
	}
}

// Open loop with a cap: tasks due every 100 ms, one in flight, each 2 s:
// task i starts at 2i s, late by 2i s - its schedule, and says so.
func TestOpenLoopCapDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, time.Second, nil)
		g := agent.Graph{Steps: []agent.Step{{Name: "plan"}, {Name: "answer", After: []string{"plan"}}}}
		res, err := agent.Runner{Graph: g, Tasks: 4, Rate: 10, Concurrency: 1}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for i, task := range res.Tasks {
			start := task.Start.Sub(res.Start)
			if start != time.Duration(i)*2*time.Second || task.StartDelay != start-task.Scheduled || (i > 0 && task.StartDelay <= 0) {
				t.Errorf("task %d: scheduled %v, started %v, delay %v", i, task.Scheduled, start, task.StartDelay)
			}
		}
	})
}

// The run's end cuts a task short: partial, not failed, left out of the
// totals; the tasks not started are counted.
func TestRunEndCutsTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, time.Second, nil)
		g := agent.Graph{Steps: []agent.Step{{Name: "plan"}, {Name: "answer", After: []string{"plan"}}}}
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		defer cancel()
		res, err := agent.Runner{Graph: g, Tasks: 3}.Run(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tasks) != 2 || !res.Partial || !res.Tasks[0].OK() || !res.Tasks[1].CutShort() || res.Tasks[1].Err != latencytest.ClassCanceled {
			t.Fatalf("%d tasks, partial %v (%s); task 1: %q cut %q", len(res.Tasks), res.Partial, res.PartialReason, res.Tasks[1].Err, res.Tasks[1].Cut)
		}
		if tot := res.Totals(); len(tot) != 1 || tot[0] != 2*time.Second {
			t.Errorf("totals %v, want the one finished task's 2s", tot)
		}
		if !strings.Contains(res.PartialReason, "started 2 of 3 tasks") || !strings.Contains(res.PartialReason, "task task01") {
			t.Errorf("partial reason %q", res.PartialReason)
		}
	})
}
