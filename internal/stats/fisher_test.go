package stats

import (
	"math"
	"math/big"
	"testing"
)

// exactGreater is Fisher's one-sided p-value as an exact rational:
// Σ_{x>=a} C(K,x)·C(N-K,n-x) / C(N,n), N = a+b+c+d, K = a+c, n = a+b.
func exactGreater(a, b, c, d int) *big.Rat {
	n, k, total := int64(a+b), int64(a+c), int64(a+b+c+d)
	num := new(big.Int)
	for x := int64(a); x <= min(n, k); x++ {
		t := new(big.Int).Binomial(k, x)
		num.Add(num, t.Mul(t, new(big.Int).Binomial(total-k, n-x)))
	}
	return new(big.Rat).SetFrac(num, new(big.Int).Binomial(total, n))
}

// exactExceedance is the exceedance test's p-value as an exact rational:
// Σ_{x>=a} C(x+j-1,x)·C(nc-x+nb-j,nc-x) / C(nb+nc,nc).
func exactExceedance(a, j, nb, nc int) *big.Rat {
	num := new(big.Int)
	for x := int64(a); x <= int64(nc); x++ {
		t := new(big.Int).Binomial(x+int64(j)-1, x)
		num.Add(num, t.Mul(t, new(big.Int).Binomial(int64(nc)-x+int64(nb-j), int64(nc)-x)))
	}
	return new(big.Rat).SetFrac(num, new(big.Int).Binomial(int64(nb+nc), int64(nc)))
}

func relErr(got float64, want *big.Rat) float64 {
	w, _ := want.Float64()
	if w == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-w) / w
}

// TestFisherGreaterByHand checks tables small enough to do on paper. The
// tea tasting is the classic example (R's fisher.test(TeaTasting,
// alternative = "greater") and scipy.stats.fisher_exact([[3, 1], [1, 3]],
// alternative="greater") both give 0.2429).
func TestFisherGreaterByHand(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a, b, c, d int
		want       float64
	}{
		// Fisher's tea tasting: 3 of 4 cups right. Margins 4, 4, 4, 4:
		// P(X=3) = C(4,3)C(4,1)/C(8,4) = 16/70, P(X=4) = 1/70; p = 17/70.
		{"tea", 3, 1, 1, 3, 17.0 / 70},
		// All 4 right: p = 1/70.
		{"tea, all right", 4, 0, 0, 4, 1.0 / 70},
		// 6 of 300 current requests failed, none of 300 baseline: the 6
		// failures all fell in the current row, P = C(300,6)/C(600,6) =
		// (300·299·298·297·296·295)/(600·599·598·597·596·595) = 0.0152.
		{"6 of 300 vs 0 of 300", 6, 294, 0, 300, 300.0 * 299 * 298 * 297 * 296 * 295 / (600.0 * 599 * 598 * 597 * 596 * 595)},
		// 1 failure, in the current row: P = 300/600 = 1/2.
		{"one failure", 1, 299, 0, 300, 0.5},
		// Nothing observed in the current row: p = 1.
		{"none current", 0, 300, 5, 295, 1},
		// No failure at all: p = 1.
		{"no events", 0, 10, 0, 10, 1},
		// [[1, 9], [11, 3]]: the current row has fewer events than its
		// share; P(X>=1) = 1 - P(X=0) = 1 - C(12,0)C(12,10)/C(24,10) =
		// 1 - 66/1961256.
		{"fewer than expected", 1, 9, 11, 3, 1 - 66.0/1961256},
		// [[6, 2], [1, 4]]: K = 7, n = 8, N = 13: P(X=6) =
		// C(7,6)C(6,2)/C(13,8) = 105/1287, P(X=7) = C(6,1)/1287 = 6/1287;
		// p = 111/1287.
		{"small table", 6, 2, 1, 4, 111.0 / 1287},
	} {
		got := FisherGreater(tc.a, tc.b, tc.c, tc.d)
		if math.Abs(got-tc.want) > 1e-12*math.Max(1, tc.want) {
			t.Errorf("%s: FisherGreater(%d, %d, %d, %d) = %.17g, want %.17g", tc.name, tc.a, tc.b, tc.c, tc.d, got, tc.want)
		}
		if e := relErr(got, exactGreater(tc.a, tc.b, tc.c, tc.d)); e > 1e-11 {
			t.Errorf("%s: relative error %g against the exact rational", tc.name, e)
		}
	}
	if p := FisherGreater(-1, 2, 3, 4); !math.IsNaN(p) {
		t.Errorf("negative count: %v, want NaN", p)
	}
}

