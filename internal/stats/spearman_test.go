package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSpearman(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		xs, ys []float64
		want   float64
	}{
		{"increasing", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{"decreasing", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		// Ranks only: y = x³ is as monotone as y = x.
		{"monotone, not linear", []float64{-2, 0.5, 1, 3}, []float64{-8, 0.125, 1, 27}, 1},
		// d = (1,-1,1,-1,0), Σd² = 4: 1 - 6·4/(5·24) = 0.8.
		{"one swap in five", []float64{1, 2, 3, 4, 5}, []float64{2, 1, 4, 3, 5}, 0.8},
		// x ranks (0, 1.5, 1.5, 3), y ranks (0,1,2,3), both mean 1.5:
		// Σdxdy = 2.25+0+0+2.25 = 4.5, Σdx² = 4.5, Σdy² = 5, ρ = 4.5/√22.5 = √0.9.
		{"tie at the mean rank", []float64{1, 2, 2, 3}, []float64{1, 2, 3, 4}, math.Sqrt(0.9)},
		// x ranks (0.5, 0.5, 2.5, 2.5), y ranks (0,1,2,3): Σdxdy = 3+... =
		// (-1)(-1.5)+(-1)(-0.5)+(1)(0.5)+(1)(1.5) = 4, Σdx² = 4, Σdy² = 5: 4/√20 = 2/√5.
		{"two ties", []float64{7, 7, 9, 9}, []float64{1, 2, 3, 4}, 2 / math.Sqrt(5)},
		{"constant x", []float64{3, 3, 3}, []float64{1, 2, 3}, nan},
		{"constant y", []float64{1, 2, 3}, []float64{5, 5, 5}, nan},
		{"one pair", []float64{1}, []float64{2}, nan},
		{"empty", nil, nil, nan},
		{"NaN in x", []float64{1, nan, 3}, []float64{1, 2, 3}, nan},
		{"NaN in y", []float64{1, 2, 3}, []float64{1, 2, nan}, nan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Spearman(tt.xs, tt.ys)
			if math.IsNaN(tt.want) {
				if !math.IsNaN(got) {
					t.Errorf("Spearman = %v, want NaN", got)
				}
				return
			}
			if math.Abs(got-tt.want) > 1e-15 {
				t.Errorf("Spearman = %.17g, want %.17g", got, tt.want)
			}
		})
	}
}

func TestSpearmanLengthsDifferPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("Spearman of 2 and 3 values did not panic")
		}
	}()
	Spearman([]float64{1, 2}, []float64{1, 2, 3})
}

// slowRank is x's rank from 0 by its definition: the values below it,
// plus half the other values equal to it.
func slowRank(xs []float64, x float64) float64 {
	below, equal := 0, 0
	for _, v := range xs {
		if v < x {
			below++
		} else if v == x {
			equal++
		}
	}
	return float64(below) + float64(equal-1)/2
}

// TestSpearmanMatchesDefinition: on random series with many ties (values
// drawn from a few levels), Spearman equals the Pearson correlation of
// ranks counted by definition, is symmetric, and ignores a monotone
// transform of either series.
func TestSpearmanMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 7))
	for trial := range 300 {
		n := 2 + r.IntN(40)
		levels := 1 + r.IntN(8)
		xs, ys := make([]float64, n), make([]float64, n)
		for i := range xs {
			xs[i] = float64(r.IntN(levels))
			ys[i] = xs[i]*float64(r.IntN(3)-1) + float64(r.IntN(levels))
		}
		rx, ry := make([]float64, n), make([]float64, n)
		for i := range xs {
			rx[i], ry[i] = slowRank(xs, xs[i]), slowRank(ys, ys[i])
		}
		mx, my := float64(n-1)/2, float64(n-1)/2 // mean rank, ties or not
		var sxy, sxx, syy float64
		for i := range rx {
			sxy += (rx[i] - mx) * (ry[i] - my)
			sxx += (rx[i] - mx) * (rx[i] - mx)
			syy += (ry[i] - my) * (ry[i] - my)
		}
		want := sxy / math.Sqrt(sxx*syy)
		got := Spearman(xs, ys)
		if math.IsNaN(want) != math.IsNaN(got) || math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: Spearman(%v, %v) = %v, by definition %v", trial, xs, ys, got, want)
		}
		if math.IsNaN(got) {
			continue
		}
		if back := Spearman(ys, xs); math.Abs(back-got) > 1e-12 {
			t.Fatalf("trial %d: not symmetric: %v and %v", trial, got, back)
		}
		ex := make([]float64, n)
		for i, x := range xs {
			ex[i] = math.Exp(x) - 100 // strictly increasing: the same ranks
		}
		if tr := Spearman(ex, ys); math.Abs(tr-got) > 1e-12 {
			t.Fatalf("trial %d: a monotone transform moved it from %v to %v", trial, got, tr)
		}
		if got < -1-1e-12 || got > 1+1e-12 {
			t.Fatalf("trial %d: %v is outside [-1, 1]", trial, got)
		}
	}
}
