package latencytest_test

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// EachLevel gives each level of Sweep.Measure a bubble and a provider of
// its own, inside the level's subtest, and lets it judge the result in
// subtests once the bubble has ended.
func TestSweepEachLevel(t *testing.T) {
	// One slot: requests queue behind each other at every level above 1.
	prof := fixed(100*time.Millisecond, 0, 1)
	prof.Replicas, prof.SlotsPerReplica = 1, 1
	var names []string
	sw := latencytest.Sweep{Batch: latencytest.Batch{NoWarmup: true, Requests: 8, Load: latencytest.Load{MaxTokens: 1}}, Levels: []int{1, 2, 4}}
	sw.EachLevel = func(tb testing.TB, level int, measure func(testing.TB, latencytest.Provider) *latencytest.Result) {
		t := tb.(*testing.T)
		names = append(names, t.Name())
		var r *latencytest.Result
		served := 0
		synctest.Test(t, func(t *testing.T) {
			f, p := fake(t, prof)
			r = measure(t, p)
			served = len(f.Served())
		})
		// After the bubble, in the level's subtest: subtests of its own.
		t.Run("judged", func(t *testing.T) {
			// A fresh fake per level: it served this level's requests
			// alone, and its first request found the slot free, to the
			// nanosecond (virtual time).
			if served != 8 || r.Counts().Kept != 8 {
				t.Errorf("level %d: the fake served %d, kept %d; want 8 each", level, served, r.Counts().Kept)
			}
			if got := r.Records[0].TTFT; got != 100*time.Millisecond {
				t.Errorf("level %d: first TTFT %v, want 100ms", level, got)
			}
			if p99, want := r.TTFT().Quantile(0.99), time.Duration(level)*100*time.Millisecond; p99 != want {
				t.Errorf("level %d: TTFT p99 %v, want %v", level, p99, want)
			}
		})
	}
	sr := sw.Measure(t, nil)
	if want := []string{t.Name() + "/c1", t.Name() + "/c2", t.Name() + "/c4"}; !slices.Equal(names, want) {
		t.Errorf("EachLevel ran in %v, want %v", names, want)
	}
	if !slices.Equal(sr.Levels, []int{1, 2, 4}) || len(sr.Results) != 3 || sr.Results[2].Records[0].ID != "c4-0000" {
		t.Fatalf("levels %v, %d results", sr.Levels, len(sr.Results))
	}
	if b := sr.Results[0].Disclosure.Box(8); b.Missing || !strings.Contains(b.Answer, "[1 2 4]") {
		t.Errorf("box 8 %+v", b)
	}
}

// A level whose EachLevel does not measure ends the sweep; the levels
// after it are planned, not run.
func TestSweepEachLevelStops(t *testing.T) {
	var called []int
	sw := latencytest.Sweep{Batch: latencytest.Batch{NoWarmup: true, Requests: 4, Load: latencytest.Load{MaxTokens: 1}}, Levels: []int{1, 2, 4}}
	sw.EachLevel = func(tb testing.TB, level int, measure func(testing.TB, latencytest.Provider) *latencytest.Result) {
		called = append(called, level)
		if level == 2 {
			return
		}
		synctest.Test(tb.(*testing.T), func(t *testing.T) {
			_, p := fake(t, fixed(10*time.Millisecond, 0, 1))
			measure(t, p)
		})
	}
	sr := sw.Measure(t, nil)
	if !slices.Equal(called, []int{1, 2}) || !slices.Equal(sr.Levels, []int{1}) || !slices.Equal(sr.Planned, []int{1, 2, 4}) {
		t.Errorf("EachLevel called at %v; levels %v of %v, want [1] of [1 2 4]", called, sr.Levels, sr.Planned)
	}
	if b := sr.Results[0].Disclosure.Box(8); !b.Missing || !strings.Contains(b.Answer, "only concurrency [1] tested") {
		t.Errorf("box 8 %+v", b)
	}
}
