// The agent section: tasks that are graphs of steps (package agent), and
// the task objective that judges their measured totals.

package slospec

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
)

// Agent is the agent part of a spec: tasks of a graph of steps, run
// closed-loop at a concurrency or open-loop at a rate, judged on their
// measured totals. In YAML:
//
//	agent:
//	  tasks: 30                   # default 30
//	  concurrency: 1              # tasks in flight; default 1 (with rate: a cap)
//	  rate: 2                     # tasks/s open-loop (Poisson, seeded); default closed-loop
//	  seed: 7                     # fan-out draws, tool waits, arrivals; default 0
//	  prompt: "Plan a migration." # opens each task
//	  max_tokens: 64              # per model call; default 64
//	  target: {preset: mistral-3-14b}   # default: the spec's target
//	  steps:
//	    - {name: plan}                               # a model call
//	    - {name: search, after: [plan], fan_out: 3}  # 3 calls at once, all needed
//	    - {name: lookup, after: plan, tool: {latency: {dist: lognormal, median: 200ms, p99: 2s}}}
//	    - name: research                             # a sub-agent, run twice at once,
//	      after: [plan]                              # done at the first to finish
//	      fan_out: {n: 2, first: 1}                  # (fan_out: {draw: <dist>} draws n)
//	      agent: {steps: [{name: read}, {name: note, after: [read]}]}
//	    - {name: answer, after: [search, lookup, research]}
//	  task: {budget: 20s, tail_tasks: 5%}   # the task total's p95 within 20 s
type Agent struct {
	// Runner runs the tasks (its Graph the steps).
	Runner agent.Runner
	// Target, when set, replaces the spec's target for the tasks.
	Target *Target
	// Objectives judge the tasks.
	Objectives []Objective
	// Plan is the per-step budgets the task objective works back
	// (agent.Target.Budgets), logged beside the verdict as a planning
	// figure; zero without a task objective.
	Plan agent.Plan
}

// kindAgentTask judges an agent's task totals: the (1-Task.TailTasks)-
// quantile within Task.Budget, written task: under agent.
const kindAgentTask ObjectiveKind = "agent_task"

// specMaxSteps bounds the steps of one graph, and specMaxFanOut a fixed
// fan-out.
const (
	specMaxSteps  = 1000
	specMaxFanOut = 10_000
)

// parseAgent parses the agent section.
func parseAgent(p *specParser, e specEntry) *Agent {
	a := &Agent{}
	keys := []string{"tasks", "concurrency", "rate", "seed", "prompt", "max_tokens", "no_nonce", "first_token_timeout", "total_timeout", "hard_cap", "target", "steps", "task"}
	entries, ok := p.mapping(e.v, e.path, false, keys, nil)
	if !ok {
		return a
	}
	r := &a.Runner
	var steps, task *specEntry
	for _, f := range entries {
		switch f.key {
		case "tasks":
			r.Tasks, _ = p.intIn(f, 1, specMaxChains)
		case "concurrency":
			r.Concurrency, _ = p.intIn(f, 1, specMaxLevel)
		case "rate":
			if v, ok := p.number(f, "a rate in tasks/s such as 2"); ok {
				if !(v > 0) || math.IsInf(v, 0) {
					p.errorf(f.v.Line, f.path, "rate %v tasks/s must be above 0", v)
				}
				r.Rate = v
			}
		case "seed":
			if v, ok := p.integer(f, 0, math.MaxInt64); ok {
				r.Seed = uint64(v)
			}
		case "prompt":
			r.Prompt, _ = p.str(f)
		case "max_tokens":
			r.MaxTokens, _ = p.intIn(f, 1, specMaxTokens)
		case "no_nonce":
			r.NoNonce, _ = p.boolean(f)
		case "first_token_timeout":
			r.FirstTokenTimeout, _ = p.duration(f, true)
		case "total_timeout":
			r.TotalTimeout, _ = p.duration(f, true)
		case "hard_cap":
			r.HardCap, _ = p.duration(f, true)
		case "target":
			if t, ok := p.target(f); ok {
				a.Target = &t
			}
		case "steps":
			steps = &f
			r.Graph = parseGraph(p, f, 0)
		case "task":
			task = &f
		}
	}
	if steps == nil {
		p.errorf(e.k.Line, e.path, "missing steps (want a list of {name, after, fan_out, tool, agent})")
		return a
	}
	if err := r.Graph.Validate(); err != nil && len(p.errs) == 0 {
		p.errorf(steps.k.Line, steps.path, "%s", strings.TrimPrefix(err.Error(), "agent: graph: "))
		return a
	}
	if task == nil {
		if len(p.errs) == 0 {
			p.errorf(e.k.Line, e.path, "no objective judges the tasks (want task: {budget: 20s, tail_tasks: 5%%})")
		}
		return a
	}
	kindAt(atAgent, "task").parse(p, *task, where{agent: a}, &a.Objectives)
	return a
}

