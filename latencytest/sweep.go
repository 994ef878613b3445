package latencytest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/tailguard/tailguard/internal/defaults"
)

// Sweep runs the same batch at several concurrency levels.
type Sweep struct {
	Batch
	// Levels are the concurrency levels, in order. Default 1, 8, 50.
	Levels []int
	// EachLevel, when set, runs each level of Measure (Run ignores it), so
	// that each level can have a provider, and a clock, of its own. Measure
	// calls it once per level, in the level's subtest ("c8") where it makes
	// one, with the level and measure: measure runs the level's batch
	// against p under the t it is given, as Batch.Measure does, and returns
	// the result. EachLevel supplies the provider (Measure's own is unused;
	// pass nil): a fresh one closed after the level, say, or one made inside
	// a synctest bubble of the level's own (synctest.Test), and it may judge
	// the result in t, subtests included, once the bubble has ended. A
	// level whose EachLevel does not call measure, or whose measurement
	// fails, ends the sweep, as a level that ends early does.
	EachLevel func(t testing.TB, level int, measure func(t testing.TB, p Provider) *Result)
}

// SweepResult holds one Result per level that ran.
type SweepResult struct {
	// Levels are the levels that ran, in order; Results their results.
	Levels  []int
	Results []*Result
	// Planned are the levels the sweep meant to run. A level cut short is
	// Partial; the levels after it are in Planned but not in Levels.
	Planned []int
}

func (s Sweep) levels() ([]int, error) {
	lv := s.Levels
	if len(lv) == 0 {
		lv = defaults.Levels()
	}
	for _, l := range lv {
		if l < 1 {
			return nil, fmt.Errorf("latencytest: sweep: level %d < 1", l)
		}
	}
	return lv, nil
}

// level is the batch of one level: its concurrency, and trace IDs "c8-…"
// (or "<Label>-c8-…").
func (s Sweep) level(l int) Batch {
	b := s.Batch
	b.Concurrency, b.Label = l, fmt.Sprintf("c%d", l)
	if s.Label != "" {
		b.Label = fmt.Sprintf("%s-c%d", s.Label, l)
	}
	return b
}

// sweep is the one loop of Run and Measure: it runs each level's batch
// with run, in order, and stops after the first level that returns no
// result or ends early; box 8 of every result names the levels that ran.
func (s Sweep) sweep(run func(l int, b Batch) (*Result, error)) (*SweepResult, error) {
	levels, err := s.levels()
	if err != nil {
		return nil, err
	}
	out := &SweepResult{Planned: slices.Clone(levels)}
	for _, l := range levels {
		r, err := run(l, s.level(l))
		if err != nil {
			return nil, err
		}
		if r == nil {
			break
		}
		out.Levels = append(out.Levels, l)
		out.Results = append(out.Results, r)
		if r.Partial {
			break
		}
	}
	for _, r := range out.Results {
		setLevels(&r.Disclosure, out.Levels)
	}
	return out, nil
}

// measureLevel measures one level's batch under t (Batch.Measure), through
// EachLevel when it is set.
func (s Sweep) measureLevel(t testing.TB, l int, b Batch, p Provider) *Result {
	t.Helper()
	if s.EachLevel == nil {
		return b.Measure(t, p)
	}
	var r *Result
	s.EachLevel(t, l, func(t testing.TB, p Provider) *Result {
		t.Helper()
		r = b.Measure(t, p)
		return r
	})
	return r
}

// Run runs the batch at each level in turn (Batch.Concurrency and Label are
// set per level). It stops at the first level that ends early.
func (s Sweep) Run(ctx context.Context, p Provider) (*SweepResult, error) {
	return s.sweep(func(_ int, b Batch) (*Result, error) { return b.Run(ctx, p) })
}
