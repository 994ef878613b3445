package slospec_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/slospec"
)

// agentSpec is the agent section of Agent's documentation, whole.
const agentSpec = `
name: planner
target: {preset: mistral-3-14b}
agent:
  tasks: 30
  concurrency: 2
  seed: 7
  prompt: "Plan a migration."
  max_tokens: 64
  steps:
    - {name: plan}
    - {name: search, after: [plan], fan_out: 3}
    - {name: lookup, after: plan, tool: {latency: {dist: lognormal, median: 200ms, p99: 2s}}}
    - name: research
      after: [plan]
      fan_out: {n: 2, first: 1}
      agent: {steps: [{name: read}, {name: note, after: [read]}]}
    - {name: answer, after: [search, lookup, research]}
  task: {budget: 60s, tail_tasks: 5%}
`

// The agent section parses into a Runner's graph (fan-outs, a tool's
// distribution, a sub-agent) and the task objective, with the per-step
// budgets it implies.
func TestAgentSpecParses(t *testing.T) {
	s, err := slospec.ParseSpec([]byte(agentSpec))
	if err != nil {
		t.Fatal(err)
	}
	a := s.Agent
	if a == nil || a.Runner.Tasks != 30 || a.Runner.Concurrency != 2 || a.Runner.Seed != 7 || a.Runner.MaxTokens != 64 {
		t.Fatalf("agent %+v", a)
	}
	g := a.Runner.Graph
	if len(g.Steps) != 5 || g.Steps[1].FanOut.N != 3 || g.Steps[2].After[0] != "plan" || g.Steps[2].Tool == nil ||
		g.Steps[2].Tool.Latency.Kind != "lognormal" || g.Steps[3].FanOut.N != 2 || g.Steps[3].FanOut.First != 1 ||
		g.Steps[3].Agent == nil || len(g.Steps[3].Agent.Steps) != 2 || len(g.Steps[4].After) != 3 {
		t.Errorf("graph %+v", g)
	}
	if len(a.Objectives) != 1 || a.Objectives[0].Key != "agent_task" || a.Objectives[0].Task.Budget != 60*time.Second ||
		a.Objectives[0].Task.TailTasks != 0.05 || !a.Objectives[0].IsChain() {
		t.Errorf("objectives %+v", a.Objectives)
	}
	if want := "task total p95 <= 60.000s (95% of tasks)"; a.Objectives[0].ChainObjective().Name != want {
		t.Errorf("objective %q, want %q", a.Objectives[0].ChainObjective().Name, want)
	}
	if len(a.Plan.Critical) == 0 || a.Plan.Critical[0] != "plan" {
		t.Errorf("plan %v", a.Plan)
	}
}

// Each bad agent section is an error naming its line and what is wrong.
func TestAgentSpecErrors(t *testing.T) {
	head := "target: {preset: mistral-3-14b}\nagent:\n"
	for _, tc := range []struct{ name, body, want string }{
		{"unknown after", "  steps: [{name: a}, {name: b, after: c}]\n  task: {budget: 5s, tail_tasks: 5%}\n",
			`line 3: agent.steps: step "b": after "c": no such step in the graph`},
		{"cycle", "  steps: [{name: a, after: b}, {name: b, after: a}]\n  task: {budget: 5s, tail_tasks: 5%}\n", "has a cycle"},
		{"k > n", "  steps: [{name: a, fan_out: {n: 2, first: 3}}]\n  task: {budget: 5s, tail_tasks: 5%}\n",
			`step "a": done after the first 3 copies, but it runs 2`},
		{"no steps", "  tasks: 30\n  task: {budget: 5s, tail_tasks: 5%}\n", "line 2: agent: missing steps"},
		{"empty steps", "  steps: []\n  task: {budget: 5s, tail_tasks: 5%}\n", "line 3: agent.steps: want a list of 1 to 1000 steps"},
		{"no objective", "  steps: [{name: a}]\n", "no objective judges the tasks"},
		{"small sample", "  tasks: 10\n  steps: [{name: a}]\n  task: {budget: 5s, tail_tasks: 1%}\n", "p99 of task totals needs tasks >= 100 (have 10"},
		{"tools over budget", "  steps: [{name: t, tool: {latency: 6s}}, {name: a, after: t}]\n  task: {budget: 5s, tail_tasks: 5%}\n",
			"the tools on the path t -> a take"},
		{"unknown key", "  steps: [{name: a, fanout: 3}]\n  task: {budget: 5s, tail_tasks: 5%}\n", "fanout"},
		{"records target", "  target: {records: \"x/*.jsonl\"}\n  steps: [{name: a}]\n  task: {budget: 5s, tail_tasks: 5%}\n", "tasks need a live target (preset, profile or endpoint) under agent.target: records hold each call, not the measured task totals (judge the tasks.json a run wrote with tailguard judge SPEC tasks.json)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := slospec.ParseSpec([]byte(head + tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// A spec with an agent section runs its tasks against the fake in
// virtual time and judges them in an agent/agent_task subtest.
func TestAgentSpecRuns(t *testing.T) {
	s, err := slospec.ParseSpec([]byte(strings.Replace(agentSpec, "tasks: 30", "tasks: 20", 1)))
	if err != nil {
		t.Fatal(err)
	}
	s.Run(t)
}
