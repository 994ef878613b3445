package stats

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func TestBootstrapSums(t *testing.T) {
	xs := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}
	s := BootstrapSums(xs, 10, 2000, 1)
	// Each sum is 10 draws of 100 or 200 ms: between 1 s and 2 s, mean 1.5 s.
	var total time.Duration
	for _, d := range s {
		if d < time.Second || d > 2*time.Second {
			t.Fatalf("sum %v outside [1s, 2s]", d)
		}
		total += d
	}
	if mean := total.Seconds() / float64(len(s)); math.Abs(mean-1.5) > 0.01 {
		t.Errorf("mean %v, want 1.5 s", mean)
	}
	if a, b := BootstrapSums(xs, 3, 5, 9), BootstrapSums(xs, 3, 5, 9); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("not deterministic by seed")
	}
	const inf = time.Duration(math.MaxInt64)
	for _, d := range BootstrapSums([]time.Duration{inf}, 2, 3, 1) {
		if d != inf {
			t.Errorf("a failed draw gives %v, want a failed sum", d)
		}
	}
	for _, d := range BootstrapSums([]time.Duration{inf - 1}, 2, 3, 1) {
		if d != inf {
			t.Errorf("an overflowing sum gives %v, want it saturated", d)
		}
	}
	for _, bad := range []func(){
		func() { BootstrapSums(nil, 1, 1, 1) },
		func() { BootstrapSums(xs, 0, 1, 1) },
		func() { BootstrapSums(xs, 1, 0, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			bad()
		}()
	}
}
