package fit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/latencytest"
)

// curveTimings draws n first tokens at concurrency 1 with prompts uniform
// on 50-4,000 tokens: TTFT = 100 ms × lognormal(0, 0.35) + truth(tokens).
func curveTimings(r *rand.Rand, n int, truth func(tokens float64) float64) []timing {
	ts := make([]timing, n)
	for i := range ts {
		u := 50 + r.IntN(3951)
		ttft := 100e6*math.Exp(0.35*r.NormFloat64()) + truth(float64(u))
		ts[i] = timing{rec: &latencytest.Record{PromptTokens: u, Concurrency: 1}, ttft: time.Duration(ttft)}
	}
	return ts
}

// TestFitCurveChoosesTheShape measures, over 40 seeded runs of 300 first
// tokens each, how well the chosen curve follows a linear, a quadratic
// and a power 1.5 prefill: its rise from the smallest prompt to 4,000
// tokens within 5% of the truth's in at least 95% of runs, and a straight
// line chosen for a curved truth in no run.
func TestFitCurveChoosesTheShape(t *testing.T) {
	runs := 40
	if testing.Short() {
		runs = 5
	}
	for _, tc := range []struct {
		name   string
		truth  func(float64) float64
		curved bool
	}{
		{"linear 2s/1k", func(u float64) float64 { return 2e9 * u / 1000 }, false},
		{"quadratic 1s·k + 0.5s·k²", func(u float64) float64 { k := u / 1000; return 1e9*k + 0.5e9*k*k }, true},
		{"power 1.5, 2s", func(u float64) float64 { return 2e9 * math.Pow(u/1000, 1.5) }, true},
	} {
		close, linear := 0, 0
		forms := map[string]int{}
		for seed := range runs {
			ts := curveTimings(rand.New(rand.NewPCG(uint64(seed), 9)), 300, tc.truth)
			f, why := fitCurve(ts)
			if why != "" {
				t.Fatalf("%s seed %d: no curve: %s", tc.name, seed, why)
			}
			from := float64(f.c.FromTokens)
			scale := float64(f.c.TTFTScale)
			got, want := f.c.Add(4000, scale), tc.truth(4000)-tc.truth(from)
			if math.Abs(got/want-1) <= 0.05 {
				close++
			}
			form, _, _ := strings.Cut(f.desc, " in prompt tokens")
			forms[form]++
			if strings.HasPrefix(form, "linear") {
				linear++
			}
		}
		t.Logf("%s: %d of %d runs within 5%% at 4,000 tokens; forms chosen %v", tc.name, close, runs, forms)
		if float64(close) < 0.95*float64(runs) {
			t.Errorf("%s: the curve within 5%% of the truth in %d of %d runs, want 95%%", tc.name, close, runs)
		}
		if tc.curved && linear > 0 {
			t.Errorf("%s: a straight line chosen in %d of %d runs", tc.name, linear, runs)
		}
	}
}

// TestFitCurveKeepsShortSpread: when the noise is a share of the TTFT
// (20 s ± 20% at long prompts), an additive curve would leave base TTFTs
// below 0; the proportional curve is chosen instead, no base is at or
// below 0 and the shortest prompts' bases are their TTFTs as measured
// (their spread kept, not a point mass at 0).
func TestFitCurveKeepsShortSpread(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	var ts []timing
	for i := range 300 {
		u := []int{175, 783, 4636}[i%3]
		ttft := (120e6 + 2e9*math.Pow(float64(u)/1000, 1.5)) * math.Exp(0.2*r.NormFloat64())
		ts = append(ts, timing{rec: &latencytest.Record{PromptTokens: u, Concurrency: 1}, ttft: time.Duration(ttft)})
	}
	f, why := fitCurve(ts)
	if why != "" || f.c.TTFTScale == 0 {
		t.Fatalf("want a proportional curve: %q %+v", why, f.c)
	}
	var short, shortBase []float64
	for _, x := range ts {
		b := f.base(x)
		if b <= 0 {
			t.Fatalf("a base TTFT of %v (TTFT %v, %d tokens)", b, x.ttft, x.rec.PromptTokens)
		}
		if x.rec.PromptTokens == 175 {
			short, shortBase = append(short, float64(x.ttft)), append(shortBase, float64(b))
		}
	}
	iqr := func(xs []float64) float64 { return quantile(xs, 0.75) - quantile(xs, 0.25) }
	if iqr(shortBase) != iqr(short) || iqr(short) == 0 {
		t.Errorf("short prompts: bases' IQR %v, TTFTs' %v: want the same, not 0", time.Duration(iqr(shortBase)), time.Duration(iqr(short)))
	}
}

// unitRecords are n records of mix's classes whose usage counts
// 14 + characters/5.2 tokens (characters: class prompt_tokens × 4 + the
// nonce).
func unitRecords(mix latencytest.Mix, n int) []latencytest.Record {
	var out []latencytest.Record
	for i := range n {
		c := mix.Classes[i%len(mix.Classes)]
		chars := c.PromptTokens*4 + defaults.NonceLen
		out = append(out, latencytest.Record{ID: fmt.Sprint(i), PromptClass: c.Name, MaxTokens: c.MaxTokens,
			PromptTokens: 14 + int(float64(chars)/5.2), UsageReported: true})
	}
	return out
}

// TestFitUnit: the engine's tokens per character and template tokens
// are recovered from the default mix's records without being told, from
// another mix when it is given (fit.WithMix), and left at characters/4,
// saying why, when the mix is unknown.
func TestFitUnit(t *testing.T) {
	u := fitUnit(unitRecords(latencytest.DefaultMix, 90), nil)
	if math.Abs(u.cpt-5.2) > 0.02 || u.template < 13 || u.template > 15 || !strings.Contains(u.desc, "default mix") {
		t.Errorf("default mix: %.3f characters per token + %d, %q; want 5.2 + 14", u.cpt, u.template, u.desc)
	}
	mine, err := ParseMix("tiny=50,big=3000")
	if err != nil {
		t.Fatal(err)
	}
	recs := unitRecords(mine, 40)
	if u := fitUnit(recs, nil); u.cpt != 4 || u.template != 0 || !strings.Contains(u.desc, "prompt characters unknown") {
		t.Errorf("unknown mix: %.3f + %d, %q; want characters/4 and the reason", u.cpt, u.template, u.desc)
	}
	if u := fitUnit(recs, &mine); math.Abs(u.cpt-5.2) > 0.05 || u.template < 12 || u.template > 16 {
		t.Errorf("mix given: %.3f + %d (%s); want 5.2 + 14", u.cpt, u.template, u.desc)
	}
}

// BenchmarkFitCurve chooses the curve of 5,000 first tokens with prompts
// spread uniformly (every window of prompt sizes its own): ns per fit and
// first tokens per second.
func BenchmarkFitCurve(b *testing.B) {
	ts := curveTimings(rand.New(rand.NewPCG(1, 1)), 5000, func(u float64) float64 { return 2e9 * math.Pow(u/1000, 1.5) })
	for b.Loop() {
		if _, why := fitCurve(ts); why != "" {
			b.Fatal(why)
		}
	}
	b.ReportMetric(float64(len(ts))*float64(b.N)/b.Elapsed().Seconds(), "first_tokens/s")
}
