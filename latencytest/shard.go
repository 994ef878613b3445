package latencytest

import (
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	"github.com/tailguard/tailguard/internal/shard"
)

// Shard is one part of a run split over several processes or machines:
// shard Index of Count, Index from 0 ("i/n" in TAILGUARD_SHARD). A
// sharded runner sends only its share of the whole run, with the whole
// run's trace IDs: request i of a Batch (warm-up included), chain i of a
// Chain, arrival i of an OpenLoop's one seeded schedule go to shard i mod
// Count, and each shard keeps Concurrency/Count in flight (Concurrency
// must be a multiple of Count). records.Merge joins the shards' records
// into the figures of one run. The zero Shard means "not set": Run runs
// the whole run, and Measure first reads TAILGUARD_SHARD (Load.FromEnv).
// Align the shards' start with TAILGUARD_START_AT (docs/measurement.md).
type Shard = shard.Shard

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
