package latencytest

import (
	"time"

	"github.com/tailguard/tailguard/internal/gaps"
	"github.com/tailguard/tailguard/internal/httpattempt"
)

// WithoutFastPath makes the OpenAI provider send every request through
// net/http (tests and benchmarks compare it with the fast path).
func WithoutFastPath() Option {
	return llmOnly("WithoutFastPath", func(o *LLMProvider) { o.noFastPath = true })
}

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

// DecodeRates is Result.decodeRates, for the external tests.
func DecodeRates(r *Result) []float64 { return r.decodeRates() }

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

// WastedShare is CostReport.wastedShare, for the external tests.
func WastedShare(c CostReport) float64 { return c.wastedShare() }

// Compacted is Result.compacted, for the external tests.
func Compacted(r *Result) bool { return r.compacted() }
