package sloassert

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/chaincurve"
	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sample"
)

// Report is the verdict on a subject: every objective's outcome and the
// context a person needs to act on a failure, on one screen. A sweep's
// report holds one report per level in Levels.
type Report struct {
	// Title says what was judged ("c8", "chains").
	Title    string
	Outcomes []Outcome
	// Distributions of the metrics the objectives judged.
	Distributions []Distribution
	// Counts of the requests behind the verdict.
	Counts latencytest.Counts
	// Concurrency levels of the measured requests.
	Concurrency []int
	// Errors counts failures by class.
	Errors map[string]int
	// ErrorExamples are the classes of Errors, most frequent first, each
	// with one failed request's trace ID and detail.
	ErrorExamples []latencytest.ErrorExample
	// Slowest are the slowest measured requests by the first judged metric.
	Slowest []Slow
	// CPUPerWall is the client's CPU/wall (NaN when unknown).
	CPUPerWall float64
	// Machine says, with the figures, why the timings may include
	// scheduling delay of the client (latencytest.MachineLoad.Warning);
	// "" when the machine was quiet or not measured.
	Machine string
	// Missing lists the disclosure boxes left empty.
	Missing []disclosure.Box
	// RawRecords says where the raw records are.
	RawRecords string
	// Setup is the prompt mix and its seed, and the model, from the
	// disclosure.
	Setup string
	// Disclosure is the run's whole disclosure, as text (how it was
	// measured: the HTML report shows it).
	Disclosure string
	// Partial says how much of a run that was cut short ran, and why ("" for
	// a whole run).
	Partial string
	// Problem is set when nothing could be judged (no objective, no data).
	Problem string
	// Notes are lines the report adds below the figures (for chains: the
	// measured totals beside a prediction from independent calls).
	Notes []string
	// Shard is "shard i of n" when the result judged was one shard of a
	// split run (see AllowShard); "" otherwise.
	Shard        string
	shardRefused bool // an objective failed for judging a shard
	// LengthCurve, for chains, is the chain-length curve the written
	// report draws: chain totals against lengths 1 to twice the longest
	// chain (at least 10, at most 50), predicted from the run's single
	// calls and measured where a length ran
	// (latencytest.ChainResult.LengthCurve, seed 1). WriteReport (so
	// Check) sets it; Evaluate leaves it nil (it costs 10,000 drawn
	// chains a length), as do other runs.
	LengthCurve *chaincurve.Curve
	// Replay, for a run in virtual time against the fake, is the command
	// that reruns the test: the same seed and trace IDs give the same
	// records, so it reproduces the failure locally (Check sets it). For a
	// spec's real endpoint it fits a profile to the run's records and
	// reruns the test against it (slospec sets it).
	Replay string
	// Levels, for a sweep, are the reports of its planned levels ("c8"),
	// in order; the sweep's own report has only Title ("sweep") and
	// Levels. Nil for a result or chains.
	Levels []Report
}

// Distribution is one metric's whole distribution.
type Distribution struct {
	Metric  string
	Summary sample.Summary
}

// Slow is one slow request and what the fake injected into it, if known.
type Slow struct {
	ID       string
	Value    time.Duration
	Err      string
	Injected string
}

// OK reports whether every objective passed (for a sweep: every level
// passed). A report with no objective, or whose Problem is set, never
// passes.
func (r Report) OK() bool {
	if r.Levels != nil {
		for _, l := range r.Levels {
			if !l.OK() {
				return false
			}
		}
		return r.Problem == "" && len(r.Levels) > 0
	}
	if r.Problem != "" || len(r.Outcomes) == 0 {
		return false
	}
	for _, o := range r.Outcomes {
		if !o.OK {
			return false
		}
	}
	return true
}

// Failed returns the outcomes that did not pass (for a sweep: of every
// level, in order).
func (r Report) Failed() []Outcome {
	var out []Outcome
	for _, o := range r.outcomes() {
		if !o.OK {
			out = append(out, o)
		}
	}
	return out
}

// outcomes are the report's outcomes, a sweep's of every level in order.
func (r Report) outcomes() []Outcome {
	if r.Levels == nil {
		return r.Outcomes
	}
	var out []Outcome
	for _, l := range r.Levels {
		out = append(out, l.outcomes()...)
	}
	return out
}

// Subject is what Evaluate, Check, Charts and WriteReport judge: a run's
// *latencytest.Result, measured chains (*latencytest.ChainResult), or a
// sweep (*latencytest.SweepResult), each level judged as a result.
type Subject interface {
	*latencytest.Result | *latencytest.ChainResult | *latencytest.SweepResult
}

