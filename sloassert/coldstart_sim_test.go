package sloassert_test

import (
	"fmt"
	"math"
	randv2 "math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/stats"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"

	"github.com/tailguard/tailguard/internal/defaults"
)

// coldSimRun is a Batch as the default run makes it, without the fake:
// 10 warm-up requests then n measured, one at a time with 1 ms between
// them, each of the default mix's class for its index (latencytest.Mix:
// PCG(seed 7, index); request 0 is a long prompt), its TTFT lognormal
// with its class's median and sigma. It has k cold-start candidates: the
// first request and k-1 measured requests spread evenly over the run,
// each sent after 3 s with nothing in flight (AfterIdle(2s) counts
// them). cold is added to every candidate's TTFT: a server that unloads
// when idle and cold-starts each time.
func coldSimRun(seed uint64, n, k int, medians [3]time.Duration, sigmas [3]float64, cold time.Duration) *latencytest.Result {
	mix := latencytest.DefaultMix
	rng := randv2.New(randv2.NewPCG(seed, 0xc01d))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &latencytest.Result{Run: latencytest.Run{Start: t0, Planned: n + defaults.Warmup}}
	idle := map[int]bool{}
	for j := 1; j < k; j++ {
		idle[defaults.Warmup+j*n/k] = true
	}
	at := t0
	for i := range n + defaults.Warmup {
		u := randv2.New(randv2.NewPCG(mix.Seed, uint64(i))).Float64()
		c := 0
		for c < len(mix.Classes)-1 && u >= mix.Classes[c].Weight {
			u -= mix.Classes[c].Weight
			c++
		}
		if idle[i] {
			at = at.Add(coldSimGap)
		}
		ttft := time.Duration(float64(medians[c]) * math.Exp(sigmas[c]*rng.NormFloat64()))
		if i == 0 || idle[i] {
			ttft += cold
		}
		total := ttft + 50*time.Millisecond
		r.Records = append(r.Records, latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Start: at, TTFT: ttft, FirstAnswer: ttft, Total: total,
			TokenEvents: 8, PromptClass: mix.Classes[c].Name, PromptTokens: mix.Classes[c].PromptTokens, Warmup: i < defaults.Warmup})
		at = at.Add(total + time.Millisecond)
	}
	return r
}

// coldSimGap is the idle gap before each candidate after the first, and
// coldSimIdle the AfterIdle the simulations judge with.
const coldSimGap, coldSimIdle = 3 * time.Second, 2 * time.Second

// coldSimCase is one shape of warm TTFTs: the class medians of the issue
// (200 ms, 800 ms, 3 s) with a sigma per class.
type coldSimCase struct {
	name   string
	sigmas [3]float64 // short, medium, long
}

var coldSimCases = []coldSimCase{
	{"long widest", [3]float64{0.3, 0.5, 0.8}},
	{"equal", [3]float64{0.5, 0.5, 0.5}},
	{"long very wide", [3]float64{0.2, 0.6, 1.0}},
	{"all wide", [3]float64{0.5, 0.8, 1.2}},
	{"short widest", [3]float64{0.8, 0.4, 0.2}},
}

// coldSimRates returns, per cold start (0 first), how many seeds' runs
// of k candidates fail MaxColdStart(budget, AfterIdle(2s)), for each
// budget.
func coldSimRates(seeds, n, k int, sc coldSimCase, colds, budgets []time.Duration) [][]int {
	medians := [3]time.Duration{200 * time.Millisecond, 800 * time.Millisecond, 3 * time.Second}
	fails := make([][]int, len(colds))
	for c, cold := range colds {
		fails[c] = make([]int, len(budgets))
		for seed := range seeds {
			r := coldSimRun(uint64(seed), n, k, medians, sc.sigmas, cold)
			if got := len(r.ColdStartCandidates(coldSimIdle)); got != k {
				panic(fmt.Sprintf("a simulated run has %d candidates, want %d", got, k))
			}
			for b, budget := range budgets {
				if !sloassert.JudgeOn(sloassert.MaxColdStart(budget, sloassert.AfterIdle(coldSimIdle)), r).OK {
					fails[c][b]++
				}
			}
		}
	}
	return fails
}

