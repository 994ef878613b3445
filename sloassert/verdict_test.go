package sloassert_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// streamed makes a result of n successful streamed requests: TTFT i ms,
// 10 token events 10 ms apart, usage with cached tokens reported.
func streamed(n int) *latencytest.Result {
	r := &latencytest.Result{Run: latencytest.Run{Planned: n, CPUPerWall: math.NaN()}}
	for i := range n {
		v := time.Duration(i+1) * time.Millisecond
		rec := latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Concurrency: 1, TTFT: v, FirstAnswer: v,
			LastToken: v + 90*time.Millisecond, Total: v + 100*time.Millisecond, MaxGap: 10 * time.Millisecond,
			TokenEvents: 10, CompletionTokens: 10, PromptTokens: 20}
		for range 9 {
			rec.Gaps.Add(10 * time.Millisecond)
		}
		markCacheReported(&rec)
		r.Records = append(r.Records, rec)
	}
	return r
}

func failSome(r *latencytest.Result, k int, class string) *latencytest.Result {
	for i := 0; i < k; i++ {
		rec := &r.Records[len(r.Records)-1-i]
		rec.Err, rec.TTFT, rec.FirstAnswer = class, latencytest.NotObserved, latencytest.NotObserved
	}
	return r
}

func partial(r *latencytest.Result) *latencytest.Result {
	r.Planned = 2 * len(r.Records)
	r.Partial, r.PartialReason = true, "the test's deadline is near"
	return r
}

func allFailed(n int) *latencytest.Result { return failSome(streamed(n), n, "http_529") }

// unobservedResult is n successful requests from a custom Provider that
// filled in only Total: no token event, TTFT and first answer 0.
func unobservedResult(n int) *latencytest.Result {
	r := &latencytest.Result{Run: latencytest.Run{Planned: n, CPUPerWall: math.NaN()}}
	for i := range n {
		r.Records = append(r.Records, latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Total: time.Duration(i+1) * time.Millisecond})
	}
	return r
}

func judge(r *latencytest.Result, o sloassert.Objective) sloassert.Outcome {
	return sloassert.Evaluate(r, o).Outcomes[0]
}

func TestPartialResultFailsUnlessAllowed(t *testing.T) {
	objectives := []sloassert.Objective{
		sloassert.Q(sloassert.TTFT, 0.99, time.Hour),
		sloassert.Q(sloassert.ITL, 0.99, time.Hour),
		sloassert.MaxErrorRate(0.5),
		sloassert.MaxCV(sloassert.TTFT, 1000),
		sloassert.MaxTailRatio(sloassert.TTFT, 1000),
		sloassert.MinDecodeRate(0.05, 1),
		sloassert.NoCacheHits(),
		sloassert.MaxStall(time.Hour),
	}
	for _, o := range objectives {
		t.Run(o.Name, func(t *testing.T) {
			// The whole run passes: the objective is satisfiable.
			if out := judge(streamed(300), o); !out.OK {
				t.Fatalf("whole run failed: %+v", out)
			}
			rep := sloassert.Evaluate(partial(streamed(300)), o)
			if rep.OK() || rep.Outcomes[0].OK {
				t.Errorf("a partial run passed:\n%s", rep)
			}
			if !strings.Contains(rep.String(), "PARTIAL RUN: 300 of 600 planned requests sent (the test's deadline is near)") ||
				!strings.Contains(rep.Outcomes[0].Note, "AllowPartial()") {
				t.Errorf("the report does not say how much ran:\n%s", rep)
			}
			rep = sloassert.Evaluate(partial(streamed(300)), o.With(sloassert.AllowPartial()))
			if !rep.OK() || !strings.Contains(rep.Outcomes[0].Note, "partial run allowed: 300 of 600") {
				t.Errorf("AllowPartial did not judge what ran:\n%s", rep)
			}
		})
	}
	// Q takes the option directly too.
	if !sloassert.Evaluate(partial(streamed(300)), sloassert.Q(sloassert.Total, 0.5, time.Hour, sloassert.AllowPartial())).OK() {
		t.Error("Q(..., AllowPartial()) failed a partial run")
	}
	// Chains: a partial chain run fails ChainQ unless allowed.
	cr := &latencytest.ChainResult{Run: latencytest.Run{Planned: 4, Partial: true, PartialReason: "deadline"}}
	for i := range 2 {
		cr.Chains = append(cr.Chains, latencytest.ChainRun{ID: fmt.Sprintf("chain%02d", i), Total: time.Second})
	}
	if rep := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, time.Hour)); rep.OK() || !strings.Contains(rep.String(), "2 of 4 planned chains") {
		t.Errorf("a partial chain run passed:\n%s", rep)
	}
	if rep := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, time.Hour).With(sloassert.AllowPartial())); !rep.OK() {
		t.Errorf("AllowPartial did not judge the chains that ran:\n%s", rep)
	}
}