// parseAgentTask parses task: {budget, tail_tasks} under agent: the
// objective, its planned sample, and the per-step budgets it implies.
func parseAgentTask(p *specParser, f specEntry, a *Agent, out *[]Objective) {
	entries, ok := p.mapping(f.v, f.path, false, []string{"budget", "tail_tasks", "allow_small_sample"}, nil)
	if !ok {
		return
	}
	var t agent.Target
	have := map[string]bool{}
	small := false
	for _, g := range entries {
		have[g.key] = true
		switch g.key {
		case "budget":
			t.Budget, ok = p.duration(g, true)
		case "tail_tasks":
			t.TailTasks, ok = p.percentage(g, 0, 100, true)
		case "allow_small_sample":
			small, ok = p.boolean(g)
		}
		if !ok {
			return
		}
	}
	for _, k := range []string{"budget", "tail_tasks"} {
		if !have[k] {
			p.errorf(f.k.Line, f.path, "missing %s (want {budget: 20s, tail_tasks: 5%%})", k)
			return
		}
	}
	plan, err := t.Budgets(a.Runner.Graph)
	if err != nil {
		p.errorf(f.k.Line, f.path, "%s", strings.TrimPrefix(strings.TrimPrefix(err.Error(), "agent: budgets: "), "agent: "))
		return
	}
	tasks := max(a.Runner.Tasks, 1)
	if a.Runner.Tasks == 0 {
		tasks = 30
	}
	if need := sloassert.MinSamples(1 - t.TailTasks); tasks < need && !small && !p.records {
		p.errorf(f.k.Line, f.path, "%s of task totals needs tasks >= %d (have %d; or allow_small_sample: true)", sloassert.QuantileName(1-t.TailTasks), need, tasks)
		return
	}
	a.Plan = plan
	p.objective(out, Objective{Key: "agent_task", Line: f.k.Line, Kind: kindAgentTask,
		Task: sloassert.Task{Budget: t.Budget, TailTasks: t.TailTasks}, AllowSmallSample: small}, f.path)
}

// parseGraph parses a list of steps.
func parseGraph(p *specParser, f specEntry, depth int) agent.Graph {
	var g agent.Graph
	if f.v.Kind != yaml.SequenceNode || len(f.v.Content) == 0 || len(f.v.Content) > specMaxSteps {
		p.errorf(f.v.Line, f.path, "want a list of 1 to %d steps ({name, after, fan_out, tool, agent}), not %s", specMaxSteps, nodeDesc(f.v))
		return g
	}
	for i, n := range f.v.Content {
		path := fmt.Sprintf("%s[%d]", f.path, i)
		entries, ok := p.mapping(n, path, false, []string{"name", "after", "prompt", "max_tokens", "fan_out", "tool", "agent"}, nil)
		if !ok {
			continue
		}
		var s agent.Step
		for _, h := range entries {
			switch h.key {
			case "name":
				s.Name, _ = p.str(h)
			case "after":
				s.After = parseAfter(p, h)
			case "prompt":
				s.Prompt, _ = p.str(h)
			case "max_tokens":
				s.MaxTokens, _ = p.intIn(h, 1, specMaxTokens)
			case "fan_out":
				s.FanOut = parseFanOut(p, h)
			case "tool":
				s.Tool = parseStepTool(p, h)
			case "agent":
				if depth >= 8 {
					p.errorf(h.k.Line, h.path, "sub-agents nest more than 8 deep")
					continue
				}
				sub, ok := p.mapping(h.v, h.path, false, []string{"steps"}, nil)
				if st, have := entry(sub, "steps"); ok && have {
					g := parseGraph(p, st, depth+1)
					s.Agent = &g
				} else if ok {
					p.errorf(h.k.Line, h.path, "missing steps (a sub-agent is {steps: [...]})")
				}
			}
		}
		g.Steps = append(g.Steps, s)
	}
	return g
}

