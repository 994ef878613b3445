package latencytest

import (
	"context"
	"fmt"
	"slices"
)

// Sweep runs the same batch at several concurrency levels.
type Sweep struct {
	Batch
	// Levels are the concurrency levels, in order. Default 1, 8, 50.
	Levels []int
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

// DefaultLevels are one user, a few, a crowd: the levels of published
// benchmarks (docs/sources.md).
var DefaultLevels = []int{1, 8, 50}

func (s Sweep) levels() ([]int, error) {
	lv := s.Levels
	if len(lv) == 0 {
		lv = DefaultLevels
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

// Run runs the batch at each level in turn (Batch.Concurrency and Label are
// set per level). It stops at the first level that ends early.
func (s Sweep) Run(ctx context.Context, p Provider) (*SweepResult, error) {
	levels, err := s.levels()
	if err != nil {
		return nil, err
	}
	out := &SweepResult{Planned: slices.Clone(levels)}
	for _, l := range levels {
		r, err := s.level(l).Run(ctx, p)
		if err != nil {
			return nil, err
		}
		out.Levels = append(out.Levels, l)
		out.Results = append(out.Results, r)
		if r.Partial {
			break
		}
	}
	for _, r := range out.Results {
		r.Disclosure.setLevels(out.Levels)
	}
	return out, nil
}
