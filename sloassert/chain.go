package sloassert

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// TailProbability is the chance that at least one of n independent calls
// lands in a tail of probability q: 1-(1-q)^n. q=0.01: n=10 gives 9.56%,
// n=20 gives 18.2%.
func TailProbability(q float64, n int) float64 {
	if n <= 0 {
		return 0
	}
	return -math.Expm1(float64(n) * math.Log1p(-q))
}

// Task is a task-level target: Calls sequential calls, done within Budget
// for all but TailTasks (a fraction) of tasks.
type Task struct {
	Calls     int
	Budget    time.Duration
	TailTasks float64
}

// PerCall works the task target back to a per-call objective: if each of
// Calls independent calls stays within its budget with probability q, a
// task does with probability q^Calls, so q = (1-TailTasks)^(1/Calls)
// (TailTasks 5%, 10 calls: q = 0.99488); and the budget is Budget/Calls
// (5 s over 10 calls: 500 ms). It panics on a task with no calls, a
// non-positive budget or a TailTasks outside (0,1).
func (t Task) PerCall() (q float64, budget time.Duration) {
	if t.Calls < 1 || t.Budget <= 0 || !(t.TailTasks > 0 && t.TailTasks < 1) {
		panic(fmt.Sprintf("sloassert: task %+v needs calls >= 1, a positive budget and tail tasks in (0,1)", t))
	}
	q = math.Pow(1-t.TailTasks, 1/float64(t.Calls))
	return q, t.Budget / time.Duration(t.Calls)
}

// Objective returns the per-call objective on metric (usually Total) that
// the task target implies, to judge single-call data.
func (t Task) Objective(metric Metric, opts ...Option) Objective {
	q, budget := t.PerCall()
	o := collect(opts)
	name := fmt.Sprintf("%s %s <= %s (per call of a %d-call task within %s for %s of tasks)", metric, QuantileName(q),
		latencytest.FormatDuration(budget), t.Calls, latencytest.FormatDuration(t.Budget), percent(1-t.TailTasks))
	return Objective{Name: name, judge: func(r *latencytest.Result) Outcome {
		s, err := metric.Sample(r)
		if err != nil {
			return Outcome{Objective: name, Note: err.Error()}
		}
		return judgeQuantile(name, s, q, budget, o)
	}}
}

// ChainObjective is an objective on measured chain totals, the ground
// truth of a task's latency. A chain with a failed call (an empty answer
// included) counts as never finished.
type ChainObjective struct {
	Name  string
	judge func(cr *latencytest.ChainResult) Outcome
}

// ChainQ is the objective "the q-quantile of measured chain totals is
// within budget".
func ChainQ(q float64, budget time.Duration, opts ...Option) ChainObjective {
	o := collect(opts)
	name := fmt.Sprintf("chain total %s <= %s", QuantileName(q), latencytest.FormatDuration(budget))
	return ChainObjective{Name: name, judge: func(cr *latencytest.ChainResult) Outcome {
		return judgeQuantile(name, cr.Totals(), q, budget, o)
	}}
}

// MaxChainErrorRate is the objective "at most this fraction of chains had
// a failed call".
func MaxChainErrorRate(max float64) ChainObjective {
	name := fmt.Sprintf("chains with a failed call <= %s", percent(max))
	return ChainObjective{Name: name, judge: func(cr *latencytest.ChainResult) Outcome {
		out := Outcome{Objective: name, Budget: percent(max)}
		if len(cr.Chains) == 0 {
			out.Observed, out.Note = "no data", "no chain ran"
			return out
		}
		rate := cr.ErrorRate()
		out.Observed = fmt.Sprintf("%s (%d of %d)", percent(rate), int(math.Round(rate*float64(len(cr.Chains)))), len(cr.Chains))
		out.Margin = fmt.Sprintf("%+.2f pts", (max-rate)*100)
		out.OK = rate <= max
		return out
	}}
}

// EvaluateChains judges measured chains.
func EvaluateChains(cr *latencytest.ChainResult, objectives ...ChainObjective) Report {
	rep := Report{Title: "chains", CPUPerWall: math.NaN()}
	if cr == nil {
		rep.Problem = "no result to judge"
		return rep
	}
	calls := cr.Calls()
	rep.Counts = calls.Counts()
	rep.Errors = calls.Errors()
	rep.CPUPerWall = cr.CPUPerWall
	rep.Missing = cr.Disclosure.Missing()
	rep.RawRecords = cr.Disclosure.Box(3).Answer
	rep.Setup = setup(cr.Disclosure)
	for _, rec := range calls.Records {
		if !slices.Contains(rep.Concurrency, rec.Concurrency) {
			rep.Concurrency = append(rep.Concurrency, rec.Concurrency)
		}
	}
	slices.Sort(rep.Concurrency)
	if len(objectives) == 0 {
		rep.Problem = "no objectives: an empty spec never passes"
	}
	if len(cr.Chains) == 0 {
		rep.Problem = "no chain ran"
	}
	for _, o := range objectives {
		rep.Outcomes = append(rep.Outcomes, o.judge(cr))
	}
	rep.Distributions = []Distribution{{Metric: "chain total", Summary: cr.Totals().Summarize()},
		{Metric: "call total", Summary: calls.Total().Summarize()}}
	for _, ch := range cr.Chains {
		v := ch.Total
		if !ch.OK() {
			v = latencytest.Failed
		}
		rep.Slowest = append(rep.Slowest, Slow{ID: ch.ID, Value: v, Err: ch.Err, Injected: chainInjected(ch)})
	}
	sortSlow(rep.Slowest)
	rep.Slowest = rep.Slowest[:min(5, len(rep.Slowest))]
	return rep
}

// chainInjected names the calls of a chain the fake injected something into.
func chainInjected(ch latencytest.ChainRun) string {
	s := ""
	for _, c := range ch.Calls {
		if c.Injected != "" {
			if s != "" {
				s += "; "
			}
			s += fmt.Sprintf("call%02d %s", c.Call, c.Injected)
		}
	}
	return s
}

// ChainTotal asserts that the q-quantile of the measured chain totals is
// within budget.
func ChainTotal(t TestingT, cr *latencytest.ChainResult, q float64, budget time.Duration, opts ...Option) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	return finish(t, EvaluateChains(cr, ChainQ(q, budget, opts...)))
}

// CheckChains judges measured chains against every objective and reports
// failures with t.Errorf.
func CheckChains(t TestingT, cr *latencytest.ChainResult, objectives ...ChainObjective) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	return finish(t, EvaluateChains(cr, objectives...))
}
