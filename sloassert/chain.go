package sloassert

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tailguard/tailguard/internal/cancel"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/stats"
	"github.com/tailguard/tailguard/latencytest"
)

// TailProbability is the chance that at least one of n independent calls
// lands in a tail of probability q: 1-(1-q)^n. q=0.01: n=10 gives 9.56%,
// n=20 gives 18.2%. n = 0 gives 0. It panics when q is not a fraction in
// [0,1] (0.01 for 1%) or n is negative.
func TailProbability(q float64, n int) float64 {
	if !(q >= 0 && q <= 1) {
		panic(fmt.Sprintf("sloassert: TailProbability: q = %v is not a probability in [0,1] (0.01 for a 1%% tail)", q))
	}
	if n < 0 {
		panic(fmt.Sprintf("sloassert: TailProbability: n = %d calls is negative", n))
	}
	if n == 0 {
		return 0
	}
	return -math.Expm1(float64(n) * math.Log1p(-q))
}

// Task is a task-level target: Calls sequential calls, done within Budget
// for all but TailTasks (a fraction) of tasks. Judge it on measured chain
// totals (ChainQ(1-TailTasks, Budget)); PerCall is a planning figure.
type Task struct {
	Calls     int
	Budget    time.Duration
	TailTasks float64
	// ToolTime is the time a task spends in tool steps between its calls
	// (latencytest.Chain.Tool), expected per task: PerCall shares only
	// Budget-ToolTime among the calls. Default 0 (no tools). It must be
	// below Budget: a task whose tools take its whole budget leaves its
	// calls no time (Validate says so, PerCall panics).
	ToolTime time.Duration
}

// PerCall is a planning figure, not a gate: a per-call target that is
// sufficient for the task target when calls are independent. If each of
// Calls calls stays within (Budget-ToolTime)/Calls with probability q =
// (1-TailTasks)^(1/Calls), a task whose tool steps take ToolTime stays
// within Budget with probability at least q^Calls = 1-TailTasks
// (TailTasks 5%, 10 calls: q = 0.99488, 5 s over 10 calls: 500 ms; with
// 2 s of tools, 300 ms). It is not necessary: a provider can miss it and
// still meet the task target (one slow call and nine fast ones fit in the
// budget), so a test judges the task on measured chain totals, tool time
// included. It panics as Validate fails: on a task with no calls, a
// non-positive budget, a TailTasks outside (0,1) or a ToolTime that is
// negative or not below Budget.
func (t Task) PerCall() (q float64, budget time.Duration) {
	if err := t.Validate(); err != nil {
		panic(err.Error())
	}
	q = math.Pow(1-t.TailTasks, 1/float64(t.Calls))
	return q, (t.Budget - t.ToolTime) / time.Duration(t.Calls)
}

// Validate returns an error unless the task has calls, a positive budget,
// a TailTasks in (0,1) and a ToolTime in [0, Budget).
func (t Task) Validate() error {
	if t.Calls < 1 || t.Budget <= 0 || !(t.TailTasks > 0 && t.TailTasks < 1) {
		return fmt.Errorf("sloassert: task %+v needs calls >= 1, a positive budget and tail tasks in (0,1)", t)
	}
	if t.ToolTime < 0 || t.ToolTime >= t.Budget {
		return fmt.Errorf("sloassert: task tool time %v is not in [0, budget %v): the calls would have no time left",
			t.ToolTime, t.Budget)
	}
	return nil
}

// Objective returns the per-call objective on metric (usually Total) that
// PerCall gives, for a test that chooses to hold single calls to that
// sufficient target (a stricter test than the task's: see PerCall). It
// panics as PerCall does.
func (t Task) Objective(metric Metric, opts ...Option) Objective {
	q, budget := t.PerCall()
	o := Q(metric, q, budget, opts...)
	tools := ""
	if t.ToolTime > 0 {
		tools = fmt.Sprintf(", %s of it tool time", format.Duration(t.ToolTime))
	}
	o.Name = fmt.Sprintf("%s %s <= %s (per call of a %d-call task within %s%s for %s of tasks)", metric, QuantileName(q),
		format.Duration(budget), t.Calls, format.Duration(t.Budget), tools, percent(1-t.TailTasks))
	return o // Evaluate reports an outcome under its objective's Name
}