// parseAfter parses after: a step name, or a list of them.
func parseAfter(p *specParser, h specEntry) []string {
	if h.v.Kind == yaml.ScalarNode {
		if s, ok := p.str(h); ok {
			return []string{s}
		}
		return nil
	}
	if h.v.Kind != yaml.SequenceNode {
		p.errorf(h.v.Line, h.path, "want a step name or a list of them, not %s", nodeDesc(h.v))
		return nil
	}
	var out []string
	for i, n := range h.v.Content {
		if s, ok := p.str(specEntry{key: h.key, path: fmt.Sprintf("%s[%d]", h.path, i), k: h.k, v: n}); ok {
			out = append(out, s)
		}
	}
	return out
}

// parseFanOut parses fan_out: a count, or {n, first} or {draw, first}.
func parseFanOut(p *specParser, h specEntry) agent.FanOut {
	var f agent.FanOut
	if h.v.Kind == yaml.ScalarNode {
		f.N, _ = p.intIn(h, 1, specMaxFanOut)
		return f
	}
	entries, ok := p.mapping(h.v, h.path, false, []string{"n", "draw", "first"}, nil)
	if !ok {
		return f
	}
	for _, g := range entries {
		switch g.key {
		case "n":
			f.N, _ = p.intIn(g, 1, specMaxFanOut)
		case "first":
			f.First, _ = p.intIn(g, 1, specMaxFanOut)
		case "draw":
			if err := g.v.Decode(&f.Drawn); err != nil {
				p.errorf(g.v.Line, g.path, "%s", lineless(err))
			}
		}
	}
	if f.N == 0 && !f.Drawn.IsSet() {
		p.errorf(h.k.Line, h.path, "want n (copies) or draw (a distribution of copies)")
	}
	return f
}

// parseStepTool parses tool: {latency: 200ms} (or a fakeprovider
// distribution) into a tool step.
func parseStepTool(p *specParser, h specEntry) *agent.Tool {
	entries, ok := p.mapping(h.v, h.path, false, []string{"latency"}, nil)
	if !ok {
		return nil
	}
	g, have := entry(entries, "latency")
	if !have {
		p.errorf(h.k.Line, h.path, "missing latency (want {latency: 200ms})")
		return nil
	}
	t := &agent.Tool{}
	if g.v.Kind == yaml.MappingNode {
		if err := g.v.Decode(&t.Latency); err != nil {
			p.errorf(g.v.Line, g.path, "%s", lineless(err))
			return nil
		}
		return t
	}
	if d, ok := p.duration(g, false); ok {
		t.Latency = fakeprovider.Fixed(d)
	}
	return t
}

// checkAgent checks what the agent section needs of the whole spec: a
// live target.
func checkAgent(p *specParser, s *Spec, line int) {
	if a := s.Agent; a != nil && (a.Target == nil && s.Target.Records != "" || a.Target != nil && a.Target.Records != "") {
		p.errorf(line, "agent", "tasks need a live target (preset, profile or endpoint) under agent.target: records hold each call, not the measured task totals (judge the tasks.json a run wrote with tailguard judge SPEC tasks.json)")
	}
}

// runAgent runs the tasks in an "agent" subtest, then judges each
// objective in its own subtest; it returns the verdict.
func runAgent(s Spec, t *testing.T, title string, rt runTarget) string {
	t.Helper()
	out := "agent did not run"
	t.Run("agent", func(t *testing.T) {
		r := s.Agent.Runner
		rt.onFake = func(f *fakeprovider.Fake) { r.Queueing = f.QueueTime }
		var res *agent.Result
		var err error
		rt.measure(t, func(t *testing.T, p latencytest.Provider) { res, err = r.Run(t.Context(), p) })
		if err != nil || res == nil {
			t.Fatalf("slospec: spec %s: the agent's tasks did not run: %v", title, err)
		}
		if res.Partial {
			t.Errorf("slospec: spec %s: the agent's tasks ended early (%s)", title, res.PartialReason)
		}
		objs := make([]sloassert.Objective, len(s.Agent.Objectives))
		for i, o := range s.Agent.Objectives {
			objs[i] = o.ChainObjective()
		}
		rep := agent.Evaluate(res, objs...)
		rep.Title = title + " agent"
		rep.RawRecords = writeTasks(t, res)
		if len(s.Agent.Plan.Steps) > 0 {
			t.Logf("planning figure, not a gate: %s", strings.TrimRight(s.Agent.Plan.String(), "\n"))
		}
		for i, o := range s.Agent.Objectives {
			t.Run(o.Key, func(t *testing.T) { checkRow(t, objectiveOrigin(title, rt, o), rep.Outcomes[i], rep.Title) })
		}
		out = "agent PASS"
		if !finishLevel(t, rep) {
			out = "agent FAIL"
		}
	})
	return out
}

