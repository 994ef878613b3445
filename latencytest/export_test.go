package latencytest

import (
	"math"
	"time"

	"github.com/tailguard/tailguard/internal/gaps"
	"github.com/tailguard/tailguard/internal/httpattempt"
)

// WithoutFastPath makes the OpenAI provider send every request through
// net/http (tests and benchmarks compare it with the fast path).
func WithoutFastPath() Option {
	return llmOnly("WithoutFastPath", func(o *LLMProvider) { o.noFastPath = true })
}

// ms is a millisecond, for the tests.
const ms = time.Millisecond

// The unexported defaults and limits, for the external tests.
const (
	DefaultWarmup       = defaultWarmup
	MaxWindows          = maxWindows
	EnvAnthropicBaseURL = envAnthropicBaseURL
	EnvAnthropicAPIKey  = envAnthropicAPIKey
	EnvAnthropicModel   = envAnthropicModel
)

// ITLQuantile is Result.itlQuantile, for the external tests.
func ITLQuantile(r *Result, q float64) time.Duration { return r.ITLQuantile(q) }

// DecodeRates is the decode speed (tokens/s, or events/s for requests
// without usage) of each measured request of r; a failed request counts
// as 0, and a success without a rate (see Record.DecodeRate) is left out.
func DecodeRates(r *Result) []float64 {
	out := make([]float64, 0, r.Len())
	for _, rec := range r.All() {
		if !rec.Warmup {
			if v := rec.DecodeRate(); !math.IsNaN(v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// Gaps is the type of Record.Gaps, for the tests.
type Gaps = gaps.Gaps

// Attempt is the element type of Record.Attempts, for the tests.
type Attempt = httpattempt.Attempt

// CachedTokens is Result.cachedTokens, for the external tests.
func CachedTokens(r *Result) int { return r.cachedTokens() }

// Builder is the builder records fills, for the external tests.
type Builder = builder

// ErrorExamples is Result.errorExamples, for the external tests.
func ErrorExamples(r *Result) []ErrorExample { return r.errorExamples() }

// Compact is Result.toCompact, for the external tests.
func Compact(r *Result) { r.toCompact() }

// WindowCount is Result.windowCount, for the external tests.
func WindowCount(r *Result, d time.Duration) int { return r.windowCount(d) }

// Compacted is Result.compacted, for the external tests.
func Compacted(r *Result) bool { return r.compacted() }
