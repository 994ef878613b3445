package sloassert_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// cutChains runs 3 chains of 10 one-second calls, one at a time, under a
// 20 s deadline with a 5 s per-call limit: chain00 runs its 10 calls
// (0-10 s), chain01 six (10-16 s; no call starts with less than 5 s
// left), chain02 none. script forces answers by trace ID.
func cutChains(t *testing.T, script ...fakeprovider.ScriptEntry) *latencytest.ChainResult {
	prof := fakeprovider.Profile{TTFT: fakeprovider.Fixed(time.Second), ITL: fakeprovider.Fixed(time.Duration(0)),
		OutputTokens: fakeprovider.Fixed(1), SlotsPerReplica: 64, Script: script}
	prof.PrefixCache.Disabled = true
	f := fakeprovider.New(prof)
	t.Cleanup(f.Close)
	p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cr, err := latencytest.Chain{Chains: 3, Length: 10, Load: latencytest.Load{TotalTimeout: 5 * time.Second}}.Run(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.Chains) != 2 || len(cr.Chains[1].Calls) != 6 || !cr.Partial {
		t.Fatalf("%d chains, partial %v: the deadline did not cut as planned", len(cr.Chains), cr.Partial)
	}
	return cr
}

// A chain the deadline cut short is partial, not failed: with partial runs
// allowed, no call failed, so the chain error rate is 0 of 1 finished
// chain (it was 50%, 1 of 2, with 0 failed calls), and the report says
// one was cut; without AllowPartial the run still fails as partial.
func TestChainsCutByDeadlineArePartialNotFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cr := cutChains(t)
		if !cr.Chains[1].CutShort() || cr.Chains[0].CutShort() {
			t.Errorf("CutShort: chain00 %v, chain01 %v", cr.Chains[0].CutShort(), cr.Chains[1].CutShort())
		}
		allowed := sloassert.Evaluate(cr, sloassert.MaxChainErrorRate(0).With(sloassert.AllowPartial()),
			sloassert.ChainQ(0.5, 11*time.Second).With(sloassert.AllowPartial(), sloassert.AllowSmallSample()))
		if !allowed.OK() {
			t.Errorf("a run whose chains all succeeded or were cut failed with AllowPartial:\n%s", allowed)
		}
		text := allowed.String()
		for _, want := range []string{"0% (0 of 1)", "1 chain(s) cut short by the run's end: partial, not failed",
			"1 cut short by the run's end (partial, not failed)", "1 chain(s) cut short by the run's end: 1 left out, 0 already over budget"} {
			if !strings.Contains(text, want) {
				t.Errorf("the report does not say %q:\n%s", want, text)
			}
		}
		// 3 chains of 10 calls planned: chain00 ran 10, chain01 6, chain02 none.
		if !strings.Contains(text, "16 sent of 30 planned") || cr.Calls().Counts().Planned != 30 {
			t.Errorf("the calls planned are not 3 chains of 10 calls:\n%s", text)
		}
		if box := cr.Disclosure.Box(2).Answer; !strings.Contains(box, "0 with a failed call, 1 cut short by the run's end") || !strings.Contains(box, "16 of 30 planned calls sent") {
			t.Errorf("box 2: %s", box)
		}
		if rep := sloassert.Evaluate(cr, sloassert.MaxChainErrorRate(0)); rep.OK() || !strings.Contains(rep.String(), "AllowPartial()") {
			t.Errorf("a partial chain run passed without AllowPartial:\n%s", rep)
		}
	})
}

// A cut chain still counts where it is known: one whose call failed
// before the cut is a failed chain, and one that had already run longer
// than the budget counts as over it.
func TestChainsCutAfterAFailureOrOverBudgetCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cr := cutChains(t, fakeprovider.ScriptEntry{ID: "chain01-call02", Status: 500})
		if cr.Chains[1].CutShort() {
			t.Fatalf("chain01 failed a call before the cut, yet is only cut short")
		}
		out := sloassert.Evaluate(cr, sloassert.MaxChainErrorRate(0.5).With(sloassert.AllowPartial(), sloassert.AllowSmallSample())).Outcomes[0]
		if !strings.Contains(out.Observed, "(1 of 2)") {
			t.Errorf("the failed, cut chain is not counted as failed: %+v", out)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		cr := cutChains(t)
		// chain01 ran 6 s before the cut: over a 5 s budget whatever came next.
		out := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, 5*time.Second).With(sloassert.AllowPartial(), sloassert.AllowSmallSample())).Outcomes[0]
		if out.OK || !strings.Contains(out.Note, "1 already over budget counted as failed") {
			t.Errorf("a cut chain already over budget was left out: %+v", out)
		}
	})
}

