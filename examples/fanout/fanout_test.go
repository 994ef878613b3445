// Package fanout judges an agent whose task is a graph, not a chain: a
// planner, three searches at once, a sub-agent that reads and takes
// notes (two copies, done at the first), then an answer. It runs
// against a fake preset in virtual time, works per-step budgets back
// from the task target along the critical path, and judges the task on
// measured totals: a failing report names the slowest tasks' critical
// paths.
package fanout_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// research is the sub-agent: read, then note.
var research = agent.Graph{Steps: []agent.Step{
	{Name: "read"},
	{Name: "note", After: []string{"read"}},
}}

// task is the agent's task.
var task = agent.Graph{Steps: []agent.Step{
	{Name: "plan"},
	{Name: "search", After: []string{"plan"}, FanOut: agent.FanOut{N: 3}},
	{Name: "fetch", After: []string{"plan"}, Tool: &agent.Tool{Latency: fakeprovider.LogNormal(200*time.Millisecond, 2*time.Second)}},
	{Name: "research", After: []string{"plan"}, Agent: &research, FanOut: agent.FanOut{N: 2, First: 1}},
	{Name: "answer", After: []string{"search", "fetch", "research"}},
}}

// target: the task done within 8 s for 95% of tasks.
var target = agent.Target{Budget: 8 * time.Second, TailTasks: 0.05}

func TestFanOutAgent(t *testing.T) {
	plan, err := target.Budgets(task)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("per-step budgets (a planning figure, not a gate):\n%s", plan)
	synctest.Test(t, func(t *testing.T) {
		prof, err := fakeprovider.Preset("mistral-3-14b")
		if err != nil {
			t.Fatal(err)
		}
		f := fakeprovider.New(prof)
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(prof.Model))
		res, err := agent.Runner{Graph: task, Tasks: 40, Concurrency: 4, Seed: 7, Queueing: f.QueueTime}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		agent.Check(t, res, target.Objective())
		t.Logf("%s", res.Tasks[0].PathLine())
	})
}
