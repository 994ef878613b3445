package sloassert

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/latencytest"
)

// BaselineReport is the verdict of comparing a run with its baseline: one
// QuantileChange per quantile, the failure rates, the Mann-Whitney U test
// and the context.
type BaselineReport struct {
	// Baseline says where the baseline came from (its path, from
	// Regression; "" from Evaluate).
	Baseline string
	// Compare holds the settings used, defaults filled in.
	Compare Compare
	// Changes holds one entry per quantile, in the order asked.
	Changes []QuantileChange
	// Failures compares the shares of failed requests.
	Failures FailureChange
	// MannWhitney tests whether the current distribution as a whole is
	// slower (reported, not part of the verdict).
	MannWhitney MannWhitney
	// NBase and NCur are the sample sizes of the metric, failed requests
	// included; FailedBase and FailedCur count the failed values.
	NBase, NCur           int
	FailedBase, FailedCur int
	// Runs is the number of repeated runs in the baseline (1 without
	// Batch.Repeat).
	Runs int
	// Notes flag what makes the two runs hard to compare (another model,
	// another concurrency); they do not change the verdict.
	Notes []string
	// Problem is set when nothing could be judged: bad settings, no data,
	// a baseline of failures.
	Problem string
}

// OK reports whether the comparison passed: something was judged, every
// quantile could be judged and none regressed. Empty input never passes.
// OK reports whether the comparison passed: something was judged, every
// quantile could be judged, none regressed and the failure rate did not.
// Empty input never passes.
func (r BaselineReport) OK() bool {
	if r.Problem != "" || len(r.Changes) == 0 || r.Failures.Regression {
		return false
	}
	for _, ch := range r.Changes {
		if ch.Problem != "" || ch.Regression {
			return false
		}
	}
	return true
}

// Regressions returns the quantiles that regressed (by their interval or
// their tail test); a failure-rate regression is in Failures.
func (r BaselineReport) Regressions() []QuantileChange {
	var out []QuantileChange
	for _, ch := range r.Changes {
		if ch.Regression {
			out = append(out, ch)
		}
	}
	return out
}

// changeVerdict is the quantile's verdict as the report prints it: "~" (no
// change shown), "+104.2% REGRESSION" (by the interval), "+17.9%
// REGRESSION (tail)", "+104.2% REGRESSION (interval and tail)", "+8.0%
// within +20.0%", "+30.0% under the 50.0ms floor", "-25.0% faster", or
// "cannot judge: …".
func changeVerdict(ch QuantileChange, c Compare) string {
	delta := deltaPercent(ch.Ratio)
	switch {
	case ch.Problem != "":
		return "cannot judge: " + ch.Problem
	case ch.Interval && ch.Tail.Regression:
		return delta + " REGRESSION (interval and tail)"
	case ch.Interval:
		return delta + " REGRESSION"
	case ch.Tail.Regression:
		return delta + " REGRESSION (tail)"
	case math.IsInf(ch.Threshold, 1):
		return "~ (the baseline's runs disagree: the run-to-run gap is unbounded)"
	case math.IsInf(ch.Ratio, 1):
		return delta + " not significant (a failed request in some resamples only)"
	case ch.Lo > ch.Threshold:
		return fmt.Sprintf("%s under the %s floor", delta, format.Duration(c.Floor))
	case ch.Lo > 1:
		return fmt.Sprintf("%s within %s", delta, deltaPercent(ch.Threshold))
	case ch.Hi < 1:
		return delta + " faster"
	}
	return "~"
}

// failedQuantileNote explains a quantile that reaches a failed request on
// either side by the failures behind it, or is "".
func failedQuantileNote(ch QuantileChange, r BaselineReport) string {
	name := QuantileName(ch.Q)
	unit := "requests"
	if r.Compare.Metric == ITL {
		unit = "values (a failed request adds one)"
	}
	of := func(failed, n int) string {
		return fmt.Sprintf("%d of %d %s failed (%s)", failed, n, unit, share(float64(failed)/float64(n)))
	}
	short := func(failed, n int) string {
		return fmt.Sprintf("%d of %d (%s)", failed, n, share(float64(failed)/float64(n)))
	}
	tail := percent(1 - ch.Q)
	switch bf, cf := ch.Base == latencytest.Failed, ch.Cur == latencytest.Failed; {
	case bf && cf:
		return fmt.Sprintf("%s: both are failed requests (baseline %s, current %s, each > %s): no change; failures are compared below",
			name, short(r.FailedBase, r.NBase), short(r.FailedCur, r.NCur), tail)
	case cf:
		return fmt.Sprintf("current %s is a failed request: %s > %s; baseline %s", name, of(r.FailedCur, r.NCur), tail, short(r.FailedBase, r.NBase))
	case bf:
		return fmt.Sprintf("baseline %s is a failed request: %s > %s; current %s", name, of(r.FailedBase, r.NBase), tail, short(r.FailedCur, r.NCur))
	}
	return ""
}

