package sloassert_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// itlShape is how the gaps of a request relate: gap = median *
// exp(paceSigma*Z_request + noiseSigma*Z_gap), so every gap's marginal is
// lognormal with sigma sqrt(paceSigma^2 + noiseSigma^2), and with output
// lengths drawn apart from the pace, the pooled q-quantile is exactly
// median * exp(sigma * z_q).
type itlShape struct {
	name                  string
	paceSigma, noiseSigma float64
}

var itlShapes = []itlShape{
	{"identical within a request", 0.5, 0}, // one decode pace per request (10 of 16 presets)
	{"independent gaps", 0, 0.5},           // every gap drawn anew
	{"pace and noise", 0.35, 0.35},         // both
	{"slow pace, small noise", 0.45, 0.15}, // mostly the request's pace
}

// itlResult draws n requests of 30-100 tokens with shape sh.
func itlResult(rng *rand.Rand, n int, sh itlShape) *latencytest.Result {
	const median = 30 * time.Millisecond
	r := &latencytest.Result{Run: latencytest.Run{Planned: n, CPUPerWall: math.NaN()}}
	for i := range n {
		pace := sh.paceSigma * rng.NormFloat64()
		rec := latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Concurrency: 1, TTFT: 100 * time.Millisecond, FirstAnswer: 100 * time.Millisecond}
		m := 30 + rng.IntN(71)
		at := rec.TTFT
		for range m - 1 {
			g := time.Duration(float64(median) * math.Exp(pace+sh.noiseSigma*rng.NormFloat64()))
			rec.Gaps.Add(g)
			at += g
			rec.MaxGap = max(rec.MaxGap, g)
		}
		rec.LastToken, rec.Total, rec.TokenEvents, rec.CompletionTokens = at, at+time.Millisecond, m, m
		r.Records = append(r.Records, rec)
	}
	return r
}

// trueITLQuantile is the pooled q-quantile of shape sh.
func trueITLQuantile(sh itlShape, q float64) time.Duration {
	z := math.Sqrt2 * math.Erfinv(2*q-1)
	return time.Duration(float64(30*time.Millisecond) * math.Exp(math.Hypot(sh.paceSigma, sh.noiseSigma)*z))
}

// TestITLVerdictsHoldTheirErrorRates: with the true pooled ITL p99 exactly
// at budget, Demonstrate(0.95) passes at most 5% of runs and Refute(0.95)
// fails at most 5%, whether a request's gaps are identical, independent or
// in between (400 requests of 30-100 tokens; 300 seeds with
// TAILGUARD_SIMULATIONS=full, else 12 seeds of two shapes at the budget). Ranking the pooled gaps as
// independent values passes about 45% (the log shows the naive rates
// beside the row's). The slack is about the binomial 99.9% bound on a 5%
// rate over the seeds.
func TestITLVerdictsHoldTheirErrorRates(t *testing.T) {
	seeds, slack := 300, 0.09
	shapes, ratios := itlShapes, []float64{1.0, 1.15, 1 / 1.15}
	if !simFull() {
		seeds, slack = 12, 0.34 // a smoke test: 12 seeds show a 45% rate, not a 5% one
		shapes, ratios = []itlShape{itlShapes[0], itlShapes[2]}, []float64{1.0}
	}
	const n = 400 // 300 requests of 30-100 tokens are worth about 278 independent values: too few for a p99 upper bound at 95% (299)
	for _, sh := range shapes {
		for _, ratio := range ratios {
			budget := time.Duration(float64(trueITLQuantile(sh, 0.99)) / ratio) // ratio > 1: the provider is over budget
			var demoPass, refuteFail, naiveDemoPass, naiveRefuteFail int
			for seed := range seeds {
				rng := rand.New(rand.NewPCG(uint64(seed), 0x171))
				r := itlResult(rng, n, sh)
				rep := sloassert.Evaluate(r, sloassert.Q(sloassert.ITL, 0.99, budget, sloassert.Demonstrate(0.95)),
					sloassert.Q(sloassert.ITL, 0.99, budget, sloassert.Refute(0.95)))
				if rep.Outcomes[0].OK {
					demoPass++
				}
				if !rep.Outcomes[1].OK {
					refuteFail++
				}
				if lo, hi, ok := sloassert.ConfidenceBounds(r.ITL(), 0.99, 0.95); ok {
					if hi <= budget {
						naiveDemoPass++
					}
					if lo > budget {
						naiveRefuteFail++
					}
				}
			}
			pc := func(k int) float64 { return 100 * float64(k) / float64(seeds) }
			t.Logf("%-27s truth %.2fx budget: Demonstrate passes %5.1f%% (pooled as independent %5.1f%%), Refute fails %5.1f%% (pooled %5.1f%%)",
				sh.name, ratio, pc(demoPass), pc(naiveDemoPass), pc(refuteFail), pc(naiveRefuteFail))
			switch {
			case ratio >= 1 && float64(demoPass)/float64(seeds) > slack:
				t.Errorf("%s, truth %.2fx budget: Demonstrate passed %.1f%% (want <= 5%%)", sh.name, ratio, pc(demoPass))
			case ratio <= 1 && float64(refuteFail)/float64(seeds) > slack:
				t.Errorf("%s, truth %.2fx budget: Refute failed %.1f%% (want <= 5%%)", sh.name, ratio, pc(refuteFail))
			}
		}
	}
}

