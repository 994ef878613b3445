package fit

import (
	"math"
	"testing"
)

func TestKolmogorovQ(t *testing.T) {
	// Known values of the Kolmogorov distribution: the classic critical
	// values (P(K > 1.2238) = 0.10, P(K > 1.3581) = 0.05, P(K > 1.6276) =
	// 0.01, P(K > 1.9495) = 0.001) and P(K <= 1) = 0.7300003, P(K <= 0.5) =
	// 0.0360548 (Kolmogorov 1933; Smirnov 1948's table).
	for _, c := range []struct{ lambda, q, tol float64 }{
		{1.2238, 0.10, 2e-4},
		{1.3581, 0.05, 2e-4},
		{1.6276, 0.01, 2e-5},
		{1.9495, 0.001, 2e-6},
		{1, 1 - 0.7300003, 1e-6},
		{0.5, 1 - 0.0360548, 1e-6},
		{0, 1, 0},
		{10, 0, 1e-40},
	} {
		if got := KolmogorovQ(c.lambda); math.Abs(got-c.q) > c.tol {
			t.Errorf("KolmogorovQ(%v) = %.7f, want %.7f ± %g", c.lambda, got, c.q, c.tol)
		}
	}
	// The two series agree where they meet.
	for _, l := range []float64{1.1, 1.17, 1.18, 1.19, 1.3} {
		y := math.Exp(-math.Pi * math.Pi / (8 * l * l))
		small := 1 - math.Sqrt(2*math.Pi)/l*(y+math.Pow(y, 9)+math.Pow(y, 25)+math.Pow(y, 49))
		large := 2 * (math.Exp(-2*l*l) - math.Exp(-8*l*l) + math.Exp(-18*l*l) - math.Exp(-32*l*l))
		if math.Abs(small-large) > 1e-12 || math.Abs(KolmogorovQ(l)-large) > 1e-12 {
			t.Errorf("λ=%v: series %.15f and %.15f, KolmogorovQ %.15f", l, small, large, KolmogorovQ(l))
		}
	}
}

func TestKolmogorovSmirnov(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []float64
		d    float64
	}{
		{"apart", []float64{1, 2, 3}, []float64{4, 5, 6}, 1},
		{"equal", []float64{3, 1, 2}, []float64{1, 2, 3}, 0},
		// CDFs after 2: 2/4 vs 0; after 4: 1 vs 2/4.
		{"half overlap", []float64{1, 2, 3, 4}, []float64{3, 4, 5, 6}, 0.5},
		// Ties step together: after 1: 2/3 vs 1/3; after 2: 1 vs 1.
		{"ties", []float64{1, 1, 2}, []float64{1, 2, 2}, 1.0 / 3},
		// Unequal sizes: after 2: 1 vs 0.
		{"sizes", []float64{1, 2}, []float64{3, 4, 5, 2.5}, 1},
		// After 1: 1/2 vs 0; after 2: 1 vs 1/4; D 3/4.
		{"sizes overlap", []float64{1, 2}, []float64{2, 3, 4, 5}, 0.75},
		{"interleaved", []float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, 0.25},
	} {
		a0 := append([]float64(nil), c.a...)
		r := KolmogorovSmirnov(c.a, c.b)
		if math.Abs(r.D-c.d) > 1e-12 {
			t.Errorf("%s: D = %v, want %v", c.name, r.D, c.d)
		}
		for i := range a0 {
			if a0[i] != c.a[i] {
				t.Fatalf("%s: KolmogorovSmirnov sorted the caller's slice", c.name)
			}
		}
	}
	// n = m = 100, D = 0.2: e = 50, λ = (7.07107+0.12+0.01556)·0.2 =
	// 1.441325, Q = 2(exp(-2λ²) - exp(-8λ²) + ...) = 2(0.0156884 -
	// 0.0000001) = 0.031377.
	a, b := make([]float64, 100), make([]float64, 100)
	for i := range a {
		a[i], b[i] = float64(i), float64(i+20)
	}
	r := KolmogorovSmirnov(a, b)
	if math.Abs(r.D-0.2) > 1e-12 || math.Abs(r.P-0.031377) > 2e-6 {
		t.Errorf("n=m=100 shifted by 20: D %v p %v, want 0.2 and 0.031377", r.D, r.P)
	}
	if r := KolmogorovSmirnov(nil, a); !math.IsNaN(r.P) {
		t.Errorf("empty sample: p %v, want NaN", r.P)
	}
}
