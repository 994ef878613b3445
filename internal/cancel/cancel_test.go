package cancel

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// The seeded draw cancels its share: over 50,000 trace IDs, for several
// shares and seeds, the share drawn is within 1 point of the share asked
// (a binomial's standard deviation is at most 0.23 points here), and the
// same ID always draws the same.
func TestDrawCancelsItsShare(t *testing.T) {
	const n = 50_000
	for _, share := range []float64{0.01, 0.1, 0.5, 0.9} {
		for seed := range uint64(3) {
			k := 0
			for i := range n {
				id := fmt.Sprintf("c8-%06d", i)
				drawn := Draw(seed, id, share)
				if drawn {
					k++
				}
				if i%9973 == 0 && drawn != Draw(seed, fmt.Sprintf("c8-%06d", i), share) {
					t.Fatalf("%s: two draws differ", id)
				}
			}
			if got := float64(k) / n; math.Abs(got-share) > 0.01 {
				t.Errorf("share %v seed %d: drew %v", share, seed, got)
			}
		}
	}
	if !Draw(1, "x", 1) {
		t.Error("share 1 must cancel every request")
	}
}

// A cancel that cannot be is refused, naming the field; For gives the
// cancel to the chosen requests only.
func TestCancelCheckAndFor(t *testing.T) {
	for _, tc := range []struct {
		c    Cancel
		want string
	}{
		{Cancel{After: -time.Second}, "cancel after -1s < 0"},
		{Cancel{AfterTokens: -1}, "after_tokens -1 < 0"},
		{Cancel{After: time.Second, Share: math.NaN()}, "share NaN is outside [0,1]"},
		{Cancel{After: time.Second, Share: 2}, "share 2 is outside [0,1]"},
		{Cancel{Share: 0.5}, "without after or after_tokens"},
	} {
		if err := tc.c.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
	if err := (Cancel{}).Check(); err != nil {
		t.Errorf("the zero Cancel: %v", err)
	}
	if a, k := (Cancel{}).For("x"); a != 0 || k != 0 {
		t.Errorf("the zero Cancel cancels: %v %d", a, k)
	}
	c := Cancel{After: time.Second, AfterTokens: 3, Share: 0.5, Seed: 4}
	for i := range 100 {
		id := fmt.Sprint(i)
		a, k := c.For(id)
		if chosen := Draw(4, id, 0.5); chosen != (a == time.Second && k == 3) || !chosen && (a != 0 || k != 0) {
			t.Fatalf("%s: chosen %v, For gives %v %d", id, chosen, a, k)
		}
	}
}

// The summary counts the cancels, times the closes and names the
// requests a server kept generating for, most tokens first.
func TestSummary(t *testing.T) {
	s := Summarize([]Stop{
		{ID: "a", Close: 3 * time.Millisecond, Reported: true},
		{ID: "b", Close: time.Millisecond, AfterClose: 1, Reported: true},
		{ID: "c", Close: 2 * time.Millisecond, AfterClose: 9, Reported: true},
		{ID: "d", Close: 4 * time.Millisecond, AfterClose: 50, Reported: true},
		{ID: "e", Close: 5 * time.Millisecond},
	})
	want := "cancelled 5 (the client's own cancels: neither failures nor successes); cancel to close p50 3ms, max 5ms; " +
		"server stopped within one event: 2 of 4 reported; KEPT GENERATING after the client's close: 2 (a cost: tokens paid for, never read), " +
		"e.g. d (50 tokens after the close), c (9 tokens after the close)"
	if got := s.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := Summarize(nil).String(); got != "" {
		t.Errorf("no cancel: %q", got)
	}
	if got := Summarize([]Stop{{ID: "a"}}).String(); !strings.HasSuffix(got, "whether the server stopped generating: not reported") {
		t.Errorf("unreported: %q", got)
	}
}
