package sloassert_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// The -update flag rewrites the baselines and golden files under
// testdata/baselines/. It is registered in init, after every package-level
// variable of the test package (another file may define the same flag),
// and only when nobody did.
func init() {
	if flag.Lookup(sloassert.UpdateFlag) == nil {
		flag.Bool(sloassert.UpdateFlag, false, "rewrite the baselines and golden files under testdata/")
	}
}

// blUpdating reports whether to rewrite golden files: -update or the
// environment variable, as for baselines.
func blUpdating() bool {
	if b, _ := strconv.ParseBool(os.Getenv(sloassert.EnvUpdateBaselines)); b {
		return true
	}
	g, ok := flag.Lookup(sloassert.UpdateFlag).Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

// blBaseline is the committed baseline: mistral-3-14b, seed 1, 300
// measured requests at concurrency 8.
const blBaseline = "testdata/baselines/mistral-3-14b.jsonl"

// blMistral is the mistral-3-14b preset with its seed; tail multiplies the
// median and p99 of its slow TTFT path (5% of requests near 450 ms, which
// make the p99).
func blMistral(t *testing.T, seed uint64, tail float64) fakeprovider.Profile {
	t.Helper()
	// mistral-3-14b's c=1 shape as a two-path model (the preset before it
	// was refitted from the raw records): 95% of TTFTs near 174 ms and a
	// 5% slow path near 450 ms, which tail scales. The baselines test
	// Compare, not the preset, so the shape is fixed here.
	ln := func(median time.Duration, sigma float64) fakeprovider.Dist[time.Duration] {
		return fakeprovider.LogNormal(median, time.Duration(float64(median)*math.Exp(sigma*2.3263478740408408)))
	}
	return fakeprovider.Profile{
		Model: "mistral-3-14b",
		Seed:  seed,
		TTFT: fakeprovider.Mixture(
			fakeprovider.Weighted(0.95, ln(174*time.Millisecond, 0.20)),
			fakeprovider.Weighted(0.05, ln(time.Duration(450*tail*float64(time.Millisecond)), 0.35)),
		),
		ITL: fakeprovider.Mixture(
			fakeprovider.Weighted(0.91, ln(5100*time.Microsecond, 0.072)),
			fakeprovider.Weighted(0.09, ln(14900*time.Microsecond, 0.49)),
		),
		PrefillPer1kTokens: fakeprovider.Fixed(35 * time.Millisecond),
		ITLPerRequest:      true,
		OutputTokens:       fakeprovider.Fixed(64),
		SlotsPerReplica:    32,
		PrefixCache:        fakeprovider.PrefixCache{Scope: fakeprovider.CacheScopePrefill},
	}
}

// blRun runs a batch against the in-memory fake; call it inside a bubble.
func blRun(t *testing.T, prof fakeprovider.Profile, b latencytest.Batch) *latencytest.Result {
	t.Helper()
	f := fakeprovider.New(prof)
	t.Cleanup(f.Close)
	p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(prof.Model))
	r, err := b.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var blBatch = latencytest.Batch{Requests: 300, Concurrency: 8}

// blResult makes a result of one run from hand-made latencies (TTFT =
// first answer = total); latencytest.Failed makes a failed request.
func blResult(run int, ds ...time.Duration) *latencytest.Result {
	r := &latencytest.Result{Run: latencytest.Run{Planned: len(ds)}}
	for i, d := range ds {
		rec := latencytest.Record{ID: fmt.Sprintf("h-r%d-%04d", run, i), Run: run, Status: 200, TTFT: d, FirstAnswer: d, Total: d}
		if d == latencytest.Failed {
			rec.Status, rec.Err = 529, "http_529"
			rec.TTFT, rec.FirstAnswer, rec.Total = latencytest.NotObserved, latencytest.NotObserved, time.Second
		}
		r.Records = append(r.Records, rec)
	}
	return r
}

// blJoin pools results (repeated runs) into one.
func blJoin(rs ...*latencytest.Result) *latencytest.Result {
	out := &latencytest.Result{}
	for _, r := range rs {
		out.Records = append(out.Records, r.Records...)
		out.Planned += r.Planned
	}
	return out
}

// blLogNormal draws n latencies, lognormal with that median and log-sd.
func blLogNormal(seed uint64, n int, median time.Duration, sigma float64) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 99))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(float64(median) * math.Exp(sigma*rng.NormFloat64()))
	}
	return out
}

// blSpread is n latencies evenly spread over [lo, hi].
func blSpread(n int, lo, hi time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = lo + time.Duration(float64(hi-lo)*float64(i)/float64(n-1))
	}
	return out
}

func blScale(ds []time.Duration, f float64) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = time.Duration(float64(d) * f)
	}
	return out
}

// blT captures what Regression reports.
type blT struct {
	name       string
	errs, logs []string
}

func (b *blT) Errorf(format string, args ...any) {
	b.errs = append(b.errs, fmt.Sprintf(format, args...))
}
func (b *blT) Logf(format string, args ...any) { b.logs = append(b.logs, fmt.Sprintf(format, args...)) }
func (b *blT) Name() string                    { return b.name }

