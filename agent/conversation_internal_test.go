package agent

import (
	"math"
	"slices"
	"testing"
	"time"
)

// Think times are lognormal with the median and p99 asked: over 100,000
// seeded draws (10,000 sessions of 11 turns) the sample's median and p99
// are within 3% of them; a fixed think time is exact.
func TestThinkTimeDistribution(t *testing.T) {
	tt := ThinkTime{Median: 2 * time.Second, P99: 20 * time.Second}
	var d []time.Duration
	for s := range 10_000 {
		for turn := 1; turn <= 10; turn++ {
			d = append(d, tt.draw(7, s, turn))
		}
	}
	slices.Sort(d)
	q := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))]) }
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{0.5, tt.Median}, {0.99, tt.P99}} {
		if got := q(c.p); math.Abs(got/float64(c.want)-1) > 0.03 {
			t.Errorf("p%v %v, want %v", c.p*100, time.Duration(got), c.want)
		}
	}
	if got := (ThinkTime{Median: time.Second}).draw(1, 2, 3); got != time.Second {
		t.Errorf("fixed: %v", got)
	}
}
