package sloassert_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// golden compares got with testdata/name, or rewrites it with -update (or
// TAILGUARD_UPDATE_BASELINES=1).
func golden(t *testing.T, name, got string) {
	t.Helper()
	blGolden(t, filepath.Join("testdata", name), got)
}

// run measures a preset in the current bubble.
func run(t *testing.T, preset string, b latencytest.Batch, script ...fakeprovider.ScriptEntry) *latencytest.Result {
	t.Helper()
	prof, err := fakeprovider.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	prof.Script = append(prof.Script, script...)
	f := fakeprovider.New(prof)
	defer f.Close()
	p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(prof.Model))
	r, err := b.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const seedPrompt = "Reply with a two-sentence summary of why caching matters for LLM inference."

// A tight preset meets a tight spec; a fat-tailed one fails p99 and CV, and
// the report names the slow trace IDs and what the fake injected.
func TestPresetsAgainstASpec(t *testing.T) {
	spec := []sloassert.Objective{
		sloassert.Q(sloassert.TTFT, 0.5, 400*time.Millisecond),
		sloassert.Q(sloassert.TTFT, 0.99, 1500*time.Millisecond),
		sloassert.MaxCV(sloassert.TTFT, 100),
		sloassert.MaxErrorRate(0.01),
		sloassert.NoCacheHits(),
	}
	b := latencytest.Batch{Requests: 300, Concurrency: 5, Load: latencytest.Load{Prompt: seedPrompt, MaxTokens: 64}}
	synctest.Test(t, func(t *testing.T) {
		r := run(t, "deepseek-v4-pro-a", b) // CV 21%: solid
		if rep := sloassert.Evaluate(r, spec...); !rep.OK() {
			t.Errorf("the tight preset fails:\n%s", rep)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// Kimi K2.6 on provider C: CV 1266%; a scripted 90 s cold start too.
		r := run(t, "kimi-k2.6-c", b, fakeprovider.ScriptEntry{ID: "c5-0017", ColdStart: 90 * time.Second})
		rep := sloassert.Evaluate(r, spec...)
		failed := map[string]bool{}
		for _, o := range rep.Failed() {
			failed[o.Objective] = true
		}
		if rep.OK() || !failed["ttft p99 <= 1500.0ms"] || !failed["ttft CV <= 100%"] {
			t.Fatalf("the fat-tailed preset should fail p99 and CV:\n%s", rep)
		}
		text := rep.String()
		if !strings.Contains(text, "c5-0017 ") || !strings.Contains(text, "injected: cold_start=1m30s") {
			t.Errorf("the report does not name the slow trace ID and its injected fault:\n%s", text)
		}
		golden(t, "kimi-k2.6-c.report", text)
	})
}

// The measured reversal: llama-4-maverick has the faster median TTFT (300 ms
// against 1,202 ms to the first answer) but loses the 10-call task.
func TestChainReversal(t *testing.T) {
	chain := latencytest.Chain{Chains: 30, Length: 10, Load: latencytest.Load{MaxTokens: 64, Prompt: seedPrompt}}
	var ttft, total = map[string]time.Duration{}, map[string]time.Duration{}
	var reports = map[string]sloassert.Report{}
	for _, preset := range []string{"llama-4-maverick", "gpt-oss-120b"} {
		synctest.Test(t, func(t *testing.T) {
			single := run(t, preset, latencytest.Batch{Requests: 200, Load: latencytest.Load{Prompt: seedPrompt, MaxTokens: 64}})
			ttft[preset] = single.FirstAnswer().Finite().Quantile(0.5) // the study timed the first content token
			prof, _ := fakeprovider.Preset(preset)
			f := fakeprovider.New(prof)
			defer f.Close()
			p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(prof.Model))
			cr, err := chain.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			total[preset] = cr.Calls().Total().Finite().Quantile(0.5) * 10
			reports[preset] = sloassert.Evaluate(cr, sloassert.ChainQ(0.5, 25*time.Second))
		})
	}
	m, g := "llama-4-maverick", "gpt-oss-120b"
	if ttft[m]*3 > ttft[g] {
		t.Errorf("maverick's median first answer %v is not several times faster than gpt-oss's %v", ttft[m], ttft[g])
	}
	// Judged on measured chain totals with a 25 s median budget: maverick
	// (about 27-30 s) loses, gpt-oss (about 20 s) wins.
	if reports[m].OK() || !reports[g].OK() {
		t.Errorf("reversal not reproduced:\nmaverick:\n%s\ngpt-oss:\n%s", reports[m], reports[g])
	}
}

// The measured chain "winner" answered almost nothing: judged on useful
// answers (an empty answer fails its chain), it does not finish the task.
func TestEmptyAnswersLoseTheChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof, _ := fakeprovider.Preset("gpt-oss-120b-chain")
		f := fakeprovider.New(prof)
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(prof.Model))
		cr, err := latencytest.Chain{Chains: 30, Length: 10, Load: latencytest.Load{MaxTokens: 64}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		ft := &fakeT{}
		if sloassert.Check(ft, cr, sloassert.ChainQ(0.5, time.Hour)) {
			t.Fatalf("chains of empty answers met a 1 h budget")
		}
		if !strings.Contains(ft.text(), "empty_answer") {
			t.Errorf("report does not name the empty answers:\n%s", ft.text())
		}
		if e := cr.Calls().Errors()["empty_answer"]; e < 280 {
			t.Errorf("%d empty answers of 300 calls", e)
		}
	})
}
