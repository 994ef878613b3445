package sloassert_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"

	"github.com/tailguard/tailguard/internal/defaults"
)

// TestSoakPerWindowNamesTheSlowWindow runs a 48-hour soak, one request
// every 10 minutes, in virtual time; from hour 30 to 36 the provider
// answers in 2 s. PerWindow(6h) names that window; the whole-run p50
// does not notice it.
func TestSoakPerWindowNamesTheSlowWindow(t *testing.T) {
	prof, err := fakeprovider.ParseProfile([]byte("model: soak\nseed: 5\nttft: {dist: lognormal, median: 300ms, p99: 600ms}\nitl: 10ms\noutput_tokens: 8\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 180; i < 216; i++ { // requests sent from 30 h to 36 h
		prof.Script = append(prof.Script, fakeprovider.ScriptEntry{Request: i, TTFT: 2 * time.Second})
	}
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(prof)
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("soak"))
		b := latencytest.Batch{NoWarmup: true, Requests: 288, Interval: 10 * time.Minute, Load: latencytest.Load{Prompt: "hi", MaxTokens: 8, Label: "soak"}}
		r, err := b.Run(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if d := r.End.Sub(r.Start); d < 47*time.Hour {
			t.Fatalf("the soak lasted %v", d)
		}
		wins := r.Windows(6 * time.Hour)
		if len(wins) != 8 || wins[5].From != 30*time.Hour || len(wins[5].Records) != 36 || wins[5].TTFT().Min() < 2*time.Second {
			t.Fatalf("%d windows; window 5 %v has %d records", len(wins), wins[5], len(wins[5].Records))
		}
		whole := sloassert.Q(sloassert.TTFT, 0.5, time.Second)
		rep := sloassert.Evaluate(r, whole, whole.With(sloassert.PerWindow(6*time.Hour)))
		if !rep.Outcomes[0].OK {
			t.Errorf("the whole-run p50 noticed the slow window: %+v", rep.Outcomes[0])
		}
		o := rep.Outcomes[1]
		if o.OK || !strings.Contains(o.Note, "worst window 5 of 8 [30h0m0s, 36h0m0s)") || !strings.Contains(o.Note, "1 of 8 windows failed") ||
			!strings.Contains(o.Objective, "per 6h0m0s window") {
			t.Errorf("%+v\n%s", o, rep)
		}
	})
}

func TestWindowsAndColdStartsByHand(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := func(id string, at, ttft time.Duration, warm bool) latencytest.Record {
		return latencytest.Record{ID: id, Start: t0.Add(at), TTFT: ttft, FirstAnswer: ttft, Total: ttft + time.Second, TokenEvents: 2, Warmup: warm}
	}
	r := &latencytest.Result{
		Run: latencytest.Run{Start: t0, Planned: 6},
		Records: []latencytest.Record{
			rec("w0", 0, 30*time.Second, true), // warm-up: a candidate
			rec("a", 40*time.Second, time.Second, false),
			rec("b", 50*time.Second, time.Second, false),                 // busy until 52 s
			rec("c", 52*time.Second+59*time.Second, time.Second, false),  // 59 s idle: not a candidate
			rec("d", 3*time.Minute+5*time.Second, 20*time.Second, false), // 69 s idle since 1m53s
			rec("e", 3*time.Minute+6*time.Second, time.Second, false),
		},
	}
	if ids := coldStartIDs(r, defaults.IdleGap); fmt.Sprint(ids) != "[w0 d]" {
		t.Errorf("candidates %v", ids)
	}
	if s := r.ColdStarts(); len(s) != 2 || s[0] != 30*time.Second || s[1] != 20*time.Second {
		t.Errorf("cold starts %v", s)
	}
	o := judge(r, sloassert.MaxColdStart(25*time.Second))
	if o.OK || !strings.Contains(o.Note, "1 over budget: w0 30.000s") {
		t.Errorf("%+v", o)
	}
	if o := judge(r, sloassert.MaxColdStart(time.Minute)); !o.OK {
		t.Errorf("%+v", o)
	}
	wins := r.Windows(time.Minute)
	if len(wins) != 4 || len(wins[0].Records) != 3 || len(wins[1].Records) != 1 || len(wins[2].Records) != 0 || len(wins[3].Records) != 2 {
		t.Errorf("windows %v", wins)
	}
	// An empty window fails a per-window objective: it holds no evidence.
	if o := judge(r, sloassert.Q(sloassert.TTFT, 0.5, time.Hour, sloassert.PerWindow(time.Minute))); o.OK ||
		!strings.Contains(o.Note, "worst window 2 of 4") {
		t.Errorf("%+v", o)
	}
	if o := judge(r, sloassert.Q(sloassert.TTFT, 0.5, time.Hour, sloassert.PerWindow(-time.Minute))); o.OK {
		t.Errorf("negative window: %+v", o)
	}
	// No candidate at all: nothing to judge.
	r2 := &latencytest.Result{Run: latencytest.Run{Start: t0, Planned: 0}}
	if o := judge(r2, sloassert.MaxColdStart(time.Minute)); o.OK {
		t.Errorf("no candidate: %+v", o)
	}
	defer func() {
		if recover() == nil {
			t.Error("Windows(0) did not panic")
		}
	}()
	r.Windows(0)
}