// blGolden compares got with the golden file, or rewrites it under -update.
func blGolden(t *testing.T, path, got string) {
	t.Helper()
	if blUpdating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (rewrite it with go test -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("report differs from %s (rewrite it with -update if the change is right)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestBaselineRecorded records the committed baseline under -update (the
// only test that writes it) and otherwise compares the same preset and
// seed with it: the fake gives the same records, so nothing changed.
func TestBaselineRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := blRun(t, blMistral(t, 1, 1), blBatch)
		if !sloassert.Regression(t, blBaseline, r, sloassert.Compare{}) {
			return
		}
		base, err := sloassert.LoadBaseline(blBaseline)
		if err != nil {
			t.Fatal(err)
		}
		if c := base.Counts(); c.Kept != 300 || c.Failed != 0 {
			t.Errorf("baseline: %+v, want 300 measured requests, none failed", c)
		}
		// Same seed, same records: every quantile is equal.
		rep := sloassert.Compare{}.Evaluate(base, r)
		for _, ch := range rep.Changes {
			if ch.Base != ch.Cur || ch.Ratio != 1 {
				t.Errorf("%s: baseline %v, same seed %v: the fake is not deterministic or the baseline is stale (rewrite it with -update)",
					sloassert.QuantileName(ch.Q), ch.Base, ch.Cur)
			}
		}
	})
}

// TestBaselineOtherSeedNoRegression: the same model measured again (another
// seed: other draws) is no regression, though its quantiles differ.
func TestBaselineOtherSeedNoRegression(t *testing.T) {
	base, err := sloassert.LoadBaseline(blBaseline)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		cur := blRun(t, blMistral(t, 2, 1), blBatch)
		rep := sloassert.Compare{}.Evaluate(base, cur)
		rep.Baseline = blBaseline
		if !rep.OK() || len(rep.Changes) != 3 {
			t.Fatalf("same preset, other seed: want no regression\n%s", rep)
		}
		differ := false
		for _, ch := range rep.Changes {
			differ = differ || ch.Base != ch.Cur
			if !(ch.Lo <= ch.Ratio && ch.Ratio <= ch.Hi) || !(ch.Lo < 1.2) {
				t.Errorf("%s: ratio %.3f, interval [%.3f, %.3f]", sloassert.QuantileName(ch.Q), ch.Ratio, ch.Lo, ch.Hi)
			}
		}
		if !differ {
			t.Errorf("another seed gave the same quantiles: the comparison proved nothing\n%s", rep)
		}
		t.Logf("\n%s", rep)
	})
}

// TestBaselineDoubledTailRegresses: the same preset with its slow path
// twice as slow (p99 about 2x, median unchanged) regresses at p99, and the
// report says so per quantile (golden file).
func TestBaselineDoubledTailRegresses(t *testing.T) {
	base, err := sloassert.LoadBaseline(blBaseline)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		cur := blRun(t, blMistral(t, 2, 2), blBatch)
		rep := sloassert.Compare{}.Evaluate(base, cur)
		rep.Baseline = blBaseline
		if rep.OK() {
			t.Fatalf("doubled tail: want a regression\n%s", rep)
		}
		p50, p99 := rep.Changes[0], rep.Changes[2]
		if p50.Regression || p50.Problem != "" || !(p50.Lo < 1 && p50.Hi > 1) {
			t.Errorf("p50 regressed or moved: the slow path is 5%% of requests\n%s", rep)
		}
		if !p99.Regression || !p99.Interval || !(p99.Lo > 1.2) || !(p99.Cur-p99.Base > 50*time.Millisecond) {
			t.Errorf("p99: want a regression\n%s", rep)
		}
		// The slow path doubled: many more current requests beyond the
		// baseline's 3rd slowest ×1.2 than the 3 chance expects.
		if !p99.Tail.Regression || p99.Tail.J != 3 || p99.Tail.Beyond < 9 {
			t.Errorf("p99 tail: %+v, want a regression", p99.Tail)
		}
		// A tail regression leaves the distribution as a whole in place:
		// the rank test does not see it, which is why it does not gate.
		if rep.MannWhitney.P < 0.05 {
			t.Errorf("Mann-Whitney p = %v: a 5%% tail moved the whole distribution?", rep.MannWhitney.P)
		}
		text := rep.String()
		for _, want := range []string{
			"ttft vs " + blBaseline + ": FAIL (regression at p99",
			"REGRESSION",
			"95% CI of ratio",
			"n = 300 baseline (0 failed, 1 run) vs 300 current (0 failed); 2000 bootstrap resamples, seed 1",
			"no evidence of a whole-distribution shift",
			"failed requests: 0 of 300 current (0%) vs 0 of 300 baseline (0%), +0.0 points, Fisher p = 1.0000: ~",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("report lacks %q:\n%s", want, text)
			}
		}
		if !strings.Contains(text, fmt.Sprintf("[%.2f, %.2f]", p99.Lo, p99.Hi)) {
			t.Errorf("report lacks the p99 interval:\n%s", text)
		}
		blGolden(t, "testdata/baselines/doubled-tail.golden", text)
	})
}

// TestBaselineRepeatGapFromBatch: a baseline measured with Repeat: 2 gets
// its run-to-run gap from its records, the same figure the batch reported.
func TestBaselineRepeatGapFromBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := blBatch
		b.Repeat = 2
		base := blRun(t, blMistral(t, 1, 1), b)
		cur := blRun(t, blMistral(t, 2, 1), blBatch)
		rep := sloassert.Compare{}.Evaluate(base, cur)
		if rep.Runs != 2 || rep.NBase != 600 {
			t.Fatalf("runs %d, n %d; want 2 runs of 300", rep.Runs, rep.NBase)
		}
		for _, ch := range rep.Changes {
			var want *disclosure.RepeatGap
			for i, g := range base.RepeatGaps {
				if g.Metric == "ttft" && g.Q == ch.Q {
					want = &base.RepeatGaps[i]
				}
			}
			if want == nil || ch.Gap != want.Gap || ch.Threshold != 1+max(0.2, want.Gap) {
				t.Errorf("%s: gap %v threshold %v, batch says %+v", sloassert.QuantileName(ch.Q), ch.Gap, ch.Threshold, want)
			}
		}
		if !strings.Contains(rep.String(), "run gap") || !strings.Contains(rep.String(), "2 runs") {
			t.Errorf("report lacks the run gap:\n%s", rep)
		}
		t.Logf("\n%s", rep)
	})
}