// ChainQ is the objective "the q-quantile of measured chain totals is
// within budget", on measured chains: their totals are the ground truth of
// a task's latency. A chain with a failed call counts as Failed (never
// done), as does one the client cancelled (as a cancelled request's
// total); a chain the run's end cut short (see ChainRun.CutShort) is left
// out, unless it had already run longer than budget: then it counts as
// Failed too (its total can only grow). The outcome says how many were
// cut.
func ChainQ(q float64, budget time.Duration, opts ...Option) Objective {
	name := fmt.Sprintf("chain total %s <= %s", QuantileName(q), format.Duration(budget))
	return Objective{Name: name, opts: collect(opts), chains: func(cr *latencytest.ChainResult, o options) Outcome {
		s := make(latencytest.Sample, 0, len(cr.Chains))
		cut, over := 0, 0
		for i := range cr.Chains {
			switch ch := &cr.Chains[i]; {
			case ch.CutShort() && ch.Total > budget:
				cut, over = cut+1, over+1
				s = append(s, latencytest.Failed)
			case ch.CutShort():
				cut++
			case ch.OK():
				s = append(s, ch.Total)
			default:
				s = append(s, latencytest.Failed)
			}
		}
		out := judgeQuantile(name, s, len(s), q, budget, o)
		out.metric, out.q, out.budget = chainTotalMetric, q, budget
		if cut > 0 {
			out.addNote(fmt.Sprintf("%d chain(s) cut short by the run's end: %d left out, %d already over budget counted as failed", cut, cut-over, over))
		}
		return out
	}}
}

// chainTotalMetric marks chain-total outcomes, for charts.
const chainTotalMetric Metric = "chain_total"

// MaxChainErrorRate is the objective "at most the fraction max (0.05 for
// 5%) of chains had a failed call", over the finished chains: a chain the
// run's end cut short with no failed call before (see ChainRun.CutShort)
// is partial, not failed, and a chain the client cancelled (Err
// "cancelled") is neither failed nor done: both are left out (the outcome
// says how many). A
// max outside [0,1) fails and says so (1, every chain failed, is refused: an
// all-failed run never passes); it needs n >= ceil(1/max) finished
// chains.
func MaxChainErrorRate(max float64) Objective {
	name := fmt.Sprintf("chains with a failed call <= %s", percent(max))
	return Objective{Name: name, chains: func(cr *latencytest.ChainResult, o options) Outcome {
		out := Outcome{Objective: name, Budget: percent(max), Observed: "-"}
		if out.Note = rateLimitProblem(max); out.Note != "" {
			return out
		}
		failed, n, cancels := 0, 0, 0
		for i := range cr.Chains {
			switch ch := &cr.Chains[i]; {
			case ch.Err == cancel.Class:
				cancels++
			case !ch.CutShort() && ch.OK():
				n++
			case !ch.CutShort():
				n, failed = n+1, failed+1
			}
		}
		cut := len(cr.Chains) - n - cancels
		switch {
		case len(cr.Chains) == 0:
			out.Observed, out.Note = "no data", "no chain ran"
			return out
		case n == 0:
			out.Observed, out.Note = "no data", fmt.Sprintf("no chain finished (%d cut short by the run's end, %d cancelled by the client)", cut, cancels)
			return out
		}
		if cancels > 0 {
			out.addNote(fmt.Sprintf("%d chain(s) cancelled by the client on purpose: in neither part of the rate", cancels))
		}
		rate := float64(failed) / float64(n)
		out.Observed = fmt.Sprintf("%s (%d of %d)", share(rate), failed, n)
		out.Margin = fmt.Sprintf("%+.2f pts", (max-rate)*100)
		out.OK = rate <= max
		if cut > 0 {
			out.addNote(fmt.Sprintf("%d chain(s) cut short by the run's end: partial, not failed, left out of the rate", cut))
		}
		if max > 0 && max < 1 {
			if need := stats.CeilInverse(max); n < need && !o.allowSmall {
				out.OK = false
				out.addNote(fmt.Sprintf("a chain error rate of %s needs n >= %d finished chains (have %d)", percent(max), need, n))
			}
		}
		return out
	}}
}