// With tool steps, the chain report splits each chain's total into model
// time and tool time; without them it has no such rows.
func TestChainReportSplitsModelAndToolTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fakeprovider.Profile{TTFT: fakeprovider.Fixed(time.Second), ITL: fakeprovider.Fixed(time.Duration(0)),
			OutputTokens: fakeprovider.Fixed(1), SlotsPerReplica: 64}
		prof.PrefixCache.Disabled = true
		f := fakeprovider.New(prof)
		t.Cleanup(f.Close)
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
		tool := func(ctx context.Context, chain, call int) error { time.Sleep(500 * time.Millisecond); return nil }
		cr, err := latencytest.Chain{Chains: 4, Length: 3, Tool: tool}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		// 3 calls of 1 s and 2 tool steps of 500 ms: 4 s a chain, 1 s of it tools.
		rep := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, 4*time.Second))
		text := rep.String()
		for _, want := range []string{
			"  chain total   4000.0ms  4000.0ms",
			"  chain model   3000.0ms  3000.0ms",
			"  chain tools   1000.0ms  1000.0ms",
			"  call total    1000.0ms",
			// The calls predict the model time, not the tools': no false
			// correlation warning.
			"chain model time (tool steps left out) p95: measured 3000.0ms; predicted from the same calls drawn independently 3000.0ms",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("report lacks %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, "correlated") {
			t.Errorf("tool time read as correlated calls:\n%s", text)
		}
		if !rep.OK() {
			t.Errorf("4 s chains miss a 4 s median:\n%s", text)
		}
		noTools, err := latencytest.Chain{Chains: 2, Length: 3}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if text := sloassert.Evaluate(noTools, sloassert.ChainQ(0.5, 4*time.Second)).String(); strings.Contains(text, "chain tools") {
			t.Errorf("a report without tool steps has a tool row:\n%s", text)
		}
	})
}

// TestObjectiveOnTheWrongSubjectFails: one Objective type judges results,
// sweeps and chains; an objective judged on the other kind of subject
// fails and says what it judges, and Invalid fails on both.
func TestObjectiveOnTheWrongSubjectFails(t *testing.T) {
	r := streamed(300)
	cr := &latencytest.ChainResult{
		Run: latencytest.Run{Planned: 1},
		Chains: []latencytest.ChainRun{{ID: "chain00", Total: time.Second,
			Calls: []latencytest.Record{{ID: "chain00-call00", TTFT: time.Millisecond, Total: time.Second, TokenEvents: 1}}}},
	}
	onResult := sloassert.Q(sloassert.TTFT, 0.5, time.Hour)
	onChains := sloassert.ChainQ(0.5, time.Hour, sloassert.AllowSmallSample())
	// Each passes on its own kind of subject.
	if rep := sloassert.Evaluate(r, onResult); !rep.OK() {
		t.Fatalf("the result objective fails on a result:\n%s", rep)
	}
	if rep := sloassert.Evaluate(cr, onChains); !rep.OK() {
		t.Fatalf("the chain objective fails on chains:\n%s", rep)
	}
	for _, tc := range []struct {
		name string
		rep  sloassert.Report
		want string
	}{
		{"chain objective on a result", sloassert.Evaluate(r, onChains), "judges measured chains, not a result's requests"},
		{"result objective on chains", sloassert.Evaluate(cr, onResult), "judges a result's requests, not chains"},
		{"chain objective on a sweep level", sloassert.Evaluate(&latencytest.SweepResult{Levels: []int{1}, Results: []*latencytest.Result{r}}, onChains).Levels[0],
			"judges measured chains, not a result's requests"},
		{"Invalid on a result", sloassert.Evaluate(r, sloassert.Invalid("bad", "why it is bad")), "why it is bad"},
		{"Invalid on chains", sloassert.Evaluate(cr, sloassert.Invalid("bad", "why it is bad")), "why it is bad"},
	} {
		if tc.rep.OK() || len(tc.rep.Outcomes) != 1 || tc.rep.Outcomes[0].OK || !strings.Contains(tc.rep.Outcomes[0].Note, tc.want) {
			t.Errorf("%s: want a failing row saying %q, got:\n%s", tc.name, tc.want, tc.rep)
		}
	}
}

// TestSweepReportHoldsItsLevels: a sweep's report passes only when every
// level passes, renders its levels' screens in order, gathers their
// failed outcomes, and Check reports each failing level on its own.
func TestSweepReportHoldsItsLevels(t *testing.T) {
	sr := &latencytest.SweepResult{Levels: []int{1, 8}, Results: []*latencytest.Result{streamed(300), streamed(300)}}
	pass := sloassert.Evaluate(sr, sloassert.Q(sloassert.TTFT, 0.5, time.Hour))
	if !pass.OK() || len(pass.Levels) != 2 || pass.Title != "sweep" || pass.Levels[0].Title != "c1" || pass.Levels[1].Title != "c8" {
		t.Fatalf("passing sweep: %+v", pass)
	}
	if got, want := pass.String(), pass.Levels[0].String()+pass.Levels[1].String(); got != want {
		t.Errorf("String:\n%s\nwant the levels' screens:\n%s", got, want)
	}
	if md := sloassert.Markdown(pass); !strings.HasPrefix(md, "## sweep: PASS\n") || !strings.Contains(md, "| c8 | pass |") {
		t.Errorf("Markdown is not the sweep overview:\n%s", md)
	}
	fail := sloassert.Evaluate(sr, sloassert.Q(sloassert.TTFT, 0.5, time.Nanosecond))
	if fail.OK() || len(fail.Failed()) != 2 {
		t.Errorf("failing sweep: OK %v, %d failed outcomes, want 2", fail.OK(), len(fail.Failed()))
	}
	ft := &fakeT{}
	if sloassert.Check(ft, sr, sloassert.Q(sloassert.TTFT, 0.5, time.Nanosecond)) || len(ft.errs) != 2 ||
		!strings.HasPrefix(ft.errs[0], "c1: FAIL") || !strings.HasPrefix(ft.errs[1], "c8: FAIL") {
		t.Errorf("Check on a failing sweep: %q", ft.errs)
	}
	if (sloassert.Report{Title: "sweep", Levels: []sloassert.Report{}}).OK() {
		t.Error("a sweep report with no level passed")
	}
}
