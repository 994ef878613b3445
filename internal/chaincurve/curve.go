package chaincurve

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tailguard/tailguard/internal/stats"
)

// Draws is the number of bootstrapped chains behind each predicted length.
const Draws = 10_000

// MaxLength bounds a curve's lengths: 10,000 draws of 1,000 calls each is
// ten million draws.
const MaxLength = 1000

// Label says what a curve's two series are, for reports and charts.
const Label = "predicted: bootstrap of the run's single calls, each drawn independently (a prediction, not a measurement); measured: chains of that length as run (ground truth where the two disagree)"

// failed is a failure's duration.
const failed = time.Duration(math.MaxInt64)

// Curve is a chain-length curve.
type Curve struct {
	// Points are lengths 1..MaxLen, in order.
	Points []Point
	// Calls is the number of single calls the prediction drew from,
	// Failed of them failed.
	Calls, Failed int
	// Draws is the bootstrapped chains per length; Seed seeds them.
	Draws int
	Seed  uint64
	// Label says which series is a prediction and which a measurement.
	Label string
}

// Point is one chain length.
type Point struct {
	// Length is the calls per chain.
	Length int
	// Predicted is the bootstrap's totals: a prediction, never a
	// measurement.
	Predicted Quantiles
	// Measured is the chains measured at this length (N 0 when none
	// was).
	Measured Quantiles
}

// Quantiles is p50, p95 and p99 of N totals, Failed of them failed. A
// quantile that reaches a failure is math.MaxInt64; with N 0 every
// quantile is.
type Quantiles struct {
	N, Failed     int
	P50, P95, P99 time.Duration
}

// Of returns the quantiles of xs (it sorts a copy).
func Of(xs []time.Duration) Quantiles {
	q := Quantiles{N: len(xs), P50: failed, P95: failed, P99: failed}
	if len(xs) == 0 {
		return q
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	for _, x := range s {
		if x == failed {
			q.Failed++
		}
	}
	q.P50, q.P95, q.P99 = quantile(s, 0.5), quantile(s, 0.95), quantile(s, 0.99)
	return q
}

// quantile is the q-quantile of sorted s by linear interpolation, a
// failure when it reaches one.
func quantile(s []time.Duration, q float64) time.Duration {
	i, t := stats.Rank(len(s), q)
	if t == 0 {
		return s[i]
	}
	if s[i+1] == failed {
		return failed
	}
	return s[i] + time.Duration(math.Round(stats.Lerp(0, float64(s[i+1]-s[i]), t)))
}

// Compute returns the curve for lengths 1..maxLen: calls are the run's
// single calls (failures as math.MaxInt64), measured maps a length to the
// totals of the chains measured at it. The same seed gives the same
// curve. It panics when maxLen is not in [1, MaxLength]. With no call the
// predicted quantiles are failures (N 0).
func Compute(calls []time.Duration, measured map[int][]time.Duration, maxLen int, seed uint64) Curve {
	if maxLen < 1 || maxLen > MaxLength {
		panic(fmt.Sprintf("chaincurve: maxLen %d is not in [1, %d]", maxLen, MaxLength))
	}
	c := Curve{Calls: len(calls), Draws: Draws, Seed: seed, Label: Label}
	for _, x := range calls {
		if x == failed {
			c.Failed++
		}
	}
	for n := 1; n <= maxLen; n++ {
		p := Point{Length: n, Predicted: Quantiles{P50: failed, P95: failed, P99: failed}, Measured: Of(measured[n])}
		if len(calls) > 0 {
			// One stream per length, from (seed, length): a longer
			// curve does not change its shorter points.
			p.Predicted = Of(stats.BootstrapSums(calls, n, Draws, seed^uint64(n)*0x9e3779b97f4a7c15))
		}
		c.Points = append(c.Points, p)
	}
	return c
}
