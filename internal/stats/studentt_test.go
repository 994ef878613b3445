package stats

import (
	"math"
	"testing"
)

// StudentT against exact quantiles (mpmath at 30 digits: bisection on
// its regularized incomplete beta), across the levels a Šidák split asks
// for and down to one degree of freedom.
func TestStudentT(t *testing.T) {
	for _, c := range []struct{ df, p, want float64 }{
		{1, 0.95, 6.31375151468}, {1, 0.9975, 127.321336469}, {1, 0.999, 318.308838986},
		{2, 0.95, 2.91998558035}, {2, 0.99, 6.96455673428}, {2, 0.9975, 14.0890472756},
		{3, 0.95, 2.3533634348}, {3, 0.9975, 7.45331850515},
		{5, 0.99, 3.36492999891}, {5, 0.999, 5.89342953136},
		{10, 0.95, 1.81246112281}, {10, 0.9975, 3.58140620209},
		{30, 0.95, 1.69726088659}, {30, 0.99, 2.4572615424}, {30, 0.999, 3.38518486683},
		{100, 0.95, 1.66023432609}, {100, 0.9975, 2.87065152384},
	} {
		got := StudentT(c.p, c.df)
		if math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("StudentT(%v, %v) = %.12g, want %.12g", c.p, c.df, got, c.want)
		}
		if lo := StudentT(1-c.p, c.df); lo != -got {
			t.Errorf("StudentT(%v, %v) = %v, want %v", 1-c.p, c.df, lo, -got)
		}
		if back := StudentTCDF(got, c.df); math.Abs(back-c.p) > 1e-12 {
			t.Errorf("StudentTCDF(%v, %v) = %v, want %v", got, c.df, back, c.p)
		}
	}
	// Towards the normal: z(0.95) = 1.6448536.
	if got := StudentT(0.95, 1e7); math.Abs(got-1.6448536269514722) > 1e-6 {
		t.Errorf("StudentT(0.95, 1e7) = %v", got)
	}
	if StudentT(0.5, 3) != 0 || !math.IsInf(StudentT(1, 3), 1) || !math.IsInf(StudentT(0, 3), -1) {
		t.Error("StudentT at 0.5, 1, 0")
	}
	for _, bad := range [][2]float64{{-0.1, 3}, {1.1, 3}, {math.NaN(), 3}, {0.9, 0}, {0.9, -1}, {0.9, math.NaN()}} {
		if v := StudentT(bad[0], bad[1]); !math.IsNaN(v) {
			t.Errorf("StudentT(%v, %v) = %v, want NaN", bad[0], bad[1], v)
		}
	}
}
