package sloassert

import (
	"fmt"
	"math"
	"sync"

	"github.com/tailguard/tailguard/internal/stats"
)

// SampleSize returns about how many requests it takes to decide the
// objective "q-quantile within budget" at this confidence with this power,
// when the budget actually sits at the provider's level-quantile:
//
//   - level > q (the provider meets the SLO): the n at which the upper
//     bound (Demonstrate(confidence)) is within budget with probability
//     >= power. E.g. p99 at 95% with power 0.8 and the budget at the true
//     p99.5.
//   - level < q (the provider breaks it): the n at which the lower bound
//     (Refute(confidence)) is over budget with probability >= power.
//
// The probabilities are exact binomial sums: the count of requests at or
// under the budget is Binomial(n, level). Power is a sawtooth in n (the
// bound's rank moves in steps), so the answer is the first n at which it
// reaches power, found by bisecting on the teeth's peaks and looking back
// eight rank steps: exact in the cases the tests enumerate, "about N" in
// general. It is not monotone: a few more requests can have less power
// (in 78 of 80 cases the tests enumerate, some n within eight rank steps
// above the answer falls below the power asked, as low as 73%: p95 at 95%
// with the budget at the true p97.5 needs 361 requests, yet 385 have 74%).
// It panics on arguments outside their domain (q, level in (0,1),
// level != q, confidence and power in (0,1)), and returns math.MaxInt
// when more than 2^31 requests would be needed.
func SampleSize(q, confidence, power, level float64) int {
	for _, a := range []struct {
		name string
		v    float64
	}{{"q", q}, {"confidence", confidence}, {"power", power}, {"level", level}} {
		if !(a.v > 0 && a.v < 1) {
			panic(fmt.Sprintf("sloassert: SampleSize: %s = %v is outside (0,1) (fractions: 0.95 for 95%%)", a.name, a.v))
		}
	}
	if level == q {
		panic(fmt.Sprintf("sloassert: SampleSize: level %v equals q: a budget at the true quantile can never be decided", level))
	}
	return sampleSize(q, confidence, power, level, 1<<31)
}

// sampleSizes memoizes sampleSize: the report asks it for every
// inconclusive row, and the observed level takes only n+1 values.
var sampleSizes sync.Map // sampleSizeKey -> int

type sampleSizeKey struct {
	q, confidence, power, level float64
	limit                       int
}

// sampleSize is SampleSize searching up to limit requests (memoized).
func sampleSize(q, confidence, power, level float64, limit int) int {
	k := sampleSizeKey{q, confidence, power, level, limit}
	if n, ok := sampleSizes.Load(k); ok {
		return n.(int)
	}
	n := searchSampleSize(q, confidence, power, level, limit)
	sampleSizes.Store(k, n)
	return n
}

// searchSampleSize searches for SampleSize up to limit requests.
//
// Power is a sawtooth in n. Write the bound's rank as n+1-m (upper bound)
// or n-t (lower bound): the allowance m or t is non-decreasing in n and
// steps about every 1/(1-q) requests. While it stays, the upper bound's
// power falls with n (each request adds one to the rank) and the lower
// bound's rises; so the upper bound's teeth peak where a stretch starts and
// the lower bound's where it ends. The search bisects on the peak of the
// stretch holding n (taken as non-decreasing from stretch to stretch), then
// returns the first n of the first stretch whose peak reaches the power.
func searchSampleSize(q, confidence, power, level float64, limit int) int {
	demo := level > q
	pw := func(n int) float64 { return decidePower(n, q, confidence, level) }
	key := func(n int) int { // the allowance; -1 while the bound does not exist
		if demo {
			k, ok := stats.UpperRank(n, q, confidence)
			if !ok {
				return -1
			}
			return n + 1 - k
		}
		j, ok := stats.LowerRank(n, q, confidence)
		if !ok {
			return -1
		}
		return n - j
	}
	// edge finds the last n' in direction dir (+1, -1) from n with the same key.
	edge := func(n, dir int) int {
		k := key(n)
		step := 1
		last := n
		for { // gallop, then bisect
			next := last + dir*step
			if next < 1 || next > limit || key(next) != k {
				break
			}
			last, step = next, step*2
		}
		lo, hi := last, last+dir*step // key(lo) == k; hi is past the stretch or the range
		for (hi-lo)*dir > 1 {
			mid := lo + (hi-lo)/2
			if mid >= 1 && mid <= limit && key(mid) == k {
				lo = mid
			} else {
				hi = mid
			}
		}
		return lo
	}
	peak := func(n int) float64 {
		if key(n) < 0 {
			return 0
		}
		if demo {
			return pw(edge(n, -1))
		}
		return pw(edge(n, +1))
	}
	lo, hi := 0, 1
	for peak(hi) < power {
		lo, hi = hi, hi*2
		if hi > limit {
			return math.MaxInt
		}
	}
	hi = bisect(lo, hi, func(n int) bool { return peak(n) >= power })
	best := edge(hi, -1)
	if !demo {
		// The lower bound's power rises through the stretch: the first n
		// that reaches it (pw(edge(hi, +1)) >= power).
		best = bisect(best-1, edge(hi, +1), func(n int) bool { return pw(n) >= power })
	}
	// Peaks are not quite monotone where the rank moves every step or two
	// (q near 0.5): look back over eight rank steps (at most 2,000 n).
	back := min(8*stats.CeilInverse(math.Min(q, 1-q)), 2000)
	for n := best - 1; n >= max(1, best-back); n-- {
		if pw(n) >= power {
			best = n
		}
	}
	return best
}

// bisect narrows lo < hi, where ok(hi) holds and ok(lo) is taken not to,
// by halving until they are adjacent, and returns hi: the first n above lo
// where ok holds when ok is monotone.
func bisect(lo, hi int, ok func(n int) bool) int {
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// decidePower is the probability that n requests decide the objective the
// right way when the budget sits at the level-quantile (see SampleSize).
func decidePower(n int, q, confidence, level float64) float64 {
	if level > q {
		// Pass demonstrated: X(k) <= budget, i.e. at least k of n at or
		// under it: P(Binomial(n, level) >= k) = P(G <= n-k), G ~ Bin(n, 1-level).
		k, ok := stats.UpperRank(n, q, confidence)
		if !ok {
			return 0
		}
		return stats.BinomCDF(n-k, n, 1-level)
	}
	// Fail demonstrated: X(j) > budget, i.e. fewer than j at or under it:
	// P(Binomial(n, level) <= j-1) = 1 - P(G <= n-j).
	j, ok := stats.LowerRank(n, q, confidence)
	if !ok {
		return 0
	}
	return 1 - stats.BinomCDF(n-j, n, 1-level)
}
