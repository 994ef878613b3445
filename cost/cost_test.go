package cost_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tailguard/tailguard/cost"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// Calls prices prompt, cached and completion tokens, and charges the
// failed and empty calls to the useful ones.
func TestCostArithmetic(t *testing.T) {
	p := cost.Prices{InputPerMillion: 2, OutputPerMillion: 8, CachedDiscount: 0.75}
	r := &latencytest.Result{Records: []latencytest.Record{
		// 1,000 prompt (400 cached) + 500 completion:
		// 600×2 + 400×0.5 + 500×8 = 1,200 + 200 + 4,000 = 5,400 µ$ = $0.0054
		{ID: "a", UsageReported: true, PromptTokens: 1000, CachedTokens: 400, CompletionTokens: 500},
		// empty answer: 1,000×2 + 64×8 = 2,512 µ$, wasted
		{ID: "b", UsageReported: true, PromptTokens: 1000, CompletionTokens: 64, ReasoningTokens: 64, Err: latencytest.ClassEmptyAnswer},
		// a 529 before any token: no usage, not priced, not useful
		{ID: "c", Err: "http_529", Status: 529},
		// warm-up: left out
		{ID: "w", Warmup: true, UsageReported: true, PromptTokens: 1e6},
	}}
	c := cost.Calls(r, p)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if c.Calls != 3 || c.Useful != 1 || c.Unpriced != 1 || !near(c.Total, 0.007912) || !near(c.Wasted, 0.002512) || !near(c.PerUseful, 0.007912) {
		t.Errorf("report %+v", c)
	}
	if got := c.String(); got != "$0.0079 for 3 calls; 1 useful: $0.007912 each; $0.0025 (31.7%) on 2 not useful; 1 call(s) reported no usage and are not priced" {
		t.Errorf("String: %s", got)
	}
	// Nothing useful: the cost per useful answer is infinite, not 0.
	none := cost.Calls(&latencytest.Result{Records: r.Records[1:2]}, p)
	if !math.IsInf(none.PerUseful, 1) || cost.WastedShare(none) != 1 {
		t.Errorf("no useful answer: %+v", none)
	}
	for _, bad := range []cost.Prices{{InputPerMillion: -1}, {OutputPerMillion: math.NaN()}, {CachedDiscount: 1.5}} {
		func() {
			defer func() {
				if e := recover(); e == nil || !strings.HasPrefix(e.(string), "cost: ") {
					t.Errorf("%+v: panic %v", bad, e)
				}
			}()
			cost.Calls(r, bad)
		}()
	}
}

// What gpt-oss-120b's empty answers cost inside an agent chain: the
// preset reproduces the measured chains, where 296 of 300 chain calls
// spent their
// whole 64-token cap on reasoning and answered nothing. Every one of them
// is billed (prompt and 64 output tokens), so nearly all the money buys
// nothing, and a completed task costs far more than its calls suggest.
func TestCostOfEmptyAnswersInAChain(t *testing.T) {
	if !slices.Contains(fakeprovider.Presets(), "gpt-oss-120b-chain") {
		t.Fatal("preset gpt-oss-120b-chain missing")
	}
	profile, err := fakeprovider.Preset("gpt-oss-120b-chain")
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(profile)
		t.Cleanup(f.Close)
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(profile.Model))
		cr, err := latencytest.Chain{Chains: 30, Length: 10}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		prices := cost.Prices{InputPerMillion: 0.15, OutputPerMillion: 0.60} // illustrative, dollars per million tokens
		calls := cr.Calls()
		c := cost.Calls(calls, prices)
		empty := calls.Errors()[latencytest.ClassEmptyAnswer]
		t.Logf("calls: %s (%d empty answers)", c, empty)
		if c.Calls != 300 || c.Unpriced != 0 || c.Useful != calls.Counts().Kept {
			t.Errorf("report %+v, errors %v", c, calls.Errors())
		}
		if empty < 280 || cost.WastedShare(c) < 0.9 || c.PerUseful < 20*c.Total/300 {
			t.Errorf("%d empty answers, %.1f%% wasted, $%g per useful answer vs $%g per call", empty, 100*cost.WastedShare(c), c.PerUseful, c.Total/300)
		}
		// Per task: a chain with an empty call did not get its task done.
		ch := cost.Chains(cr, prices)
		t.Logf("chains: %s", ch)
		if ch.Calls != 30 || math.Abs(ch.Total-c.Total) > 1e-12 || ch.Useful != 30-countFailed(cr) || (ch.Useful == 0 && !math.IsInf(ch.PerUseful, 1)) {
			t.Errorf("chain report %+v", ch)
		}
	})
}

func countFailed(cr *latencytest.ChainResult) int {
	n := 0
	for _, c := range cr.Chains {
		if !c.OK() {
			n++
		}
	}
	return n
}