func TestErrorRateLimitIsAFraction(t *testing.T) {
	r := failSome(streamed(100), 55, "http_529") // 55% failed
	for _, tc := range []struct {
		name string
		max  float64
		want string
	}{
		{"percent 50", 50, "max 50 is above 1: the rate is a fraction (write 0.5 for 50%)"},
		{"percent 1.5", 1.5, "max 1.5 is above 1: the rate is a fraction (write 0.015 for 1.5%)"},
		{"negative", -0.1, "is not a fraction in [0,1]"},
		{"NaN", math.NaN(), "is not a fraction in [0,1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := judge(r, sloassert.MaxErrorRate(tc.max))
			if out.OK || !strings.Contains(out.Note, tc.want) {
				t.Errorf("%+v", out)
			}
			cout := sloassert.Evaluate(&latencytest.ChainResult{Run: latencytest.Run{Planned: 100}, Chains: make([]latencytest.ChainRun, 100)},
				sloassert.MaxChainErrorRate(tc.max)).Outcomes[0]
			if cout.OK || !strings.Contains(cout.Note, tc.want) {
				t.Errorf("chains: %+v", cout)
			}
		})
	}
}

// TestAllFailedNeverPassesAnErrorRate: an all-failed run fails every
// error-rate objective, whatever the limit or the classes counted; a limit
// of 1 (100%), which would let it pass, is refused with a message.
func TestAllFailedNeverPassesAnErrorRate(t *testing.T) {
	all := allFailed(300) // 300 of 300 failed with http_529
	for _, o := range []sloassert.Objective{
		sloassert.MaxErrorRate(1),
		sloassert.MaxErrorRate(0.999),
		sloassert.MaxErrorRate(0.01, "http_429"), // none of the failures is a 429
		sloassert.MaxErrorRate(1).With(sloassert.AllowSmallSample()),
	} {
		out := judge(all, o)
		if out.OK || out.Note == "" {
			t.Errorf("%s passed an all-failed run: %+v", o.Name, out)
		}
	}
	if out := judge(all, sloassert.MaxErrorRate(0.01, "http_429")); !strings.Contains(out.Note, "an all-failed run never passes") {
		t.Errorf("classes: %+v", out)
	}
	// 1 is refused even on a clean run: it judges nothing.
	if out := judge(streamed(300), sloassert.MaxErrorRate(1)); out.OK || !strings.Contains(out.Note, "max 1 (100%) lets every request fail") {
		t.Errorf("max 1 on a clean run: %+v", out)
	}
	// Chains: every chain failed, limit 1.
	cr := &latencytest.ChainResult{Run: latencytest.Run{Planned: 100}}
	for i := range 100 {
		cr.Chains = append(cr.Chains, latencytest.ChainRun{ID: fmt.Sprintf("chain%02d", i), Err: "http_529"})
	}
	if out := sloassert.Evaluate(cr, sloassert.MaxChainErrorRate(1)).Outcomes[0]; out.OK || !strings.Contains(out.Note, "max 1 (100%)") {
		t.Errorf("chains, max 1: %+v", out)
	}
	// A run with one success and a limit just under 1 is judged as usual.
	if out := judge(failSome(streamed(300), 299, "http_529"), sloassert.MaxErrorRate(0.999)); !out.OK {
		t.Errorf("299 of 300 failed under a 99.9%% limit: %+v", out)
	}
}

func TestErrorClassesAreChecked(t *testing.T) {
	r := failSome(streamed(300), 1, "http_529")
	for _, c := range []string{"http_5OO", "http_52", "http_5290", "http_600", "http_099", "timeout", "HTTP_529", ""} {
		out := judge(r, sloassert.MaxErrorRate(0.5, c))
		if out.OK || !strings.Contains(out.Note, fmt.Sprintf("unknown error class %q", c)) {
			t.Errorf("class %q: %+v", c, out)
		}
	}
	for _, c := range append(slices.Clone(latencytest.Classes), "http_529", "http_429", "http_500") {
		if err := latencytest.CheckClass(c); err != nil {
			t.Errorf("class %q: %v", c, err)
		}
	}
	if out := judge(r, sloassert.MaxErrorRate(0.01, "http_529", "refusal")); !out.OK || out.Observed != "0.33% (1 of 300)" {
		t.Errorf("known classes: %+v", out)
	}
}

