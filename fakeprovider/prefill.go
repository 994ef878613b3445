package fakeprovider

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"

	"go.yaml.in/yaml/v3"
)

// Prefill is a prompt-size curve added to each request's TTFT (the YAML
// key prefill; fit writes it): with k the prompt's tokens / 1,000,
//
//	F(k)    = Per1kTokens · k^Exponent + Per1kTokensSquared · k²
//	prefill = F(k) − F(FromTokens/1,000) for prompts over FromTokens, else 0
//
// so a linear, quadratic or power curve (or a sum of them) fits in one
// form. The curve starts at FromTokens (the smallest prompt fit saw), so
// the base TTFT distribution holds the TTFTs of the smallest prompts as
// measured and nothing is subtracted below them.
//
// The prompt's tokens are counted as its characters / CharsPerToken plus
// TemplateTokens: the unit the curve was fitted in (an engine's usage
// prompt_tokens counts its own tokenizer's tokens and its chat template,
// not characters/4). When TTFTScale is set, the prefill is proportional
// to the request's base TTFT draw: multiplied by base/TTFTScale (an
// engine whose TTFT varies by a share, not by an amount, is slow to
// prefill on a slow draw too). Prefill and PrefillPer1kTokens are
// exclusive. The zero Prefill adds nothing.
type Prefill struct {
	// Per1kTokens is the curve's first term per (1,000 tokens)^Exponent.
	Per1kTokens time.Duration `yaml:"per_1k_tokens"`
	// Exponent is the power of the first term, in [0.25, 4]; 0 means 1
	// (linear).
	Exponent float64 `yaml:"exponent"`
	// Per1kTokensSquared is the quadratic term per (1,000 tokens)².
	Per1kTokensSquared time.Duration `yaml:"per_1k_tokens_squared"`
	// FromTokens is where the curve starts (in the curve's tokens).
	FromTokens int `yaml:"from_tokens"`
	// TTFTScale, when set, makes the prefill proportional to the base
	// TTFT draw: it is multiplied by base / TTFTScale.
	TTFTScale time.Duration `yaml:"ttft_scale"`
	// CharsPerToken is how many prompt characters make one of the
	// curve's tokens, in [0.5, 64]; 0 means 4 (the fake's own count).
	// With CharsPerToken or TemplateTokens set, the usage the fake
	// reports (prompt_tokens, cached_tokens) is in this unit too, as the
	// engine the curve was fitted on reported it; else it is the fake's
	// own count.
	CharsPerToken float64 `yaml:"chars_per_token"`
	// TemplateTokens are tokens the engine adds to every prompt (its chat
	// template), counted before the curve is applied. Default 0.
	TemplateTokens int `yaml:"template_tokens"`
}

// IsSet reports whether the curve adds anything.
func (c Prefill) IsSet() bool { return c.Per1kTokens > 0 || c.Per1kTokensSquared > 0 }

// Tokens is a prompt's size in the curve's tokens, given the fake's own
// count of it (characters/4).
func (c Prefill) Tokens(fakeTokens int) float64 {
	return float64(fakeTokens)*4/c.charsPerToken() + float64(c.TemplateTokens)
}

// FakeTokens is the inverse of Tokens: the fake's count (characters/4) of
// a prompt the curve counts as tokens (an engine's usage prompt_tokens),
// rounded, at least 1.
func (c Prefill) FakeTokens(tokens int) int {
	return max(1, int(math.Round((float64(tokens)-float64(c.TemplateTokens))*c.charsPerToken()/4)))
}

// usage is the usage prompt_tokens and cached_tokens the fake reports
// for a prompt it counts as fakeTokens (characters/4), cached of them:
// in the curve's unit when the profile sets one (CharsPerToken or
// TemplateTokens: the count of the engine it was fitted on, Tokens
// rounded, the cached prefix at CharsPerToken), so a fitted fake reports
// what its engine did and fit finds the same unit in its records; else
// the fake's own count.
func (c Prefill) usage(fakeTokens, cached int) (prompt, cachedOut int) {
	if c.CharsPerToken == 0 && c.TemplateTokens == 0 {
		return fakeTokens, cached
	}
	prompt = max(1, int(math.Round(c.Tokens(fakeTokens))))
	return prompt, min(int(math.Round(float64(cached)*4/c.charsPerToken())), prompt)
}