// Evaluate judges s against every objective and returns the report; it
// never stops at the first failure. No objective, or no measured request
// (no chain, no sweep level), is a failing report, as is a nil s. A
// sweep's report has a report per planned level in Levels: a level that
// never ran (the sweep stops after a level its deadline cut short) fails
// and says so, as does a level cut short unless the objectives allow
// partial results (AllowPartial).
func Evaluate[S Subject](s S, objectives ...Objective) Report {
	switch s := any(s).(type) {
	case *latencytest.ChainResult:
		return evaluateChains(s, objectives)
	case *latencytest.SweepResult:
		return evaluateSweep(s, objectives)
	case *latencytest.Result:
		return evaluate(s, objectives)
	}
	panic("sloassert: unreachable: Subject is a result, chains or a sweep")
}

// evaluate judges a result (Evaluate).
func evaluate(r *latencytest.Result, objectives []Objective) Report {
	if r == nil {
		return Report{Title: "result", CPUPerWall: math.NaN(), Problem: "no result to judge"}
	}
	rep := runReport("result", r, objectives)
	for _, rec := range r.All() {
		if !rec.Warmup && rec.Concurrency > 0 && !slices.Contains(rep.Concurrency, rec.Concurrency) {
			rep.Concurrency = append(rep.Concurrency, rec.Concurrency)
		}
	}
	slices.Sort(rep.Concurrency)
	if rep.Counts.Kept+rep.Counts.Failed == 0 {
		rep.Problem = "no measured request"
	}
	if r.Partial {
		rep.Partial = partialText(r.Counts().Sent, r.Planned, "requests", r.PartialReason)
	}
	var metrics []Metric
	for _, o := range objectives {
		out := o.judgeOn(r)
		if o.opts.window == 0 && o.Name != "" {
			out.Objective = o.Name // a renamed objective keeps its new name
		}
		rep.Outcomes = append(rep.Outcomes, finalize(out, o.opts, r.Partial, rep.Partial))
		if m := metricOf(o.Name); m != "" && !slices.Contains(metrics, m) {
			metrics = append(metrics, m)
		}
	}
	if len(metrics) == 0 {
		metrics = []Metric{TTFT, Total}
	}
	for _, m := range metrics {
		s, _ := m.Sample(r)
		rep.Distributions = append(rep.Distributions, Distribution{Metric: string(m), Summary: s.Summarize()})
	}
	rep.Slowest = slowest(r, metrics[0], 5)
	attribute(&rep, r) // the server's part, when its metrics were scraped (attribution.go)
	judgeShard(&rep, r.Shard, func(i int) options { return objectives[i].opts })
	return rep
}

// runReport starts the report of a run from its records (a chain run's
// calls for chains): counts, errors, client load and disclosure, and the
// empty-spec problem when there are no objectives.
func runReport(title string, r *latencytest.Result, objectives []Objective) Report {
	rep := Report{
		Title:         title,
		Counts:        r.Counts(),
		Errors:        r.Errors(),
		ErrorExamples: r.Summarize().ErrorExamples,
		CPUPerWall:    r.CPUPerWall,
		Machine:       r.Machine.Warning(),
		Missing:       r.Disclosure.Missing(),
		RawRecords:    r.Disclosure.Box(3).Answer,
		Setup:         setup(r.Disclosure),
		Disclosure:    r.Disclosure.String(),
	}
	if len(objectives) == 0 {
		rep.Problem = "no objectives: an empty spec never passes"
	}
	if note := cancelNote(r); note != "" {
		rep.Notes = append(rep.Notes, note) // cancelled.go
	}
	return rep
}

// partialText says how much of a cut-short run ran.
func partialText(sent, planned int, what, reason string) string {
	s := fmt.Sprintf("%d of %d planned %s sent", sent, planned, what)
	if reason != "" {
		s += " (" + reason + ")"
	}
	return s
}

// finalize applies the partial-run rule to an outcome and fills its
// Verdict when the judge left it empty. partial describes the run when it
// was cut short ("" otherwise).
func finalize(out Outcome, o options, cut bool, partial string) Outcome {
	for _, n := range o.notes {
		out.addNote(n)
	}
	if cut {
		if o.allowPartial {
			out.addNote("partial run allowed: " + partial)
		} else {
			out.OK = false
			out.addNote("partial run: " + partial + "; AllowPartial() judges what ran")
		}
	}
	if out.Verdict == "" {
		out.Verdict = Fail
		if out.OK {
			out.Verdict = Pass
		}
	}
	return out
}

// Inconclusive returns the outcomes whose verdict is inconclusive, whatever
// their gate said (for a sweep: of every level, in order).
func (r Report) Inconclusive() []Outcome {
	var out []Outcome
	for _, o := range r.outcomes() {
		if o.Verdict == Inconclusive {
			out = append(out, o)
		}
	}
	return out
}