// TestBootstrapInterval: identical samples give an interval around 1;
// doubled ones an interval around 2.
func TestBootstrapInterval(t *testing.T) {
	vals := blLogNormal(5, 500, 200*time.Millisecond, 0.5)
	same := sloassert.Compare{}.Evaluate(blResult(0, vals...), blResult(0, vals...))
	if !same.OK() {
		t.Errorf("identical samples:\n%s", same)
	}
	for _, ch := range same.Changes {
		// p99 of 500 lognormal values (log-sd 0.5) rests on the top 5: its
		// interval is wide (about [0.73, 1.37] at this seed).
		if ch.Ratio != 1 || !(ch.Lo < 1 && ch.Hi > 1) || ch.Lo < 0.5 || ch.Hi > 2 {
			t.Errorf("identical, %s: ratio %v interval [%v, %v]; want about 1", sloassert.QuantileName(ch.Q), ch.Ratio, ch.Lo, ch.Hi)
		}
	}
	doubled := sloassert.Compare{}.Evaluate(blResult(0, vals...), blResult(0, blScale(vals, 2)...))
	if doubled.OK() || len(doubled.Regressions()) != 3 {
		t.Errorf("doubled: want a regression at every quantile\n%s", doubled)
	}
	for _, ch := range doubled.Changes {
		if math.Abs(ch.Ratio-2) > 1e-6 || !(ch.Lo > 1.2) || !(ch.Lo < 2 && ch.Hi > 2) {
			t.Errorf("doubled, %s: ratio %v interval [%v, %v]; want about 2", sloassert.QuantileName(ch.Q), ch.Ratio, ch.Lo, ch.Hi)
		}
	}
	// Halved is faster, never a regression.
	halved := sloassert.Compare{}.Evaluate(blResult(0, vals...), blResult(0, blScale(vals, 0.5)...))
	if !halved.OK() || !strings.Contains(halved.String(), "-50.0% faster") {
		t.Errorf("halved:\n%s", halved)
	}
}

// TestBootstrapMatchesReference recomputes the interval as Compare's
// documentation states it: a PCG seeded (Seed, 0) draws each resample's
// baseline indices, then its current indices; the interval runs from the
// k-th smallest to the k-th largest ratio, k = floor(R(1-c)/2)+1.
func TestBootstrapMatchesReference(t *testing.T) {
	base := blLogNormal(11, 60, 200*time.Millisecond, 0.5)
	cur := blLogNormal(12, 45, 240*time.Millisecond, 0.5)
	c := sloassert.Compare{Quantiles: []float64{0.5, 0.9}, Confidence: 0.9, Resamples: 400, Seed: 42}
	rep := c.Evaluate(blResult(0, base...), blResult(0, cur...))

	sorted := func(ds []time.Duration) latencytest.Sample {
		s := latencytest.Sample(append([]time.Duration{}, ds...))
		slices.Sort(s)
		return s
	}
	xb, xc := sorted(base), sorted(cur)
	rng := rand.New(rand.NewPCG(42, 0))
	draw := func(x latencytest.Sample) latencytest.Sample {
		out := make(latencytest.Sample, len(x))
		for i := range out {
			out[i] = x[rng.IntN(len(x))]
		}
		return out
	}
	ratios := make([][]float64, 2)
	for range 400 {
		rb, rc := draw(xb), draw(xc)
		for i, q := range c.Quantiles {
			ratios[i] = append(ratios[i], float64(rc.Quantile(q))/float64(rb.Quantile(q)))
		}
	}
	// 400×(1-0.9)/2 = 20: the 21st smallest and the 21st largest
	for i, rs := range ratios {
		slices.Sort(rs)
		ch := rep.Changes[i]
		if ch.Lo != rs[20] || ch.Hi != rs[379] {
			t.Errorf("%s: interval [%v, %v], reference [%v, %v]", sloassert.QuantileName(ch.Q), ch.Lo, ch.Hi, rs[20], rs[379])
		}
	}
}

// TestBaselineDeterministic: the same data and seed give the same interval
// and report; another seed other resamples.
func TestBaselineDeterministic(t *testing.T) {
	base := blResult(0, blLogNormal(1, 400, 300*time.Millisecond, 0.6)...)
	cur := blResult(0, blLogNormal(2, 400, 330*time.Millisecond, 0.6)...)
	a := sloassert.Compare{Seed: 7}.Evaluate(base, cur)
	b := sloassert.Compare{Seed: 7}.Evaluate(base, cur)
	c := sloassert.Compare{Seed: 8}.Evaluate(base, cur)
	if a.String() != b.String() {
		t.Errorf("same seed, different reports:\n%s\n%s", a, b)
	}
	moved := false
	for i := range a.Changes {
		if a.Changes[i].Lo != b.Changes[i].Lo || a.Changes[i].Hi != b.Changes[i].Hi {
			t.Errorf("%s: same seed, intervals differ", sloassert.QuantileName(a.Changes[i].Q))
		}
		moved = moved || a.Changes[i].Lo != c.Changes[i].Lo
	}
	if !moved {
		t.Errorf("seed 8 gave seed 7's intervals: the seed is not used")
	}
	if !strings.Contains(a.String(), "seed 7") {
		t.Errorf("report does not name the seed:\n%s", a)
	}
}

