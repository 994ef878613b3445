package stats

import (
	"math"
	"math/big"
	"testing"
)

func TestBinomCDF(t *testing.T) {
	tests := []struct {
		name    string
		k, n    int
		p, want float64
	}{
		// P(X=0) = (1/2)^4 = 1/16; P(X<=1) = (1 + 4)/16 = 5/16.
		{"fair coin, k=0", 0, 4, 0.5, 1.0 / 16},
		{"fair coin, k=1", 1, 4, 0.5, 5.0 / 16},
		// (1 + 4 + 6)/16 = 11/16.
		{"fair coin, k=2", 2, 4, 0.5, 11.0 / 16},
		// n=10, p=0.1: P(X=0) = 0.9^10 = 0.3486784401, P(X=1) = 10·0.1·0.9^9 = 0.387420489.
		{"n=10 p=0.1 k=1", 1, 10, 0.1, 0.3486784401 + 0.387420489},
		// n=3, p=0.25, k=2: 1 - P(X=3) = 1 - 1/64.
		{"upper term only", 2, 3, 0.25, 63.0 / 64},
		{"k=n is certain", 5, 5, 0.3, 1},
		{"k above n is certain", 9, 5, 0.3, 1},
		{"k below 0 is impossible", -1, 5, 0.3, 0},
		{"n=0, k=0", 0, 0, 0.7, 1},
		// p = 0: all mass at 0, so every k >= 0 has CDF 1 (log(0) must not make it NaN).
		{"p=0, k=0", 0, 10, 0, 1},
		{"p=0, k=3", 3, 10, 0, 1},
		// p = 1: all mass at n, so k < n has CDF 0 and k = n has 1.
		{"p=1, k=0", 0, 10, 1, 0},
		{"p=1, k=9", 9, 10, 1, 0},
		{"p=1, k=10", 10, 10, 1, 1},
		// 1000 trials at 1e-4: P(X=0) = (1-1e-4)^1000 = exp(1000·log1p(-1e-4)).
		{"small p, large n", 0, 1000, 1e-4, math.Exp(1000 * math.Log1p(-1e-4))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BinomCDF(tt.k, tt.n, tt.p)
			if math.Abs(got-tt.want) > 1e-14 {
				t.Errorf("BinomCDF(%d, %d, %v) = %.17g, want %.17g", tt.k, tt.n, tt.p, got, tt.want)
			}
		})
	}
}

// TestBinomCDFInvalid: what cannot be a binomial is NaN, never a number
// a threshold could pass.
func TestBinomCDFInvalid(t *testing.T) {
	for _, c := range []struct {
		name string
		k, n int
		p    float64
	}{
		{"p NaN", 1, 5, math.NaN()},
		{"p below 0", 1, 5, -0.1},
		{"p above 1", 1, 5, 1.1},
		{"p +Inf", 1, 5, math.Inf(1)},
		{"n below 0", 0, -1, 0.5},
		{"n below 0 and k below 0", -3, -1, 0.5},
	} {
		if got := BinomCDF(c.k, c.n, c.p); !math.IsNaN(got) {
			t.Errorf("%s: BinomCDF(%d, %d, %v) = %v, want NaN", c.name, c.k, c.n, c.p, got)
		}
		for range BinomCDFs(c.n, c.p) {
			t.Errorf("%s: BinomCDFs(%d, %v) yielded a value", c.name, c.n, c.p)
			break
		}
	}
}

// exactBinomCDFs are P(X <= k) for k = 0..n, X ~ Binomial(n, num/den),
// summed exactly with math/big: the running sum over i <= k of
// C(n,i) num^i (den-num)^(n-i), over den^n.
func exactBinomCDFs(n int, num, den int64) []float64 {
	out := make([]float64, n+1)
	sum := new(big.Int)
	total := new(big.Int).Exp(big.NewInt(den), big.NewInt(int64(n)), nil)
	for i := 0; i <= n; i++ {
		term := new(big.Int).Binomial(int64(n), int64(i))
		term.Mul(term, new(big.Int).Exp(big.NewInt(num), big.NewInt(int64(i)), nil))
		term.Mul(term, new(big.Int).Exp(big.NewInt(den-num), big.NewInt(int64(n-i)), nil))
		sum.Add(sum, term)
		out[i], _ = new(big.Rat).SetFrac(sum, total).Float64()
	}
	return out
}

// TestBinomCDFMatchesExact compares every k of a grid of n and p with the
// exact sum (n up to 300 under -short, 1,000 without). Values a float64
// holds as normal numbers agree to a relative n·1e-14 (the log-space
// recurrence's error grows with the steps: measured 4.6e-13 at n = 300,
// 1.6e-12 at n = 1,000); values below the normal range need only be that
// small.
func TestBinomCDFMatchesExact(t *testing.T) {
	ps := [][2]int64{{1, 1000}, {1, 100}, {1, 20}, {1, 10}, {1, 3}, {1, 2}, {9, 10}, {99, 100}, {999, 1000}}
	ns := []int{1, 2, 5, 10, 31, 100, 300, 1000}
	if testing.Short() {
		ns = ns[:len(ns)-1]
	}
	worst := 0.0
	for _, n := range ns {
		for _, pr := range ps {
			p := float64(pr[0]) / float64(pr[1])
			exact := exactBinomCDFs(n, pr[0], pr[1])
			k := -1
			for i, c := range BinomCDFs(n, p) {
				k++
				if i != k {
					t.Fatalf("n=%d p=%v: BinomCDFs yielded index %d after %d", n, p, i, k-1)
				}
				want := exact[i]
				got := BinomCDF(i, n, p)
				if i < n && got != c {
					t.Errorf("n=%d p=%v k=%d: BinomCDF %v, BinomCDFs %v", n, p, i, got, c)
				}
				if want < 0x1p-1022 {
					if got > 0x1p-1000 {
						t.Errorf("n=%d p=%v k=%d: got %v, exact %v", n, p, i, got, want)
					}
					continue
				}
				rel := math.Abs(got-want) / want
				worst = max(worst, rel)
				if rel > float64(n)*1e-14 {
					t.Errorf("n=%d p=%v k=%d: got %.17g, exact %.17g (relative error %.2g)", n, p, i, got, want, rel)
				}
			}
			if k != n {
				t.Errorf("n=%d p=%v: BinomCDFs yielded %d values, want %d", n, p, k+1, n+1)
			}
		}
	}
	t.Logf("worst relative error against the exact sums: %.2g", worst)
}

// TestBinomCDFsStops: a caller that breaks out of the walk stops it.
func TestBinomCDFsStops(t *testing.T) {
	seen := 0
	for i := range BinomCDFs(1000, 0.5) {
		seen++
		if i == 3 {
			break
		}
	}
	if seen != 4 {
		t.Errorf("the walk went on to %d values after the caller stopped at 4", seen)
	}
}
