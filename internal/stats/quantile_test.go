package stats

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	five := []float64{10, 20, 30, 40, 50}
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1) // 1..100
	}
	tests := []struct {
		name    string
		sorted  []float64
		q, want float64
	}{
		{"q=0 is the minimum", five, 0, 10},
		{"q=1 is the maximum", five, 1, 50},
		// n=5, q=0.5: h = 4·0.5 = 2, exactly the third value.
		{"median of five", five, 0.5, 30},
		// q=0.25: h = 1, the second value.
		{"on a rank", five, 0.25, 20},
		// q=0.125: h = 0.5, t = 0.5: from the nearer (upper) end, 20 - 10·0.5 = 15.
		{"halfway", five, 0.125, 15},
		// q=0.0625: h = 0.25, t = 0.25: 10 + 10·0.25 = 12.5.
		{"a quarter of the way", five, 0.0625, 12.5},
		// q=0.9375: h = 3.75, t = 0.75: 50 - 10·0.25 = 47.5.
		{"three quarters of the way", five, 0.9375, 47.5},
		// n=4, q=0.5: h = 1.5 between 2 and 3: 2.5.
		{"median of four", []float64{1, 2, 3, 4}, 0.5, 2.5},
		// n=100, q=0.99: h = 98.01, between the 99th and 100th values (99 and
		// 100): 99.01 (t is 0.01 give or take float64's rounding of 98.01).
		{"p99 of 1..100", hundred, 0.99, 99.01},
		// n=100, q=0.5: h = 49.5, between 50 and 51: 50.5.
		{"median of 1..100", hundred, 0.5, 50.5},
		{"one value", []float64{7}, 0.3, 7},
		{"ties", []float64{1, 2, 2, 2, 9}, 0.5, 2},
		// h = 0.5 between 5 and +Inf: the interpolation reaches +Inf.
		{"reaching +Inf", []float64{5, math.Inf(1)}, 0.5, math.Inf(1)},
		// t = 0: the value itself, not 5 + (Inf-5)·0 = NaN.
		{"on a rank below +Inf", []float64{5, math.Inf(1)}, 0, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Quantile(tt.sorted, tt.q)
			if got != tt.want && math.Abs(got-tt.want) > 1e-12*math.Abs(tt.want) {
				t.Errorf("Quantile(%v) = %.17g, want %.17g", tt.q, got, tt.want)
			}
		})
	}
}

func TestQuantileEmptyIsNaN(t *testing.T) {
	if got := Quantile([]float64{}, 0.5); !math.IsNaN(got) {
		t.Errorf("Quantile of nothing = %v, want NaN", got)
	}
	if got := Quantile([]time.Duration(nil), 0.99); !math.IsNaN(got) {
		t.Errorf("Quantile of no durations = %v, want NaN", got)
	}
}

// TestQuantileIntegers: durations and counts interpolate as their float64
// values.
func TestQuantileIntegers(t *testing.T) {
	// h = 0.5 between 1ms and 4ms: 2.5ms.
	if got := Quantile([]time.Duration{time.Millisecond, 4 * time.Millisecond}, 0.5); got != 2.5e6 {
		t.Errorf("Quantile of durations = %v, want 2.5e6", got)
	}
	// h = 3·0.5 = 1.5 between 2 and 7: 4.5.
	if got := Quantile([]int{1, 2, 7, 8}, 0.5); got != 4.5 {
		t.Errorf("Quantile of ints = %v, want 4.5", got)
	}
}

func TestQuantileOutsideUnitPanics(t *testing.T) {
	for _, q := range []float64{-0.01, 1.01, 99, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Quantile(%v) did not panic", q)
				}
			}()
			Quantile([]float64{1, 2}, q)
		}()
	}
	defer func() {
		if recover() == nil {
			t.Error("Rank(0, 0.5) did not panic")
		}
	}()
	Rank(0, 0.5)
}

