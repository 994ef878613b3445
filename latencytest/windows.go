package latencytest

import (
	"fmt"
	"maps"
	"math"
	"slices"
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

// Windows splits the run into consecutive windows of length d from its
// Start to its last request's start (a 48-hour soak in 6-hour windows
// gives 8), for drift over time: each window holds the records that
// started in it, in submission order. A window with no request is kept,
// empty, so the indexes stay regular. A Result cut short (Partial) passes
// that on to its last window. It panics when d is not positive or would
// make more than MaxWindows windows (WindowCount says how many).
func (r *Result) Windows(d time.Duration) []Window {
	if d <= 0 {
		panic(fmt.Sprintf("latencytest: Windows: window length %v is not positive", d))
	}
	if len(r.Records) == 0 {
		return nil
	}
	n := r.WindowCount(d)
	if n > MaxWindows {
		panic("latencytest: Windows: " + TooManyWindows(r, d))
	}
	out := make([]Window, n)
	for i := range out {
		from, to := time.Duration(i)*d, time.Duration(i+1)*d
		out[i] = Window{Index: i, From: from, To: to, Result: &Result{
			Start: r.Start.Add(from), End: r.Start.Add(to), CPUPerWall: r.CPUPerWall, Disclosure: r.Disclosure,
		}}
	}
	for _, rec := range r.Records {
		off := rec.Start.Sub(r.Start)
		i := min(max(int(off/d), 0), n-1) // a record before Start (clock skew) joins the first window
		out[i].Records = append(out[i].Records, rec)
	}
	for i := range out {
		out[i].Planned = len(out[i].Records)
	}
	if r.Partial {
		out[n-1].Partial, out[n-1].PartialReason = true, r.PartialReason
	}
	return out
}

// MaxWindows is the most windows Windows makes: a window length that
// would cut the run into more (6 ns written as a bare 6 where 6*time.Hour
// was meant) is refused rather than filling memory.
const MaxWindows = 100_000

// WindowCount is how many windows of length d Windows cuts the run into:
// 1 + the last request's start offset / d (0 for a run with no record or
// a d that is not positive). It allocates nothing.
func (r *Result) WindowCount(d time.Duration) int {
	if d <= 0 || len(r.Records) == 0 {
		return 0
	}
	last := time.Duration(0)
	for i := range r.Records {
		last = max(last, r.Records[i].Start.Sub(r.Start))
	}
	n := uint64(last/d) + 1
	if n > math.MaxInt {
		return math.MaxInt
	}
	return int(n)
}

// TooManyWindows says why a window length d is refused for r: "a 34s run
// in windows of 6ns makes 5666666667 windows (more than 100000): a window
// is a duration, 6ns here; write PerWindow(6*time.Hour) for 6 hours". It
// names a bare count of nanoseconds as the likely typo.
func TooManyWindows(r *Result, d time.Duration) string {
	last := time.Duration(0)
	for i := range r.Records {
		last = max(last, r.Records[i].Start.Sub(r.Start))
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

// ColdStarts is the TTFT of every request that may have met a cold start,
// judged on its own (sloassert.MaxColdStart) rather than hidden with the
// warm-up or averaged into steady state: each warm-up request, the run's
// first request, each measured request sent after DefaultIdleGap with
// nothing of this run in flight, and each request the fake provider says
// it cold-started (Record.Injected holds "cold_start="), whatever the gap.
// A failed or unobserved TTFT is Failed. The measured ones stay in the
// steady-state figures too: nothing is hidden.
func (r *Result) ColdStarts() Sample { return r.ColdStartsAfter(DefaultIdleGap) }

// ColdStartsAfter is ColdStarts with another idle gap.
func (r *Result) ColdStartsAfter(idle time.Duration) Sample {
	cs := r.ColdStartCandidates(idle)
	s := make(Sample, len(cs))
	for i, c := range cs {
		s[i] = c.TTFT
	}
	return s
}

// ColdStartIDs returns the trace IDs behind ColdStartsAfter(idle), in the
// same order.
func (r *Result) ColdStartIDs(idle time.Duration) []string {
	var ids []string
	for _, c := range r.ColdStartCandidates(idle) {
		ids = append(ids, c.ID)
	}
	return ids
}

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

// ColdStartCandidates returns every cold-start candidate with the gap
// idle (see ColdStarts), in Records order, each with its TTFT compared like
// with like: warm requests (measured, successful, not candidates) are
// grouped by prompt class, and a candidate's ClassExcess is its class's
// median warm TTFT less the fastest class's (see NoWarmClass for a class
// with no warm request). A fixed prompt (one class) has no excess.
func (r *Result) ColdStartCandidates(idle time.Duration) []ColdStart {
	idx, why := r.coldStartCandidates(idle)
	cand := make(map[int]bool, len(idx))
	for _, i := range idx {
		cand[i] = true
	}
	warm := map[string]Sample{}
	tokens := map[string]Sample{} // prompt tokens, as durations for Quantile
	for i := range r.Records {
		rec := &r.Records[i]
		if cand[i] || rec.Warmup || !rec.OK() || rec.TokensUnobserved() || rec.TTFT <= 0 {
			continue
		}
		warm[rec.PromptClass] = append(warm[rec.PromptClass], rec.TTFT)
		tokens[rec.PromptClass] = append(tokens[rec.PromptClass], time.Duration(rec.PromptTokens))
	}
	median := map[string]time.Duration{}
	medTokens := map[string]float64{}
	var fastest time.Duration = -1
	ref := ""
	for c, s := range warm {
		median[c], medTokens[c] = s.Quantile(0.5), float64(tokens[c].Quantile(0.5))
		if fastest < 0 || median[c] < fastest || median[c] == fastest && c < ref {
			fastest, ref = median[c], c
		}
	}
	// A class with no warm request (a short run whose one long prompt is
	// its first) is compared through the prefill cost per prompt token the
	// warm classes show: the slope from the fastest class to the warm class
	// with the most prompt tokens, when the server reports prompt tokens.
	slope, far := 0.0, ref // TTFT per prompt token; the class it is measured to
	for c := range warm {
		if medTokens[c] > medTokens[far] || medTokens[c] == medTokens[far] && c < far {
			far = c
		}
	}
	if dt := medTokens[far] - medTokens[ref]; dt > 0 && median[far] > fastest {
		slope = float64(median[far]-fastest) / dt
	}
	out := make([]ColdStart, 0, len(idx))
	for k, i := range idx {
		rec := &r.Records[i]
		c := ColdStart{ID: rec.ID, Index: i, Class: rec.PromptClass, TTFT: rec.TTFT, Why: why[k]}
		if !rec.OK() || rec.TTFT < 0 || rec.TokensUnobserved() {
			c.TTFT = Failed
		}
		if m, ok := median[c.Class]; ok {
			c.ClassExcess = m - fastest
		} else {
			c.NoWarmClass = true
			if extra := float64(rec.PromptTokens) - medTokens[ref]; slope > 0 && rec.PromptTokens > 0 && extra > 0 {
				c.ClassExcess = time.Duration(slope * extra)
			}
		}
		c.Compared = c.TTFT
		if c.TTFT != Failed {
			c.Compared = max(c.TTFT-c.ClassExcess, 0)
		}
		out = append(out, c)
	}
	return out
}

// coldStartCandidates returns the indexes of the cold-start candidates,
// in Records order, and why each is one.
func (r *Result) coldStartCandidates(idle time.Duration) ([]int, []string) {
	order := make([]int, len(r.Records))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return r.Records[a].Start.Compare(r.Records[b].Start) })
	why := map[int]string{}
	var busyUntil time.Time // the latest end of a request sent so far
	for k, i := range order {
		rec := &r.Records[i]
		end := rec.Start.Add(max(rec.Total, 0))
		var w []string
		if rec.Warmup {
			w = append(w, "warm-up")
		}
		if k == 0 {
			w = append(w, "first request")
		} else if gap := rec.Start.Sub(busyUntil); idle > 0 && gap >= idle {
			w = append(w, fmt.Sprintf("after %v idle", gap.Round(time.Millisecond)))
		}
		if inj := injectedColdStart(rec.Injected); inj != "" {
			w = append(w, "fake injected "+inj)
		}
		if len(w) > 0 {
			why[i] = strings.Join(w, ", ")
		}
		if end.After(busyUntil) {
			busyUntil = end
		}
	}
	out := slices.Sorted(maps.Keys(why))
	reasons := make([]string, len(out))
	for k, i := range out {
		reasons[k] = why[i]
	}
	return out, reasons
}

// injectedColdStart returns the "cold_start=…" part of a fake's
// X-Fake-Injected note ("stall,cold_start=30s"), or "".
func injectedColdStart(injected string) string {
	for part := range strings.SplitSeq(injected, ",") {
		if p := strings.TrimSpace(part); strings.HasPrefix(p, "cold_start=") {
			return p
		}
	}
	return ""
}
