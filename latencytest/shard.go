package latencytest

import (
	"errors"
	"fmt"
	"log"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Shard is one part of a run split over several processes or machines:
// shard Index of Count, Index from 0. A sharded runner sends only its
// share of the whole run, and the shards together send every request of
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

// ParseShard reads "i/n" (TAILGUARD_SHARD's form): shard i of n, i from 0
// and below n, n at least 1. "4/4" is an error that names the last shard
// (3/4): shards are numbered from 0.
func ParseShard(s string) (Shard, error) {
	sh, err := parseShard(s)
	if err != nil {
		return Shard{}, fmt.Errorf("latencytest: shard %q: %w", s, err)
	}
	return sh, nil
}

func parseShard(s string) (Shard, error) {
	idx, cnt, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(idx)
	n, err2 := strconv.Atoi(cnt)
	if !ok || err1 != nil || err2 != nil || strings.HasPrefix(idx, "+") || strings.HasPrefix(cnt, "+") {
		return Shard{}, errors.New("want i/n, such as 0/4 (shard i of n, i from 0)")
	}
	sh := Shard{Index: i, Count: n}
	if sh.isZero() {
		return Shard{}, errors.New("count 0 < 1")
	}
	return sh, sh.check()
}

func (s Shard) check() error {
	switch {
	case s.isZero():
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

// isZero reports whether the shard is unset.
func (s Shard) isZero() bool { return s == Shard{} }

// String renders the shard as "i/n" ("" for the zero Shard).
func (s Shard) String() string {
	if s.isZero() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// owns reports whether request (or chain, or arrival) i of the whole run
// is this shard's: i mod Count == Index. Every i belongs to the zero
// Shard.
func (s Shard) owns(i int) bool {
	if s.Count <= 1 {
		return true
	}
	return i%s.Count == s.Index
}

// share is how many of the whole run's first n requests are this shard's.
func (s Shard) share(n int) int {
	if s.Count <= 1 {
		return max(n, 0)
	}
	if n <= s.Index {
		return 0
	}
	return (n - s.Index + s.Count - 1) / s.Count
}

// sharded reports whether the shard splits the run.
func (s Shard) sharded() bool { return s.Count > 1 }

// mark is the shard a result carries: s when it splits the run, else
// the zero Shard.
func (s Shard) mark() Shard {
	if s.sharded() {
		return s
	}
	return Shard{}
}

// slotsOf splits a whole run's concurrency among the shards; the error
// says why it cannot (not a multiple).
func slotsOf(concurrency int, sh Shard, source, what string) (int, error) {
	if !sh.sharded() {
		return concurrency, nil
	}
	if concurrency%sh.Count != 0 {
		return 0, fmt.Errorf("%s %d is not a multiple of the %d shards (%s %s): each shard keeps %s/%d in flight, so make it a multiple of %d",
			what, concurrency, sh.Count, source, sh, what, sh.Count, sh.Count)
	}
	return concurrency / sh.Count, nil
}

// startAt reads TAILGUARD_START_AT; ok is false when it is unset or
// empty. The error names the variable.
func startAt() (at time.Time, ok bool, err error) {
	v, set := lookupEnvOK(EnvStartAt)
	if !set || strings.TrimSpace(v) == "" {
		return time.Time{}, false, nil
	}
	at, err = time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
	if err != nil {
		return time.Time{}, false, fmt.Errorf("latencytest: %s=%q: want an RFC 3339 instant such as 2025-06-01T12:00:00Z", EnvStartAt, v)
	}
	return at, true, nil
}

// aligned remembers the TAILGUARD_START_AT instant a runner of this
// process has reached, so later runners start at once.
var aligned struct {
	sync.Mutex
	at time.Time
}

// alignment is what a runner did about TAILGUARD_START_AT, for its
// disclosure.
type alignment struct {
	src     string        // where the instant came from: "StartAt" or EnvStartAt
	at      time.Time     // the instant (zero: not set)
	waited  time.Duration // how long the runner waited for it
	late    time.Duration // how late it was when the runner started (no wait)
	again   bool          // a runner of this process had reached it already
	ignored bool          // a real instant, ignored in virtual time
}

// ignoredStartAt is the real TAILGUARD_START_AT instant a virtual-time
// runner of this process last logged as ignored, to log it once.
var ignoredStartAt struct {
	sync.Mutex
	at time.Time
}

// ignoreInBubble logs, once per instant and process, that a real
// TAILGUARD_START_AT is ignored in virtual time.
func ignoreInBubble(src string, at time.Time) {
	ignoredStartAt.Lock()
	defer ignoredStartAt.Unlock()
	if ignoredStartAt.at.Equal(at) {
		return
	}
	ignoredStartAt.at = at
	log.Printf("latencytest: %s%s%s ignored in virtual time (a synctest bubble, whose clock starts in 2000): it aligns shards that run on the real clock",
		src, srcSep(src), at.UTC().Format(time.RFC3339Nano))
}

// note renders the alignment for box 9.
func (a alignment) note() string {
	switch {
	case a.at.IsZero():
		return ""
	case a.ignored:
		return fmt.Sprintf("; %s %s ignored: a real instant, and this run is in virtual time", a.src, a.at.UTC().Format(time.RFC3339Nano))
	case a.again:
		return fmt.Sprintf("; %s %s reached by an earlier run of this process", a.src, a.at.UTC().Format(time.RFC3339Nano))
	case a.waited > 0:
		return fmt.Sprintf("; started at %s %s (waited %v)", a.src, a.at.UTC().Format(time.RFC3339Nano), a.waited.Round(time.Millisecond))
	}
	return fmt.Sprintf("; %s %s had passed %v before the run began", a.src, a.at.UTC().Format(time.RFC3339Nano), a.late.Round(time.Millisecond))
}

// srcSep joins a source and its value in an error: "TAILGUARD_START_AT="
// for the variable, "StartAt " for the field.
func srcSep(src string) string {
	if strings.HasPrefix(src, "TAILGUARD_") {
		return "="
	}
	return " "
}