func TestUnobservedTTFTCannotPass(t *testing.T) {
	r := unobservedResult(300)
	for _, m := range []sloassert.Metric{sloassert.TTFT, sloassert.FirstAnswer} {
		out := judge(r, sloassert.Q(m, 0.99, time.Hour))
		if out.OK || !strings.Contains(out.Note, "300 of 300 requests never observed a token") {
			t.Errorf("%s: %+v", m, out)
		}
	}
	// Total was measured: it is judged.
	if out := judge(r, sloassert.Q(sloassert.Total, 0.99, time.Hour)); !out.OK {
		t.Errorf("total: %+v", out)
	}
	// One unobserved request among measured ones is a failed value.
	r = streamed(300)
	r.Records[7].TokenEvents, r.Records[7].TTFT, r.Records[7].FirstAnswer = 0, 0, 0
	s, _ := sloassert.TTFT.Sample(r)
	if s.Failures() != 1 {
		t.Errorf("%d failures in the TTFT sample, want 1", s.Failures())
	}
}

func TestSampleSizeRules(t *testing.T) {
	// MinSamples: ceil(1/min(q, 1-q)), without floating-point noise.
	for q, want := range map[float64]int{0.9999: 10000, 0.999: 1000, 0.99: 100, 0.01: 100, 0.05: 20, 0.001: 1000, 0.5: 2, 0.99488: 196} {
		if got := sloassert.MinSamples(q); got != want {
			t.Errorf("MinSamples(%v) = %d, want %d", q, got, want)
		}
	}
	for _, q := range []float64{0, 1, -1, 99, math.NaN()} {
		if got := sloassert.MinSamples(q); got != math.MaxInt {
			t.Errorf("MinSamples(%v) = %d, want MaxInt", q, got)
		}
	}
	for _, tc := range []struct {
		name string
		r    *latencytest.Result
		o    sloassert.Objective
		want string
	}{
		// n=2, q=0.01: the p1 "floor" of two requests is their min.
		{"decode p1 from 2 requests", streamed(2), sloassert.MinDecodeRate(0.01, 1), "p1 needs n >= 100 (have 2)"},
		{"ttft p1 from 50", streamed(50), sloassert.Q(sloassert.TTFT, 0.01, time.Hour), "p1 needs n >= 100 (have 50)"},
		// 2 requests, 18 pooled gaps: the rule counts requests.
		{"itl p99 from 2 requests", streamed(2), sloassert.Q(sloassert.ITL, 0.99, time.Hour), "p99 needs n >= 100 (have 2)"},
		{"itl p99/p50 from 2 requests", streamed(2), sloassert.MaxTailRatio(sloassert.ITL, 100), "p99 needs n >= 100 (have 2)"},
		// 0.1% of 300 is not a rate 300 requests can show.
		{"error rate 0.1% from 300", streamed(300), sloassert.MaxErrorRate(0.001), "an error rate of 0.1% needs n >= 1000 measured requests (have 300)"},
		{"error rate 1% from 99", streamed(99), sloassert.MaxErrorRate(0.01), "needs n >= 100 measured requests (have 99)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := judge(tc.r, tc.o)
			if out.OK || !strings.Contains(out.Note, tc.want) {
				t.Errorf("%+v", out)
			}
			// AllowSmallSample opts in.
			if out := judge(tc.r, tc.o.With(sloassert.AllowSmallSample())); !out.OK {
				t.Errorf("with AllowSmallSample: %+v", out)
			}
		})
	}
	// At the rule's n they pass.
	if out := judge(streamed(100), sloassert.MaxErrorRate(0.01)); !out.OK {
		t.Errorf("error rate 1%% from 100: %+v", out)
	}
	if out := judge(streamed(100), sloassert.MinDecodeRate(0.01, 1)); !out.OK {
		t.Errorf("decode p1 from 100: %+v", out)
	}
}

func TestConfidenceIsAFraction(t *testing.T) {
	s := ramp(1000)
	for _, tc := range []struct {
		opt  sloassert.Option
		want string
	}{
		{sloassert.Demonstrate(95), "Demonstrate(95): confidence is a fraction in (0,1), write 0.95 for 95%"},
		{sloassert.Refute(99), "Refute(99): confidence is a fraction in (0,1), write 0.99 for 99%"},
		{sloassert.Demonstrate(1), "Demonstrate(1): confidence is a fraction in (0,1), write 0.01 for 1%"},
		{sloassert.Refute(-0.5), "Refute(-0.5): confidence is a fraction in (0,1) (0.95 for 95%)"},
		{sloassert.Confidence(math.NaN()), "Confidence(NaN): confidence is a fraction in (0,1)"},
	} {
		ft := &fakeT{}
		if sloassert.Check(ft, resultOf(s), sloassert.Q(sloassert.TTFT, 0.99, time.Hour, tc.opt)) || !strings.Contains(ft.text(), tc.want) || strings.Contains(ft.text(), "needs") {
			t.Errorf("want %q, got %s", tc.want, ft.text())
		}
	}
}