// TestColdStartErrorRates measures MaxColdStart by seeded simulation: a
// default Batch (10 warm-up, then n measured; the default mix, whose first
// request is a long prompt: at n=100 only 6 warm long prompts, at 300 25)
// on lognormal classes with medians 200 ms, 800 ms and 3 s and unequal
// sigmas. No cold start must fail at most 5% of runs at budgets of 600 ms
// and 1 s; a cold start of 2 s, 5 s or 30 s on the first request is
// caught as often as the class's spread allows.
//
// Measured (2,000 seeds a cell, go test -run TestColdStartErrorRates
// without -short, 130 s on 2 cores): the share of runs that fail with no
// cold start at 600 ms / 1 s, then of runs caught at 1 s with a cold
// start of 2 s, 5 s and 30 s on the first request. The median shift this
// replaced failed 12-45% of the same runs with no cold start (31% at 1 s
// with equal sigmas 0.5).
//
//	sigmas (s/m/l)  n    no cold start   2 s     5 s     30 s
//	0.3/0.5/0.8     100  4.2% / 3.9%     7.5%   16.6%   88.2%
//	                200  4.0% / 3.5%     6.7%   15.4%   99.8%
//	                300  3.4% / 3.1%     6.2%   15.3%  100.0%
//	0.5/0.5/0.5     100  3.9% / 3.4%    11.2%   38.9%  100.0%
//	                200  3.5% / 2.5%    10.6%   48.5%  100.0%
//	                300  2.9% / 2.2%    11.1%   51.8%  100.0%
//	0.2/0.6/1.0     100  4.5% / 4.2%     6.5%   12.3%   67.2%
//	                200  4.3% / 3.8%     6.0%   10.3%   91.8%
//	                300  3.8% / 3.4%     5.2%   10.2%   97.4%
//	0.5/0.8/1.2     100  4.7% / 4.2%     6.0%    9.7%   48.5%
//	                200  4.3% / 4.2%     5.3%    8.0%   69.6%
//	                300  3.8% / 3.5%     4.8%    7.6%   78.1%
//	0.8/0.4/0.2     100  2.2% / 1.0%    36.8%   99.5%  100.0%
//	                200  1.6% / 0.7%    43.5%  100.0%  100.0%
//	                300  1.4% / 0.6%    46.8%  100.0%  100.0%
//
// A 2 s cold start on a 3 s long prompt as wide as sigma 0.5 is within
// its class's own spread: one request cannot show it.
//
// The -short version runs 200 seeds a cell at n=100 and 300 and checks
// each false-alarm count against 5% at 95% confidence (a count that 5%
// would give with probability under 5% fails), and that a 30 s cold
// start is caught in most runs where the long class is not wider than
// sigma 0.8.
func TestColdStartErrorRates(t *testing.T) {
	if !testing.Short() && os.Getenv("TAILGUARD_CALIBRATION") == "separate" {
		t.Skip("TAILGUARD_CALIBRATION=separate: the cold-start simulations run in their own step, without -race")
	}
	seeds, ns, cases := 2000, []int{100, 200, 300}, coldSimCases
	colds := []time.Duration{0, 2 * time.Second, 5 * time.Second, 30 * time.Second}
	if testing.Short() {
		seeds, ns, cases = 200, []int{100, 300}, []coldSimCase{coldSimCases[0], coldSimCases[3], coldSimCases[4]}
		colds = []time.Duration{0, 30 * time.Second}
	}
	budgets := []time.Duration{600 * time.Millisecond, time.Second}
	limit := falseAlarmLimit(seeds)
	for _, sc := range cases {
		for _, n := range ns {
			f := coldSimRates(seeds, n, 1, sc, colds, budgets)
			pct := func(k, b int) float64 { return 100 * float64(f[k][b]) / float64(seeds) }
			line := fmt.Sprintf("%-15s n=%d  no cold start %4.1f%% / %4.1f%%  caught at 1s:", sc.name, n, pct(0, 0), pct(0, 1))
			for k, cold := range colds[1:] {
				line += fmt.Sprintf("  %v %5.1f%%", cold, pct(k+1, 1))
			}
			t.Log(line)
			for b, budget := range budgets {
				if f[0][b] > limit {
					t.Errorf("%s n=%d: no cold start failed %d of %d runs at %v (5%% allows %d)", sc.name, n, f[0][b], seeds, budget, limit)
				}
			}
			if last := len(colds) - 1; sc.sigmas[2] <= 0.8 && f[last][1] < seeds*3/4 {
				t.Errorf("%s n=%d: a 30 s cold start caught in %d of %d runs", sc.name, n, f[3][1], seeds)
			}
		}
	}
}

