package latencytest

import (
	"fmt"
	"math"
	"slices"
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
// ColdStarts: one minute.
const DefaultIdleGap = time.Minute

// ColdStarts is the TTFT of every request that may have met a cold start,
// judged on its own (sloassert.MaxColdStart) rather than hidden with the
// warm-up or averaged into steady state: each warm-up request, the run's
// first request, and each measured request sent after DefaultIdleGap with
// nothing of this run in flight. A failed or unobserved TTFT is Failed.
// The measured ones stay in the steady-state figures too: nothing is
// hidden.
func (r *Result) ColdStarts() Sample { return r.ColdStartsAfter(DefaultIdleGap) }

// ColdStartsAfter is ColdStarts with another idle gap.
func (r *Result) ColdStartsAfter(idle time.Duration) Sample {
	idx := r.coldStartCandidates(idle)
	s := make(Sample, 0, len(idx))
	for _, i := range idx {
		rec := &r.Records[i]
		v := rec.TTFT
		if !rec.OK() || v < 0 || rec.TokensUnobserved() {
			v = Failed
		}
		s = append(s, v)
	}
	return s
}

// ColdStartIDs returns the trace IDs behind ColdStartsAfter(idle), in the
// same order.
func (r *Result) ColdStartIDs(idle time.Duration) []string {
	var ids []string
	for _, i := range r.coldStartCandidates(idle) {
		ids = append(ids, r.Records[i].ID)
	}
	return ids
}

// coldStartCandidates returns the indexes of the cold-start candidates,
// in submission order.
func (r *Result) coldStartCandidates(idle time.Duration) []int {
	order := make([]int, len(r.Records))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return r.Records[a].Start.Compare(r.Records[b].Start) })
	var out []int
	var busyUntil time.Time // the latest end of a request sent so far
	for k, i := range order {
		rec := &r.Records[i]
		end := rec.Start.Add(max(rec.Total, 0))
		if rec.Warmup || k == 0 || rec.Start.Sub(busyUntil) >= idle {
			out = append(out, i)
		}
		if end.After(busyUntil) {
			busyUntil = end
		}
	}
	slices.Sort(out)
	return out
}
