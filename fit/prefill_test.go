package fit

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// simTimings draws n first tokens: prompts uniform on 50-330 tokens, TTFT
// a heavy-tailed base (lognormal, median 150ms, sigma 0.6, with 7% of
// requests 6x slower) plus slope per 1k prompt tokens.
func simTimings(r *rand.Rand, n int, slope time.Duration) []timing {
	ts := make([]timing, n)
	for i := range ts {
		prompt := 50 + r.IntN(281)
		base := 150e6 * math.Exp(0.6*r.NormFloat64())
		if r.Float64() < 0.07 {
			base *= 6
		}
		ttft := time.Duration(base) + time.Duration(float64(slope)*float64(prompt)/1000)
		ts[i] = timing{rec: &latencytest.Record{PromptTokens: prompt, Concurrency: 1}, ttft: ttft}
	}
	return ts
}

// TestPrefillTestRates measures the prefill rule (kept when t > 2) by
// seeded simulation on 90 requests with prompts of 50-330 tokens and a
// heavy-tailed TTFT: with no prefill it keeps a slope in at most 4% of
// runs (a one-sided t > 2 is 2.3% for normal errors; the heavy tail and
// HC1 move it), and with the Ollama run's effect (12 s per 1k tokens) it
// keeps one in every run; the log gives the rates and the power at 1 s
// per 1k.
func TestPrefillTestRates(t *testing.T) {
	runs := 2000
	if testing.Short() {
		runs = 300
	}
	r := rand.New(rand.NewPCG(21, 1))
	rate := func(slope time.Duration) float64 {
		kept := 0
		for range runs {
			if prefillSlope(simTimings(r, 90, slope)).keep() {
				kept++
			}
		}
		return float64(kept) / float64(runs)
	}
	null, small, big := rate(0), rate(time.Second), rate(12*time.Second)
	t.Logf("%d runs of 90 requests: slope kept with no prefill %.4f, with 1s/1k %.4f, with 12s/1k %.4f", runs, null, small, big)
	if null > 0.04 {
		t.Errorf("a slope kept in %.4f of runs with no prefill, want at most 0.04", null)
	}
	if big != 1 {
		t.Errorf("the 12s/1k prefill kept in %.4f of runs, want every run", big)
	}
}