// falseAlarmLimit is the largest count of false alarms in seeds runs
// that a 5% rate gives with probability at least 5%.
func falseAlarmLimit(seeds int) int {
	for k, c := range stats.BinomCDFs(seeds, 0.05) {
		if 1-c < 0.05 {
			return k
		}
	}
	return seeds
}

// TestColdStartFalseAlarmsPerRun measures MaxColdStart's false alarms
// per run, whatever the number of candidates: each candidate's bound is
// at the Šidák share of 5% (1-0.95^(1/k) for k candidates), so a run of
// k candidates with no cold start fails at most 5% of the time, where a
// bound of 5% per candidate failed 14.3% of runs of 11 candidates at
// 600 ms. The runs are default Batches (10 warm-up, 200 measured) on the
// lognormal classes of TestColdStartErrorRates, with k-1 measured
// requests after an idle gap (AfterIdle(2s)) and the first request as
// candidates; the misses are measured with a 1 s cold start on every
// candidate.
//
// The -short version runs 200 seeds a cell, k of 1, 11 and 20, on two
// shapes, and checks each false-alarm count against 5% at 95%
// confidence; without -short, 1,000 seeds a cell and every k from 1 to
// 20 on the five shapes (the figures are in the sloassert.MaxColdStart
// doc and the t.Log lines).
func TestColdStartFalseAlarmsPerRun(t *testing.T) {
	if !testing.Short() && os.Getenv("TAILGUARD_CALIBRATION") == "separate" {
		t.Skip("TAILGUARD_CALIBRATION=separate: the cold-start simulations run in their own step, without -race")
	}
	seeds, ks, cases := 1000, []int{}, coldSimCases
	for k := 1; k <= 20; k++ {
		ks = append(ks, k)
	}
	if testing.Short() {
		seeds, ks, cases = 200, []int{1, 11, 20}, []coldSimCase{coldSimCases[0], coldSimCases[3]}
	}
	const n = 200
	budgets := []time.Duration{600 * time.Millisecond, time.Second}
	colds := []time.Duration{0, time.Second}
	limit := falseAlarmLimit(seeds)
	for _, sc := range cases {
		for _, k := range ks {
			f := coldSimRates(seeds, n, k, sc, colds, budgets)
			pct := func(c, b int) float64 { return 100 * float64(f[c][b]) / float64(seeds) }
			t.Logf("%-15s k=%2d  false alarms %4.1f%% / %4.1f%%  1s cold start caught %5.1f%% / %5.1f%%  (600ms / 1s)",
				sc.name, k, pct(0, 0), pct(0, 1), pct(1, 0), pct(1, 1))
			for b, budget := range budgets {
				if f[0][b] > limit {
					t.Errorf("%s, %d candidates: no cold start failed %d of %d runs at %v (5%% allows %d)", sc.name, k, f[0][b], seeds, budget, limit)
				}
			}
		}
	}
}
