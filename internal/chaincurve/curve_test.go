package chaincurve

import (
	"math"
	"testing"
	"time"
)

// Of interpolates between closest ranks (numpy's linear) and a quantile
// that reaches a failure is one.
func TestOf(t *testing.T) {
	const f = time.Duration(math.MaxInt64)
	// 1..100 ms: p50 at rank 49.5 -> 50.5 ms; p95 at 94.05 -> 95.05 ms;
	// p99 at 98.01 -> 99.01 ms.
	var xs []time.Duration
	for i := 100; i >= 1; i-- {
		xs = append(xs, time.Duration(i)*time.Millisecond)
	}
	q := Of(xs)
	if q.N != 100 || q.Failed != 0 || q.P50 != 50500*time.Microsecond || q.P95 != 95050*time.Microsecond || q.P99 != 99010*time.Microsecond {
		t.Errorf("%+v", q)
	}
	if xs[0] != 100*time.Millisecond {
		t.Error("Of sorted its input")
	}
	// The two slowest failed: p99 reaches them, p95 does not.
	xs[0], xs[1] = f, f
	if q := Of(xs); q.Failed != 2 || q.P99 != f || q.P95 != 95050*time.Microsecond {
		t.Errorf("with failures: %+v", q)
	}
	if q := Of(nil); q.N != 0 || q.P50 != f {
		t.Errorf("empty: %+v", q)
	}
}

// Compute: no call predicts failures; a fixed call predicts exactly
// length × call; lengths out of range panic.
func TestCompute(t *testing.T) {
	c := Compute([]time.Duration{time.Second}, map[int][]time.Duration{3: {3 * time.Second}}, 4, 1)
	for _, p := range c.Points {
		if want := time.Duration(p.Length) * time.Second; p.Predicted.P50 != want || p.Predicted.P99 != want || p.Predicted.N != Draws {
			t.Errorf("length %d: predicted %+v, want %v", p.Length, p.Predicted, want)
		}
	}
	if c.Points[2].Measured.N != 1 || c.Points[1].Measured.N != 0 {
		t.Errorf("measured %+v", c.Points)
	}
	if c := Compute(nil, nil, 2, 1); c.Points[0].Predicted.P50 != time.Duration(math.MaxInt64) {
		t.Errorf("no calls: %+v", c.Points[0])
	}
	for _, n := range []int{0, MaxLength + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Compute(maxLen %d) did not panic", n)
				}
			}()
			Compute(nil, nil, n, 1)
		}()
	}
}