func TestGoodput(t *testing.T) {
	// 300 requests: TTFT i ms, 10 tokens 10 ms apart (TPOT 10 ms).
	r := streamed(300)
	for _, tc := range []struct {
		name    string
		o       sloassert.Objective
		ok      bool
		verdict sloassert.Verdict
		obs     string
	}{
		// TTFT <= 150 ms: 150 of 300 good.
		{"half good, want 40%", sloassert.MinGoodput(0.4, 150*time.Millisecond, 10*time.Millisecond), true, sloassert.Pass, "50% (150 of 300)"},
		{"half good, want 60%", sloassert.MinGoodput(0.6, 150*time.Millisecond, 10*time.Millisecond), false, sloassert.Fail, "50% (150 of 300)"},
		{"half good, want 52%", sloassert.MinGoodput(0.52, 150*time.Millisecond, 10*time.Millisecond), false, sloassert.Inconclusive, "50% (150 of 300)"},
		{"half good, want 52%, refute", sloassert.MinGoodput(0.52, 150*time.Millisecond, 10*time.Millisecond, sloassert.Refute(0.95)), true, sloassert.Inconclusive, "50% (150 of 300)"},
		{"half good, want 48%, demonstrate", sloassert.MinGoodput(0.48, 150*time.Millisecond, 10*time.Millisecond, sloassert.Demonstrate(0.95)), false, sloassert.Inconclusive, "50% (150 of 300)"},
		// TPOT 10 ms > 9 ms: none good.
		{"tpot over", sloassert.MinGoodput(0.1, time.Second, 9*time.Millisecond), false, sloassert.Fail, "0% (0 of 300)"},
		{"all good", sloassert.MinGoodput(0.99, time.Second, 10*time.Millisecond), true, sloassert.Pass, "100% (300 of 300)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := judge(r, tc.o)
			if o.OK != tc.ok || o.Verdict != tc.verdict || o.Observed != tc.obs {
				t.Errorf("%+v", o)
			}
		})
	}
	for _, bad := range []sloassert.Objective{
		sloassert.MinGoodput(95, time.Second, time.Second),
		sloassert.MinGoodput(0, time.Second, time.Second),
		sloassert.MinGoodput(0.9, 0, time.Second),
		sloassert.MinGoodput(0.99, time.Second, time.Second), // 50 requests: needs 100
	} {
		if o := judge(streamed(50), bad); o.OK || o.Note == "" {
			t.Errorf("%s: %+v", bad.Name, o)
		}
	}
	// Without usage, the time per output token counts SSE events: the row
	// says so.
	noUsage := streamed(300)
	for i := range noUsage.Records {
		noUsage.Records[i].CompletionTokens = 0
	}
	if o := judge(noUsage, sloassert.MinGoodput(0.4, 150*time.Millisecond, 10*time.Millisecond)); !strings.Contains(o.Note, "300 of 300 requests reported no usage") {
		t.Errorf("event rates not labelled: %+v", o)
	}
	// Failed and unobserved requests are never good.
	if o := judge(unobservedResult(300), sloassert.MinGoodput(0.5, time.Hour, time.Hour)); o.OK {
		t.Errorf("unobserved: %+v", o)
	}
	if o := judge(allFailed(300), sloassert.MinGoodput(0.5, time.Hour, time.Hour)); o.OK {
		t.Errorf("all failed: %+v", o)
	}
}

// A chain report sets measured chain totals beside the prediction from
// independent calls, and says when correlated calls make the prediction
// understate the tail.
func TestChainReportShowsPrediction(t *testing.T) {
	cr := &latencytest.ChainResult{Run: latencytest.Run{Planned: 100}}
	for c := range 100 {
		slow := time.Duration(1)
		if c%10 == 0 { // every tenth conversation is slow in all its calls
			slow = 5
		}
		ch := latencytest.ChainRun{ID: fmt.Sprintf("chain%02d", c)}
		for k := range 5 {
			d := slow * time.Second
			ch.Calls = append(ch.Calls, latencytest.Record{ID: fmt.Sprintf("%s-call%02d", ch.ID, k), Total: d, TTFT: d / 2, TokenEvents: 1})
			ch.Total += d
		}
		cr.Chains = append(cr.Chains, ch)
	}
	text := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, time.Minute)).String()
	if !strings.Contains(text, "chain total p95: measured 25.000s; predicted from the same calls drawn independently") ||
		!strings.Contains(text, "the calls of a chain are correlated") {
		t.Errorf("report:\n%s", text)
	}
}