func TestTailProbabilityDomain(t *testing.T) {
	for _, tc := range []struct {
		q float64
		n int
	}{{-0.1, 10}, {1.5, 10}, {99, 10}, {math.NaN(), 10}, {0.01, -1}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "sloassert: TailProbability") {
					t.Errorf("TailProbability(%v, %d): panic %v", tc.q, tc.n, r)
				}
			}()
			sloassert.TailProbability(tc.q, tc.n)
		}()
	}
	if got := sloassert.TailProbability(1, 3); got != 1 {
		t.Errorf("TailProbability(1, 3) = %v", got)
	}
}

func TestRefuteNeedsOnlyTheLowerBound(t *testing.T) {
	// n=100, q=0.99, c=0.95: P(B >= 97) = 0.9816, P(B >= 98) = 0.9206, so
	// the lower bound is X(97); the upper bound needs n >= 299.
	s := ramp(100)
	lo, ok := sloassert.LowerBound(s, 0.99, 0.95)
	if !ok || lo != 97*time.Millisecond {
		t.Fatalf("lower bound %v %v, want 97ms", lo, ok)
	}
	if _, ok := sloassert.UpperBound(s, 0.99, 0.95); ok {
		t.Fatal("an upper bound on p99 from 100 values")
	}
	ft := &fakeT{}
	if !sloassert.Check(ft, resultOf(s), sloassert.Q(sloassert.TTFT, 0.99, 97*time.Millisecond, sloassert.Refute(0.95))) {
		t.Errorf("refute failed with the lower bound at budget: %s", ft.text())
	}
	ft = &fakeT{}
	if sloassert.Check(ft, resultOf(s), sloassert.Q(sloassert.TTFT, 0.99, 96*time.Millisecond, sloassert.Refute(0.95))) || !strings.Contains(ft.text(), "refute: lower 95% bound 97.0ms = X(97) of 100") {
		t.Errorf("refute passed with the lower bound over budget: %s", ft.text())
	}
	// The point policy shows the interval and says the row is inconclusive
	// (no upper bound yet), with about how many requests would decide it.
	out := judge(resultOf(s), sloassert.Q(sloassert.TTFT, 0.99, 200*time.Millisecond))
	if !out.OK || out.Verdict != sloassert.Inconclusive || out.Interval != "[97.0ms, ?]" || out.Need < 299 ||
		!strings.Contains(out.Note, "inconclusive at 95%: [97.0ms, ?]; about") {
		t.Errorf("%+v", out)
	}
}

func TestVerdicts(t *testing.T) {
	s := ramp(1000) // p99 = 990.01 ms; 95% bounds X(985) and X(996)
	lo, hi, ok := sloassert.ConfidenceBounds(s, 0.99, 0.95)
	if !ok || lo != 985*time.Millisecond || hi != 996*time.Millisecond {
		t.Fatalf("bounds %v %v %v", lo, hi, ok)
	}
	for _, tc := range []struct {
		name    string
		budget  time.Duration
		opts    []sloassert.Option
		ok      bool
		verdict sloassert.Verdict
	}{
		{"point, clear pass", time.Second, nil, true, sloassert.Pass},
		{"point, clear fail", 900 * time.Millisecond, nil, false, sloassert.Fail},
		{"point, inside the interval, point passes", 991 * time.Millisecond, nil, true, sloassert.Inconclusive},
		{"point, inside the interval, point fails", 989 * time.Millisecond, nil, false, sloassert.Inconclusive},
		{"demonstrate, inside the interval", 991 * time.Millisecond, []sloassert.Option{sloassert.Demonstrate(0.95)}, false, sloassert.Inconclusive},
		{"demonstrate, at the upper bound", 996 * time.Millisecond, []sloassert.Option{sloassert.Demonstrate(0.95)}, true, sloassert.Pass},
		{"refute, inside the interval", 989 * time.Millisecond, []sloassert.Option{sloassert.Refute(0.95)}, true, sloassert.Inconclusive},
		{"refute, under the lower bound", 984 * time.Millisecond, []sloassert.Option{sloassert.Refute(0.95)}, false, sloassert.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := sloassert.Evaluate(resultOf(s), sloassert.Q(sloassert.TTFT, 0.99, tc.budget, tc.opts...))
			out := rep.Outcomes[0]
			if out.OK != tc.ok || out.Verdict != tc.verdict || out.Interval != "[985.0ms, 996.0ms]" {
				t.Errorf("%+v", out)
			}
			text := rep.String()
			if !strings.Contains(text, "interval 95%") || !strings.Contains(text, "[985.0ms, 996.0ms]") {
				t.Errorf("report:\n%s", text)
			}
			if tc.verdict == sloassert.Inconclusive && (!strings.Contains(text, "inconclusive at 95%: [985.0ms, 996.0ms]") ||
				!strings.Contains(text, "requests would decide it") || len(rep.Inconclusive()) != 1) {
				t.Errorf("report:\n%s", text)
			}
		})
	}
}

