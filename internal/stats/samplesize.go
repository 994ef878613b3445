package stats

import "math"

// SearchSampleSize returns the fewest requests, up to limit
// (math.MaxInt beyond it), at which the one-sided bound of the
// q-quantile at this confidence decides the objective "q-quantile within
// budget" the right way with probability power, when the budget sits at
// the level-quantile (DecidePower): the upper bound within budget for
// level > q, the lower bound over it for level < q.
//
// Power is a sawtooth in n. Write the bound's rank as n+1-m (upper bound)
// or n-t (lower bound): the allowance m or t is non-decreasing in n and
// steps about every 1/(1-q) requests. While it stays, the upper bound's
// power falls with n (each request adds one to the rank) and the lower
// bound's rises; so the upper bound's teeth peak where a stretch starts and
// the lower bound's where it ends. The search bisects on the peak of the
// stretch holding n (taken as non-decreasing from stretch to stretch), then
// returns the first n of the first stretch whose peak reaches the power.
func SearchSampleSize(q, confidence, power, level float64, limit int) int {
	demo := level > q
	pw := func(n int) float64 { return DecidePower(n, q, confidence, level) }
	key := func(n int) int { // the allowance; -1 while the bound does not exist
		if demo {
			k, ok := UpperRank(n, q, confidence)
			if !ok {
				return -1
			}
			return n + 1 - k
		}
		j, ok := LowerRank(n, q, confidence)
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
	back := min(8*CeilInverse(math.Min(q, 1-q)), 2000)
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

// DecidePower is the probability that n requests decide the objective the
// right way when the budget sits at the level-quantile (SearchSampleSize).
func DecidePower(n int, q, confidence, level float64) float64 {
	if level > q {
		// Pass demonstrated: X(k) <= budget, i.e. at least k of n at or
		// under it: P(Binomial(n, level) >= k) = P(G <= n-k), G ~ Bin(n, 1-level).
		k, ok := UpperRank(n, q, confidence)
		if !ok {
			return 0
		}
		return BinomCDF(n-k, n, 1-level)
	}
	// Fail demonstrated: X(j) > budget, i.e. fewer than j at or under it:
	// P(Binomial(n, level) <= j-1) = 1 - P(G <= n-j).
	j, ok := LowerRank(n, q, confidence)
	if !ok {
		return 0
	}
	return 1 - BinomCDF(n-j, n, 1-level)
}