// TestMannWhitneyByHand checks U, z and p on examples small enough to do
// on paper.
func TestMannWhitneyByHand(t *testing.T) {
	F := latencytest.Failed
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		base, cur latencytest.Sample
		u, z      float64
	}{{
		// Pooled and sorted: 1b 2b 2c 3b 4c 5c; the two 2s share ranks
		// 2 and 3 (2.5 each). Current's rank sum 2.5+5+6 = 13.5, so
		// U = 13.5 - 3·4/2 = 7.5 (pairs: 2 beats 1 and ties 2: 1.5; 4 and
		// 5 beat all three: 6). Mean 3·3/2 = 4.5; one tie of 2: Σ(t³-t) =
		// 6; σ² = 3·3/12·(7 - 6/(6·5)) = 0.75·6.8 = 5.1;
		// z = (7.5-4.5-0.5)/√5.1 = 1.10702; p = 1-Φ(z) = 0.13414.
		name: "ties", base: latencytest.Sample{1 * ms, 2 * ms, 3 * ms}, cur: latencytest.Sample{2 * ms, 4 * ms, 5 * ms},
		u: 7.5, z: 2.5 / math.Sqrt(5.1),
	}, {
		// Every current value is slower: U = 2·3 = 6, mean 3,
		// σ² = 2·3/12·6 = 3, z = 2.5/√3 = 1.44338, p = 0.07446.
		name: "no ties", base: latencytest.Sample{1 * ms, 2 * ms}, cur: latencytest.Sample{3 * ms, 4 * ms, 5 * ms},
		u: 6, z: 2.5 / math.Sqrt(3),
	}, {
		// Failures are the slowest values, tied: 1b F F F, ranks 1 and
		// 3,3,3. Current's rank sum 6, U = 6 - 3 = 3 (each failure beats
		// 1 ms and ties the baseline's failure: 1.5 each). Mean 2; one tie
		// of 3: Σ = 24; σ² = 2·2/12·(5 - 24/12) = 1; z = 0.5, p = 0.30854.
		name: "failures", base: latencytest.Sample{1 * ms, F}, cur: latencytest.Sample{F, F},
		u: 3, z: 0.5,
	}} {
		mw := sloassert.MannWhitneyU(tc.base, tc.cur)
		p := 0.5 * math.Erfc(tc.z/math.Sqrt2)
		if mw.U != tc.u || math.Abs(mw.Z-tc.z) > 1e-12 || math.Abs(mw.P-p) > 1e-12 || mw.NBase != len(tc.base) || mw.NCur != len(tc.cur) {
			t.Errorf("%s: got %+v, want U %v z %v p %v", tc.name, mw, tc.u, tc.z, p)
		}
	}
	// The p-values above, from a table of Φ.
	for z, want := range map[float64]float64{2.5 / math.Sqrt(5.1): 0.13414, 2.5 / math.Sqrt(3): 0.07446, 0.5: 0.30854} {
		if got := sloassert.MannWhitneyU(nil, nil); !math.IsNaN(got.P) {
			t.Errorf("empty: %+v", got)
		}
		if got := 0.5 * math.Erfc(z/math.Sqrt2); math.Abs(got-want) > 5e-6 {
			t.Errorf("1-Φ(%v) = %v, want %v", z, got, want)
		}
	}
	// All equal: no spread, no test.
	if mw := sloassert.MannWhitneyU(latencytest.Sample{ms, ms}, latencytest.Sample{ms}); mw.U != 1 || !math.IsNaN(mw.Z) || !math.IsNaN(mw.P) {
		t.Errorf("all equal: %+v", mw)
	}
}

// TestBaselineFloor: +30% of about 33 ms (+10 ms) is a clear change but
// under the 50 ms floor, so no regression; without the floor it is one.
func TestBaselineFloor(t *testing.T) {
	vals := blSpread(400, 31*time.Millisecond, 35*time.Millisecond)
	base, cur := blResult(0, vals...), blResult(0, blScale(vals, 1.3)...)
	rep := sloassert.Compare{}.Evaluate(base, cur)
	if !rep.OK() {
		t.Errorf("+10 ms is under the 50 ms floor:\n%s", rep)
	}
	for _, ch := range rep.Changes {
		if !(ch.Lo > 1.2) {
			t.Errorf("%s: interval [%v, %v] should clear +20%%: the floor alone must decide", sloassert.QuantileName(ch.Q), ch.Lo, ch.Hi)
		}
	}
	if !strings.Contains(rep.String(), "+30.0% under the 50.0ms floor") {
		t.Errorf("report does not name the floor:\n%s", rep)
	}
	tight := sloassert.Compare{Floor: time.Millisecond}.Evaluate(base, cur)
	if tight.OK() || len(tight.Regressions()) != 3 {
		t.Errorf("with a 1 ms floor, +10 ms regresses:\n%s", tight)
	}
}

// TestBaselineRepeatGap: a change of +40% regresses against a single-run
// baseline, but not against a baseline whose two runs differ by 50%.
func TestBaselineRepeatGap(t *testing.T) {
	run0 := blSpread(400, time.Second, 2*time.Second)
	run1 := blScale(run0, 1.5)
	pooled := append(append([]time.Duration{}, run0...), run1...)
	cur := blResult(0, blScale(pooled, 1.4)...)

	single := sloassert.Compare{}.Evaluate(blResult(0, pooled...), cur)
	if single.OK() || len(single.Regressions()) != 3 || single.Runs != 1 {
		t.Errorf("+40%% against one run: want a regression at every quantile\n%s", single)
	}
	repeated := sloassert.Compare{}.Evaluate(blJoin(blResult(0, run0...), blResult(1, run1...)), cur)
	if !repeated.OK() || repeated.Runs != 2 {
		t.Errorf("+40%% is within the 50%% run-to-run gap: want no regression\n%s", repeated)
	}
	for _, ch := range repeated.Changes {
		// run 1 is run 0 × 1.5: the gap is 50% (to the nanosecond's rounding)
		if math.Abs(ch.Gap-0.5) > 1e-6 || ch.Threshold != 1+ch.Gap || !(ch.Lo > 1.2) {
			t.Errorf("%s: gap %v threshold %v interval [%v, %v]", sloassert.QuantileName(ch.Q), ch.Gap, ch.Threshold, ch.Lo, ch.Hi)
		}
	}
	if text := repeated.String(); !strings.Contains(text, "run gap") || !strings.Contains(text, "+40.0% within +50.0%") {
		t.Errorf("report:\n%s", text)
	}
}

