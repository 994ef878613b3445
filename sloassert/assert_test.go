package sloassert_test

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// fakeT records failures instead of failing: it checks what the assertions
// report.
type fakeT struct {
	errs    []string
	helpers int
}

func (f *fakeT) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Helper()      { f.helpers++ }
func (f *fakeT) text() string { return strings.Join(f.errs, "\n") }

func ms(v ...int) latencytest.Sample {
	s := make(latencytest.Sample, len(v))
	for i, x := range v {
		s[i] = time.Duration(x) * time.Millisecond
	}
	return s
}

// ramp is 1..n milliseconds.
func ramp(n int) latencytest.Sample {
	s := make(latencytest.Sample, n)
	for i := range s {
		s[i] = time.Duration(i+1) * time.Millisecond
	}
	return s
}

func TestTailProbability(t *testing.T) {
	for _, tc := range []struct {
		q    float64
		n    int
		want float64
	}{
		{0.01, 1, 0.01},
		{0.01, 10, 0.0956179}, // 1-0.99^10
		{0.01, 20, 0.1820931}, // 1-0.99^20
		{0.05, 10, 0.4012631},
		{0.01, 0, 0},
	} {
		if got := sloassert.TailProbability(tc.q, tc.n); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("TailProbability(%v, %d) = %v, want %v", tc.q, tc.n, got, tc.want)
		}
	}
}

func TestTaskPerCall(t *testing.T) {
	q, b := sloassert.Task{Calls: 10, Budget: 5 * time.Second, TailTasks: 0.05}.PerCall()
	// (1-0.05)^(1/10) = 0.994884…: each call may miss its budget 0.51% of the time.
	if math.Abs(q-0.99488) > 1e-5 || b != 500*time.Millisecond {
		t.Errorf("per call q=%v budget=%v, want 0.99488 and 500ms", q, b)
	}
	// Working back then forward gives the task target again.
	if got := sloassert.TailProbability(1-q, 10); math.Abs(got-0.05) > 1e-12 {
		t.Errorf("round trip: %v", got)
	}
	defer func() {
		if v := recover(); v == nil || !strings.HasPrefix(fmt.Sprint(v), "sloassert: ") {
			t.Errorf("panic %v", v)
		}
	}()
	sloassert.Task{Calls: 0, Budget: time.Second, TailTasks: 0.05}.PerCall()
}

func TestMinSamples(t *testing.T) {
	for q, want := range map[float64]int{0.5: 2, 0.9: 10, 0.95: 20, 0.99: 100, 0.999: 1000, 0.99488: 196} {
		if got := sloassert.MinSamples(q); got != want {
			t.Errorf("MinSamples(%v) = %d, want %d", q, got, want)
		}
	}
}

func TestSmallSampleFailsAndSaysHowMany(t *testing.T) {
	ft := &fakeT{}
	if sloassert.Check(ft, resultOf(ramp(75)), sloassert.Q(sloassert.TTFT, 0.99, time.Hour)) {
		t.Fatal("p99 from 75 samples passed")
	}
	if !strings.Contains(ft.text(), "p99 needs n >= 100 (have 75)") || ft.helpers == 0 {
		t.Errorf("report: %s", ft.text())
	}
	// Opting in judges it, and says so.
	ft = &fakeT{}
	if !sloassert.Check(ft, resultOf(ramp(75)), sloassert.Q(sloassert.TTFT, 0.99, time.Hour, sloassert.AllowSmallSample())) {
		t.Errorf("opted-in small sample failed: %s", ft.text())
	}
	ft = &fakeT{}
	if !sloassert.Check(ft, resultOf(ramp(20)), sloassert.Q(sloassert.TTFT, 0.95, 20*time.Millisecond)) {
		t.Errorf("p95 from 20 samples (the minimum): %s", ft.text())
	}
}