// namedT is a fakeT with a test name, as *testing.T has.
type namedT struct {
	fakeT
	name string
}

func (n *namedT) Name() string { return n.name }

// A failing report from a virtual-time run ends with the command that
// replays it, and replaying gives the same report, byte for byte.
func TestReplayReproducesTheReport(t *testing.T) {
	run := func() string {
		var text string
		synctest.Test(t, func(t *testing.T) {
			prof, err := fakeprovider.Preset("kimi-k2.6-c")
			if err != nil {
				t.Fatal(err)
			}
			f := fakeprovider.New(prof)
			defer f.Close()
			p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(prof.Model))
			r, err := latencytest.Batch{Requests: 200, Concurrency: 4, Load: latencytest.Load{Prompt: "hi", MaxTokens: 16}}.Run(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			nt := &namedT{name: "TestChat/c4"}
			if sloassert.Check(nt, r, sloassert.Q(sloassert.TTFT, 0.99, time.Second)) {
				t.Fatal("the fat-tailed preset passed")
			}
			text = nt.text()
		})
		return text
	}
	a, b := run(), run()
	if a != b {
		t.Errorf("two runs differ:\n%s\n---\n%s", a, b)
	}
	if !strings.Contains(a, "replay (virtual time, deterministic): cd ") || !strings.Contains(a, "go test -count=1 -run '^TestChat$/^c4$' .") {
		t.Errorf("no replay command:\n%s", a)
	}
	// A real-time run has no replay command.
	if cmd := sloassert.ReplayCommand(&namedT{name: "x"}, &latencytest.Result{Run: latencytest.Run{Start: time.Now()}}); cmd != "" {
		t.Errorf("real time: %q", cmd)
	}
}

// spread is n successful requests one second apart from t0, TTFT 100 ms.
func spread(n int) *latencytest.Result {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &latencytest.Result{Run: latencytest.Run{Start: t0, Planned: n}}
	for i := range n {
		r.Records = append(r.Records, latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Start: t0.Add(time.Duration(i) * time.Second),
			TTFT: 100 * time.Millisecond, FirstAnswer: 100 * time.Millisecond, Total: 200 * time.Millisecond, TokenEvents: 2})
	}
	return r
}

// TestPerWindowRefusesATypo: PerWindow(6) is 6 ns; over a 34-second run
// it would make 5.7e9 windows. It fails the objective, naming the typo,
// without allocating them; Windows and TimelineChart refuse it too.
func TestPerWindowRefusesATypo(t *testing.T) {
	r := spread(35)                                                                                         // starts from 0 s to 34 s
	if err := r.CheckWindows(6); err == nil || !strings.Contains(err.Error(), "makes 5666666667 windows") { // 34s/6ns+1
		t.Fatalf("CheckWindows(6ns): %v", err)
	}
	out := sloassert.Evaluate(r, sloassert.Q(sloassert.TTFT, 0.5, time.Second, sloassert.PerWindow(6))).Outcomes[0]
	if out.OK || !strings.Contains(out.Note, "PerWindow(6ns): a 34s run in windows of 6ns makes 5666666667 windows (more than 100000): 6ns is 6 nanoseconds, a bare number where a duration belongs (write 6*time.Hour") {
		t.Errorf("%+v", out)
	}
	// The limit itself: 100,000 windows are made, 100,001 refused.
	r = spread(2)
	r.Records[1].Start = r.Start.Add(99_999) // starts at 0 and 99,999 ns
	if n := len(r.Windows(1)); n != 100_000 {
		t.Errorf("Windows(1ns) over 99,999 ns made %d windows", n)
	}
	r.Records[1].Start = r.Start.Add(100_000)
	if out := sloassert.Evaluate(r, sloassert.Q(sloassert.TTFT, 0.5, time.Second, sloassert.PerWindow(1))).Outcomes[0]; !strings.Contains(out.Note, "makes 100001 windows (more than 100000)") {
		t.Errorf("100,001 windows: %+v", out.Note)
	}
	for name, f := range map[string]func(){
		"Windows":       func() { spread(35).Windows(6) },
		"TimelineChart": func() { sloassert.TimelineChart(spread(35), sloassert.TTFT, 6) },
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "6ns is 6 nanoseconds") {
					t.Errorf("%s(6ns): panic %v", name, p)
				}
			}()
			f()
		}()
	}
}

