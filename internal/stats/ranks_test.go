package stats

import "testing"

// The ranks of the distribution-free bounds at their edges: p99's upper
// bound at 95% needs 299 values (then it is the largest), its lower bound
// one; bad arguments have no rank.
func TestRanks(t *testing.T) {
	if k, ok := UpperRank(298, 0.99, 0.95); ok {
		t.Errorf("UpperRank(298, p99, 95%%) = %d, want none", k)
	}
	if k, ok := UpperRank(299, 0.99, 0.95); !ok || k != 299 {
		t.Errorf("UpperRank(299, p99, 95%%) = %d, %v; want 299", k, ok)
	}
	if j, ok := LowerRank(1, 0.99, 0.95); !ok || j != 1 {
		t.Errorf("LowerRank(1, p99, 95%%) = %d, %v; want 1", j, ok)
	}
	// p50 of 100 at 95%: the upper bound is X(59), the lower X(42).
	if k, _ := UpperRank(100, 0.5, 0.95); k != 59 {
		t.Errorf("UpperRank(100, p50, 95%%) = %d, want 59", k)
	}
	if j, _ := LowerRank(100, 0.5, 0.95); j != 42 {
		t.Errorf("LowerRank(100, p50, 95%%) = %d, want 42", j)
	}
	for _, bad := range [][3]float64{{0, 0.5, 0.95}, {10, 0, 0.95}, {10, 1, 0.95}, {10, 0.5, 1}} {
		if _, ok := UpperRank(int(bad[0]), bad[1], bad[2]); ok {
			t.Errorf("UpperRank%v has a rank", bad)
		}
		if _, ok := LowerRank(int(bad[0]), bad[1], bad[2]); ok {
			t.Errorf("LowerRank%v has a rank", bad)
		}
	}
	if n := CeilInverse(1 - 0.9999); n != 10000 {
		t.Errorf("CeilInverse(1-0.9999) = %d, want 10000", n)
	}
}
