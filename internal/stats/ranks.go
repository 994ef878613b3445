package stats

import "math"

// CeilInverse is ceil(1/p) for p in (0,1], forgiving the rounding error of
// 1-q: 1/(1-0.9999) is 10000.000000000827 in floating point, and the
// answer is 10,000.
func CeilInverse(p float64) int {
	x := 1 / p
	if r := math.Round(x); math.Abs(x-r) <= 1e-9*x {
		return int(r)
	}
	if x >= float64(math.MaxInt) {
		return math.MaxInt
	}
	return int(math.Ceil(x))
}

func validBoundArgs(n int, q, confidence float64) bool {
	return n > 0 && q > 0 && q < 1 && confidence > 0 && confidence < 1
}

// UpperRank is the 1-based rank k of a one-sided upper confidence bound
// on the q-quantile of n values: X(k) for the smallest k with
// P(Binomial(n,q) <= k-1) >= confidence. With F = n-B ~
// Binomial(n, 1-q), P(B <= k-1) = P(F >= m) for m = n-k+1, so the
// smallest k is n+1-m for the largest m >= 1 with P(F <= m-1) <= 1-c.
// Summing F's lower tail from 0 keeps a small tail's precision and costs
// about n(1-q) terms.
func UpperRank(n int, q, confidence float64) (k int, ok bool) {
	if !validBoundArgs(n, q, confidence) {
		return 0, false
	}
	m := lastAtMost(n, 1-q, 1-confidence) + 1 // largest m-1 with P(F <= m-1) <= 1-c
	if m < 1 {
		return 0, false
	}
	return n + 1 - m, true
}

// LowerRank is the 1-based rank j of a one-sided lower confidence bound
// on the q-quantile of n values, X(j) for the largest j with
// P(Binomial(n,q) >= j) >= confidence: P(B >= j) = P(F <= n-j),
// so the largest j is n-t for the smallest t with P(F <= t) >= c.
func LowerRank(n int, q, confidence float64) (j int, ok bool) {
	if !validBoundArgs(n, q, confidence) {
		return 0, false
	}
	t := lastAtMost(n, 1-q, confidence) + 1 // smallest t with P(F <= t) >= c, give or take the tie below
	// lastAtMost finds the largest t' with P(F <= t') <= c; when
	// P(F <= t') == c exactly, t' itself qualifies.
	if t-1 >= 0 && BinomCDF(t-1, n, 1-q) >= confidence {
		t--
	}
	if n-t < 1 {
		return 0, false
	}
	return n - t, true
}

// lastAtMost returns the largest i in [-1, n] with P(F <= i) <= limit for
// F ~ Binomial(n, p) (-1 when even P(F = 0) exceeds it).
func lastAtMost(n int, p, limit float64) int {
	i := -1
	for x, cdf := range BinomCDFs(n, p) {
		if cdf > limit*(1+1e-12) {
			break
		}
		i = x
	}
	return i
}
