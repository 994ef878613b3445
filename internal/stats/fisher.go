package stats

import "math"

// FisherGreater is the one-sided p-value of Fisher's exact test on the 2×2
// table
//
//	         event  no event
//	current    a       b
//	baseline   c       d
//
// for the alternative that the current row's share of events is greater
// (scipy.stats.fisher_exact([[a, b], [c, d]], alternative="greater")).
// Given the margins, the number of events in the current row is
// hypergeometric: N = a+b+c+d requests, K = a+c events, n = a+b current
// requests, P(X = k) = C(K,k)·C(N-K,n-k)/C(N,n); the p-value is P(X >= a).
// Terms are computed from log-factorials (math.Lgamma) and summed from the
// far end of the tail, so tiny p-values keep their relative precision. It
// is 1 when a is 0 or no request had an event, and NaN for a negative
// count.
func FisherGreater(a, b, c, d int) float64 {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return math.NaN()
	}
	n, k, total := a+b, a+c, a+b+c+d
	if a == 0 || k == 0 {
		return 1
	}
	hi := min(n, k) // the largest possible event count in the current row
	logDenom := logChoose(total, n)
	p := 0.0
	for x := hi; x >= a; x-- { // smallest terms first
		p += math.Exp(logChoose(k, x) + logChoose(total-k, n-x) - logDenom)
	}
	return min(p, 1)
}

// ExceedanceGreater is the one-sided p-value of the exceedance (precedence)
// test: of nb baseline and nc current values, the j-th largest baseline
// value is the threshold, and a current values exceed it. When both samples
// come from one continuous distribution, the number A of current values
// above the baseline's j-th largest is distribution-free:
//
//	P(A = x) = C(x+j-1, x)·C(nc-x+nb-j, nc-x) / C(nb+nc, nc)
//
// (the j-th largest baseline value and the x current values above it are
// the top x+j of the pooled values, with the x in any order among the
// j-1 larger baseline values). The p-value is P(A >= a). It accounts for
// the threshold being estimated from the baseline: the baseline's own
// sampling noise is in the null distribution. It is 1 when a is 0, NaN
// when j is outside [1, nb] or a is outside [0, nc].
func ExceedanceGreater(a, j, nb, nc int) float64 {
	if j < 1 || j > nb || a < 0 || a > nc {
		return math.NaN()
	}
	if a == 0 {
		return 1
	}
	logDenom := logChoose(nb+nc, nc)
	p := 0.0
	for x := nc; x >= a; x-- {
		p += math.Exp(logChoose(x+j-1, x) + logChoose(nc-x+nb-j, nc-x) - logDenom)
	}
	return min(p, 1)
}

// logChoose is log C(n, k) from log-factorials, -Inf when k is outside
// [0, n].
func logChoose(n, k int) float64 {
	if k < 0 || k > n {
		return math.Inf(-1)
	}
	return logFactorial(n) - logFactorial(k) - logFactorial(n-k)
}

// logFactorial is log n!, as math.Lgamma(n+1).
func logFactorial(n int) float64 {
	v, _ := math.Lgamma(float64(n) + 1)
	return v
}