// setup renders the disclosure's mix-and-seed and model boxes.
func setup(d latencytest.Disclosure) string {
	var parts []string
	for _, n := range []int{10, 12} {
		if b := d.Box(n); !b.Missing {
			parts = append(parts, b.Answer)
		}
	}
	return strings.Join(parts, "; model ")
}

// metricOf reads the metric an objective name starts with.
func metricOf(name string) Metric {
	for _, m := range allMetrics {
		if strings.HasPrefix(name, string(m)+" ") {
			return m
		}
	}
	return ""
}

// slowest returns the n slowest measured requests by metric (failures
// first: they never finished).
func slowest(r *latencytest.Result, m Metric, n int) []Slow {
	var out []Slow
	for _, rec := range r.Measured() {
		v := rec.Total
		switch m {
		case TTFT:
			v = rec.TTFT
		case FirstAnswer:
			v = rec.FirstAnswer
		case MaxGap, ITL:
			v = rec.MaxGap
		case FromSchedule:
			v = rec.FromSchedule
		case TTFTFromSchedule:
			v = rec.StartDelay + rec.TTFT
		}
		if (!rec.OK() || v < 0) && !cancelledKeeps(&rec, m, v) {
			v = latencytest.Failed
		}
		out = append(out, Slow{ID: rec.ID, Value: v, Err: rec.Err, Injected: rec.Injected})
	}
	sortSlow(out)
	return out[:min(n, len(out))]
}

// sortSlow orders the slowest first, ties by trace ID.
func sortSlow(out []Slow) {
	slices.SortStableFunc(out, func(a, b Slow) int {
		if a.Value != b.Value {
			if a.Value > b.Value {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// String renders the report on one screen: the objectives table, the
// distribution, the counts, errors by class, the slowest requests with what
// the fake injected, a busy-client warning, the empty disclosure boxes and
// where the raw records are. A sweep's report renders each level's, one
// after another.
func (r Report) String() string {
	var sb strings.Builder
	if r.Levels != nil {
		for _, l := range r.Levels {
			sb.WriteString(l.String())
		}
		return sb.String()
	}
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&sb, "%s: %s%s\n", r.Title, verdict, r.shardLine())
	if r.Problem != "" {
		fmt.Fprintf(&sb, "  %s\n", r.Problem)
	}
	if r.Partial != "" {
		fmt.Fprintf(&sb, "  PARTIAL RUN: %s\n", r.Partial)
	}
	if len(r.Outcomes) > 0 {
		sb.WriteString(outcomeTable(r.Outcomes))
	}
	if len(r.Distributions) > 0 {
		fmt.Fprintf(&sb, "  %-12s %9s %9s %9s %9s %9s %9s %7s %8s\n", "distribution", "min", "p50", "p90", "p95", "p99", "max", "CV%", "p99/p50")
		var all []time.Duration
		for _, d := range r.Distributions {
			s := d.Summary
			all = append(all, s.Min, s.P50, s.P90, s.P95, s.P99, s.Max)
		}
		u := format.UnitFor(all...) // one unit for the whole table
		for _, d := range r.Distributions {
			s := d.Summary
			fmt.Fprintf(&sb, "  %-12s %9s %9s %9s %9s %9s %9s %7s %8s\n", d.Metric,
				format.In(s.Min, u), format.In(s.P50, u), format.In(s.P90, u),
				format.In(s.P95, u), format.In(s.P99, u), format.In(s.Max, u),
				format.Float(s.CV, "%.0f"), format.Float(s.TailRatio, "%.2f"))
		}
	}
	sb.WriteString("  " + r.size() + "\n")
	if r.Setup != "" {
		fmt.Fprintf(&sb, "  setup: %s\n", r.Setup)
	}
	switch {
	case len(r.ErrorExamples) > 0:
		sb.WriteString("  errors:\n")
		for _, e := range r.ErrorExamples {
			fmt.Fprintf(&sb, "    %s\n", e)
			if e.Class == latencytest.ClassContentFilter {
				sb.WriteString("      (content_filter: the provider's content filter stopped the answer; a policy outcome, not latency)\n")
			}
		}
	case len(r.Errors) > 0:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, r.Errors[k]))
		}
		fmt.Fprintf(&sb, "  errors: %s\n", strings.Join(parts, ", "))
	}
	if len(r.Slowest) > 0 {
		sb.WriteString("  slowest:")
		for _, s := range r.Slowest {
			fmt.Fprintf(&sb, " %s %s", s.ID, format.Duration(s.Value))
			var why []string
			if s.Err != "" {
				why = append(why, s.Err)
			}
			if s.Injected != "" {
				why = append(why, "injected: "+s.Injected)
			}
			if len(why) > 0 {
				fmt.Fprintf(&sb, " [%s]", strings.Join(why, "; "))
			}
			sb.WriteString(";")
		}
		sb.WriteString("\n")
	}
	if r.CPUPerWall > defaults.BusyClient {
		fmt.Fprintf(&sb, "  WARNING: client CPU/wall %.2f is above %.1f: the client is part of the tail it measured\n", r.CPUPerWall, defaults.BusyClient)
	}
	if r.Machine != "" {
		fmt.Fprintf(&sb, "  WARNING: %s\n", r.Machine)
	}
	if len(r.Missing) > 0 {
		var parts []string
		for _, b := range r.Missing {
			parts = append(parts, fmt.Sprintf("%d %s", b.N, b.Question))
		}
		fmt.Fprintf(&sb, "  disclosure boxes empty: %s\n", strings.Join(parts, "; "))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&sb, "  %s\n", n)
	}
	if r.RawRecords != "" {
		fmt.Fprintf(&sb, "  raw records: %s\n", r.RawRecords)
	}
	if r.Replay != "" && !r.OK() {
		what := "replay against a profile fitted to this run's records"
		if strings.HasPrefix(r.Replay, "cd ") {
			what = "replay (virtual time, deterministic)"
		}
		fmt.Fprintf(&sb, "  %s: %s\n", what, r.Replay)
	}
	return sb.String()
}

