package sloassert_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// untunedShapes are TTFT distributions Compare's defaults were not tuned
// on (they were tuned on three presets: TestBaselineSimulation). Each
// draws one value in milliseconds.
var untunedShapes = []struct {
	name string
	draw func(*rand.Rand) float64
}{
	{"lognormal sigma 0.3", func(r *rand.Rand) float64 { return 200 * math.Exp(0.3*r.NormFloat64()) }},
	{"lognormal sigma 1.0", func(r *rand.Rand) float64 { return 200 * math.Exp(1.0*r.NormFloat64()) }},
	{"pareto alpha 2.5", func(r *rand.Rand) float64 { return 150 * math.Pow(1-r.Float64(), -1/2.5) }},
	{"exponential + 100ms", func(r *rand.Rand) float64 { return 100 + 100*r.ExpFloat64() }},
	{"5% slow path x5", func(r *rand.Rand) float64 {
		v := 200 * math.Exp(0.2*r.NormFloat64())
		if r.Float64() < 0.05 {
			v *= 5
		}
		return v
	}},
	{"uniform 100-300ms", func(r *rand.Rand) float64 { return 100 + 200*r.Float64() }},
}

// untunedRun is 300 requests drawn from a shape; with failShare > 0 each
// request fails (http_529) with that probability.
func untunedRun(rng *rand.Rand, draw func(*rand.Rand) float64, failShare float64) *latencytest.Result {
	r := &latencytest.Result{Run: latencytest.Run{Planned: 300, CPUPerWall: math.NaN()}}
	for i := range 300 {
		v := time.Duration(draw(rng) * float64(time.Millisecond))
		rec := latencytest.Record{ID: fmt.Sprintf("c8-%04d", i), Concurrency: 8, TTFT: v, FirstAnswer: v, Total: v + time.Millisecond, TokenEvents: 2}
		if failShare > 0 && rng.Float64() < failShare {
			rec.Status, rec.Err, rec.TTFT, rec.FirstAnswer = 529, "http_529", latencytest.NotObserved, latencytest.NotObserved
		}
		r.Records = append(r.Records, rec)
	}
	return r
}

// TestCompareOnUntunedDistributions measures Compare's default error rates
// on synthetic distributions it was not tuned on (100 pairs of 300
// requests per shape with TAILGUARD_SIMULATIONS=full, else 3 pairs of two
// shapes): two runs of one distribution
// (false alarms, asserted at most 5% plus sampling), the current run's
// slowest 5% doubled, and a current run whose every request fails with
// probability 2% against a clean baseline (both reported: the figures in
// Compare's doc come from this log and TestBaselineSimulation's).
func TestCompareOnUntunedDistributions(t *testing.T) {
	pairs, shapes := 100, untunedShapes
	if !simFull() {
		pairs, shapes = 3, untunedShapes[1:3]
	}
	maxSame := simMaxFlags(pairs, 0.05)
	for _, sh := range shapes {
		var same, doubled, byInterval, failed, exact6 int
		for i := range pairs {
			rb := rand.New(rand.NewPCG(uint64(2*i+1), 0xc0))
			rc := rand.New(rand.NewPCG(uint64(2*i+2), 0xc0))
			base, cur := untunedRun(rb, sh.draw, 0), untunedRun(rc, sh.draw, 0)
			if !(sloassert.Compare{}).Evaluate(base, cur).OK() {
				same++
			}
			if rep := (sloassert.Compare{}).Evaluate(base, simDoubleTail(cur)); !rep.OK() {
				doubled++
				for _, ch := range rep.Changes {
					if ch.Q == 0.99 && ch.Interval {
						byInterval++
					}
				}
			}
			rf := rand.New(rand.NewPCG(uint64(2*i+2), 0xfa))
			if !(sloassert.Compare{}).Evaluate(base, untunedRun(rf, sh.draw, 0.02)).OK() {
				failed++
			}
			if !(sloassert.Compare{}).Evaluate(base, simFail(cur, 0.02, uint64(i))).OK() {
				exact6++
			}
		}
		pc := func(k int) float64 { return 100 * float64(k) / float64(pairs) }
		t.Logf("%-20s flagged: same %5.1f%%, doubled tail %5.1f%% (p99 interval clear of +20%%: %5.1f%%), 2%% failure chance %5.1f%%, exactly 6 of 300 failed %5.1f%%",
			sh.name, pc(same), pc(doubled), pc(byInterval), pc(failed), pc(exact6))
		if same > maxSame {
			t.Errorf("%s: %d of %d same-distribution pairs flagged: more than a 5%% false-alarm rate allows (%d)", sh.name, same, pairs, maxSame)
		}
		if exact6 < pairs { // Fisher: 6 of 300 against 0 of 300, p = C(300,6)/C(600,6) = 0.015
			t.Errorf("%s: exactly 2%% failed against a clean baseline flagged %d of %d", sh.name, exact6, pairs)
		}
		// The doc's ranges (doubled tail 56-100%, a 2% failure chance
		// 67-76%), with the sampling a 99% binomial allows around them.
		if pairs >= 100 && (doubled < simMinFlags(pairs, 0.56) || failed < simMinFlags(pairs, 0.67) || failed > simMaxFlags(pairs, 0.76)) {
			t.Errorf("%s: doubled tail %.1f%%, 2%% failure chance %.1f%%: outside the ranges Compare's doc gives", sh.name, pc(doubled), pc(failed))
		}
	}
}