func TestRank(t *testing.T) {
	tests := []struct {
		n    int
		q    float64
		i    int
		frac float64
	}{
		{1, 0.7, 0, 0},    // one value: always it
		{5, 0.5, 2, 0},    // h = 2
		{5, 0.125, 0, .5}, // h = 0.5
		{5, 1, 4, 0},      // h = 4, the last rank
		{3, 0.75, 1, .5},  // h = 1.5
	}
	for _, tt := range tests {
		if i, frac := Rank(tt.n, tt.q); i != tt.i || frac != tt.frac {
			t.Errorf("Rank(%d, %v) = (%d, %v), want (%d, %v)", tt.n, tt.q, i, frac, tt.i, tt.frac)
		}
	}
}

// TestLerpEnds: the ends are exact (t = 1 gives b itself, which a+(b-a)·1
// need not: 0.1 + (0.7-0.1) is 0.7000000000000001).
func TestLerpEnds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		a, b := r.NormFloat64()*1e3, r.NormFloat64()*1e-3
		if Lerp(a, b, 0) != a || Lerp(a, b, 1) != b {
			t.Fatalf("Lerp(%v, %v, 0/1) = %v, %v", a, b, Lerp(a, b, 0), Lerp(a, b, 1))
		}
	}
	if got := Lerp(0.1, 0.7, 1); got != 0.7 {
		t.Errorf("Lerp(0.1, 0.7, 1) = %.17g", got)
	}
}

// checkQuantiles asserts Quantile's invariants on one sorted sample at
// the quantiles qs (ascending): monotone, within [min, max], the ends at
// q = 0 and 1.
func checkQuantiles(t *testing.T, s []float64, qs []float64) {
	t.Helper()
	lo, hi := s[0], s[len(s)-1]
	prev := math.Inf(-1)
	for _, q := range qs {
		v := Quantile(s, q)
		if v < prev || v < lo || v > hi {
			t.Fatalf("n=%d: Quantile(%v) = %v after %v, within [%v, %v]; sample %v", len(s), q, v, prev, lo, hi, s)
		}
		prev = v
	}
	if Quantile(s, 0) != lo || Quantile(s, 1) != hi {
		t.Fatalf("Quantile(0) = %v, Quantile(1) = %v, want %v and %v", Quantile(s, 0), Quantile(s, 1), lo, hi)
	}
}

// TestQuantileInvariants: on random samples of latencies (positive, from
// a nanosecond to days, with ties), quantiles are monotone in q and within
// [min, max].
func TestQuantileInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	qs := make([]float64, 1001)
	for k := range qs {
		qs[k] = float64(k) / 1000
	}
	for range 300 {
		s := make([]float64, 1+r.IntN(300))
		for i := range s {
			switch r.IntN(4) {
			case 0:
				s[i] = float64(r.IntN(5)) // ties
			case 1:
				s[i] = float64(r.Int64N(1 << 50))
			default:
				s[i] = math.Exp(r.NormFloat64()*3) * 1e6
			}
		}
		slices.Sort(s)
		checkQuantiles(t, s, qs)
	}
}

// FuzzQuantile: for any finite sample and q1 <= q2 in [0,1], Quantile(q1)
// <= Quantile(q2), both within [min, max].
func FuzzQuantile(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 240, 63}, 0.5, 0.99)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 240, 63, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 8, 64}, 0.0, 1.0)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 240, 191, 0, 0, 0, 0, 0, 0, 0, 0}, 0.1, 0.2)
	f.Fuzz(func(t *testing.T, raw []byte, q1, q2 float64) {
		var s []float64
		for len(raw) >= 8 {
			v := math.Float64frombits(binary.LittleEndian.Uint64(raw))
			raw = raw[8:]
			if math.IsNaN(v) || math.Abs(v) > 1e300 { // a difference must stay finite
				continue
			}
			s = append(s, v)
		}
		if len(s) == 0 || !(q1 >= 0 && q1 <= 1) || !(q2 >= 0 && q2 <= 1) {
			return
		}
		if q1 > q2 {
			q1, q2 = q2, q1
		}
		slices.Sort(s)
		checkQuantiles(t, s, []float64{q1, q2})
	})
}
