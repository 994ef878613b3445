package latencytest

import (
	"fmt"
	"maps"
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

// windowsOf is Result.Windows.
func windowsOf(r *Result, d time.Duration) []Window {
	if err := r.CheckWindows(d); err != nil {
		panic("latencytest: Windows: " + strings.TrimPrefix(err.Error(), "latencytest: "))
	}
	if r.Len() == 0 {
		return nil
	}
	n := r.WindowCount(d)
	out := make([]Window, n)
	for i := range out {
		from, to := time.Duration(i)*d, time.Duration(i+1)*d
		out[i] = Window{Index: i, From: from, To: to, Result: &Result{
			Start: r.Start.Add(from), End: r.Start.Add(to), CPUPerWall: r.CPUPerWall, Disclosure: r.Disclosure,
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

// coldStartsOf is Result.ColdStartCandidates.
func coldStartsOf(r *Result, idle time.Duration) []ColdStart {
	idx, why := coldStartCandidates(r, idle)
	cand := make(map[int]bool, len(idx))
	for _, i := range idx {
		cand[i] = true
	}
	warm := map[string]Sample{}
	tokens := map[string]Sample{} // prompt tokens, as durations for Quantile
	for i, rec := range r.All() {
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
		rec := new(r.Record(i))
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
func coldStartCandidates(r *Result, idle time.Duration) ([]int, []string) {
	type start struct {
		at  time.Time
		end time.Time
		i   int
	}
	order := make([]start, 0, r.Len())
	warm := map[int]bool{}
	injected := map[int]string{}
	for i, rec := range r.All() {
		order = append(order, start{rec.Start, rec.Start.Add(max(rec.Total, 0)), i})
		if rec.Warmup {
			warm[i] = true
		}
		if inj := injectedColdStart(rec.Injected); inj != "" {
			injected[i] = inj
		}
	}
	slices.SortStableFunc(order, func(a, b start) int { return a.at.Compare(b.at) })
	why := map[int]string{}
	var busyUntil time.Time // the latest end of a request sent so far
	for k, o := range order {
		i, end := o.i, o.end
		var w []string
		if warm[i] {
			w = append(w, "warm-up")
		}
		if k == 0 {
			w = append(w, "first request")
		} else if gap := o.at.Sub(busyUntil); idle > 0 && gap >= idle {
			w = append(w, fmt.Sprintf("after %v idle", gap.Round(time.Millisecond)))
		}
		if inj := injected[i]; inj != "" {
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
