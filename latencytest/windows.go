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

// windowsOf is Result.Windows.
func windowsOf(r *Result, d time.Duration) []Window {
	if err := r.CheckWindows(d); err != nil {
		panic("latencytest: Windows: " + strings.TrimPrefix(err.Error(), "latencytest: "))
	}
	if r.Len() == 0 {
		return nil
	}
	n := r.windowCount(d)
	out := make([]Window, n)
	for i := range out {
		from, to := time.Duration(i)*d, time.Duration(i+1)*d
		out[i] = Window{Index: i, From: from, To: to, Result: &Result{
			Run: Run{Start: r.Start.Add(from), End: r.Start.Add(to), CPUPerWall: r.CPUPerWall, Disclosure: r.Disclosure},
		}}
	}
	if r.compact != nil {
		for i := range out {
			out[i].compact = newCompactStore(out[i].Start)
		}
	}
	for _, rec := range r.All() {
		off := rec.Start.Sub(r.Start)
		i := min(max(int(off/d), 0), n-1) // a record before Start (clock skew) joins the first window
		if r.compact != nil {
			out[i].compact.append(rec)
		} else {
			out[i].Records = append(out[i].Records, *rec)
		}
	}
	for i := range out {
		out[i].Planned = out[i].Len()
	}
	if r.Partial {
		out[n-1].Partial, out[n-1].PartialReason = true, r.PartialReason
	}
	return out
}
