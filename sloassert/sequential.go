package sloassert

import (
	"fmt"

	"github.com/tailguard/tailguard/latencytest"
)

// Sequential prepares objectives for a sequential batch that looks at its
// data up to stages times (len(latencytest.Batch.Stages())). It returns
// the batch's Until, which asks for another stage while any objective is
// inconclusive, and the objectives to judge the final result with, each
// quantile's confidence c raised to 1-(1-c)/stages (Bonferroni): over all
// the looks, a pass or fail verdict is wrong with probability at most 1-c,
// as for one look at c. Use the returned objectives for the final Check:
//
//	b := latencytest.Batch{Requests: 410, MaxRequests: 1640} // looks at 410, 820, 1640
//	until, objs := sloassert.Sequential(len(b.Stages()), sloassert.Q(sloassert.TTFT, 0.99, 2*time.Second, sloassert.Demonstrate(0.95)))
//	b.Until = until
//	sloassert.Check(t, b.Measure(t, p), objs...)
//
// A look can pass only once its bound exists at the raised confidence
// (MinBoundSamples(q, 1-(1-c)/stages)): p99 at 95% over 3 looks needs 408
// requests for an upper bound, so a first stage of 300 could fail or
// continue but never pass; the example's first stage is 410. It panics
// when stages < 1.
func Sequential(stages int, objectives ...Objective) (until func(*latencytest.Result) bool, adjusted []Objective) {
	if stages < 1 {
		panic(fmt.Sprintf("sloassert: Sequential: %d stages (want >= 1)", stages))
	}
	adjusted = make([]Objective, len(objectives))
	for i, o := range objectives {
		if o.opts.confidenceProblem() == "" && stages > 1 {
			c := o.opts.conf()
			o.opts.confidence = 1 - (1-c)/float64(stages)
			o.opts.split = fmt.Sprintf("confidence %s split over %d looks (Bonferroni)", percent(c), stages)
		}
		adjusted[i] = o
	}
	until = func(r *latencytest.Result) bool {
		return len(Evaluate(r, adjusted...).Inconclusive()) > 0
	}
	return until, adjusted
}
