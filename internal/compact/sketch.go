package compact

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"time"

	"github.com/tailguard/tailguard/internal/stats"
)

// Above is the planned request count above which a latencytest run with
// RecordsAuto keeps compact records: 100,000.
const Above = 100_000

// Alpha is the relative accuracy of a Sketch: every quantile it gives is
// within 1% of the exact one, plus the nanosecond it is rounded to
// (|estimate - exact| <= 0.01 × exact + 1ns: 1.1% at 1µs, 1.001% from
// 1ms), Failed where the exact quantile is Failed, 0 where it is 0.
const Alpha = 0.01

// Failed is sample.Failed: the value a failed request takes, which
// sorts last and makes any quantile that reaches it Failed.
const Failed = time.Duration(math.MaxInt64)

// Summary is sample.Summary, field for field (one converts to the
// other; package sample sits above internal/).
type Summary struct {
	N, Failed                    int
	Min, P50, P90, P95, P99, Max time.Duration
	Mean, Stddev                 time.Duration
	CV                           float64 // percent
	TailRatio                    float64 // p99/p50
}

// Sketch summarises a large set of latencies (a compact Result's
// inter-token gaps) in log-spaced buckets (DDSketch): a value v > 0 goes
// to bucket i = ceil(log_gamma(v)), gamma = (1+Alpha)/(1-Alpha),
// which holds the values in (gamma^(i-1), gamma^i]; the bucket's value
// 2·gamma^i/(gamma+1) is within Alpha of each of them. Zeros and
// Failed values are counted exactly, as are the count, the minimum, the
// maximum and the sum. Two sketches merge exactly (Merge): the sketch of
// the union equals the merge of the sketches, bucket for bucket. About
// 1,400 buckets span 1ns to 20 minutes, 8 bytes each at most, whatever
// the number of values. The zero Sketch is empty and ready to use.
type Sketch struct {
	counts []uint64 // counts[i-offset] is bucket i's count
	offset int
	zeros  uint64 // values <= 0
	failed uint64 // Failed values
	n      uint64 // finite values (zeros included)
	min    time.Duration
	max    time.Duration
	sumLo  uint64 // exact sum of finite values, in nanoseconds: 128 bits
	sumHi  uint64
	sumsq  float64 // sum of squares, for the standard deviation
}

var (
	sketchGamma  = (1 + Alpha) / (1 - Alpha)
	sketchLnGama = math.Log(sketchGamma)
)

// sketchIndex is v's bucket (v > 0).
func sketchIndex(v time.Duration) int {
	return int(math.Ceil(math.Log(float64(v)) / sketchLnGama))
}

// sketchValue is bucket i's value: 2·gamma^i/(gamma+1), within
// Alpha of every value in (gamma^(i-1), gamma^i], unrounded.
func sketchValue(i int) float64 {
	return 2 * math.Exp(float64(i)*sketchLnGama) / (sketchGamma + 1)
}

// Add counts one value (Failed counts as a failure; a negative value as 0).
func (s *Sketch) Add(v time.Duration) { s.addN(v, 1) }

func (s *Sketch) addN(v time.Duration, k uint64) {
	if v == Failed {
		s.failed += k
		return
	}
	v = max(v, 0)
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n += k
	hi, lo := bits.Mul64(uint64(v), k)
	s.addSum(lo, hi)
	s.sumsq += float64(k) * float64(v) * float64(v)
	if v == 0 {
		s.zeros += k
		return
	}
	s.bucket(sketchIndex(v), k)
}

func (s *Sketch) addSum(lo, hi uint64) {
	var c uint64
	s.sumLo, c = bits.Add64(s.sumLo, lo, 0)
	s.sumHi, _ = bits.Add64(s.sumHi, hi, c)
}

// total is the exact sum of the finite values.
func (s *Sketch) total() *big.Int {
	t := new(big.Int).SetUint64(s.sumHi)
	t.Lsh(t, 64)
	return t.Or(t, new(big.Int).SetUint64(s.sumLo))
}

// bucket adds k to bucket i, growing the dense range as needed.
func (s *Sketch) bucket(i int, k uint64) {
	switch {
	case len(s.counts) == 0:
		s.counts, s.offset = make([]uint64, 1, 64), i
	case i < s.offset:
		grown := make([]uint64, len(s.counts)+s.offset-i)
		copy(grown[s.offset-i:], s.counts)
		s.counts, s.offset = grown, i
	case i >= s.offset+len(s.counts):
		s.counts = append(s.counts, make([]uint64, i-s.offset-len(s.counts)+1)...)
	}
	s.counts[i-s.offset] += k
}

// Merge adds every value of o to s (o is unchanged).
func (s *Sketch) Merge(o *Sketch) {
	if o.n > 0 {
		if s.n == 0 || o.min < s.min {
			s.min = o.min
		}
		if s.n == 0 || o.max > s.max {
			s.max = o.max
		}
	}
	s.n += o.n
	s.zeros += o.zeros
	s.failed += o.failed
	s.addSum(o.sumLo, o.sumHi)
	s.sumsq += o.sumsq
	for j, c := range o.counts {
		if c > 0 {
			s.bucket(o.offset+j, c)
		}
	}
}

// Len is the number of values counted, Failed ones included.
func (s *Sketch) Len() int { return int(s.n + s.failed) }

// Failures is the number of Failed values counted.
func (s *Sketch) Failures() int { return int(s.failed) }

// Clone is a copy of s that later Adds to s do not change.
func (s *Sketch) Clone() Sketch {
	out := *s
	out.counts = slices.Clone(s.counts)
	return out
}

// Size is about how much memory s holds: 8 bytes a bucket allocated.
func (s *Sketch) Size() int { return 8 * cap(s.counts) }

