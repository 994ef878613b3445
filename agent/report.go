package agent

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// slowestPaths is how many of the slowest tasks a report names the
// critical path of.
const pathsShown = 3

// Evaluate judges r's measured tasks against the objectives (task
// objectives such as Target.Objective, and sloassert's chain objectives,
// which judge each task as a chain of its model calls), never stopping at
// the first failure. The report titled "tasks" has the task totals' and
// the calls' distributions, the slowest tasks, the critical path of the
// three slowest (step, branch, time, queueing when Runner.Queueing told
// it) and the prediction from the run's own copies drawn independently
// through the graph (Predict, seed 1), labelled as one. No objective, no
// task, or a nil r fails.
func Evaluate(r *Result, objectives ...sloassert.Objective) sloassert.Report {
	if r == nil {
		return sloassert.Evaluate[*latencytest.ChainResult](nil, objectives...)
	}
	rep := sloassert.Evaluate(chains(r), objectives...)
	rep.Title = "tasks"
	rep.LengthCurve = nil // a chain's curve: tasks are graphs
	if len(r.Tasks) == 0 {
		rep.Problem = "no task ran"
	}
	for i := range rep.Distributions {
		if rep.Distributions[i].Metric == "chain total" {
			rep.Distributions[i].Metric = "task total"
		}
	}
	// The chain prediction draws chains of one length: not a graph's.
	rep.Notes = slices.DeleteFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, "chain ") })
	if pc, ok := Predict(r, 1); ok {
		rep.Notes = append(rep.Notes, pc.Note())
	}
	rep.Notes = append(rep.Notes, slowestPaths(r, pathsShown)...)
	// What the server injected, by step copy rather than chain call.
	for i, s := range rep.Slowest {
		for _, t := range r.Tasks {
			if t.ID == s.ID {
				rep.Slowest[i].Injected = injected(&t)
			}
		}
	}
	return rep
}

// Check judges r as Evaluate does and reports the whole report with
// t.Errorf when an objective fails; it returns whether all passed.
func Check(t sloassert.TestingT, r *Result, objectives ...sloassert.Objective) bool {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	rep := Evaluate(r, objectives...)
	if !rep.OK() {
		t.Errorf("%s", strings.TrimRight(rep.String(), "\n"))
	}
	return rep.OK()
}

// chains is r as chains: each task a chain of its model calls (abandoned
// copies left out), with its measured total.
func chains(r *Result) *latencytest.ChainResult {
	cr := &latencytest.ChainResult{Run: latencytest.Run{Planned: r.Planned, Partial: r.Partial, PartialReason: r.PartialReason, Start: r.Start, End: r.End}}
	for i := range r.Tasks {
		t := &r.Tasks[i]
		ch := latencytest.ChainRun{ID: t.ID, Total: t.Total, Err: t.Err, Cut: t.Cut}
		for _, s := range t.Steps {
			if s.Record != nil && !s.Abandoned {
				ch.Calls = append(ch.Calls, *s.Record)
				ch.ModelTime += s.Record.Total
			}
		}
		cr.Chains = append(cr.Chains, ch)
		cr.PlannedCalls += len(ch.Calls)
	}
	return cr
}

// slowestPaths are report lines naming the critical paths of the n
// slowest finished tasks (failed ones first, then by total).
func slowestPaths(r *Result, n int) []string {
	var order []int
	for i := range r.Tasks {
		if !r.Tasks[i].CutShort() {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ta, tb := &r.Tasks[a], &r.Tasks[b]
		if ta.OK() != tb.OK() {
			return map[bool]int{true: 1, false: -1}[ta.OK()]
		}
		return cmp.Compare(tb.Total, ta.Total)
	})
	var out []string
	for _, i := range order[:min(n, len(order))] {
		out = append(out, r.Tasks[i].PathLine())
	}
	return out
}

// injected names the copies of a task the server injected something
// into (latencytest.Record.Injected), by their trace IDs past the task's.
func injected(t *TaskRun) string {
	var parts []string
	for _, s := range t.Steps {
		if s.Record != nil && s.Record.Injected != "" && !s.Abandoned {
			parts = append(parts, strings.TrimPrefix(s.ID, t.ID+"-")+" "+s.Record.Injected)
		}
	}
	return strings.Join(parts, "; ")
}