// TestBaselineNeverPassesOnNothing: no data, all failures, too few samples
// and bad settings fail, and say why.
func TestBaselineNeverPassesOnNothing(t *testing.T) {
	F := latencytest.Failed
	good := blResult(0, blSpread(300, 100*time.Millisecond, 200*time.Millisecond)...)
	failed := make([]time.Duration, 300)
	for i := range failed {
		failed[i] = F
	}
	allFailed := blResult(0, failed...)
	warmupOnly := blResult(0, 100*time.Millisecond)
	warmupOnly.Records[0].Warmup = true
	for _, tc := range []struct {
		name      string
		c         sloassert.Compare
		base, cur *latencytest.Result
		want      string
	}{
		{"nil baseline", sloassert.Compare{}, nil, good, "the baseline has no measured request"},
		{"empty baseline", sloassert.Compare{}, &latencytest.Result{}, good, "the baseline has no measured request"},
		{"warm-up only", sloassert.Compare{}, warmupOnly, good, "the baseline has no measured request"},
		{"nil current", sloassert.Compare{}, good, nil, "the current run has no measured request"},
		{"empty current", sloassert.Compare{}, good, &latencytest.Result{}, "the current run has no measured request"},
		{"all-failed baseline", sloassert.Compare{}, allFailed, good, "every baseline ttft value is a failed request (300 of 300): a baseline of failures cannot judge a change"},
		// every current quantile is infinitely slow: an infinite regression
		{"all-failed current", sloassert.Compare{}, good, allFailed, "current p50 is a failed request: 300 of 300 requests failed (100%) > 50%; baseline 0 of 300 (0%)"},
		{"all-failed current, verdict", sloassert.Compare{}, good, allFailed, "FAIL (regression at p50, p95, p99; more failed requests)"},
		{"both all failed", sloassert.Compare{}, allFailed, allFailed, "every baseline ttft value is a failed request"},
		// n = 75: p95 is fine (needs 20), p99 is not
		{"too few for p99", sloassert.Compare{}, blResult(0, blSpread(75, 100*time.Millisecond, 200*time.Millisecond)...), good,
			"cannot judge: p99 needs n >= 100 on both sides (have 75 baseline, 300 current)"},
		{"percent quantile", sloassert.Compare{Quantiles: []float64{99}}, good, good, "quantile 99 is outside (0,1)"},
		{"negative increase", sloassert.Compare{MaxIncrease: -0.1}, good, good, "max increase -0.1 is not a positive fraction"},
		{"negative floor", sloassert.Compare{Floor: -time.Millisecond}, good, good, "floor -1ms < 0"},
		{"confidence", sloassert.Compare{Confidence: 95}, good, good, "confidence 95 is outside (0,1)"},
		{"negative failure floor", sloassert.Compare{FailureFloor: -0.01}, good, good, "failure floor -0.01 is outside (0,1)"},
		{"failure floor in percent", sloassert.Compare{FailureFloor: 5}, good, good, "failure floor 5 is outside (0,1) (a fraction: 0.005 for half a percentage point)"},
		{"few resamples", sloassert.Compare{Resamples: 20}, good, good, "resamples 20 leave no resample outside a 95% interval (need >= 40)"},
		{"metric", sloassert.Compare{Metric: "latency"}, good, good, `sloassert: compare: unknown metric "latency"`},
	} {
		rep := tc.c.Evaluate(tc.base, tc.cur)
		if rep.OK() {
			t.Errorf("%s: passed\n%s", tc.name, rep)
		}
		if text := rep.String(); !strings.Contains(text, tc.want) || !strings.Contains(text, ": FAIL") {
			t.Errorf("%s: report lacks %q:\n%s", tc.name, tc.want, text)
		}
	}
}

