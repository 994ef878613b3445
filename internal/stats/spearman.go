package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Spearman is the Spearman rank correlation of xs and ys, in [-1, 1]: the
// Pearson correlation of their ranks, tied values sharing their mean rank
// (scipy.stats.spearmanr). It is NaN when there are fewer than two pairs,
// when either series is constant, or when a value is NaN. It panics when
// xs and ys differ in length.
func Spearman(xs, ys []float64) float64 {
	if len(xs) != len(ys) {
		panic(fmt.Sprintf("stats: Spearman of %d and %d values (the series must pair up)", len(xs), len(ys)))
	}
	if slices.ContainsFunc(xs, math.IsNaN) || slices.ContainsFunc(ys, math.IsNaN) {
		return math.NaN()
	}
	rx, ry := ranks(xs), ranks(ys)
	mx, my := mean(rx), mean(ry)
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ranks are xs's ranks from 0, ties at their mean rank.
func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			r[idx[k]] = float64(i+j-1) / 2
		}
		i = j
	}
	return r
}

// mean is the arithmetic mean, summed in order; NaN when empty.
func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
