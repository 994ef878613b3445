package fakeprovider

import (
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestPrefillCurveServed: a prefill curve in the engine's tokens, as fit
// writes it, is applied to the served TTFT exactly, the same as the
// Predictor says, additive and proportional, with and without a prefix
// cache hit.
func TestPrefillCurveServed(t *testing.T) {
	// 4,000 characters: the fake counts 1,000 tokens; the curve's unit
	// counts 4,000/5.2 + 14 = 783.23 tokens.
	prompt := strings.Repeat("abcd", 1000)
	tokens := 4000/5.2 + 14
	curve := func(n float64) float64 { return 2e9*math.Pow(n/1000, 1.5) + 1e9*(n/1000)*(n/1000) }
	add := curve(tokens) - curve(175) // from_tokens 175
	for _, tc := range []struct {
		name string
		yaml string
		want time.Duration
	}{
		{"additive", "prefill: {per_1k_tokens: 2s, exponent: 1.5, per_1k_tokens_squared: 1s, from_tokens: 175, chars_per_token: 5.2, template_tokens: 14}\n",
			time.Duration(100e6 + add)},
		// proportional: the base draw 100 ms against ttft_scale 250 ms scales the prefill by 0.4
		{"proportional", "prefill: {per_1k_tokens: 2s, exponent: 1.5, per_1k_tokens_squared: 1s, from_tokens: 175, ttft_scale: 250ms, chars_per_token: 5.2, template_tokens: 14}\n",
			time.Duration(100e6 + add*0.4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseProfile([]byte("ttft: 100ms\nitl: 0s\noutput_tokens: 1\nprefix_cache: {enabled: false}\n" + tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			synctest.Test(t, func(t *testing.T) {
				f := mustNew(t, p)
				r := do(t, f.Client(), "http://fake", reqOpts{id: "long", prompt: prompt, usage: true})
				if r.firstTok != tc.want {
					t.Errorf("served TTFT %v, want %v", r.firstTok, tc.want)
				}
				pr, err := NewPredictor(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := pr.Predict("long", 1000, 0).TTFT; got != r.firstTok {
					t.Errorf("predicted TTFT %v, served %v", got, r.firstTok)
				}
				// Below from_tokens nothing is added: 400 characters are 90.9 tokens.
				if short := do(t, f.Client(), "http://fake", reqOpts{id: "short", prompt: prompt[:400]}); short.firstTok != 100*time.Millisecond {
					t.Errorf("a prompt below from_tokens: TTFT %v, want the base 100ms", short.firstTok)
				}
			})
		})
	}
	// A cache hit at prefill scope makes the cached tokens' share of the
	// curve cost 10%.
	p, err := ParseProfile([]byte("ttft: 100ms\nitl: 0s\noutput_tokens: 1\nprefix_cache: {scope: prefill, ttft_factor: 0.1}\nprefill: {per_1k_tokens: 2s, exponent: 1.5, from_tokens: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, p)
		miss := do(t, f.Client(), "http://fake", reqOpts{id: "a", prompt: prompt, usage: true})
		hit := do(t, f.Client(), "http://fake", reqOpts{id: "b", prompt: prompt, usage: true})
		_, _, cached, _ := hit.usage()
		c := func(n float64) float64 { return 2e9 * math.Pow(n/1000, 1.5) }
		wantHit := time.Duration(100e6 + c(1000) - 0.9*(c(1000)-c(float64(1000-cached))))
		if miss.firstTok != time.Duration(100e6+c(1000)) || hit.firstTok != wantHit || cached == 0 {
			t.Errorf("miss %v hit %v (cached %d), want %v and %v", miss.firstTok, hit.firstTok, cached, time.Duration(100e6+c(1000)), wantHit)
		}
	})
}

// TestPrefillCurveInvalid: each bad value of the prefill key is an error
// naming it and its line; giving both prefill keys is one too.
func TestPrefillCurveInvalid(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"prefill: {per_1k_tokens: 1s, exponent: 9}\n", "line 1: prefill.exponent: 9 is outside [0.25, 4]"},
		{"prefill: {per_1k_tokens: -1s}\n", "prefill.per_1k_tokens: negative duration"},
		{"prefill: {per_1k_tokens: 1s, chars_per_token: 0.1}\n", "prefill.chars_per_token: 0.1 is outside [0.5, 64]"},
		{"prefill: {per_1k_tokens: 1s, template_tokens: -2}\n", "prefill.template_tokens: -2 is outside"},
		{"prefill: {per_1k_tokens: 1s, from_tokens: 1.5}\n", "prefill.from_tokens: 1.5 is not a whole number"},
		{"prefill: {per_1k_tokens: 1s, slope: 2}\n", `unknown key "slope" in prefill`},
		{"prefill_per_1k_tokens: 20ms\nprefill: {per_1k_tokens: 1s}\n", "give prefill or prefill_per_1k_tokens, not both"},
	} {
		_, err := ParseProfile([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.yaml, err, tc.want)
		}
	}
	// A curve that adds nothing, and the old key alone, still load.
	for _, y := range []string{"prefill: {per_1k_tokens: 0s}\n", "prefill_per_1k_tokens: 20ms\n"} {
		if _, err := ParseProfile([]byte(y)); err != nil {
			t.Errorf("%q: %v", y, err)
		}
	}
}

// TestPrefillTokensRoundTrip: FakeTokens inverts Tokens (to the rounding
// of a whole token).
func TestPrefillTokensRoundTrip(t *testing.T) {
	c := Prefill{CharsPerToken: 5.2, TemplateTokens: 14}
	for _, usage := range []int{20, 175, 783, 4636} {
		back := c.Tokens(c.FakeTokens(usage))
		if math.Abs(back-float64(usage)) > 4/5.2 {
			t.Errorf("usage %d: fake count %d counts back as %.2f", usage, c.FakeTokens(usage), back)
		}
	}
}