// Buckets is the number of buckets in use (its memory is 8 bytes each).
func (s *Sketch) Buckets() int { return len(s.counts) }

// valueAt is the value of 0-based rank r in sorted order, within
// Alpha and unrounded: the minimum and maximum are exact; ok is
// false for a Failed value (they sort last).
func (s *Sketch) valueAt(r uint64) (v float64, ok bool) {
	switch {
	case r >= s.n:
		return 0, false
	case r == 0:
		return float64(s.min), true
	case r == s.n-1:
		return float64(s.max), true
	case r < s.zeros:
		return 0, true
	}
	seen := s.zeros
	for j, c := range s.counts {
		seen += c
		if r < seen {
			return min(max(sketchValue(s.offset+j), float64(s.min)), float64(s.max)), true
		}
	}
	return float64(s.max), true
}

// Quantile is the q-quantile as sample.Sample.Quantile defines it (linear
// interpolation between closest ranks), from the buckets, interpolated
// between their unrounded values and rounded once to the nanosecond:
// within Alpha of the exact quantile of the values added, plus the
// nanosecond of that rounding (|estimate - exact| <= Alpha*exact +
// 1ns, which is more than 1% below 100ns: at 1µs 1.1%); Failed when the
// interpolation reaches a Failed value or the sketch is empty. It panics
// if q is outside [0,1].
func (s *Sketch) Quantile(q float64) time.Duration {
	if !(q >= 0 && q <= 1) {
		panic(fmt.Sprintf("latencytest: quantile %v is outside [0,1] (quantiles are fractions: 0.99 for p99)", q))
	}
	n := s.n + s.failed
	if n == 0 {
		return Failed
	}
	lo, frac := stats.Rank(int(n), q)
	a, ok := s.valueAt(uint64(lo))
	if !ok {
		return Failed
	}
	if frac == 0 {
		return time.Duration(math.Round(a))
	}
	b, ok := s.valueAt(uint64(lo) + 1)
	if !ok {
		return Failed
	}
	return time.Duration(math.Round(stats.Lerp(a, b, frac)))
}

// Mean is the exact mean of the values; Failed when any value failed or
// none was added.
func (s *Sketch) Mean() time.Duration {
	if s.failed > 0 || s.n == 0 {
		return Failed
	}
	var q, r big.Int
	n := new(big.Int).SetUint64(s.n)
	q.QuoRem(s.total(), n, &r)
	r.Mul(&r, big.NewInt(2))
	if r.CmpAbs(n) >= 0 {
		q.Add(&q, big.NewInt(int64(r.Sign())))
	}
	return time.Duration(q.Int64())
}

// Summarize is the Summary of the values: N, Failed, Min, Max and Mean
// exact; the quantiles, TailRatio within Alpha; Stddev and CV from
// the sum of squares (float64).
func (s *Sketch) Summarize() Summary {
	sum := Summary{N: s.Len(), Failed: s.Failures(), Mean: s.Mean(), Stddev: Failed, CV: math.NaN(), TailRatio: math.NaN()}
	if sum.N == 0 {
		sum.Min, sum.P50, sum.P90, sum.P95, sum.P99, sum.Max = Failed, Failed, Failed, Failed, Failed, Failed
		return sum
	}
	sum.Min, sum.Max = s.min, Failed
	if s.n == 0 {
		sum.Min = Failed
	}
	if s.failed == 0 {
		sum.Max = s.max
	}
	sum.P50, sum.P90, sum.P95, sum.P99 = s.Quantile(0.5), s.Quantile(0.9), s.Quantile(0.95), s.Quantile(0.99)
	if s.failed == 0 && s.n >= 2 {
		m, _ := new(big.Float).Quo(new(big.Float).SetInt(s.total()), new(big.Float).SetUint64(s.n)).Float64()
		v := (s.sumsq - float64(s.n)*m*m) / float64(s.n-1)
		sd := math.Sqrt(max(v, 0))
		sum.Stddev = time.Duration(math.Round(sd))
		if m != 0 {
			sum.CV = sd / m * 100
		}
	}
	if s.failed > 0 {
		sum.CV = math.Inf(1)
	}
	switch {
	case sum.P99 == Failed:
		sum.TailRatio = math.Inf(1)
	case sum.P50 != 0:
		sum.TailRatio = float64(sum.P99) / float64(sum.P50)
	}
	return sum
}

// Sample expands the sketch into a sample.Sample: each bucket's value (rounded
// to the nanosecond) repeated its count (the minimum and maximum exact),
// then the Failed values. Its quantiles are the sketch's, within the
// nanosecond of that rounding. It allocates 8 bytes a value: for a sketch
// of hundreds of millions of gaps, use Quantile and Summarize instead.
func (s *Sketch) Sample() []time.Duration {
	out := make([]time.Duration, 0, s.n+s.failed)
	for r := uint64(0); r < s.zeros && r < s.n; r++ {
		out = append(out, 0)
	}
	for j, c := range s.counts {
		v := min(max(time.Duration(math.Round(sketchValue(s.offset+j))), s.min), s.max)
		for range c {
			out = append(out, v)
		}
	}
	if len(out) > 0 && s.zeros == 0 {
		out[0] = s.min
	}
	if len(out) > 0 {
		out[len(out)-1] = s.max
	}
	for range s.failed {
		out = append(out, Failed)
	}
	return out
}

// String describes the sketch: "1,024 values in 87 buckets, 1% relative accuracy".
func (s *Sketch) String() string {
	return fmt.Sprintf("%d values (%d failed) in %d buckets, %g%% relative accuracy", s.Len(), s.Failures(), s.Buckets(), Alpha*100)
}
