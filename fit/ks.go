package fit

import (
	"math"
	"slices"
)

// KS is a two-sample Kolmogorov-Smirnov test.
type KS struct {
	// D is the statistic: the largest distance between the two empirical
	// CDFs, in [0, 1].
	D float64
	// P is its asymptotic p-value (see KolmogorovSmirnov); NaN when a
	// sample is empty.
	P float64
	// N and M are the sample sizes.
	N, M int
}

// KolmogorovSmirnov tests whether a and b come from one continuous
// distribution. D is computed exactly, ties included (both CDFs step past
// a tied value together). P is the asymptotic p-value of Numerical
// Recipes' ksone/kstwo: Q(λ) with λ = (√e + 0.12 + 0.11/√e)·D and
// e = N·M/(N+M) (Stephens' small-sample correction), Q the Kolmogorov
// survival function (see KolmogorovQ). It is close to exact for e of 4
// or more. The samples are not modified.
func KolmogorovSmirnov(a, b []float64) KS {
	r := KS{N: len(a), M: len(b), P: math.NaN()}
	if len(a) == 0 || len(b) == 0 {
		return r
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	i, j := 0, 0
	n, m := float64(len(x)), float64(len(y))
	for i < len(x) && j < len(y) {
		v := min(x[i], y[j])
		for i < len(x) && x[i] == v {
			i++
		}
		for j < len(y) && y[j] == v {
			j++
		}
		r.D = max(r.D, math.Abs(float64(i)/n-float64(j)/m))
	}
	e := math.Sqrt(n * m / (n + m))
	r.P = KolmogorovQ((e + 0.12 + 0.11/e) * r.D)
	return r
}

// KolmogorovQ is the Kolmogorov distribution's survival function,
// Q(λ) = P(K > λ) = 2 Σ_{k≥1} (-1)^(k-1) exp(-2k²λ²), summed to double
// precision; below λ = 1.18 it uses the equivalent series
// 1 - √(2π)/λ Σ_{k≥1} exp(-(2k-1)²π²/(8λ²)), which converges fast there.
// Q(λ) is 1 for λ <= 0.
func KolmogorovQ(lambda float64) float64 {
	switch {
	case math.IsNaN(lambda):
		return math.NaN()
	case lambda <= 0:
		return 1
	case lambda < 1.18:
		y := math.Exp(-math.Pi * math.Pi / (8 * lambda * lambda))
		sum := 0.0
		for k := 1; k < 100; k++ {
			term := math.Pow(y, float64((2*k-1)*(2*k-1)))
			sum += term
			if term < 1e-17*sum {
				break
			}
		}
		return max(0, 1-math.Sqrt(2*math.Pi)/lambda*sum)
	}
	sum, sign := 0.0, 1.0
	for k := 1; k < 100; k++ {
		term := math.Exp(-2 * float64(k*k) * lambda * lambda)
		sum += sign * term
		if term < 1e-17*math.Abs(sum) {
			break
		}
		sign = -sign
	}
	return min(1, max(0, 2*sum))
}
