package sloassert

import (
	"math"

	"github.com/tailguard/tailguard/latencytest"
)

// decodeRates is the decode speed (tokens/s, or events/s for requests
// without usage) of each measured request of r; a failed request counts
// as 0, and a success without a rate (a one-token answer: see
// Record.DecodeRate) is left out, so it neither fails nor helps a
// decode-rate floor.
func decodeRates(r *latencytest.Result) []float64 {
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

// cachedTokens is the sum of the cached prompt tokens of r's measured
// requests: 0 proves the prompts missed the provider's cache.
func cachedTokens(r *latencytest.Result) int {
	n := 0
	for _, rec := range r.All() {
		if !rec.Warmup {
			n += rec.CachedTokens
		}
	}
	return n
}