func TestFailedQuantileIsExplained(t *testing.T) {
	r := failSome(streamed(300), 11, "http_529")
	rep := sloassert.Evaluate(r, sloassert.Q(sloassert.Total, 0.99, time.Hour))
	if !strings.Contains(rep.String(), "p99 is a failed request: 11 of 300 requests failed (3.7%) > 1%") {
		t.Errorf("report:\n%s", rep)
	}
}

func TestShareIsReadable(t *testing.T) {
	r := failSome(streamed(300), 11, "http_529")
	if out := judge(r, sloassert.MaxErrorRate(0.05)); out.Observed != "3.7% (11 of 300)" {
		t.Errorf("observed %q", out.Observed)
	}
	r = failSome(streamed(3000), 1, "http_529")
	if out := judge(r, sloassert.MaxErrorRate(0.05)); out.Observed != "0.033% (1 of 3000)" {
		t.Errorf("observed %q", out.Observed)
	}
}

// TestNothingPassesVacuously runs every objective kind on inputs that hold
// no evidence: none may pass.
func TestNothingPassesVacuously(t *testing.T) {
	type kind struct {
		name string
		obj  sloassert.Objective
	}
	kinds := []kind{
		{"ttft p99", sloassert.Q(sloassert.TTFT, 0.99, time.Hour)},
		{"first answer p50", sloassert.Q(sloassert.FirstAnswer, 0.5, time.Hour)},
		{"total p95 demonstrate", sloassert.Q(sloassert.Total, 0.95, time.Hour, sloassert.Demonstrate(0.95))},
		{"total p95 refute", sloassert.Q(sloassert.Total, 0.95, time.Hour, sloassert.Refute(0.95))},
		{"itl p99", sloassert.Q(sloassert.ITL, 0.99, time.Hour)},
		{"max gap p99", sloassert.Q(sloassert.MaxGap, 0.99, time.Hour)},
		{"cv", sloassert.MaxCV(sloassert.Total, 1e6)},
		{"tail ratio", sloassert.MaxTailRatio(sloassert.Total, 1e6)},
		{"error rate", sloassert.MaxErrorRate(0.5)},
		{"decode rate", sloassert.MinDecodeRate(0.05, 1e-9)},
		{"cache miss", sloassert.NoCacheHits()},
		{"max stall", sloassert.MaxStall(time.Hour)},
		{"task per call", sloassert.Task{Calls: 2, Budget: time.Hour, TailTasks: 0.5}.Objective(sloassert.Total)},
		{"goodput", sloassert.MinGoodput(0.5, time.Hour, time.Hour)},
		{"cold start", sloassert.MaxColdStart(time.Hour)},
		{"per window", sloassert.Q(sloassert.Total, 0.5, time.Hour, sloassert.PerWindow(time.Hour))},
		{"from schedule", sloassert.Q(sloassert.FromSchedule, 0.5, time.Hour)},
	}
	inputs := []struct {
		name string
		r    func() *latencytest.Result
		skip []string // kinds that judge nothing this input lacks
	}{
		{"nil", func() *latencytest.Result { return nil }, nil},
		{"empty", func() *latencytest.Result { return &latencytest.Result{} }, nil},
		{"warm-up only", func() *latencytest.Result {
			r := streamed(20)
			for i := range r.Records {
				r.Records[i].Warmup = true
			}
			return r
		}, nil},
		{"partial", func() *latencytest.Result { return partial(streamed(300)) }, nil},
		{"all failed", func() *latencytest.Result { return allFailed(300) }, nil},
		{"never observed", func() *latencytest.Result { return unobservedResult(300) },
			[]string{"total p95 demonstrate", "total p95 refute", "cv", "tail ratio", "error rate", "task per call", "per window"}},
		{"too small", func() *latencytest.Result { return streamed(1) }, []string{"cache miss", "max stall", "cold start"}}, // maxima: one value is a real observation
	}
	inputs = append(inputs, shardAndMergeInputs(t)...) // a shard, incomplete merges (shard_test.go)
	for _, in := range inputs {
		for _, k := range kinds {
			if slices.Contains(in.skip, k.name) {
				continue
			}
			t.Run(in.name+"/"+k.name, func(t *testing.T) {
				rep := sloassert.Evaluate(in.r(), k.obj)
				if rep.OK() {
					t.Errorf("passed:\n%s", rep)
				}
				ft := &fakeT{}
				if sloassert.Check(ft, in.r(), k.obj) || len(ft.errs) != 1 {
					t.Errorf("Check passed or said nothing: %v", ft.errs)
				}
			})
		}
	}
	// NaN and nonsense limits never pass, whatever the data.
	r := streamed(300)
	for _, o := range []sloassert.Objective{
		sloassert.Q(sloassert.TTFT, math.NaN(), time.Hour),
		sloassert.Q(sloassert.TTFT, 0.99, 0),
		sloassert.MaxCV(sloassert.TTFT, math.NaN()),
		sloassert.MaxTailRatio(sloassert.TTFT, math.NaN()),
		sloassert.MaxErrorRate(math.NaN()),
		sloassert.MinDecodeRate(0.05, math.NaN()),
		sloassert.MinDecodeRate(math.NaN(), 1),
		sloassert.MinDecodeRate(0.05, math.Inf(1)),
		sloassert.MaxStall(0),
		sloassert.Q("ttfb", 0.5, time.Hour),
	} {
		if out := judge(r, o); out.OK || out.Note == "" {
			t.Errorf("%s: %+v", o.Name, out)
		}
	}
	// A chain objective on nothing.
	for _, co := range []sloassert.Objective{sloassert.ChainQ(0.5, time.Hour), sloassert.MaxChainErrorRate(0.5)} {
		if rep := sloassert.Evaluate(&latencytest.ChainResult{}, co); rep.OK() {
			t.Errorf("%s passed on no chains", co.Name)
		}
		if rep := sloassert.Evaluate((*latencytest.ChainResult)(nil), co); rep.OK() {
			t.Errorf("%s passed on nil", co.Name)
		}
	}
}

