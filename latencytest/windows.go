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