// deltaPercent renders a ratio as a signed percent change: 1.5 is "+50.0%".
func deltaPercent(ratio float64) string {
	switch {
	case math.IsNaN(ratio):
		return "n/a"
	case math.IsInf(ratio, 1):
		return "+inf%"
	}
	return fmt.Sprintf("%+.1f%%", (ratio-1)*100)
}

// tailText renders a tail test's count and p-value for the table: "15 vs
// 3", "<0.0001"; "n/a" when it was not run.
func tailText(tt TailTest) (count, p string) {
	if tt.Skipped != "" || math.IsNaN(tt.P) {
		return "n/a", ""
	}
	return fmt.Sprintf("%d vs %d", tt.Beyond, tt.J), pValue(tt.P)
}

// String renders the comparison benchstat-style: per quantile the baseline,
// the current value, the change, the interval of the ratio, the tail test
// and the verdict; then what a failed quantile means, the rules, the
// failure rates, the U test, the sample sizes, the settings and the notes.
func (r BaselineReport) String() string {
	var sb strings.Builder
	c := r.Compare
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
		var names []string
		for _, ch := range r.Regressions() {
			names = append(names, QuantileName(ch.Q))
		}
		var what []string
		if len(names) > 0 {
			what = append(what, "regression at "+strings.Join(names, ", "))
		}
		if r.Failures.Regression {
			what = append(what, "more failed requests")
		}
		if len(what) > 0 {
			verdict += " (" + strings.Join(what, "; ") + ")"
		}
	}
	from := r.Baseline
	if from == "" {
		from = "baseline"
	}
	fmt.Fprintf(&sb, "%s vs %s: %s\n", c.Metric, from, verdict)
	if r.Problem != "" {
		fmt.Fprintf(&sb, "  %s\n", r.Problem)
	}
	alpha := strconv.FormatFloat(math.Round(c.alpha()*1e9)/1e9, 'g', -1, 64)
	if len(r.Changes) > 0 {
		ci := percent(c.Confidence) + " CI of ratio"
		gap := r.Runs > 1
		fmt.Fprintf(&sb, "  %-6s %10s %10s %8s  %-16s", "", "baseline", "current", "delta", ci)
		if gap {
			fmt.Fprintf(&sb, "  %-8s", "run gap")
		}
		fmt.Fprintf(&sb, "  %-11s %-7s  verdict\n", "tail", "p")
		var failedNotes []string
		for _, ch := range r.Changes {
			fmt.Fprintf(&sb, "  %-6s %10s %10s %8s  %-16s", QuantileName(ch.Q), format.Duration(ch.Base),
				format.Duration(ch.Cur), deltaPercent(ch.Ratio), "["+format.Float(ch.Lo, "%.2f")+", "+format.Float(ch.Hi, "%.2f")+"]")
			if gap {
				fmt.Fprintf(&sb, "  %-8s", strings.TrimPrefix(deltaPercent(1+ch.Gap), "+"))
			}
			count, p := tailText(ch.Tail)
			fmt.Fprintf(&sb, "  %-11s %-7s  %s\n", count, p, changeVerdict(ch, c))
			if ch.Problem == "" {
				if n := failedQuantileNote(ch, r); n != "" {
					failedNotes = append(failedNotes, n)
				}
			}
		}
		for _, n := range failedNotes {
			fmt.Fprintf(&sb, "  %s\n", n)
		}
		fmt.Fprintf(&sb, "  tail \"a vs j\": a successful current requests slower than the baseline's j-th slowest (j: those above its quantile) +max(%s, run gap) and +%s; p: exact exceedance test\n",
			percent(c.MaxIncrease), format.Duration(c.Floor))
	}
	if f := r.Failures; f.NBase > 0 && f.NCur > 0 {
		v := "~"
		switch {
		case f.Regression:
			v = "REGRESSION"
		case f.P < c.alpha():
			v = fmt.Sprintf("under the %s-point floor", strings.TrimSuffix(percent(c.FailureFloor), "%"))
		}
		fmt.Fprintf(&sb, "  failed requests: %d of %d current (%s) vs %d of %d baseline (%s), %+.1f points, Fisher %s: %s\n",
			f.Cur, f.NCur, share(f.CurShare()), f.Base, f.NBase, share(f.BaseShare()), 100*(f.CurShare()-f.BaseShare()), pEquals(f.P), v)
	}
	if len(r.Changes) > 0 {
		points := strings.TrimSuffix(percent(c.FailureFloor), "%") + " points"
		if points == "1 points" {
			points = "1 point"
		}
		fmt.Fprintf(&sb, "  regression: the interval's lower end > 1+max(%s, run gap) and current - baseline > %s; or tail p < %s; or failed requests' p < %s and more than +%s\n",
			percent(c.MaxIncrease), format.Duration(c.Floor), alpha, alpha, points)
	}
	if mw := r.MannWhitney; !math.IsNaN(mw.U) {
		shift := "no evidence of a whole-distribution shift"
		if mw.P < 1-c.Confidence {
			shift = "the distribution as a whole is slower"
		}
		fmt.Fprintf(&sb, "  Mann-Whitney U (current slower?): U = %.1f, z = %s, %s, P(current > baseline) = %.3f: %s\n",
			mw.U, format.Float(mw.Z, "%.2f"), pEquals(mw.P), mw.U/float64(mw.NBase)/float64(mw.NCur), shift)
	}
	if r.NBase+r.NCur > 0 {
		runs := "1 run"
		if r.Runs != 1 {
			runs = fmt.Sprintf("%d runs", r.Runs)
		}
		fmt.Fprintf(&sb, "  n = %d baseline (%d failed, %s) vs %d current (%d failed); %d bootstrap resamples, seed %d\n",
			r.NBase, r.FailedBase, runs, r.NCur, r.FailedCur, c.Resamples, c.Seed)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&sb, "  note: %s\n", n)
	}
	return sb.String()
}