// presetITLResult draws n requests from a preset's ITL and output-length
// distributions: one pace per request (as the preset's fake does with
// itl_per_request) or, with perGap, every gap drawn anew.
func presetITLResult(rng *rand.Rand, p fakeprovider.Profile, n int, perGap bool) *latencytest.Result {
	r := &latencytest.Result{Run: latencytest.Run{Planned: n, CPUPerWall: math.NaN()}}
	for i := range n {
		rec := latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Concurrency: 1, TTFT: 100 * time.Millisecond, FirstAnswer: 100 * time.Millisecond}
		m := max(p.OutputTokens.Sample(rng), 2)
		pace := p.ITL.Sample(rng)
		at := rec.TTFT
		for range m - 1 {
			g := pace
			if perGap {
				g = p.ITL.Sample(rng)
			}
			rec.Gaps.Add(g)
			at += g
		}
		rec.LastToken, rec.Total, rec.TokenEvents, rec.CompletionTokens = at, at+time.Millisecond, m, m
		r.Records = append(r.Records, rec)
	}
	return r
}

// presetPooledQuantile is the pooled q-quantile of gaps a preset draws,
// from 4,000,000 draws (each pace weighted by its gaps). The truth must be
// sharp: 400 requests of 64 gaps hold 25,200 gaps, and a budget at the
// true p99.03 instead of p99 (what 200,000 draws gave for gpt-oss-120b)
// lets even the exact binomial bound of independent gaps pass 12.7%.
func presetPooledQuantile(p fakeprovider.Profile, q float64, perGap bool) time.Duration {
	rng := rand.New(rand.NewPCG(99, 0x9a))
	type wv struct {
		v time.Duration
		w int
	}
	var all []wv
	total := 0
	for range 4_000_000 {
		m := max(p.OutputTokens.Sample(rng), 2) - 1
		if perGap {
			all, total = append(all, wv{p.ITL.Sample(rng), 1}), total+1
			continue
		}
		all, total = append(all, wv{p.ITL.Sample(rng), m}), total+m
	}
	slices.SortFunc(all, func(a, b wv) int { return cmp.Compare(a.v, b.v) })
	acc := 0
	for _, x := range all {
		acc += x.w
		if float64(acc) >= q*float64(total) {
			return x.v
		}
	}
	return all[len(all)-1].v
}

// TestITLVerdictsOnPresets: as TestITLVerdictsHoldTheirErrorRates, on the
// presets' own ITL and output-length distributions, one pace per request
// (as their fakes draw it: every gap of a request identical) and every gap
// drawn anew (gaps that vary): 400 requests, the budget at the true pooled
// p99, 150 seeds (with TAILGUARD_SIMULATIONS=full only).
func TestITLVerdictsOnPresets(t *testing.T) {
	if !simFull() {
		t.Skip("a long simulation: TAILGUARD_SIMULATIONS=full runs it")
	}
	const seeds, n = 150, 400
	slack := 0.10 // about the binomial 99.9% bound on a 5% rate over 150 seeds
	for _, name := range []string{"gpt-oss-120b", "llama-3.3-70b", "mistral-3-14b", "gemma-4-31b", "glm-5.3"} {
		p, err := fakeprovider.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, perGap := range []bool{false, true} {
			budget := presetPooledQuantile(p, 0.99, perGap)
			var demoPass, refuteFail int
			for seed := range seeds {
				r := presetITLResult(rand.New(rand.NewPCG(uint64(seed), 0x9b)), p, n, perGap)
				rep := sloassert.Evaluate(r, sloassert.Q(sloassert.ITL, 0.99, budget, sloassert.Demonstrate(0.95)),
					sloassert.Q(sloassert.ITL, 0.99, budget, sloassert.Refute(0.95)))
				if rep.Outcomes[0].OK {
					demoPass++
				}
				if !rep.Outcomes[1].OK {
					refuteFail++
				}
			}
			pc := func(k int) float64 { return 100 * float64(k) / float64(seeds) }
			t.Logf("%-14s gaps varying %-5v budget %v: Demonstrate passes %5.1f%%, Refute fails %5.1f%%", name, perGap, budget, pc(demoPass), pc(refuteFail))
			if float64(demoPass)/seeds > slack || float64(refuteFail)/seeds > slack {
				t.Errorf("%s (gaps varying %v): Demonstrate passes %.1f%%, Refute fails %.1f%% (want <= 5%%)", name, perGap, pc(demoPass), pc(refuteFail))
			}
		}
	}
}

// simFull reports whether the long simulations run in full:
// TAILGUARD_SIMULATIONS=full, without -race (as TestBaselineSimulation).
// Otherwise they are smoke tests of the same code with a few seeds.
func simFull() bool { return os.Getenv("TAILGUARD_SIMULATIONS") == "full" && !raceEnabled() }