// outcomeTable renders the objectives, one row each: observed, the
// quantile's interval, budget, margin, the gate and the verdict, and the
// note. Columns are as wide as their widest cell.
func outcomeTable(outs []Outcome) string {
	head, interval := intervalColumn(outs, "interval %s")
	rows := [][]string{{"objective", "observed", head, "budget", "margin", "verdict"}}
	for _, o := range outs {
		rows = append(rows, []string{o.Objective, o.Observed, interval(o), o.Budget, o.Margin, verdictMark(o, "ok", "FAIL", ", inconclusive")})
	}
	w := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			w[i] = max(w[i], len(c))
		}
	}
	var sb strings.Builder
	for i, row := range rows {
		line := "  "
		for j, c := range row {
			line += fmt.Sprintf("%-*s  ", w[j], c)
		}
		line = strings.TrimRight(line, " ")
		if i > 0 && outs[i-1].Note != "" {
			line += "  (" + outs[i-1].Note + ")"
		}
		sb.WriteString(line + "\n")
		if i > 0 && outs[i-1].Server != "" {
			sb.WriteString("    where the time went: " + outs[i-1].Server + "\n")
		}
	}
	return sb.String()
}

// intervalColumn returns the header of the interval column (headFormat
// with the confidence, when every row shares one) and each row's cell
// (with its confidence, when they differ).
func intervalColumn(outs []Outcome, headFormat string) (head string, cell func(Outcome) string) {
	conf := map[float64]bool{}
	for _, o := range outs {
		if o.Interval != "" {
			conf[o.Confidence] = true
		}
	}
	head = "interval"
	if len(conf) == 1 {
		for c := range conf {
			head = fmt.Sprintf(headFormat, share(c))
		}
	}
	return head, func(o Outcome) string {
		if o.Interval != "" && len(conf) > 1 {
			return o.Interval + " at " + share(o.Confidence)
		}
		return o.Interval
	}
}

// verdictMark renders the gate (ok or fail) with inconclusive appended to
// an inconclusive row.
func verdictMark(o Outcome, ok, fail, inconclusive string) string {
	mark := ok
	if !o.OK {
		mark = fail
	}
	if o.Verdict == Inconclusive {
		mark += inconclusive
	}
	return mark
}

// size says how many requests the report judged, and at which
// concurrencies: one line shared by the text and Markdown forms.
func (r Report) size() string {
	c := r.Counts
	s := fmt.Sprintf("n = %d measured (%d kept, %d failed), %d warm-up discarded, %d sent of %d planned",
		c.Kept+c.Failed, c.Kept, c.Failed, c.Discarded, c.Sent, c.Planned)
	if c.Cancelled > 0 {
		s += fmt.Sprintf("; %d cancelled by the client (in neither)", c.Cancelled)
	}
	if len(r.Concurrency) > 0 {
		parts := make([]string, len(r.Concurrency))
		for i, x := range r.Concurrency {
			parts[i] = fmt.Sprint(x)
		}
		s += "; concurrency " + strings.Join(parts, ", ")
	}
	return s
}

// shardLine is what the report's first line adds for a shard: the rule
// when it failed the report, else the shard judged alone.
func (r Report) shardLine() string {
	switch {
	case r.Shard == "":
		return ""
	case r.shardRefused:
		return ": " + r.Shard + ": merge the shards, then judge"
	}
	return " (" + r.Shard + " judged alone)"
}