// TestSampleSizeIsExact checks SampleSize against an independent power
// computation from the full binomial distribution, and by simulation.
func TestSampleSizeIsExact(t *testing.T) {
	for _, tc := range []struct {
		q, c, power, level float64
	}{
		{0.99, 0.95, 0.8, 0.995},
		{0.95, 0.95, 0.8, 0.975},
		{0.5, 0.95, 0.9, 0.6},
		{0.99, 0.95, 0.8, 0.98}, // refute: the budget sits at the true p98
		{0.9, 0.9, 0.5, 0.8},
	} {
		n := sloassert.SampleSize(tc.q, tc.c, tc.power, tc.level)
		if p := fullPower(n, tc.q, tc.c, tc.level); p < tc.power {
			t.Errorf("%+v: n = %d has power %.4f < %v", tc, n, p, tc.power)
		}
		// No n below it reaches the power (the search looks back eight rank
		// steps; check the whole range below, or the 300 below it under
		// -race, which only slows the same arithmetic).
		from := 1
		if raceEnabled() {
			from = max(1, n-300)
		}
		for m := from; m < n; m++ {
			if p := fullPower(m, tc.q, tc.c, tc.level); p >= tc.power {
				t.Errorf("%+v: n = %d, but %d already has power %.4f", tc, n, m, p)
				break
			}
		}
		t.Logf("SampleSize(%v, %v, %v, %v) = %d", tc.q, tc.c, tc.power, tc.level, n)
	}
	// The worked example: p99 at 95%, power 0.8, budget at the true p99.5.
	n := sloassert.SampleSize(0.99, 0.95, 0.8, 0.995)
	// Simulate: uniform values, the budget at 0.995; Demonstrate passes
	// with probability about 0.8.
	rng := rand.New(rand.NewPCG(1, 2))
	pass := 0
	const trials = 2000
	for range trials {
		s := make(latencytest.Sample, n)
		for i := range s {
			s[i] = time.Duration(rng.Float64() * 1e9)
		}
		if hi, ok := sloassert.UpperBound(s, 0.99, 0.95); ok && hi <= 995*time.Millisecond {
			pass++
		}
	}
	rate := float64(pass) / trials
	// Binomial sd at 0.8 over 2000 trials is 0.009: 4 sd either way.
	if want := fullPower(n, 0.99, 0.95, 0.995); math.Abs(rate-want) > 0.036 {
		t.Errorf("simulated power %.3f, exact %.3f (n = %d)", rate, want, n)
	}
	for _, bad := range [][4]float64{{0.99, 0.95, 0.8, 0.99}, {99, 0.95, 0.8, 0.995}, {0.99, 95, 0.8, 0.995}, {0.99, 0.95, 80, 0.995}, {0.99, 0.95, 0.8, 1}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "sloassert: SampleSize") {
					t.Errorf("SampleSize%v: panic %v", bad, r)
				}
			}()
			sloassert.SampleSize(bad[0], bad[1], bad[2], bad[3])
		}()
	}
}