// pEquals renders a p-value after its name: "p = 0.0153", "p < 0.0001".
func pEquals(p float64) string {
	if v := pValue(p); strings.HasPrefix(v, "<") {
		return "p " + v[:1] + " " + v[1:]
	}
	return "p = " + pValue(p)
}

func pValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "n/a"
	case p < 0.0001:
		return "<0.0001"
	}
	return fmt.Sprintf("%.4f", p)
}

// compareNotes flags differences that make two runs hard to compare: the
// model served and the concurrency.
func compareNotes(base, cur *latencytest.Result) []string {
	var notes []string
	set := func(r *latencytest.Result, get func(latencytest.Record) string) []string {
		var out []string
		for _, rec := range r.Measured() {
			if v := get(rec); v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		slices.Sort(out)
		return out
	}
	model := func(rec latencytest.Record) string { return rec.Model }
	conc := func(rec latencytest.Record) string {
		if rec.Concurrency == 0 {
			return ""
		}
		return strconv.Itoa(rec.Concurrency)
	}
	if b, c := set(base, model), set(cur, model); len(b) > 0 && len(c) > 0 && !slices.Equal(b, c) {
		notes = append(notes, fmt.Sprintf("the baseline served model %s, the current run %s", strings.Join(b, ", "), strings.Join(c, ", ")))
	}
	if b, c := set(base, conc), set(cur, conc); len(b) > 0 && len(c) > 0 && !slices.Equal(b, c) {
		notes = append(notes, fmt.Sprintf("the baseline ran at concurrency %s, the current run at %s", strings.Join(b, ", "), strings.Join(c, ", ")))
	}
	return notes
}

// splitRuns returns the baseline's measured records as one Result per
// repeated run (Record.Run), in run order.
func splitRuns(r *latencytest.Result) []*latencytest.Result {
	byRun := map[int]*latencytest.Result{}
	for _, rec := range r.Measured() {
		if byRun[rec.Run] == nil {
			byRun[rec.Run] = &latencytest.Result{}
		}
		byRun[rec.Run].Records = append(byRun[rec.Run].Records, rec)
	}
	var out []*latencytest.Result
	for _, k := range slices.Sorted(maps.Keys(byRun)) {
		out = append(out, byRun[k])
	}
	return out
}

// runGap is (max-min)/min of the q-quantile over the runs, as
// disclosure.RepeatGap, with failed quantiles alike on both sides: 0
// when every run's quantile failed (no change), +Inf when some failed and
// some did not, NaN when the smallest is 0.
func runGap(runs []*latencytest.Result, m Metric, q float64) float64 {
	lo, hi := latencytest.Failed, time.Duration(0)
	for _, r := range runs {
		s, _ := m.Sample(r)
		v := s.Quantile(q)
		lo, hi = min(lo, v), max(hi, v)
	}
	switch {
	case lo == hi:
		return 0
	case hi == latencytest.Failed:
		return math.Inf(1)
	case lo > 0:
		return float64(hi-lo) / float64(lo)
	}
	return math.NaN()
}