// TestZeroValueObjectivesFail: a zero-value Objective (a struct literal)
// judges nothing: it fails with a message, never a nil-pointer panic, in
// Evaluate and Check, on a result and on chains.
func TestZeroValueObjectivesFail(t *testing.T) {
	r := spread(300)
	for _, o := range []sloassert.Objective{{}, {Name: "mine"}, sloassert.Objective{}.With(sloassert.PerWindow(time.Minute))} {
		rep := sloassert.Evaluate(r, o)
		if rep.OK() || !strings.Contains(rep.Outcomes[0].Note, "a zero-value Objective judges nothing: build it with Q,") {
			t.Errorf("%+v", rep.Outcomes)
		}
		ft := &fakeT{}
		if sloassert.Check(ft, r, o) || !strings.Contains(ft.text(), "zero-value Objective") {
			t.Errorf("Check: %v", ft.errs)
		}
	}
	cr := &latencytest.ChainResult{
		Run: latencytest.Run{Planned: 1},
		Chains: []latencytest.ChainRun{{ID: "chain00", Total: time.Second,
			Calls: []latencytest.Record{{ID: "chain00-call00", TTFT: time.Millisecond, Total: time.Second, TokenEvents: 1}}}},
	}
	rep := sloassert.Evaluate(cr, sloassert.Objective{})
	if rep.OK() || !strings.Contains(rep.Outcomes[0].Note, "a zero-value Objective judges nothing: build it with ChainQ") ||
		rep.Outcomes[0].Objective != "(unnamed Objective)" {
		t.Errorf("%+v", rep.Outcomes)
	}
	ft := &fakeT{}
	if sloassert.Check(ft, cr, sloassert.Objective{}) || !strings.Contains(ft.text(), "zero-value Objective") {
		t.Errorf("Check of chains: %v", ft.errs)
	}
}

// TestPerWindowSplitsConfidence: a provider exactly at budget in each of 8
// windows (300 requests each, lognormal TTFT, budget at the true p99).
// Judging each window at 95% refutes it in about 23% of runs; split over
// the windows (Bonferroni), Refute(0.95) on p99 fails it at most 5% of the
// time, and Demonstrate(0.95) on p95 passes it at most 5% (200 seeds with
// TAILGUARD_SIMULATIONS=full, else 10). (Demonstrate on p99 at 1-0.05/8 needs 505 requests a
// window: with 300 it never passes.)
func TestPerWindowSplitsConfidence(t *testing.T) {
	seeds, slack := 200, 0.10
	if !simFull() {
		seeds, slack = 10, 0.3
	}
	const perWindow, windows, sigma = 300, 8, 0.7
	median := 300 * time.Millisecond
	trueP99 := time.Duration(float64(median) * math.Exp(sigma*2.3263478740408408))
	trueP95 := time.Duration(float64(median) * math.Exp(sigma*1.6448536269514722))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var refuteFail, demoPass, unsplitFail int
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 0x808))
		r := &latencytest.Result{Run: latencytest.Run{Start: t0, Planned: perWindow * windows, CPUPerWall: math.NaN()}}
		for i := range perWindow * windows {
			v := time.Duration(float64(median) * math.Exp(sigma*rng.NormFloat64()))
			r.Records = append(r.Records, latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Start: t0.Add(time.Duration(i) * time.Hour / perWindow),
				TTFT: v, FirstAnswer: v, Total: v + time.Millisecond, TokenEvents: 2})
		}
		rep := sloassert.Evaluate(r,
			sloassert.Q(sloassert.TTFT, 0.99, trueP99, sloassert.Refute(0.95), sloassert.PerWindow(time.Hour)),
			sloassert.Q(sloassert.TTFT, 0.95, trueP95, sloassert.Demonstrate(0.95), sloassert.PerWindow(time.Hour)))
		if !rep.Outcomes[0].OK {
			refuteFail++
		}
		if rep.Outcomes[1].OK {
			demoPass++
		}
		for _, w := range r.Windows(time.Hour) {
			if lo, ok := sloassert.LowerBound(w.TTFT(), 0.99, 0.95); ok && lo > trueP99 {
				unsplitFail++
				break
			}
		}
		if seed == 0 && !strings.Contains(rep.Outcomes[0].Note, "confidence 95% split over 8 windows (Bonferroni)") {
			t.Errorf("the row does not say the confidence was split: %s", rep.Outcomes[0].Note)
		}
	}
	pc := func(k int) float64 { return 100 * float64(k) / float64(seeds) }
	t.Logf("8 windows at budget, %d seeds: Refute fails %.1f%% (each window at 95%%: %.1f%%); Demonstrate p95 at budget passes %.1f%%", seeds, pc(refuteFail), pc(unsplitFail), pc(demoPass))
	if float64(refuteFail)/float64(seeds) > slack || float64(demoPass)/float64(seeds) > slack {
		t.Errorf("error rates over 5%%: Refute fails %.1f%%, Demonstrate passes %.1f%%", pc(refuteFail), pc(demoPass))
	}
}
