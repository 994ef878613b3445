// Package shard splits one run over several processes or machines: a
// Shard says which part of the whole run a runner sends, and how the
// whole run's concurrency is shared.
package shard

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Shard is one part of a run split over several processes or machines:
// shard Index of Count, Index from 0. A sharded runner sends only its
// Share of the whole run, and the shards together send every request of
// the whole run exactly once, with the whole run's trace IDs (globally
// unique and deterministic), so records.Merge joins their records into
// the figures of one run:
//
//   - Batch (and each level of a Sweep): request i of the whole run
//     (warm-up included, each repeat alike) goes to shard i mod Count:
//     shard 1/4 sends c8-0001, c8-0005, c8-0009 … Warm-up stays the
//     whole run's: the first Warmup trace IDs are warm-up whichever shard
//     sends them, and they are each shard's own first requests (a shard
//     sends its IDs in order), so every shard discards its first
//     requests as long as Count <= Warmup (the default 10 covers 10
//     shards); a shard with no warm-up request says so in its disclosure.
//     Concurrency is the whole run's level: each shard keeps
//     Concurrency/Count requests in flight, so Concurrency must be a
//     multiple of Count, and records carry the whole run's level.
//     Interval paces the whole run (request i starts at i×Interval), so
//     aligned shards keep its pacing together. A sequential batch (Until)
//     cannot be sharded: its stopping rule needs every record.
//   - Chain: whole chains, chain i to shard i mod Count, each shard
//     running Concurrency/Count chains at once (a multiple again).
//   - OpenLoop: arrival i of the whole run's schedule goes to shard i mod
//     Count. Each shard generates the whole schedule from the same seed
//     and keeps its share, so every shard sends at Rate/Count on average
//     and the shards together send exactly the unsharded run's arrivals
//     (a Poisson process at Rate), with its trace IDs ("ol-0007"): none
//     can collide, and no shard needs a seed of its own.
//
// The zero Shard means "not set": Run runs the whole run (as Shard{0, 1}
// does), and Measure first reads TAILGUARD_SHARD (Load.FromEnv). A
// non-zero field wins over the variable. Align the shards' start with
// TAILGUARD_START_AT, or their run windows will not overlap (records.Merge
// warns).
type Shard struct {
	// Index is this shard's number, in [0, Count).
	Index int `json:"index"`
	// Count is the number of shards.
	Count int `json:"count"`
}

// Parse reads "i/n" (TAILGUARD_SHARD's form): shard i of n, i from 0
// and below n, n at least 1. "4/4" is an error that names the last shard
// (3/4): shards are numbered from 0. The error does not name s: the
// caller says where it came from.
func Parse(s string) (Shard, error) {
	idx, cnt, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(idx)
	n, err2 := strconv.Atoi(cnt)
	if !ok || err1 != nil || err2 != nil || strings.HasPrefix(idx, "+") || strings.HasPrefix(cnt, "+") {
		return Shard{}, errors.New("want i/n, such as 0/4 (shard i of n, i from 0)")
	}
	sh := Shard{Index: i, Count: n}
	if sh.IsZero() {
		return Shard{}, errors.New("count 0 < 1")
	}
	return sh, sh.Check()
}

// Check says why s is not a shard of a run (nil for a valid one or the
// zero Shard).
func (s Shard) Check() error {
	switch {
	case s.IsZero():
		return nil
	case s.Count < 1:
		return fmt.Errorf("count %d < 1", s.Count)
	case s.Index < 0:
		return fmt.Errorf("index %d < 0 (shards are numbered from 0)", s.Index)
	case s.Index >= s.Count:
		return fmt.Errorf("index %d is outside [0, %d): shards are numbered from 0, the last of %d is %d/%d",
			s.Index, s.Count, s.Count, s.Count-1, s.Count)
	}
	return nil
}

// IsZero reports whether the shard is unset.
func (s Shard) IsZero() bool { return s == Shard{} }

// String renders the shard as "i/n" ("" for the zero Shard).
func (s Shard) String() string {
	if s.IsZero() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Owns reports whether request (or chain, or arrival) i of the whole run
// is this shard's: i mod Count == Index. Every i belongs to the zero
// Shard.
func (s Shard) Owns(i int) bool {
	if s.Count <= 1 {
		return true
	}
	return i%s.Count == s.Index
}

// Share is how many of the whole run's first n requests are this shard's.
func (s Shard) Share(n int) int {
	if s.Count <= 1 {
		return max(n, 0)
	}
	if n <= s.Index {
		return 0
	}
	return (n - s.Index + s.Count - 1) / s.Count
}

// Sharded reports whether the shard splits the run.
func (s Shard) Sharded() bool { return s.Count > 1 }

// Mark is the shard a result carries: s when it splits the run, else
// the zero Shard.
func (s Shard) Mark() Shard {
	if s.Sharded() {
		return s
	}
	return Shard{}
}

// Slots splits a whole run's concurrency among the shards; the error
// says why it cannot (not a multiple).
func Slots(concurrency int, sh Shard, source, what string) (int, error) {
	if !sh.Sharded() {
		return concurrency, nil
	}
	if concurrency%sh.Count != 0 {
		return 0, fmt.Errorf("%s %d is not a multiple of the %d shards (%s %s): each shard keeps %s/%d in flight, so make it a multiple of %d",
			what, concurrency, sh.Count, source, sh, what, sh.Count, sh.Count)
	}
	return concurrency / sh.Count, nil
}
