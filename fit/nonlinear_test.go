package fit_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/fit"
	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/latencytest"
)

// engineTokens is how the synthetic engine counts a prompt of chars
// characters: its tokenizer makes 5.2 characters a token and its chat
// template adds 14 (a short prompt of the default mix, 838 characters,
// is 175 usage tokens, not the fake's 209).
func engineTokens(chars int) int { return 14 + int(float64(chars)/5.2) }

// nonlinearRecords are n records of latencytest's default mix at
// concurrency 1 from an engine whose prefill is a power 1.5 of its own
// prompt tokens (2 s per (1k tokens)^1.5: 0.14 s short, 1.4 s medium,
// 20 s long) on a base TTFT lognormal around 120 ms (sigma 0.35): the
// shape of a real engine's prefill that a straight line misfits. With
// share, the noise is a share of the whole TTFT instead (TTFT = (120 ms
// + prefill) × lognormal(0, 0.2)), as when the engine's speed varies.
func nonlinearRecords(seed uint64, n int, share bool) []latencytest.Record {
	r := rand.New(rand.NewPCG(seed, 1))
	var out []latencytest.Record
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		u, class := r.Float64(), latencytest.DefaultMix.Classes[2]
		for _, c := range latencytest.DefaultMix.Classes {
			if u < c.Weight {
				class = c
				break
			}
			u -= c.Weight
		}
		chars := class.PromptTokens*4 + defaults.NonceLen
		tokens := engineTokens(chars)
		base := 120e6 * math.Exp(0.35*r.NormFloat64())
		ttft := time.Duration(base + 2e9*math.Pow(float64(tokens)/1000, 1.5))
		if share {
			ttft = time.Duration((120e6 + 2e9*math.Pow(float64(tokens)/1000, 1.5)) * math.Exp(0.2*r.NormFloat64()))
		}
		itl := time.Duration(20e6 * math.Exp(0.2*r.NormFloat64()))
		answer := 40 + r.IntN(50) // under every class's cap: the engine stopped on its own
		out = append(out, latencytest.Record{
			ID: fmt.Sprintf("c1-r0-%04d", i), Concurrency: 1, PromptClass: class.Name, MaxTokens: class.MaxTokens,
			Start: start.Add(time.Duration(i) * time.Minute), Status: 200, TTFT: ttft, FirstAnswer: ttft,
			LastToken: ttft + itl*time.Duration(answer-1), Total: ttft + itl*time.Duration(answer-1) + time.Millisecond,
			TokenEvents: answer, PromptTokens: tokens, CompletionTokens: answer, UsageReported: true,
			FinishReason: "stop", Model: "engine",
		})
	}
	return out
}

// byClass splits measured successes' TTFTs by prompt class.
func byClass(recs []latencytest.Record) map[string][]float64 {
	out := map[string][]float64{}
	for _, r := range recs {
		if r.Warmup || !r.OK() {
			continue
		}
		out[r.PromptClass] = append(out[r.PromptClass], float64(r.TTFT))
	}
	return out
}

// TestFitNonlinearPrefillServed fits records of an engine with a power
// 1.5 prefill in its own tokens (which are not characters/4), serves the
// fitted profile and measures it at concurrency 1 with the same mix, as a
// user would: each prompt class's TTFT distribution must match the
// records' (KS p >= 0.01 per class, 5 seeds, with the noise an amount and
// a share of the TTFT), the short prompts must keep
// their spread (no TTFT at 0 in the profile), and fit's own check must
// pass. A straight line in characters/4 (the fit before the curve and the
// unit) fails each of these: it left 0 s TTFTs in the profile and served
// the short class several times too slow.
func TestFitNonlinearPrefillServed(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5}
	if testing.Short() {
		seeds = seeds[:1]
	}
	type run struct {
		seed  uint64
		share bool
	}
	var runs []run
	for _, seed := range seeds {
		runs = append(runs, run{seed, false}, run{seed, true})
	}
	for _, tc := range runs {
		seed := tc.seed
		t.Run(fmt.Sprintf("seed %d share %v", seed, tc.share), func(t *testing.T) {
			recs := nonlinearRecords(seed, 400, tc.share)
			prof, rep, err := fit.Fit(recs, fit.WithSeed(seed), fit.WithDraws(4000))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("prefill: %s", rep.Sources["prefill"])
			if c := rep.Check(0); !c.OK() {
				t.Errorf("%s\n%s", c, rep)
			}
			zeros := 0
			for _, v := range prof.TTFT.Values {
				if v == 0 {
					zeros++
				}
			}
			if zeros > 0 || !prof.Prefill.IsSet() {
				t.Errorf("profile: %d of %d base TTFTs at 0 s (want none), prefill %+v", zeros, len(prof.TTFT.Values), prof.Prefill)
			}
			var yml bytes.Buffer
			if err := fit.WriteProfile(&yml, prof, rep); err != nil {
				t.Fatal(err)
			}
			back, err := fakeprovider.ParseProfile(yml.Bytes())
			if err != nil || back.Prefill != prof.Prefill {
				t.Fatalf("the written profile reads back with prefill %+v, want %+v (%v)", back.Prefill, prof.Prefill, err)
			}
			want := byClass(recs)
			synctest.Test(t, func(t *testing.T) {
				f := fakeprovider.New(back)
				defer f.Close()
				p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(prof.Model))
				res, err := latencytest.Batch{Requests: 400, Concurrency: 1}.Run(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				got := byClass(res.Records)
				for _, class := range []string{"short", "medium", "long"} {
					ks := fit.KolmogorovSmirnov(want[class], got[class])
					t.Logf("%s: records p50 %v, served p50 %v; KS D %.3f p %.3f (n %d vs %d)", class,
						time.Duration(median(want[class])).Round(time.Millisecond), time.Duration(median(got[class])).Round(time.Millisecond), ks.D, ks.P, ks.N, ks.M)
					if !(ks.P >= 0.01) {
						t.Errorf("%s prompts: served TTFT differs from the records' (KS D %.3f, p %.4f)", class, ks.D, ks.P)
					}
				}
			})
		})
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	return s[len(s)/2]
}

// TestFitCheckFalseAlarms measures how often fit's own check fails a
// profile that is right: 40 seeded sets of 400 records from the power 1.5
// engine (20 with the noise an amount, 20 a share), each fitted and
// checked at DefaultCheckAlpha; at most 10% may fail (each check is 6 KS
// tests at p 0.01, on records the profile was fitted to). Skipped under
// -short.
func TestFitCheckFalseAlarms(t *testing.T) {
	if testing.Short() {
		t.Skip("40 fits (-short)")
	}
	failed := 0
	for seed := range uint64(40) {
		recs := nonlinearRecords(100+seed, 400, seed%2 == 1)
		_, rep, err := fit.Fit(recs, fit.WithSeed(seed+1), fit.WithDraws(4000))
		if err != nil {
			t.Fatal(err)
		}
		if c := rep.Check(0); !c.OK() {
			failed++
			t.Logf("seed %d: %s", 100+seed, c)
		}
	}
	t.Logf("fit's check failed %d of 40 right profiles", failed)
	if failed > 4 {
		t.Errorf("fit's check failed %d of 40 right profiles, want at most 4", failed)
	}
}