// TestBaselineNotes: another model or concurrency is flagged.
func TestBaselineNotes(t *testing.T) {
	vals := blSpread(200, 100*time.Millisecond, 200*time.Millisecond)
	base, cur := blResult(0, vals...), blResult(0, vals...)
	for i := range base.Records {
		base.Records[i].Model, base.Records[i].Concurrency = "m-a", 8
		cur.Records[i].Model, cur.Records[i].Concurrency = "m-b", 1
	}
	text := sloassert.Compare{}.Evaluate(base, cur).String()
	for _, want := range []string{"note: the baseline served model m-a, the current run m-b", "note: the baseline ran at concurrency 8, the current run at 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

// TestSaveLoadBaseline: the records come back as written, answer text
// dropped; directories are created; an empty run is refused.
func TestSaveLoadBaseline(t *testing.T) {
	r := blResult(0, 100*time.Millisecond, latencytest.Failed, 300*time.Millisecond)
	r.Records[0].Content, r.Records[0].Warmup = "a private answer", true
	r.Records[2].Gaps.Add(5 * time.Millisecond)
	path := filepath.Join(t.TempDir(), "a", "b", "base.jsonl")
	if err := sloassert.SaveBaseline(path, r); err != nil {
		t.Fatal(err)
	}
	if r.Records[0].Content == "" {
		t.Errorf("SaveBaseline changed the caller's records")
	}
	got, err := sloassert.LoadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	r.Records[0].Content = ""
	var want, have bytes.Buffer
	_ = latencytest.WriteRecords(&want, r.Records)
	_ = latencytest.WriteRecords(&have, got.Records)
	if want.String() != have.String() {
		t.Errorf("round trip:\n%s\nwant:\n%s", have.String(), want.String())
	}
	if raw, _ := os.ReadFile(path); bytes.Contains(raw, []byte("private")) {
		t.Errorf("the answer text was written")
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("left %d files behind, want the baseline only", len(entries))
	}

	if err := sloassert.SaveBaseline(filepath.Join(t.TempDir(), "x.jsonl"), &latencytest.Result{}); err == nil ||
		!strings.HasPrefix(err.Error(), "sloassert: ") || !strings.Contains(err.Error(), "no measured request") {
		t.Errorf("empty run: %v", err)
	}
	failed := filepath.Join(t.TempDir(), "f.jsonl")
	if err := sloassert.SaveBaseline(failed, blResult(0, latencytest.Failed, latencytest.Failed)); err == nil ||
		!strings.Contains(err.Error(), "every measured request failed (http_529 2)") {
		t.Errorf("all failed: %v", err)
	}
	if _, err := os.Stat(failed); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an all-failed baseline was written")
	}
	if _, err := sloassert.LoadBaseline(filepath.Join(t.TempDir(), "missing.jsonl")); !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "sloassert: ") {
		t.Errorf("missing: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	_ = os.WriteFile(bad, []byte("{\"id\":\"a\"}\n{\"nope\":1}\n"), 0o644)
	if _, err := sloassert.LoadBaseline(bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	_ = os.WriteFile(empty, nil, 0o644)
	if _, err := sloassert.LoadBaseline(empty); err == nil || !strings.Contains(err.Error(), "holds no records") {
		t.Errorf("empty file: %v", err)
	}
}

// TestRegressionHelper drives Regression with a fake t: a missing baseline
// fails and says how to record it (and is not created); the environment
// variable records it; then the same run passes and a slower one fails.
func TestRegressionHelper(t *testing.T) {
	f := flag.Lookup(sloassert.UpdateFlag)
	old := f.Value.String()
	if err := f.Value.Set("false"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
	t.Setenv(sloassert.EnvUpdateBaselines, "")

	path := filepath.Join(t.TempDir(), "baselines", "m.jsonl")
	vals := blLogNormal(3, 300, 200*time.Millisecond, 0.4)
	run := blResult(0, vals...)

	ft := &blT{name: "TestX/sub"}
	if sloassert.Regression(ft, path, run, sloassert.Compare{}) || len(ft.errs) != 1 ||
		!strings.Contains(ft.errs[0], "sloassert: baseline "+path+" does not exist: record it with TAILGUARD_UPDATE_BASELINES=1 go test -run '^TestX$'") {
		t.Errorf("missing baseline: %q", ft.errs)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing baseline was created: %v", err)
	}

	t.Setenv(sloassert.EnvUpdateBaselines, "yes")
	ft = &blT{}
	if sloassert.Regression(ft, path, run, sloassert.Compare{}) || len(ft.errs) != 1 || !strings.Contains(ft.errs[0], `TAILGUARD_UPDATE_BASELINES="yes" is not a boolean`) {
		t.Errorf("bad variable: %q", ft.errs)
	}

	t.Setenv(sloassert.EnvUpdateBaselines, "1")
	ft = &blT{}
	if !sloassert.Regression(ft, path, run, sloassert.Compare{}) || len(ft.errs) != 0 || len(ft.logs) != 1 || !strings.Contains(ft.logs[0], "rewritten from this run (300 measured requests)") {
		t.Errorf("update: errs %q logs %q", ft.errs, ft.logs)
	}
	if sloassert.Regression(&blT{}, filepath.Join(t.TempDir(), "e.jsonl"), &latencytest.Result{}, sloassert.Compare{}) {
		t.Errorf("an empty run was recorded as a baseline")
	}

	t.Setenv(sloassert.EnvUpdateBaselines, "0")
	ft = &blT{}
	if !sloassert.Regression(ft, path, blResult(0, vals...), sloassert.Compare{}) || len(ft.errs) != 0 || len(ft.logs) != 1 || !strings.Contains(ft.logs[0], "vs "+path+": PASS") {
		t.Errorf("same run: errs %q logs %q", ft.errs, ft.logs)
	}
	ft = &blT{}
	if sloassert.Regression(ft, path, blResult(0, blScale(vals, 2)...), sloassert.Compare{}) || len(ft.errs) != 1 ||
		!strings.Contains(ft.errs[0], "FAIL (regression at p50, p95, p99)") {
		t.Errorf("slower run: %q", ft.errs)
	}

	// The flag works as the variable does.
	t.Setenv(sloassert.EnvUpdateBaselines, "")
	_ = f.Value.Set("true")
	if !sloassert.Regression(&blT{}, path, blResult(0, blScale(vals, 2)...), sloassert.Compare{}) {
		t.Errorf("-update did not rewrite")
	}
	_ = f.Value.Set("false")
	if !sloassert.Regression(&blT{}, path, blResult(0, blScale(vals, 2)...), sloassert.Compare{}) {
		t.Errorf("the rewritten baseline is not the slower run")
	}
}

// TestBaselineSettingsKept: the report carries the caller's settings.
func TestBaselineSettingsKept(t *testing.T) {
	c := sloassert.Compare{Metric: sloassert.Total, Quantiles: []float64{0.9}, MaxIncrease: 0.1, Floor: time.Second, FailureFloor: 0.01, Confidence: 0.9, Resamples: 500, Seed: 3}
	vals := blSpread(50, time.Second, 2*time.Second)
	rep := c.Evaluate(blResult(0, vals...), blResult(0, vals...))
	if fmt.Sprint(rep.Compare) != fmt.Sprint(c) || !strings.Contains(rep.String(), "total vs baseline: PASS") || !strings.Contains(rep.String(), "90% CI of ratio") {
		t.Errorf("settings not kept: %+v\n%s", rep.Compare, rep)
	}
}

// blFailAt returns ds with the values at the given indexes failed.
func blFailAt(ds []time.Duration, idx ...int) []time.Duration {
	out := slices.Clone(ds)
	for _, i := range idx {
		out[i] = latencytest.Failed
	}
	return out
}

// TestBaselineFailuresSymmetric: failed requests count alike on both
// sides. Identical runs that each hold failed requests compare equal
// (they failed: "both p99s reach a failed request"); a current p99 that is
// a failed request against a clean baseline regresses (it passed: the
// bootstrap's lower end stayed finite); a baseline p99 that is a failed
// request against a clean current run is an improvement.
func TestBaselineFailuresSymmetric(t *testing.T) {
	vals := blLogNormal(21, 300, 200*time.Millisecond, 0.4)
	for _, tc := range []struct {
		name   string
		failed []int
	}{
		{"one failure each", []int{17}},
		// 4% failed, as gpt-oss-120b's empty answers: p99 is a failed
		// request on both sides (12 of 300 > 1%).
		{"twelve failures each", []int{3, 29, 55, 81, 107, 133, 159, 185, 211, 237, 263, 289}},
	} {
		run := blFailAt(vals, tc.failed...)
		rep := sloassert.Compare{}.Evaluate(blResult(0, run...), blResult(0, run...))
		if !rep.OK() {
			t.Errorf("%s: identical runs fail:\n%s", tc.name, rep)
		}
		for _, ch := range rep.Changes {
			if ch.Ratio != 1 || ch.Lo > 1 || ch.Hi < 1 {
				t.Errorf("%s, %s: ratio %v interval [%v, %v]; want 1 inside the interval", tc.name, sloassert.QuantileName(ch.Q), ch.Ratio, ch.Lo, ch.Hi)
			}
		}
		if rep.Failures.Regression || math.Abs(rep.Failures.P-1) > 0.5 {
			t.Errorf("%s: failures %+v", tc.name, rep.Failures)
		}
	}
	text := sloassert.Compare{}.Evaluate(blResult(0, blFailAt(vals, 3, 29, 55, 81, 107, 133, 159, 185, 211, 237, 263)...),
		blResult(0, blFailAt(vals, 3, 29, 55, 81, 107, 133, 159, 185, 211, 237, 263, 289)...)).String()
	if want := "p99: both are failed requests (baseline 11 of 300 (3.7%), current 12 of 300 (4%), each > 1%): no change"; !strings.Contains(text, want) {
		t.Errorf("report lacks %q:\n%s", want, text)
	}

	// 2% of the current run failed (6 of 300), none of the baseline's:
	// the current p99 is a failed request; Fisher's test gives p =
	// C(300,6)/C(600,6) = 0.0152 < 0.05 and +2 points > 0.5.
	six := blFailAt(vals, 10, 60, 110, 160, 210, 260)
	rep := sloassert.Compare{}.Evaluate(blResult(0, vals...), blResult(0, six...))
	if rep.OK() || !rep.Failures.Regression || rep.Failures.Cur != 6 || rep.Failures.Base != 0 {
		t.Errorf("2%% failed against none: want a failure-rate regression\n%s", rep)
	}
	if p := rep.Failures.P; math.Abs(p-300.0*299*298*297*296*295/(600.0*599*598*597*596*595)) > 1e-12 {
		t.Errorf("Fisher p = %v", p)
	}
	text = rep.String()
	for _, want := range []string{
		"FAIL (more failed requests)",
		"current p99 is a failed request: 6 of 300 requests failed (2%) > 1%; baseline 0 of 300 (0%)",
		"failed requests: 6 of 300 current (2%) vs 0 of 300 baseline (0%), +2.0 points, Fisher p = 0.0152: REGRESSION",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	// The other way round: the baseline's p99 failed, the current one is
	// finite and faster: an improvement.
	rep = sloassert.Compare{}.Evaluate(blResult(0, six...), blResult(0, vals...))
	p99 := rep.Changes[2]
	if !rep.OK() || p99.Ratio != 0 || p99.Regression {
		t.Errorf("failed baseline p99 against a clean run: want an improvement\n%s", rep)
	}
	if want := "baseline p99 is a failed request: 6 of 300 requests failed (2%) > 1%; current 0 of 300 (0%)"; !strings.Contains(rep.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, rep)
	}
}

// TestBaselineFailureRate: failure shares are compared on their own, with
// Fisher's exact test and a floor.
func TestBaselineFailureRate(t *testing.T) {
	n := 3000
	vals := blSpread(n, 100*time.Millisecond, 200*time.Millisecond)
	every := func(k int) []int { // k failures spread over the run
		var idx []int
		for i := range k {
			idx = append(idx, i*(n/k))
		}
		return idx
	}
	base := blResult(0, blFailAt(vals, every(12)...)...) // 0.4%
	cur := blResult(0, blFailAt(vals, every(30)...)...)  // 1.0%: +0.6 points
	rep := sloassert.Compare{}.Evaluate(base, cur)
	f := rep.Failures
	if f.Base != 12 || f.Cur != 30 || f.NBase != n || f.NCur != n || !(f.P < 0.05) || !f.Regression || rep.OK() {
		t.Errorf("12 vs 30 failures of 3000: %+v\n%s", f, rep)
	}
	// The same data with a 1-point floor: significant, but under it.
	rep = sloassert.Compare{FailureFloor: 0.01}.Evaluate(base, cur)
	if rep.Failures.Regression || !rep.OK() || !strings.Contains(rep.String(), "Fisher p = 0.0039: under the 1-point floor") {
		t.Errorf("under a 1-point floor:\n%s", rep)
	}
	// Fewer failures than the baseline: p = 1-P(X<=…) near 1, no finding.
	rep = sloassert.Compare{}.Evaluate(cur, base)
	if rep.Failures.Regression || !(rep.Failures.P > 0.99) {
		t.Errorf("fewer failures: %+v", rep.Failures)
	}
	// 1 failure against 0 (0.33 points): p = 1/2, no finding.
	vals = blSpread(300, 100*time.Millisecond, 200*time.Millisecond)
	rep = sloassert.Compare{}.Evaluate(blResult(0, vals...), blResult(0, blFailAt(vals, 5)...))
	if !rep.OK() || math.Abs(rep.Failures.P-0.5) > 1e-12 {
		t.Errorf("one failure:\n%s", rep)
	}
}

// TestBaselineTailTest: a tail that grew past the allowance in 5% of the
// requests, while the p99 ratio barely clears +20%: the bootstrap interval
// cannot tell (its lower end is under 1.2); the exceedance test can.
func TestBaselineTailTest(t *testing.T) {
	ms := time.Millisecond
	// baseline: 285 values over [100, 200] ms and 15 over [300, 450] ms.
	bv := append(blSpread(285, 100*ms, 200*ms), blSpread(15, 300*ms, 450*ms)...)
	// current: the same 285, and 15 requests at 520 ms.
	cv := append(blSpread(285, 100*ms, 200*ms), slices.Repeat([]time.Duration{520 * ms}, 15)...)
	rep := sloassert.Compare{}.Evaluate(blResult(0, bv...), blResult(0, cv...))
	p99 := rep.Changes[2]
	// n = 300, q = 0.99: (n-1)q = 296.01, so j = 299-296 = 3 values lie
	// above the quantile; the 3rd slowest is X(298), the 13th of the
	// 15 slow values: 300 + 12/14×150 ms = 428.571428ms. Limit: ×1.2 =
	// 514.285713ms (more than +50 ms). All 15 current values at 520 ms lie
	// beyond it.
	tt := p99.Tail
	if tt.J != 3 || tt.Value != 428571428 || tt.Limit != 514285713 || tt.Beyond != 15 || tt.NBase != 300 || tt.NCur != 300 {
		t.Fatalf("tail test: %+v", tt)
	}
	// P(A >= 15) with j = 3: 0.001.
	if !(tt.P < 0.01) || !tt.Regression || p99.Interval || !p99.Regression || rep.OK() {
		t.Errorf("want a tail-only regression at p99: %+v\n%s", tt, rep)
	}
	if text := rep.String(); !strings.Contains(text, "15 vs 3") || !strings.Contains(text, "REGRESSION (tail)") || !(p99.Lo <= 1.2) {
		t.Errorf("report:\n%s", rep)
	}
	// p95: j = 15 (284.05: 299-284), the 15th slowest is 300 ms, limit
	// 360 ms; the 15 current values beyond it are as many as chance
	// expects: no finding.
	if p95 := rep.Changes[1].Tail; p95.J != 15 || p95.Value != 300*ms || p95.Beyond != 15 || p95.Regression {
		t.Errorf("p95 tail: %+v", p95)
	}

	// A whole-distribution change within the allowance (+15%) is no
	// tail regression: the limit is the baseline's value ×1.2.
	rep = sloassert.Compare{}.Evaluate(blResult(0, bv...), blResult(0, blScale(bv, 1.15)...))
	if !rep.OK() {
		t.Errorf("+15%% everywhere is within +20%%:\n%s", rep)
	}
	for _, ch := range rep.Changes {
		if ch.Tail.Regression || !(ch.Tail.P > 0.5) || ch.Tail.Beyond > ch.Tail.J {
			t.Errorf("%s: +15%% everywhere: %+v", sloassert.QuantileName(ch.Q), ch.Tail)
		}
	}
	// Too few successful requests for the tail test: it says so.
	few := blResult(0, blFailAt(blSpread(120, 100*ms, 200*ms), slices.Collect(func(yield func(int) bool) {
		for i := range 30 {
			if !yield(i * 4) {
				return
			}
		}
	})...)...)
	rep = sloassert.Compare{}.Evaluate(few, few)
	if tt := rep.Changes[2].Tail; tt.Skipped == "" || !math.IsNaN(tt.P) || !strings.Contains(tt.Skipped, "90 baseline and 90 current requests succeeded; it needs 100") {
		t.Errorf("too few successes: %+v", tt)
	}
}

// TestBaselineReportWording: the rank test does not claim that nothing
// moved, only that it saw no evidence; percentages are rounded.
func TestBaselineReportWording(t *testing.T) {
	vals := blLogNormal(9, 300, 200*time.Millisecond, 0.4)
	idx := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	rep := sloassert.Compare{Confidence: 0.9}.Evaluate(blResult(0, vals...), blResult(0, blFailAt(vals, idx...)...))
	text := rep.String()
	for _, want := range []string{
		"current p99 is a failed request: 11 of 300 requests failed (3.7%) > 1%",
		"11 of 300 current (3.7%)",
		"90% CI of ratio",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "3.66") || strings.Contains(text, "90.0000") || strings.Contains(text, "did not shift") {
		t.Errorf("report:\n%s", text)
	}
	same := sloassert.Compare{}.Evaluate(blResult(0, vals...), blResult(0, vals...)).String()
	if !strings.Contains(same, "no evidence of a whole-distribution shift") {
		t.Errorf("report:\n%s", same)
	}
}
