package latencytest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// CheckWindows refuses a length that is not positive (even on an empty
// result) and more than MaxWindows windows, naming the count; Windows
// panics with the same text.
func TestCheckWindows(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &latencytest.Result{Run: latencytest.Run{Start: t0}, Records: []latencytest.Record{{ID: "a", Start: t0}, {ID: "b", Start: t0.Add(99_999)}}}
	for _, d := range []time.Duration{0, -time.Second} {
		for _, res := range []*latencytest.Result{r, {Run: latencytest.Run{Start: t0}}} {
			if err := res.CheckWindows(d); err == nil || !strings.Contains(err.Error(), "is not positive") {
				t.Errorf("CheckWindows(%v) on %d records: %v", d, res.Len(), err)
			}
		}
	}
	if err := (&latencytest.Result{Run: latencytest.Run{Start: t0}}).CheckWindows(1); err != nil {
		t.Errorf("an empty result in 1ns windows: %v", err)
	}
	if err := r.CheckWindows(1); err != nil || latencytest.WindowCount(r, 1) != latencytest.MaxWindows {
		t.Errorf("99,999 ns in 1ns windows: %v, %d windows", err, latencytest.WindowCount(r, 1))
	}
	r.Records[1].Start = t0.Add(100_000)
	err := r.CheckWindows(1)
	if err == nil || !strings.Contains(err.Error(), "makes 100001 windows (more than 100000): 1ns is 1 nanoseconds") {
		t.Fatalf("100,001 windows: %v", err)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "latencytest: Windows: a 100µs run in windows of 1ns makes 100001") {
			t.Errorf("Windows(1ns): panic %v", p)
		}
	}()
	r.Windows(1)
}