func TestQuantileAssertion(t *testing.T) {
	r := resultOf(ramp(100)) // p99: h = 99×0.99 = 98.01: 99 + 0.01×1 = 99.01 ms
	ft := &fakeT{}
	if !sloassert.Check(ft, r, sloassert.Q(sloassert.TTFT, 0.99, 99010*time.Microsecond)) {
		t.Errorf("p99 99.01ms within 99.01ms failed: %s", ft.text())
	}
	if sloassert.Check(ft, r, sloassert.Q(sloassert.TTFT, 0.99, 99*time.Millisecond)) {
		t.Errorf("p99 99.01ms within 99ms passed")
	}
	if !strings.Contains(ft.text(), "ttft p99 <= 99.0ms") || !strings.Contains(ft.text(), "99.0ms") || !strings.Contains(ft.text(), "-0.0ms") {
		t.Errorf("report: %s", ft.text())
	}
}

func TestNeverAFalsePass(t *testing.T) {
	allFailed := latencytest.Sample{latencytest.Failed, latencytest.Failed}
	withFailures := append(ramp(99), latencytest.Failed)
	for _, tc := range []struct {
		name string
		ok   func(sloassert.TestingT) bool
	}{
		{"empty result p50", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, resultOf(nil), sloassert.Q(sloassert.TTFT, 0.5, time.Hour))
		}},
		{"all failed p50", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, resultOf(allFailed), sloassert.Q(sloassert.TTFT, 0.5, time.Hour, sloassert.AllowSmallSample()))
		}},
		{"p99 reaching a failure", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, resultOf(withFailures), sloassert.Q(sloassert.TTFT, 0.99, time.Hour))
		}},
		{"CV with a failure", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, resultOf(withFailures), sloassert.MaxCV(sloassert.TTFT, 1e9))
		}},
		{"CV of one value (NaN)", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, resultOf(ms(5)), sloassert.MaxCV(sloassert.TTFT, 1e9))
		}},
		// Total, not TTFT: a TTFT of 0 with no token event is unobserved,
		// which would fail for another reason.
		{"CV of zeros (NaN)", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, resultOf(ms(0, 0, 0)), sloassert.MaxCV(sloassert.Total, 1e9))
		}},
		{"tail ratio of an empty result", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, resultOf(nil), sloassert.MaxTailRatio(sloassert.TTFT, 1e9))
		}},
		{"tail ratio with a zero median", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, resultOf(make(latencytest.Sample, 100)), sloassert.MaxTailRatio(sloassert.Total, 1e9))
		}},
		{"error rate of an empty result", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, &latencytest.Result{}, sloassert.MaxErrorRate(1))
		}},
		{"no objectives", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, &latencytest.Result{Records: []latencytest.Record{{ID: "a", TTFT: 1}}})
		}},
		{"nil result", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, (*latencytest.Result)(nil), sloassert.MaxErrorRate(1))
		}},
		{"quantile in percent", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, resultOf(ramp(200)), sloassert.Q(sloassert.TTFT, 99, time.Hour))
		}},
		{"NaN budget CV", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, resultOf(ramp(10)), sloassert.MaxCV(sloassert.TTFT, math.NaN()))
		}},
		{"chains: none ran", func(t sloassert.TestingT) bool {
			return sloassert.Check(t, &latencytest.ChainResult{}, sloassert.ChainQ(0.5, time.Hour))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeT{}
			if tc.ok(ft) || len(ft.errs) == 0 {
				t.Errorf("passed (or reported nothing): %v", ft.errs)
			}
		})
	}
}

// resultOf makes a result whose records have these TTFTs (and totals).
func resultOf(s latencytest.Sample) *latencytest.Result {
	r := &latencytest.Result{Run: latencytest.Run{CPUPerWall: 0.1}}
	for i, v := range s {
		rec := latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Concurrency: 1, TTFT: v, FirstAnswer: v, Total: 2 * v, LastToken: 2 * v}
		if v == latencytest.Failed {
			rec.Err, rec.TTFT, rec.Total = "http_529", latencytest.NotObserved, time.Millisecond
		}
		r.Records = append(r.Records, rec)
	}
	r.Planned = len(r.Records)
	return r
}