// TestFisherGreaterExact compares every p-value with the exact rational
// (math/big) over a grid of tables, run sizes up to 1000 included: the
// log-factorial sums keep 1e-10 relative precision, down to p-values far
// below any confidence in use.
func TestFisherGreaterExact(t *testing.T) {
	worst := 0.0
	for _, n := range []int{5, 40, 300, 1000} {
		for _, m := range []int{7, 300} {
			for _, a := range []int{0, 1, 2, 3, 5, 8, 13, 21} {
				for _, c := range []int{0, 1, 4, 12, 30} {
					if a > n || c > m {
						continue
					}
					got := FisherGreater(a, n-a, c, m-c)
					want := exactGreater(a, n-a, c, m-c)
					w, _ := want.Float64()
					if w < 1e-300 {
						continue
					}
					e := relErr(got, want)
					worst = max(worst, e)
					if e > 1e-10 || got > 1 {
						t.Errorf("[[%d %d] [%d %d]]: %.17g, exact %.17g", a, n-a, c, m-c, got, w)
					}
				}
			}
		}
	}
	t.Logf("worst relative error %.3g", worst)
}

// TestExceedanceExact checks the exceedance test against exact rationals
// and by hand.
func TestExceedanceExact(t *testing.T) {
	// nb = nc = 1, j = 1: the current value is above the baseline's with
	// probability 1/2.
	if p := ExceedanceGreater(1, 1, 1, 1); math.Abs(p-0.5) > 1e-15 {
		t.Errorf("one against one: %v, want 0.5", p)
	}
	// nb = 2, nc = 2, j = 1 (the larger baseline value): both current
	// values above it means the two largest of four are current: 1/C(4,2)
	// = 1/6; at least one: the largest is current, 1/2.
	if p := ExceedanceGreater(2, 1, 2, 2); math.Abs(p-1.0/6) > 1e-15 {
		t.Errorf("both above: %v, want 1/6", p)
	}
	if p := ExceedanceGreater(1, 1, 2, 2); math.Abs(p-0.5) > 1e-15 {
		t.Errorf("one above: %v, want 1/2", p)
	}
	// The probabilities of every count sum to 1 (a = 0 is the whole sum).
	for _, tc := range [][3]int{{3, 300, 300}, {15, 300, 300}, {1, 100, 400}, {6, 600, 300}} {
		j, nb, nc := tc[0], tc[1], tc[2]
		if p := exactExceedance(0, j, nb, nc); p.Cmp(big.NewRat(1, 1)) != 0 {
			t.Errorf("j=%d nb=%d nc=%d: the distribution sums to %v", j, nb, nc, p)
		}
		for _, a := range []int{1, 2, 5, 10, 20, 40} {
			if e := relErr(ExceedanceGreater(a, j, nb, nc), exactExceedance(a, j, nb, nc)); e > 1e-10 {
				t.Errorf("a=%d j=%d nb=%d nc=%d: relative error %g", a, j, nb, nc, e)
			}
		}
	}
	for _, bad := range [][4]int{{1, 0, 10, 10}, {1, 11, 10, 10}, {-1, 1, 10, 10}, {11, 1, 10, 10}} {
		if p := ExceedanceGreater(bad[0], bad[1], bad[2], bad[3]); !math.IsNaN(p) {
			t.Errorf("ExceedanceGreater%v = %v, want NaN", bad, p)
		}
	}
}