// fullPower computes, from whole binomial distributions, the chance that
// n values decide "q-quantile <= budget" the right way when the budget is
// the level-quantile.
func fullPower(n int, q, c, level float64) float64 {
	pmf := func(p float64) []float64 {
		out := make([]float64, n+1)
		for i := range out {
			lg, _ := math.Lgamma(float64(n + 1))
			a, _ := math.Lgamma(float64(i + 1))
			b, _ := math.Lgamma(float64(n - i + 1))
			out[i] = math.Exp(lg - a - b + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
		}
		return out
	}
	b, g := pmf(q), pmf(level) // B ~ Bin(n,q); C ~ Bin(n,level) values at or under the budget
	if level > q {
		// Upper bound rank k: smallest with P(B <= k-1) >= c.
		acc := 0.0
		for k := 1; k <= n; k++ {
			acc += b[k-1]
			if acc >= c {
				p := 0.0 // P(C >= k)
				for i := k; i <= n; i++ {
					p += g[i]
				}
				return p
			}
		}
		return 0
	}
	// Lower bound rank j: largest with P(B >= j) >= c.
	acc := 0.0
	for j := n; j >= 1; j-- {
		acc += b[j]
		if acc >= c {
			p := 0.0 // P(C <= j-1)
			for i := 0; i < j; i++ {
				p += g[i]
			}
			return p
		}
	}
	return 0
}

func markCacheReported(rec *latencytest.Record) { rec.UsageReported, rec.CachedReported = true, true }

func TestSweepLevelNeverRunFails(t *testing.T) {
	c1, c8 := streamed(300), partial(streamed(300))
	sr := &latencytest.SweepResult{Levels: []int{1, 8}, Results: []*latencytest.Result{c1, c8}, Planned: []int{1, 8, 50}}
	o := sloassert.Q(sloassert.TTFT, 0.5, time.Hour)
	reps := sloassert.Evaluate(sr, o).Levels
	if len(reps) != 3 || !reps[0].OK() || reps[1].OK() || reps[2].OK() ||
		!strings.Contains(reps[2].String(), "level c50 never ran (the sweep stopped after c8 was cut short: the test's deadline is near)") {
		t.Fatalf("%v", reps)
	}
	// Even allowing partial results, the level that never ran fails.
	reps = sloassert.Evaluate(sr, o.With(sloassert.AllowPartial())).Levels
	if !reps[1].OK() || reps[2].OK() {
		t.Errorf("%v", reps)
	}
	ft := &fakeT{}
	if sloassert.Check(ft, sr, o.With(sloassert.AllowPartial())) || len(ft.errs) != 1 || !strings.Contains(ft.text(), "c50: FAIL") {
		t.Errorf("Check of a sweep: %v", ft.errs)
	}
	for _, bad := range []*latencytest.SweepResult{nil, {}} {
		if reps := sloassert.Evaluate(bad, o).Levels; len(reps) != 1 || reps[0].OK() {
			t.Errorf("empty sweep passed: %v", reps)
		}
	}
}

// A budget as large as Failed itself ("no limit": math.MaxInt64) never
// lets a failed request pass.
func TestUnlimitedBudgetStillFailsFailures(t *testing.T) {
	r := allFailed(300)
	noLimit := time.Duration(math.MaxInt64)
	for _, o := range []sloassert.Objective{
		sloassert.Q(sloassert.Total, 0.5, noLimit),
		sloassert.Q(sloassert.Total, 0.5, noLimit, sloassert.Demonstrate(0.95)),
		sloassert.Q(sloassert.Total, 0.5, noLimit, sloassert.Refute(0.95)),
		sloassert.MaxStall(noLimit),
		sloassert.MaxColdStart(noLimit),
	} {
		if out := judge(r, o); out.OK {
			t.Errorf("%s passed every request failing: %+v", o.Name, out)
		}
	}
}

// A partial run cannot judge a change against a baseline unless the
// comparison allows it.
func TestBaselinePartialRunFails(t *testing.T) {
	base, cur := streamed(300), partial(streamed(300))
	rep := sloassert.Compare{}.Evaluate(base, cur)
	if rep.OK() || !strings.Contains(rep.Problem, "the current run was cut short: 300 of 600 planned requests sent") {
		t.Errorf("partial current run: %s", rep)
	}
	if rep := (sloassert.Compare{}).Evaluate(base, cur, sloassert.AllowPartial()); !rep.OK() {
		t.Errorf("AllowPartial: %s", rep)
	}
	if rep := (sloassert.Compare{}).Evaluate(partial(streamed(300)), streamed(300)); rep.OK() || !strings.Contains(rep.Problem, "the baseline run was cut short") {
		t.Errorf("partial baseline: %s", rep)
	}
}

// A comparison takes AllowPartial and AllowShard, the options objectives
// take; any other option does not apply to it, and the comparison fails
// naming it rather than ignoring it.
func TestCompareRefusesOptionsThatDoNotApply(t *testing.T) {
	base, cur := streamed(300), streamed(300)
	if rep := (sloassert.Compare{}).Evaluate(base, cur, sloassert.AllowPartial(), sloassert.AllowShard()); !rep.OK() {
		t.Fatalf("AllowPartial and AllowShard on whole runs: %s", rep)
	}
	for _, tc := range []struct {
		opt  sloassert.Option
		name string
	}{
		{sloassert.AllowSmallSample(), "AllowSmallSample"}, {sloassert.Demonstrate(0.95), "Demonstrate"},
		{sloassert.Refute(0.95), "Refute"}, {sloassert.Confidence(0.9), "Confidence"},
		{sloassert.PerWindow(time.Minute), "PerWindow"}, {sloassert.Note("x"), "Note"},
		{sloassert.AfterIdle(time.Second), "AfterIdle"},
	} {
		rep := sloassert.Compare{}.Evaluate(base, cur, tc.opt)
		if want := "sloassert: compare: " + tc.name + " does not apply to a baseline comparison"; rep.OK() || !strings.HasPrefix(rep.Problem, want) {
			t.Errorf("%s: problem %q, want %q", tc.name, rep.Problem, want)
		}
	}
	ft := &fakeT{}
	path := filepath.Join(t.TempDir(), "base.jsonl")
	if err := sloassert.SaveBaseline(path, base); err != nil {
		t.Fatal(err)
	}
	if sloassert.Regression(ft, path, cur, sloassert.Compare{}, sloassert.Refute(0.95)) || !strings.Contains(ft.text(), "Refute does not apply") {
		t.Errorf("Regression with Refute: %q", ft.errs)
	}
}

func TestSaveBaselineRefusesAPartialRun(t *testing.T) {
	err := sloassert.SaveBaseline(t.TempDir()+"/b.jsonl", partial(streamed(300)))
	if err == nil || !strings.Contains(err.Error(), "a partial run is no baseline") {
		t.Errorf("err %v", err)
	}
}

// TestNoCacheHitsNotReportedIsNotZero: a server that never reports cached
// tokens (Ollama) gets an inconclusive row that says so, not "observed 0,
// budget 0, margin 0 ... FAIL"; a reported hit fails; reports of zero
// from every request pass.
func TestNoCacheHitsNotReportedIsNotZero(t *testing.T) {
	silent := streamed(100)
	for i := range silent.Records {
		silent.Records[i].CachedReported = false
	}
	out := judge(silent, sloassert.NoCacheHits())
	if out.OK || out.Verdict != sloassert.Inconclusive || out.Observed != "not reported" || out.Margin != "" ||
		!strings.Contains(out.Note, "the server reports no cached tokens: nothing to show") {
		t.Errorf("never reported: %+v", out)
	}
	if s := out.String(); strings.Contains(s, "0 cached tokens") {
		t.Errorf("row reads as zero:\n%s", s)
	}
	some := streamed(100)
	some.Records[3].CachedReported = false
	if out := judge(some, sloassert.NoCacheHits()); out.OK || out.Verdict != sloassert.Inconclusive || !strings.Contains(out.Note, "1 of 100 successful requests reported no cached-token count") {
		t.Errorf("one unreported: %+v", out)
	}
	hit := streamed(100)
	hit.Records[0].CachedReported = false
	hit.Records[5].CachedTokens = 64
	if out := judge(hit, sloassert.NoCacheHits()); out.OK || out.Verdict != sloassert.Fail || out.Observed != "64 cached tokens" {
		t.Errorf("a reported hit: %+v", out)
	}
	if out := judge(streamed(100), sloassert.NoCacheHits()); !out.OK || out.Verdict != sloassert.Pass {
		t.Errorf("zero reported by all: %+v", out)
	}
}
