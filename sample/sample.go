package sample

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"time"

	"github.com/tailguard/tailguard/internal/stats"
)

// Failed is the value a failed request takes in a Sample: it never
// delivered what was timed, so it counts as infinitely slow. A quantile
// that reaches a failed request is Failed, and a failed request can only
// make a figure worse, never better.
const Failed = time.Duration(math.MaxInt64)

// Sample is a set of latencies, one per request (or per token for ITL), in
// the order they were recorded. Failed requests are present as Failed.
// Methods never reorder the receiver.
type Sample []time.Duration

// Len is the number of values, failed ones included.
func (s Sample) Len() int { return len(s) }

// Failures counts the Failed values.
func (s Sample) Failures() int {
	n := 0
	for _, v := range s {
		if v == Failed {
			n++
		}
	}
	return n
}

// Finite returns a copy without the Failed values: the latencies of the
// requests that succeeded. Judge it only beside the error rate: on its own
// it hides every failure.
func (s Sample) Finite() Sample {
	out := make(Sample, 0, len(s))
	for _, v := range s {
		if v != Failed {
			out = append(out, v)
		}
	}
	return out
}

// sorted returns a sorted copy.
func (s Sample) sorted() Sample {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// Quantile returns the q-quantile (q a fraction in [0,1]: 0.99 for p99) by
// linear interpolation between closest ranks, numpy's default (R type 7):
// with the sorted values x[0..n-1], h = (n-1)q, the result is x[⌊h⌋] +
// (h-⌊h⌋)(x[⌊h⌋+1]-x[⌊h⌋]), rounded to the nanosecond. It is Failed when
// the sample is empty or the interpolation reaches a Failed value. It
// panics if q is outside [0,1] (a percent such as 99 is a programming
// error).
func (s Sample) Quantile(q float64) time.Duration {
	checkQuantile(q)
	if len(s) == 0 {
		return Failed
	}
	return quantileSorted(s.sorted(), q)
}

func checkQuantile(q float64) {
	if !(q >= 0 && q <= 1) {
		panic(fmt.Sprintf("sample: quantile %v is outside [0,1] (quantiles are fractions: 0.99 for p99)", q))
	}
}

// quantileSorted interpolates in a sorted, non-empty sample: the
// difference of the two values (exact as an integer) interpolated by
// stats.Lerp and rounded, so the sum stays exact at any magnitude.
func quantileSorted(x Sample, q float64) time.Duration {
	lo, frac := stats.Rank(len(x), q)
	a := x[lo]
	if frac == 0 {
		return a
	}
	b := x[lo+1]
	if b == Failed {
		return Failed
	}
	return a + time.Duration(math.Round(stats.Lerp(0, float64(b-a), frac)))
}

// Min is the smallest value (Failed when empty).
func (s Sample) Min() time.Duration {
	if len(s) == 0 {
		return Failed
	}
	return slices.Min(s)
}

// Max is the largest value (Failed when empty or any failed).
func (s Sample) Max() time.Duration {
	if len(s) == 0 {
		return Failed
	}
	return slices.Max(s)
}

// Mean is the arithmetic mean, exact to the nanosecond (halves rounded
// away from zero). It is Failed when the sample is empty or holds a Failed
// value.
func (s Sample) Mean() time.Duration {
	q, r, ok := s.meanQR()
	if !ok {
		return Failed
	}
	// Round in integers: float64(q)+r/n drops nanoseconds once q is large
	// (a remainder just under n/2 becomes .5 near 1e12ns; q above 2^53
	// is not even representable).
	if n := int64(len(s)); 2*r >= n {
		q++
	} else if 2*r <= -n {
		q--
	}
	return time.Duration(q)
}

// mean is the mean as a float64, for Stddev and CV.
func (s Sample) mean() (float64, bool) {
	q, r, ok := s.meanQR()
	if !ok {
		return 0, false
	}
	return float64(q) + float64(r)/float64(len(s)), true
}

// meanQR sums exactly in 128 bits, then divides: the mean is q+r/len(s),
// with |r| < len(s) and r of the sign of the sum.
func (s Sample) meanQR() (q, r int64, ok bool) {
	if len(s) == 0 || slices.Contains(s, Failed) {
		return 0, 0, false
	}
	var hi, lo uint64
	for _, v := range s {
		var c uint64
		lo, c = bits.Add64(lo, uint64(v), 0)
		hi += c
		if v < 0 {
			hi-- // sign extension of a negative value
		}
	}
	sum := new(big.Int).SetUint64(hi)
	sum.Lsh(sum, 64).Or(sum, new(big.Int).SetUint64(lo))
	if int64(hi) < 0 {
		sum.Sub(sum, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	n := big.NewInt(int64(len(s)))
	bq, br := new(big.Int).QuoRem(sum, n, new(big.Int))
	return bq.Int64(), br.Int64(), true
}

// Stddev is the sample standard deviation (n-1 in the denominator, numpy's
// std(ddof=1)). It is Failed when there are fewer than 2 values or any is
// Failed.
func (s Sample) Stddev() time.Duration {
	sd, ok := s.stddev()
	if !ok {
		return Failed
	}
	return time.Duration(math.Round(sd))
}

func (s Sample) stddev() (float64, bool) {
	m, ok := s.mean()
	if !ok || len(s) < 2 {
		return 0, false
	}
	var ss float64
	for _, v := range s {
		d := float64(v) - m
		ss += d * d
	}
	return math.Sqrt(ss / float64(len(s)-1)), true
}

// CV is the coefficient of variation in percent: Stddev/Mean×100. It is
// +Inf when any value is Failed, and NaN with fewer than 2 values or a zero
// mean; neither ever meets a budget.
func (s Sample) CV() float64 {
	if slices.Contains(s, Failed) {
		return math.Inf(1)
	}
	m, ok := s.mean()
	sd, ok2 := s.stddev()
	if !ok || !ok2 || m == 0 {
		return math.NaN()
	}
	return sd / m * 100
}

// TailRatio is p99/p50. It is +Inf when p99 is Failed, NaN when the sample
// is empty or p50 is zero.
func (s Sample) TailRatio() float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	x := s.sorted()
	p50, p99 := quantileSorted(x, 0.5), quantileSorted(x, 0.99)
	switch {
	case p99 == Failed:
		return math.Inf(1)
	case p50 == 0:
		return math.NaN()
	}
	return float64(p99) / float64(p50)
}

// Summary is the whole distribution at a glance.
type Summary struct {
	N, Failed                    int
	Min, P50, P90, P95, P99, Max time.Duration
	Mean, Stddev                 time.Duration
	CV                           float64 // percent
	TailRatio                    float64 // p99/p50
}

// Summarize computes the Summary in one sort.
func (s Sample) Summarize() Summary {
	sum := Summary{N: len(s), Failed: s.Failures(), Mean: s.Mean(), Stddev: s.Stddev(), CV: s.CV(), TailRatio: s.TailRatio()}
	if len(s) == 0 {
		sum.Min, sum.P50, sum.P90, sum.P95, sum.P99, sum.Max = Failed, Failed, Failed, Failed, Failed, Failed
		return sum
	}
	x := s.sorted()
	sum.Min, sum.Max = x[0], x[len(x)-1]
	sum.P50, sum.P90, sum.P95, sum.P99 = quantileSorted(x, 0.5), quantileSorted(x, 0.9), quantileSorted(x, 0.95), quantileSorted(x, 0.99)
	return sum
}

// MarshalJSON writes snake_case keys, durations in nanoseconds (_ns), and
// Failed durations and NaN or infinite ratios (which JSON lacks) as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		N         int      `json:"n"`
		Failed    int      `json:"failed"`
		Min       *int64   `json:"min_ns"`
		P50       *int64   `json:"p50_ns"`
		P90       *int64   `json:"p90_ns"`
		P95       *int64   `json:"p95_ns"`
		P99       *int64   `json:"p99_ns"`
		Max       *int64   `json:"max_ns"`
		Mean      *int64   `json:"mean_ns"`
		Stddev    *int64   `json:"stddev_ns"`
		CV        *float64 `json:"cv_percent"`
		TailRatio *float64 `json:"tail_ratio"`
	}{s.N, s.Failed, nanos(s.Min), nanos(s.P50), nanos(s.P90), nanos(s.P95), nanos(s.P99), nanos(s.Max),
		nanos(s.Mean), nanos(s.Stddev), finite(s.CV), finite(s.TailRatio)})
}

// nanos is d in nanoseconds, or nil for Failed (which JSON would
// otherwise show as a huge number).
func nanos(d time.Duration) *int64 {
	if d == Failed {
		return nil
	}
	n := int64(d)
	return &n
}

// finite is f, or nil when JSON cannot hold it (NaN, ±Inf).
func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}