// writeTasks writes the tasks (agent.WriteTasks: every copy of every
// step with its task, stage, branch, times and critical path; answers
// left out) to tasks.json in t's artifact directory, and says where (or
// why not). tailguard judge reads it back (Judge).
func writeTasks(t *testing.T, res *agent.Result) string {
	path := filepath.Join(t.ArtifactDir(), "tasks.json")
	f, err := os.Create(path)
	if err == nil {
		err = errors.Join(agent.WriteTasks(f, res), f.Close())
	}
	if err != nil {
		return fmt.Sprintf("not recorded (%v)", err)
	}
	return path + " (kept with go test -artifacts)"
}

// agentTaskKind is the kinds table's entry for task: under agent.
var agentTaskKind = objectiveKind{name: kindAgentTask, key: "task", at: atAgent, chain: true,
	parse:  func(p *specParser, f specEntry, w where, out *[]Objective) { parseAgentTask(p, f, w.agent, out) },
	sample: func(o Objective) (sloassert.Metric, float64) { return "", 1 - o.Task.TailTasks },
	build: func(o Objective) sloassert.Objective {
		return agent.Target{Budget: o.Task.Budget, TailTasks: o.Task.TailTasks}.Objective(o.options()...)
	}}

// judgeTasks judges a spec's agent section on the tasks file a run of it
// wrote (Judge): its task objectives on the tasks' totals, then the
// spec's other objectives, if any, on the tasks' model calls.
func judgeTasks(s Spec, format string, files []string) ([]LevelReport, error) {
	title := s.title()
	switch {
	case len(files) != 1:
		return nil, fmt.Errorf("slospec: spec %s: agent tasks are judged on one tasks file (the tasks.json a run of the spec wrote), not %d files", title, len(files))
	case format != "" && format != records.Tailguard:
		return nil, fmt.Errorf("slospec: spec %s: agent tasks are judged on tailguard's own tasks.json, not %s records", title, format)
	case slices.ContainsFunc(s.Objectives, isSession):
		return nil, fmt.Errorf("slospec: spec %s: session objectives need a live target: a tasks file holds tasks, not sessions", title)
	}
	res, err := agent.ReadTasks(files[0])
	if err != nil {
		return nil, fmt.Errorf("slospec: spec %s: %w", title, err)
	}
	res.Graph = s.Agent.Runner.Graph // for the prediction through the graph
	objs := make([]sloassert.Objective, len(s.Agent.Objectives))
	for i, o := range s.Agent.Objectives {
		objs[i] = o.ChainObjective()
	}
	rep := agent.Evaluate(res, objs...)
	rep.Title, rep.RawRecords = title+" agent", files[0]
	lr := LevelReport{Name: "agent", Result: res.Calls(), Report: rep, undecided: make([]bool, len(rep.Outcomes))}
	n := len(res.Totals()) // the tasks the quantile is judged on
	for i, out := range rep.Outcomes {
		o := s.Agent.Objectives[i]
		q := 1 - o.Task.TailTasks
		// a quantile whose lower bound is already over budget fails on any n
		proven := out.Verdict == sloassert.Fail && out.Interval != ""
		if need := sloassert.MinSamples(q); !out.OK && !o.AllowSmallSample && n < need && !proven {
			lr.undecided[i] = true
			lr.Undecided = append(lr.Undecided, fmt.Sprintf("%s: %s of task totals needs n >= %d (the tasks file holds %d tasks)", o.Key, sloassert.QuantileName(q), need, n))
		}
	}
	out := []LevelReport{lr}
	if len(s.Objectives) > 0 {
		calls := res.Calls()
		objs := make([]sloassert.Objective, len(s.Objectives))
		for i, o := range s.Objectives {
			objs[i] = o.Objective()
		}
		crep := sloassert.Evaluate(calls, objs...)
		crep.Title, crep.RawRecords = title+" calls", files[0]
		clr := LevelReport{Name: "calls", Result: calls, Report: crep}
		clr.undecide(s.Objectives)
		out = append(out, clr)
	}
	return out, nil
}