func TestCVAndBands(t *testing.T) {
	for _, tc := range []struct {
		cv   float64
		band sloassert.CVBand
	}{{21, sloassert.CVSolid}, {39.9, sloassert.CVSolid}, {40, sloassert.CVTolerable}, {100, sloassert.CVTolerable},
		{102, sloassert.CVColdStarts}, {300, sloassert.CVColdStarts}, {541, sloassert.CVNotFit}, {1266, sloassert.CVNotFit}} {
		if got := sloassert.CVBandOf(tc.cv); got != tc.band {
			t.Errorf("CV %v%%: %q, want %q", tc.cv, got, tc.band)
		}
	}
	if sloassert.CVTolerable.MaxPercent() != 100 || !math.IsInf(sloassert.CVNotFit.MaxPercent(), 1) {
		t.Errorf("band ceilings")
	}
	// 1,2,3,4,5 ms: mean 3, sd sqrt(2.5) = 1.5811: CV 52.7%.
	ft := &fakeT{}
	if sloassert.Check(ft, resultOf(ms(1, 2, 3, 4, 5)), sloassert.MaxCV(sloassert.TTFT, 50)) || !strings.Contains(ft.text(), "52.7%") || !strings.Contains(ft.text(), "(tolerable)") {
		t.Errorf("CV report: %s", ft.text())
	}
	if !sloassert.Check(&fakeT{}, resultOf(ms(1, 2, 3, 4, 5)), sloassert.MaxCV(sloassert.TTFT, 53)) {
		t.Errorf("CV 52.7%% within 53%% failed")
	}
}

// exactBounds computes the ConfidenceBounds ranks exactly: with q = a/d
// and confidence c = cn/cd as decimal fractions, P(B = i) = C(n,i) a^i
// (d-a)^(n-i) / d^n, so every comparison is between integers.
func exactBounds(n int, q, c float64) (j, k int) {
	qr, _ := new(big.Rat).SetString(strconv.FormatFloat(q, 'f', -1, 64))
	cr, _ := new(big.Rat).SetString(strconv.FormatFloat(c, 'f', -1, 64))
	a, d := qr.Num(), qr.Denom()
	b := new(big.Int).Sub(d, a)
	total := new(big.Int).Exp(d, big.NewInt(int64(n)), nil)
	need := new(big.Int).Mul(cr.Num(), total) // compare sum × cd with cn × d^n
	terms := make([]*big.Int, n+1)
	for i := 0; i <= n; i++ {
		t := new(big.Int).Binomial(int64(n), int64(i))
		t.Mul(t, new(big.Int).Exp(a, big.NewInt(int64(i)), nil))
		t.Mul(t, new(big.Int).Exp(b, big.NewInt(int64(n-i)), nil))
		terms[i] = t
	}
	reached := func(sum *big.Int) bool { return new(big.Int).Mul(sum, cr.Denom()).Cmp(need) >= 0 }
	sum := new(big.Int)
	k = -1
	for kk := 1; kk <= n && k < 0; kk++ {
		sum.Add(sum, terms[kk-1])
		if reached(sum) {
			k = kk
		}
	}
	j = -1
	sum = new(big.Int)
	for jj := n; jj >= 1 && j < 0; jj-- {
		sum.Add(sum, terms[jj])
		if reached(sum) {
			j = jj
		}
	}
	return j, k
}

