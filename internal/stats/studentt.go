package stats

import "math"

// StudentT is the p quantile of Student's t distribution with df degrees
// of freedom (df > 0, not necessarily whole): the t with P(T <= t) = p.
// It inverts [StudentTCDF] by bisection to a relative 1e-12, so any
// level works (a Šidák split of 5% over 20 candidates asks for 0.99744),
// not only a table's. It is NaN when p is outside (0,1) or df is not
// positive; ±Inf at p 0 and 1.
func StudentT(p, df float64) float64 {
	switch {
	case !(p >= 0 && p <= 1) || !(df > 0) || math.IsInf(df, 0):
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	case p < 0.5:
		return -StudentT(1-p, df)
	case p == 0.5:
		return 0
	}
	lo, hi := 0.0, 1.0
	for StudentTCDF(hi, df) < p {
		lo, hi = hi, 2*hi
		if math.IsInf(hi, 0) {
			return hi
		}
	}
	for range 200 {
		m := lo + (hi-lo)/2
		if StudentTCDF(m, df) < p {
			lo = m
		} else {
			hi = m
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return lo + (hi-lo)/2
}

// StudentTCDF is P(T <= t) for Student's t with df > 0 degrees of
// freedom, from the regularized incomplete beta function:
// 1 - I(df/(df+t²); df/2, 1/2)/2 for t >= 0. NaN for df <= 0 or a NaN t.
func StudentTCDF(t, df float64) float64 {
	if !(df > 0) || math.IsNaN(t) {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		if t > 0 {
			return 1
		}
		return 0
	}
	tail := regIncBeta(df/(df+t*t), df/2, 0.5) / 2 // P(T > |t|)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// regIncBeta is the regularized incomplete beta function I(x; a, b) for
// x in [0,1] and a, b > 0: Lentz's continued fraction, on the side of
// the mean where it converges fast (Numerical Recipes' betai).
func regIncBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(x, a, b) / a
	}
	return 1 - front*betaFraction(1-x, b, a)/b
}

// betaFraction is the continued fraction of the incomplete beta
// function, by the modified Lentz method.
func betaFraction(x, a, b float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 1000; m++ {
		fm := float64(m)
		// The even step.
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		// The odd step.
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
