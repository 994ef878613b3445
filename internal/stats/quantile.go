package stats

import (
	"fmt"
	"math"
)

// Number is what [Quantile] reads: floats, and integers such as
// time.Duration (converted to float64, exact up to 2^53).
type Number interface {
	~float64 | ~int | ~int64
}

// Quantile is the q-quantile (q a fraction in [0,1]) of the ascending
// values sorted, by linear interpolation between closest ranks, numpy's
// default (R type 7): with (i, t) = [Rank](len(sorted), q), it is
// sorted[i] when t is 0 or i is the last index, else
// [Lerp](sorted[i], sorted[i+1], t). It is NaN when sorted is empty and
// panics when q is outside [0,1]. It does not check the order: unsorted
// input gives a meaningless value.
func Quantile[T Number](sorted []T, q float64) float64 {
	checkQ(q)
	if len(sorted) == 0 {
		return math.NaN()
	}
	i, t := Rank(len(sorted), q)
	if t == 0 || i >= len(sorted)-1 {
		return float64(sorted[i])
	}
	return Lerp(float64(sorted[i]), float64(sorted[i+1]), t)
}

// Rank is where the q-quantile of n sorted values falls: h = (n-1)q in
// float64 (numpy's virtual index), i = ⌊h⌋ and t = h-i, so the quantile
// lies between the values of rank i and i+1 (from 0), at the fraction t.
// When h reaches the last rank it is (n-1, 0). It panics when n < 1 or q
// is outside [0,1].
func Rank(n int, q float64) (i int, t float64) {
	checkQ(q)
	if n < 1 {
		panic(fmt.Sprintf("stats: quantile rank in %d values", n))
	}
	h := float64(n-1) * q
	i = int(math.Floor(h))
	if i >= n-1 {
		return n - 1, 0
	}
	return i, h - float64(i)
}

// Lerp is numpy's linear interpolation a+(b-a)t, computed from the nearer
// end (b-(b-a)(1-t) when t >= 0.5), so t = 1 gives b exactly.
func Lerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - d*(1-t)
	}
	return a + d*t
}

func checkQ(q float64) {
	if !(q >= 0 && q <= 1) {
		panic(fmt.Sprintf("stats: quantile %v is outside [0,1] (quantiles are fractions: 0.99 for p99)", q))
	}
}