func TestConfidenceBoundsAgreeWithExactBinomial(t *testing.T) {
	for _, tc := range []struct {
		n       int
		q, c    float64
		wantOK  bool
		comment string
	}{
		{298, 0.99, 0.95, false, "p99 at 95% needs n >= 299: 0.99^298 = 0.0501 > 0.05"},
		{299, 0.99, 0.95, true, "0.99^299 = 0.0496: X(299) is an upper bound"},
		{300, 0.99, 0.95, true, ""},
		{100, 0.5, 0.95, true, "the median"},
		{21, 0.9, 0.9, false, "P(B <= 20) = 1-0.9^21 = 0.8906 < 0.9: no upper bound"},
		{22, 0.9, 0.9, true, "1-0.9^22 = 0.9015"},
		{59, 0.95, 0.95, true, "0.95^59 = 0.0485"},
		{58, 0.95, 0.95, false, "0.95^58 = 0.0510"},
		{1000, 0.99, 0.99, true, ""},
		{75, 0.99, 0.95, false, "the seed's 75 requests cannot bound p99"},
	} {
		s := ramp(tc.n)
		lo, hi, ok := sloassert.ConfidenceBounds(s, tc.q, tc.c)
		if ok != tc.wantOK {
			t.Errorf("n=%d q=%v c=%v: ok %v, want %v (%s)", tc.n, tc.q, tc.c, ok, tc.wantOK, tc.comment)
			continue
		}
		if !ok {
			continue
		}
		j, k := exactBounds(tc.n, tc.q, tc.c)
		// ramp: X(i) = i ms
		if lo != time.Duration(j)*time.Millisecond || hi != time.Duration(k)*time.Millisecond {
			t.Errorf("n=%d q=%v c=%v: bounds X(%v) X(%v), exact X(%d) X(%d)", tc.n, tc.q, tc.c, lo.Milliseconds(), hi.Milliseconds(), j, k)
		}
		if p := s.Quantile(tc.q); lo > p || hi < p {
			t.Errorf("n=%d: the bounds [%v, %v] do not hold the estimate %v", tc.n, lo, hi, p)
		}
	}
}

func TestDemonstrateAndRefute(t *testing.T) {
	s := ramp(1000) // p99 ≈ 990 ms; at 95%: upper bound X(k), lower X(j) around it
	lo, hi, ok := sloassert.ConfidenceBounds(s, 0.99, 0.95)
	if !ok {
		t.Fatal("no bounds")
	}
	r := resultOf(s)
	p99 := func(budget time.Duration, opts ...sloassert.Option) sloassert.Objective {
		return sloassert.Q(sloassert.TTFT, 0.99, budget, opts...)
	}
	budget := s.Quantile(0.99) + time.Millisecond // the point estimate passes…
	ft := &fakeT{}
	// …but Demonstrate needs the upper bound within budget.
	if hi > budget && sloassert.Check(ft, r, p99(budget, sloassert.Demonstrate(0.95))) {
		t.Errorf("demonstrate passed with upper bound %v over budget %v", hi, budget)
	}
	if !strings.Contains(ft.text(), fmt.Sprintf("upper 95%% bound %s = X(%d) of 1000", format.Duration(hi), hi/time.Millisecond)) {
		t.Errorf("report: %s", ft.text())
	}
	if !sloassert.Check(&fakeT{}, r, p99(hi, sloassert.Demonstrate(0.95))) {
		t.Errorf("demonstrate failed with the upper bound exactly at budget")
	}
	// Refute fails only when even the lower bound is over budget.
	if !sloassert.Check(&fakeT{}, r, p99(lo, sloassert.Refute(0.95))) {
		t.Errorf("refute failed with the lower bound at budget")
	}
	ft = &fakeT{}
	if sloassert.Check(ft, r, p99(lo-time.Millisecond, sloassert.Refute(0.95))) || !strings.Contains(ft.text(), "refute: lower 95% bound") {
		t.Errorf("refute passed with the lower bound over budget: %s", ft.text())
	}
	// Too few samples for the bound: fails and says so.
	ft = &fakeT{}
	if sloassert.Check(ft, resultOf(ramp(200)), p99(time.Hour, sloassert.Demonstrate(0.95))) || !strings.Contains(ft.text(), "a 95% upper bound on p99 needs n >= 299 (have 200)") {
		t.Errorf("demonstrate on 200 samples: %s", ft.text())
	}
}

