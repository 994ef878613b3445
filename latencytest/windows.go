package latencytest

import (
	"fmt"
	"strings"
	"time"
)

// Window is one time window of a run: the records that started in
// [From, To) after the run's Start, as a Result of their own, so every
// statistic of a Result (TTFT, Total, Counts, ErrorRate…) works per
// window. Warm-up records stay marked.
type Window struct {
	// Index counts windows from 0.
	Index int
	// From and To bound the window, as offsets from the run's Start.
	From, To time.Duration
	*Result
}

// String names the window by its bounds: "[30h0m0s, 36h0m0s)".
func (w Window) String() string { return fmt.Sprintf("[%v, %v)", w.From, w.To) }

// MaxWindows is the most windows Windows makes: a window length that
// would cut the run into more (6 ns written as a bare 6 where 6*time.Hour
// was meant) is refused rather than filling memory.
const MaxWindows = 100_000

// TooManyWindows says why a window length d is refused for r: "a 34s run
// in windows of 6ns makes 5666666667 windows (more than 100000): a window
// is a duration, 6ns here; write PerWindow(6*time.Hour) for 6 hours". It
// names a bare count of nanoseconds as the likely typo.
func TooManyWindows(r *Result, d time.Duration) string {
	last := time.Duration(0)
	for _, rec := range r.All() {
		last = max(last, rec.Start.Sub(r.Start))
	}
	s := fmt.Sprintf("a %v run in windows of %v makes %d windows (more than %d)", last, d, uint64(last/d)+1, MaxWindows)
	if d < time.Microsecond {
		s += fmt.Sprintf(": %v is %d nanoseconds, a bare number where a duration belongs (write %d*time.Hour or %d*time.Minute)", d, int64(d), int64(d), int64(d))
	} else {
		s += ": choose a longer window"
	}
	return s
}

// DefaultIdleGap is how long a provider must have had nothing in flight
// from this client before a request counts as a cold-start candidate in
// ColdStarts: one minute. A server that unloads sooner needs a shorter
// gap (ColdStartsAfter, sloassert.AfterIdle).
const DefaultIdleGap = time.Minute

// ColdStart is one cold-start candidate of a run (ColdStartCandidates).
type ColdStart struct {
	// ID is the request's trace ID; Index its place in Result.Records.
	ID    string
	Index int
	// Class is the request's prompt class (Record.PromptClass).
	Class string
	// TTFT is the measured time to first token (Failed for a failed or
	// unobserved one).
	TTFT time.Duration
	// Why says what made it a candidate: "warm-up", "first request",
	// "after 2m0s idle", "fake injected cold_start=3s" (joined by ", ").
	Why string
	// ClassExcess is how much slower the warm requests of its prompt class
	// are than those of the fastest class (median TTFT against median
	// TTFT; 0 for the fastest class, or when its class has no warm request
	// to compare with): the prefill a long prompt adds, not the cold start.
	ClassExcess time.Duration
	// Compared is TTFT less ClassExcess (at least 0; Failed stays Failed):
	// the first token as a prompt of the fastest class would have seen it,
	// so a long prompt that happens to come first is compared like with
	// like.
	Compared time.Duration
	// NoWarmClass is set when no warm request of its class succeeded:
	// ClassExcess is then the warm classes' prefill cost per prompt token
	// (from the fastest class to the one with the most prompt tokens, by
	// median) times its extra prompt tokens, or 0 when the server reports
	// no prompt tokens or the warm requests show no such cost.
	NoWarmClass bool
}

// injectedColdStart returns the "cold_start=…" part of a server's
// Tailguard-Injected note ("stall,cold_start=30s"), or "".
func injectedColdStart(injected string) string {
	for part := range strings.SplitSeq(injected, ",") {
		if p := strings.TrimSpace(part); strings.HasPrefix(p, "cold_start=") {
			return p
		}
	}
	return ""
}
