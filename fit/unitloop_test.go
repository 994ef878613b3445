package fit_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/fit"
	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/latencytest"
)

// A fake fitted on an engine counts prompts in the engine's unit twice
// over: its prefill (Prefill.Tokens) and the usage prompt_tokens it
// reports, so its records read as the engine's did and fit, run on them,
// finds the same unit (5.2 characters a token plus a 14-token template)
// and the same curve. A fake without a unit reports its own count,
// characters/4.
func TestFakeReportsUsageInItsUnit(t *testing.T) {
	unit := fakeprovider.Prefill{Per1kTokens: 2 * time.Second, CharsPerToken: 5.2, TemplateTokens: 14}
	prof := fakeprovider.Profile{Model: "unit", Seed: 5, TTFT: fakeprovider.LogNormal(100*time.Millisecond, 180*time.Millisecond),
		ITL: fakeprovider.Fixed(5 * time.Millisecond), OutputTokens: fakeprovider.Fixed(8), SlotsPerReplica: 8,
		PrefixCache: fakeprovider.PrefixCache{Disabled: true}, Prefill: unit}
	run := func(p fakeprovider.Profile) []latencytest.Record {
		var recs []latencytest.Record
		synctest.Test(t, func(t *testing.T) {
			f := fakeprovider.New(p)
			defer f.Close()
			pr := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(p.Model))
			r, err := latencytest.Batch{Requests: 120}.Run(context.Background(), pr)
			if err != nil {
				t.Fatal(err)
			}
			recs = r.Records
		})
		return recs
	}
	chars := map[string]int{}
	for _, c := range latencytest.DefaultMix.Classes {
		chars[c.Name] = c.PromptTokens*4 + defaults.NonceLen
	}
	recs := run(prof)
	for _, r := range recs {
		fake := chars[r.PromptClass] / 4
		want := int(math.Round(unit.Tokens(fake)))
		if !r.UsageReported || math.Abs(float64(r.PromptTokens-want)) > 1 {
			t.Fatalf("%s (%s, %d characters): usage prompt_tokens %d, want %d (the engine's count: 14 + characters/5.2)", r.ID, r.PromptClass, chars[r.PromptClass], r.PromptTokens, want)
		}
	}
	got, _, err := fit.Fit(recs)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Prefill; math.Abs(c.CharsPerToken-5.2) > 0.1 || c.TemplateTokens < 12 || c.TemplateTokens > 16 {
		t.Errorf("fit on the fake's records: %v characters a token + %d: want the fake's unit, 5.2 + 14", c.CharsPerToken, c.TemplateTokens)
	}
	// Without a unit: the fake's own count.
	prof.Prefill = fakeprovider.Prefill{Per1kTokens: 2 * time.Second}
	for _, r := range run(prof)[:20] {
		if want := chars[r.PromptClass] / 4; r.PromptTokens != want {
			t.Fatalf("%s: usage prompt_tokens %d, want characters/4 = %d", r.ID, r.PromptTokens, want)
		}
	}
}