func TestEveryViolationIsReported(t *testing.T) {
	r := resultOf(append(ramp(198), latencytest.Failed, latencytest.Failed))
	ft := &fakeT{}
	ok := sloassert.Check(ft, r,
		sloassert.Q(sloassert.TTFT, 0.5, 50*time.Millisecond), // p50 ≈ 100 ms: FAIL
		sloassert.Q(sloassert.TTFT, 0.9, time.Second),         // ok
		sloassert.MaxErrorRate(0.005),                         // 1%: FAIL
		sloassert.MaxCV(sloassert.TTFT, 500),                  // failures: inf: FAIL
		sloassert.MaxErrorRate(0.02, "http_529"),              // ok
		sloassert.Q(sloassert.Total, 0.99, time.Hour),         // reaches a failure: FAIL
	)
	if ok || len(ft.errs) != 1 {
		t.Fatalf("ok %v, %d reports", ok, len(ft.errs))
	}
	rep := sloassert.Evaluate(r,
		sloassert.Q(sloassert.TTFT, 0.5, 50*time.Millisecond), sloassert.Q(sloassert.TTFT, 0.9, time.Second),
		sloassert.MaxErrorRate(0.005), sloassert.MaxCV(sloassert.TTFT, 500), sloassert.MaxErrorRate(0.02, "http_529"),
		sloassert.Q(sloassert.Total, 0.99, time.Hour))
	if n := len(rep.Failed()); n != 4 {
		t.Errorf("%d failed objectives, want 4:\n%s", n, rep)
	}
	if strings.Count(ft.text(), "FAIL") != 5 { // the verdict line and 4 objectives
		t.Errorf("report:\n%s", ft.text())
	}
}

func TestTaskObjectiveNamesItsOrigin(t *testing.T) {
	o := sloassert.Task{Calls: 10, Budget: 5 * time.Second, TailTasks: 0.05}.Objective(sloassert.Total)
	rep := sloassert.Evaluate(resultOf(ramp(300)), o)
	// total = 2×ttft: 2..600 ms; p99.488 ≈ 597 ms > 500 ms.
	if rep.OK() || !strings.Contains(rep.Outcomes[0].Objective, "per call of a 10-call task within 5000.0ms for 95% of tasks") ||
		!strings.Contains(rep.Outcomes[0].Objective, "total p99.48838") {
		t.Errorf("outcome %+v", rep.Outcomes[0])
	}
}

func TestAllFailedNeverPassesCacheOrDecodeChecks(t *testing.T) {
	r := resultOf(latencytest.Sample{latencytest.Failed, latencytest.Failed, latencytest.Failed})
	for _, o := range []sloassert.Objective{sloassert.NoCacheHits(), sloassert.MinDecodeRate(0.05, 1), sloassert.MinDecodeRate(0.05, 0)} {
		if rep := sloassert.Evaluate(r, o); rep.OK() {
			t.Errorf("%s passed on all-failed requests:\n%s", o.Name, rep)
		}
	}
	ok := resultOf(ramp(10))
	if rep := sloassert.Evaluate(ok, sloassert.MinDecodeRate(0.05, -1)); rep.OK() {
		t.Errorf("a non-positive floor passed")
	}
}

// A task's tool time comes out of its budget before the calls share it;
// tool time that takes the whole budget is refused.
func TestTaskPerCallTakesOutToolTime(t *testing.T) {
	task := sloassert.Task{Calls: 10, Budget: 5 * time.Second, TailTasks: 0.05, ToolTime: 2 * time.Second}
	q, b := task.PerCall()
	if math.Abs(q-0.99488) > 1e-5 || b != 300*time.Millisecond {
		t.Errorf("per call q=%v budget=%v, want 0.99488 and (5s-2s)/10 = 300ms", q, b)
	}
	if name := task.Objective(sloassert.Total).Name; !strings.Contains(name, "total p99.48838 <= 300.0ms (per call of a 10-call task within 5000.0ms, 2000.0ms of it tool time for 95% of tasks)") {
		t.Errorf("objective name %q", name)
	}
	for _, tool := range []time.Duration{5 * time.Second, 6 * time.Second, -time.Millisecond} {
		bad := task
		bad.ToolTime = tool
		if err := bad.Validate(); err == nil || !strings.HasPrefix(err.Error(), "sloassert: task tool time") {
			t.Errorf("tool time %v: Validate %v", tool, err)
		}
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "the calls would have no time left") {
					t.Errorf("tool time %v: panic %v", tool, v)
				}
			}()
			bad.PerCall()
		}()
	}
}