func (c Prefill) charsPerToken() float64 {
	if c.CharsPerToken == 0 {
		return 4
	}
	return c.CharsPerToken
}

func (c Prefill) exponent() float64 {
	if c.Exponent == 0 {
		return 1
	}
	return c.Exponent
}

// Curve is F(tokens/1000) in nanoseconds (see Prefill).
func (c Prefill) Curve(tokens float64) float64 {
	k := max(tokens, 0) / 1000
	return float64(c.Per1kTokens)*math.Pow(k, c.exponent()) + float64(c.Per1kTokensSquared)*k*k
}

// Add is the prefill in nanoseconds for a prompt of tokens (the curve's
// tokens) on a base TTFT draw of base nanoseconds, without the cache.
func (c Prefill) Add(tokens, base float64) float64 {
	return c.add(tokens, 0, 1, base)
}

// add is Add with cached of the tokens served from a prefix cache at
// cost factor f (their share of the curve costs f times as much).
func (c Prefill) add(tokens, cached, f, base float64) float64 {
	from := float64(c.FromTokens)
	if !c.IsSet() || tokens <= from {
		return 0
	}
	full := c.Curve(tokens) - c.Curve(from)
	if cached > 0 && f != 1 {
		uncached := max(tokens-cached, from)
		full -= (1 - f) * (c.Curve(tokens) - c.Curve(uncached))
	}
	if c.TTFTScale > 0 {
		full *= base / float64(c.TTFTScale)
	}
	return max(full, 0)
}

func (c Prefill) validate() error {
	switch {
	case c.Per1kTokens < 0:
		return fmt.Errorf("prefill.per_1k_tokens: negative duration %v", c.Per1kTokens)
	case c.Per1kTokensSquared < 0:
		return fmt.Errorf("prefill.per_1k_tokens_squared: negative duration %v", c.Per1kTokensSquared)
	case c.Exponent != 0 && !(c.Exponent >= 0.25 && c.Exponent <= 4):
		return fmt.Errorf("prefill.exponent: %v is outside [0.25, 4]", c.Exponent)
	case c.FromTokens < 0 || c.FromTokens > maxOutputTokens*16:
		return fmt.Errorf("prefill.from_tokens: %d is outside [0, %d]", c.FromTokens, maxOutputTokens*16)
	case c.TTFTScale < 0:
		return fmt.Errorf("prefill.ttft_scale: negative duration %v", c.TTFTScale)
	case c.CharsPerToken != 0 && !(c.CharsPerToken >= 0.5 && c.CharsPerToken <= 64):
		return fmt.Errorf("prefill.chars_per_token: %v is outside [0.5, 64]", c.CharsPerToken)
	case c.TemplateTokens < 0 || c.TemplateTokens > 1_000_000:
		return fmt.Errorf("prefill.template_tokens: %d is outside [0, 1000000]", c.TemplateTokens)
	}
	return nil
}

// validatePrefill checks p.Prefill and that p gives one prefill key.
func validatePrefill(p Profile) error {
	if err := p.Prefill.validate(); err != nil {
		return &fieldError{path: "prefill", err: err}
	}
	if old := p.PrefillPer1kTokens; p.Prefill.IsSet() && old.IsSet() && (old.Kind != "fixed" || old.Value != 0) {
		return &fieldError{path: "prefill", err: errors.New("prefill: give prefill or prefill_per_1k_tokens, not both")}
	}
	return nil
}

// UnmarshalYAML decodes a prefill curve strictly.
func (c *Prefill) UnmarshalYAML(n *yaml.Node) error {
	type plain Prefill
	return strictDecode(n, (*plain)(c), "prefill", yamlKeys(reflect.TypeFor[Prefill]())...)
}

// prefillTime is the prefill in nanoseconds the fake adds to a request's
// base TTFT draw: PrefillPer1kTokens per 1,000 prompt tokens (the fake's
// count, characters/4) or the Prefill curve, cached of the tokens costing
// f times as much (scope prefill of the prefix cache; f 1 without a hit).
func prefillTime(p *Profile, pl *plan, promptTokens, cached int, f float64) float64 {
	if p.Prefill.IsSet() {
		c := p.Prefill
		return c.add(c.Tokens(promptTokens), float64(cached)*4/c.charsPerToken(), f, float64(pl.ttft))
	}
	tokens := float64(promptTokens) + float64(cached)*(f-1)
	return float64(pl.prefill) * tokens / 1000
}
