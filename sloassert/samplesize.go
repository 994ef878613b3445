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
// when more than 2^31-1 requests would be needed.
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
	return sampleSize(q, confidence, power, level, math.MaxInt32)
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
	n := stats.SearchSampleSize(q, confidence, power, level, limit)
	sampleSizes.Store(k, n)
	return n
}