// evaluateChains judges measured chains (Evaluate).
func evaluateChains(cr *latencytest.ChainResult, objectives []Objective) Report {
	if cr == nil {
		return Report{Title: "chains", CPUPerWall: math.NaN(), Problem: "no result to judge"}
	}
	calls := cr.Calls() // carries the run's CPUPerWall, Machine and Disclosure
	rep := runReport("chains", calls, objectives)
	for _, rec := range calls.Records {
		if !slices.Contains(rep.Concurrency, rec.Concurrency) {
			rep.Concurrency = append(rep.Concurrency, rec.Concurrency)
		}
	}
	slices.Sort(rep.Concurrency)
	if len(cr.Chains) == 0 {
		rep.Problem = "no chain ran"
	}
	if cr.Partial {
		done := 0
		for _, ch := range cr.Chains {
			if ch.Cut == "" {
				done++
			}
		}
		rep.Partial = fmt.Sprintf("%d of %d planned chains ran to the end", done, cr.Planned)
		if cut := len(cr.Chains) - finishedChains(cr); cut > 0 {
			rep.Partial += fmt.Sprintf(", %d cut short by the run's end (partial, not failed)", cut)
		}
		if cr.PartialReason != "" {
			rep.Partial += " (" + cr.PartialReason + ")"
		}
	}
	for _, o := range objectives {
		out := o.judgeChains(cr)
		if o.Name != "" {
			out.Objective = o.Name // a renamed objective keeps its new name
		}
		rep.Outcomes = append(rep.Outcomes, finalize(out, o.opts, cr.Partial, rep.Partial))
	}
	if pc, ok := cr.CheckPrediction(1); ok {
		what := "chain total"
		if pc.ModelOnly {
			what = "chain model time (tool steps left out)"
		}
		note := fmt.Sprintf("%s p95: measured %s; predicted from the same calls drawn independently %s (a prediction, not a measurement)",
			what, format.Duration(pc.Measured.P95), format.Duration(pc.Predicted.P95))
		if pc.CorrelationWarning != "" {
			note += "; " + pc.CorrelationWarning
		}
		rep.Notes = append(rep.Notes, note)
	}
	attribute(&rep, calls) // the server's notes; chain outcomes get no split
	// Chains cut short by the run's end are neither slow nor failed: they
	// stay out of the chain figures, as out of the objectives.
	var totals latencytest.Sample
	for i, v := range cr.Totals() {
		if !cr.Chains[i].CutShort() {
			totals = append(totals, v)
		}
	}
	rep.Distributions = []Distribution{{Metric: "chain total", Summary: totals.Summarize()}}
	rep.Distributions = append(rep.Distributions, toolSplit(cr)...)
	rep.Distributions = append(rep.Distributions, Distribution{Metric: "call total", Summary: calls.Total().Summarize()})
	for _, ch := range cr.Chains {
		if ch.CutShort() {
			continue
		}
		v := ch.Total
		if !ch.OK() {
			v = latencytest.Failed
		}
		rep.Slowest = append(rep.Slowest, Slow{ID: ch.ID, Value: v, Err: ch.Err, Injected: chainInjected(ch)})
	}
	sortSlow(rep.Slowest)
	rep.Slowest = rep.Slowest[:min(5, len(rep.Slowest))]
	judgeShard(&rep, cr.Shard, func(i int) options { return objectives[i].opts })
	return rep
}

// toolSplit splits the finished chains' totals into model time (the sum
// of a chain's calls) and tool time (its tool steps, latencytest.Chain.Tool)
// when any chain ran a tool step, and shows the part of model time spent
// queued ("chain queued") when any chain knows one
// (latencytest.Chain.Queueing); a chain
// with a failure is Failed in each, as in the chain total.
func toolSplit(cr *latencytest.ChainResult) []Distribution {
	tools, queued := false, false
	var model, tool, queue latencytest.Sample
	for i := range cr.Chains {
		ch := &cr.Chains[i]
		if ch.CutShort() {
			continue
		}
		tools, queued = tools || ch.ToolSteps > 0, queued || ch.QueueTime > 0
		if !ch.OK() {
			model, tool, queue = append(model, latencytest.Failed), append(tool, latencytest.Failed), append(queue, latencytest.Failed)
			continue
		}
		model, tool, queue = append(model, ch.ModelTime), append(tool, ch.ToolTime), append(queue, ch.QueueTime)
	}
	var out []Distribution
	if tools || queued {
		out = append(out, Distribution{Metric: "chain model", Summary: model.Summarize()})
	}
	if tools {
		out = append(out, Distribution{Metric: "chain tools", Summary: tool.Summarize()})
	}
	if queued {
		out = append(out, Distribution{Metric: "chain queued", Summary: queue.Summarize()})
	}
	return out
}

// finishedChains counts the chains that count in error rates (see
// ChainRun.Finished).
func finishedChains(cr *latencytest.ChainResult) int {
	n := 0
	for i := range cr.Chains {
		if !cr.Chains[i].CutShort() {
			n++
		}
	}
	return n
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
