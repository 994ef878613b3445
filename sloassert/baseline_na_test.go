package sloassert_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/sloassert"
)

// A quantile row that cannot be judged shows n/a for what was not
// computed (its interval, its tail test), never a p-value of 0.
func TestCompareUnjudgedRowIsNA(t *testing.T) {
	r := blResult(0, blSpread(40, 100*time.Millisecond, 200*time.Millisecond)...)
	rep := sloassert.Compare{}.Evaluate(r, r) // n = 40: p99 needs 100
	ch := rep.Changes[2]
	if ch.Problem == "" || !math.IsNaN(ch.Tail.P) || ch.Tail.Skipped == "" || !math.IsNaN(ch.Lo) || !math.IsNaN(ch.Hi) || !math.IsNaN(ch.Ratio) {
		t.Errorf("p99 from 40: %+v", ch)
	}
	var row string
	for _, l := range strings.Split(rep.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "p99 ") {
			row = l
		}
	}
	if strings.Contains(row, "<0.0001") || strings.Contains(row, "0 vs 0") || strings.Count(row, "n/a") < 3 || !strings.Contains(row, "cannot judge") {
		t.Errorf("p99 row: %q\n%s", row, rep)
	}
}
