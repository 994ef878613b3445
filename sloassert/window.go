package sloassert

import (
	"fmt"
	"math"
	"strings"

	"github.com/tailguard/tailguard/latencytest"
)

// judgeOn judges r, window by window when the objective asks (PerWindow).
func (o Objective) judgeOn(r *latencytest.Result) Outcome {
	if o.judge == nil && o.chains != nil {
		return Outcome{Objective: o.Name, Observed: "-", Note: "judges measured chains, not a result's requests: judge it with the chain result"}
	}
	if o.judge == nil {
		return zeroObjective(o.Name, "Q, MaxCV, MaxTailRatio, MaxErrorRate, MinDecodeRate, NoCacheHits, MaxStall, MaxColdStart or MinGoodput")
	}
	if o.opts.window == 0 {
		return o.judge(r, o.opts)
	}
	out := Outcome{Objective: fmt.Sprintf("%s per %v window", o.Name, o.opts.window), Observed: "-"}
	if o.opts.window < 0 {
		out.Note = fmt.Sprintf("PerWindow(%v): the window length is not positive", o.opts.window)
		return out
	}
	if err := r.CheckWindows(o.opts.window); o.opts.window > 0 && err != nil {
		out.Note = fmt.Sprintf("PerWindow(%v): %s", o.opts.window, strings.TrimPrefix(err.Error(), "latencytest: "))
		return out
	}
	wins := r.Windows(o.opts.window)
	if len(wins) == 0 {
		out.Observed, out.Note = "no data", "no request, so no window"
		return out
	}
	inner := o.opts
	inner.window = 0
	if k := len(wins); k > 1 && inner.confidenceProblem() == "" {
		// Every window is a look: split the confidence (Bonferroni), so a
		// verdict on the run is wrong with probability at most 1-c.
		c := inner.conf()
		inner.confidence = 1 - (1-c)/float64(k)
		split := fmt.Sprintf("confidence %s split over %d windows (Bonferroni)", percent(c), k)
		if inner.split != "" {
			split = inner.split + "; " + split
		}
		inner.split = split
	}
	worst, failed := -1, 0
	outs := make([]Outcome, len(wins))
	figures := make([]string, len(wins))
	for i, w := range wins {
		outs[i] = finalize(o.judge(w.Result, inner), inner, w.Partial, w.PartialReason)
		if !outs[i].OK {
			failed++
		}
		figures[i] = fmt.Sprintf("%v %s", w.From, outs[i].Observed)
		if worst < 0 || worse(outs[i], outs[worst]) {
			worst = i
		}
	}
	w := outs[worst]
	out.Observed, out.Budget, out.Margin, out.Interval, out.Confidence = w.Observed, w.Budget, w.Margin, w.Interval, w.Confidence
	out.OK, out.severity = failed == 0, w.severity
	switch {
	case failed > 0:
		out.Verdict = Fail
	case w.Verdict == Inconclusive:
		out.Verdict = Inconclusive
	default:
		out.Verdict = Pass
	}
	out.Note = fmt.Sprintf("worst window %d of %d %s: %s", worst, len(wins), wins[worst], w.Observed)
	if w.Note != "" {
		out.Note += " (" + w.Note + ")"
	}
	out.Note += fmt.Sprintf("; %d of %d windows failed; by window: %s", failed, len(wins), strings.Join(figures, ", "))
	return out
}

// judgeChains judges cr; an objective on a result's requests, or a
// zero-value Objective, fails and says so.
func (o Objective) judgeChains(cr *latencytest.ChainResult) Outcome {
	if o.chains == nil && o.judge != nil {
		return Outcome{Objective: o.Name, Observed: "-", Note: "judges a result's requests, not chains: judge the chain calls (ChainResult.Calls) with it"}
	}
	if o.chains == nil {
		return zeroObjective(o.Name, "ChainQ or MaxChainErrorRate")
	}
	return o.chains(cr, o.opts)
}

// zeroObjective is the outcome of an objective built as a zero value (a
// struct literal, or a variable never assigned): it judges nothing, so it
// fails.
func zeroObjective(name, build string) Outcome {
	if name == "" {
		name = "(unnamed Objective)"
	}
	return Outcome{Objective: name, Observed: "-", Note: "a zero-value Objective judges nothing: build it with " + build}
}

// worse orders two outcomes of one objective: a failed one before a
// passed one, then an inconclusive one, then the higher severity.
func worse(a, b Outcome) bool {
	rank := func(o Outcome) int {
		switch {
		case !o.OK:
			return 2
		case o.Verdict == Inconclusive:
			return 1
		}
		return 0
	}
	if rank(a) != rank(b) {
		return rank(a) > rank(b)
	}
	sev := func(o Outcome) float64 { // nothing observed is the worst of all
		if math.IsNaN(o.severity) || o.Observed == "no data" || o.Observed == "-" {
			return math.Inf(1)
		}
		return o.severity
	}
	return sev(a) > sev(b)
}
