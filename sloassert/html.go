package sloassert

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/chaincurve"
	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/htmlpage"
	"github.com/tailguard/tailguard/latencytest"
)

// WriteHTML writes s, judged by Evaluate into rep, as one self-contained
// HTML page: the verdict table with each quantile's interval and sample
// size, the distributions, the charts inline (Charts, and for a result
// the timeline of total latency, whatever the run's length, and the
// server's gauges over time when its metrics were scraped), errors by
// class with an example each, the slowest requests by trace ID, the notes
// (chain predictions, warnings) and the disclosure. The page fetches
// nothing (inline CSS, SVG and a little script that sorts tables), reads
// without JavaScript, fits a phone and prints. A sweep's report gives the
// overview of its levels, then each level's objectives. WriteReport
// writes it as report.html beside report.md.
func WriteHTML[S Subject](w io.Writer, s S, rep Report) error {
	if cr, ok := any(s).(*latencytest.ChainResult); ok && cr != nil && rep.LengthCurve == nil {
		rep.LengthCurve = chainLengthCurve(cr)
	}
	return writeHTML(w, rep, append(pageCharts(s, rep), serverCharts(serverOf(s))...))
}

// pageCharts are the charts of s on its HTML page: Charts, with a
// result's timeline added when Charts left it out.
func pageCharts[S Subject](s S, rep Report) []Chart {
	charts := Charts(s, rep)
	if r, ok := any(s).(*latencytest.Result); ok && r != nil && r.Len() > 0 &&
		!slices.ContainsFunc(charts, func(c Chart) bool { return strings.HasPrefix(c.Name, "timeline-") }) {
		charts = append(charts, timelineChart(r, Total, 0))
	}
	return charts
}

// Describe reports a result without judging it (tailguard report): its
// counts, errors, the distributions of TTFT, first answer, total, ITL and
// max gap (those it measured), its slowest requests by total and its
// disclosure. It has no outcome, so it never passes; its HTML page shows
// no verdict.
func Describe(r *latencytest.Result) Report {
	if r == nil {
		return Report{Title: "result", CPUPerWall: math.NaN(), Problem: "no result to describe"}
	}
	rep := runReport("result", r, nil)
	rep.Problem = "" // described, not judged: no objective is no problem here
	for _, m := range []Metric{TTFT, FirstAnswer, Total, ITL, MaxGap} {
		if s, _ := m.Sample(r); len(s.Finite()) > 0 {
			rep.Distributions = append(rep.Distributions, Distribution{Metric: string(m), Summary: s.Summarize()})
		}
	}
	rep.Slowest = slowest(r, Total, 5)
	if rep.Counts.Kept+rep.Counts.Failed == 0 {
		rep.Problem = "no measured request"
	}
	return rep
}

func writeHTML(w io.Writer, rep Report, charts []Chart) error {
	verdict := "PASS"
	switch {
	case rep.Levels == nil && rep.Problem == "" && len(rep.Outcomes) == 0:
		verdict = "" // described, not judged
	case !rep.OK():
		verdict = "FAIL"
	}
	p := htmlpage.Page{Title: rep.Title + rep.shardLine(), Verdict: verdict}
	var cs []htmlpage.Chart
	for _, c := range charts {
		cs = append(cs, htmlpage.Chart{Title: c.Title, SVG: c.SVG()})
	}
	if rep.Levels != nil {
		p.Lead = fmt.Sprintf("%d levels", len(rep.Levels))
		p.Sections = append(p.Sections, htmlpage.Section{ID: "levels", Heading: "Levels", Tables: []htmlpage.Table{htmlLevels(rep.Levels)}, Charts: cs})
		for i, l := range rep.Levels {
			s := htmlVerdict(l)
			s.ID, s.Heading = "level-"+strconv.Itoa(i+1), "Level "+l.Title
			if len(l.Distributions) > 0 {
				s.Tables = append(s.Tables, htmlDistributions(l.Distributions))
			}
			p.Sections = append(p.Sections, s)
		}
		return htmlpage.Write(w, p)
	}
	p.Lead = rep.size()
	if rep.Setup != "" {
		p.Lead += ". Setup: " + rep.Setup
	}
	p.Sections = append(p.Sections, htmlVerdict(rep))
	if len(rep.Distributions) > 0 {
		p.Sections = append(p.Sections, htmlpage.Section{ID: "distributions", Heading: "Distributions", Tables: []htmlpage.Table{htmlDistributions(rep.Distributions)}})
	}
	if len(cs) > 0 {
		p.Sections = append(p.Sections, htmlpage.Section{ID: "charts", Heading: "Charts", Charts: cs})
	}
	if c := rep.LengthCurve; c != nil {
		p.Sections = append(p.Sections, htmlLengthCurve(c))
	}
	if t, ok := htmlErrors(rep); ok {
		p.Sections = append(p.Sections, htmlpage.Section{ID: "errors", Heading: "Errors by class", Tables: []htmlpage.Table{t}})
	}
	if len(rep.Slowest) > 0 {
		p.Sections = append(p.Sections, htmlpage.Section{ID: "slowest", Heading: "Slowest requests", Tables: []htmlpage.Table{htmlSlowest(rep.Slowest)}})
	}
	if len(rep.Notes) > 0 {
		p.Sections = append(p.Sections, htmlpage.Section{ID: "notes", Heading: "Notes", List: rep.Notes})
	}
	p.Sections = append(p.Sections, htmlDisclosure(rep))
	return htmlpage.Write(w, p)
}

// htmlVerdict is the verdict section: problems and warnings, then the
// objectives table.
func htmlVerdict(rep Report) htmlpage.Section {
	s := htmlpage.Section{ID: "verdict", Heading: "Verdict"}
	if rep.Problem != "" {
		s.Warnings = append(s.Warnings, "Problem: "+rep.Problem)
	}
	if rep.Partial != "" {
		s.Warnings = append(s.Warnings, "Partial run: "+rep.Partial)
	}
	if rep.CPUPerWall > defaults.BusyClient {
		s.Warnings = append(s.Warnings, fmt.Sprintf("Client CPU/wall %.2f is above %.1f: the client is part of the tail it measured.", rep.CPUPerWall, defaults.BusyClient))
	}
	if rep.Machine != "" {
		s.Warnings = append(s.Warnings, rep.Machine)
	}
	if len(rep.Outcomes) == 0 {
		return s
	}
	head, interval := intervalColumn(rep.Outcomes, "interval (%s)")
	t := htmlpage.Table{
		Head:    []string{"objective", "observed", head, "budget", "margin", "verdict", "note"},
		Numeric: []bool{false, true, false, true, true},
	}
	for _, o := range rep.Outcomes {
		class := "pass"
		switch {
		case !o.OK:
			class = "fail"
		case o.Verdict == Inconclusive:
			class = "inconclusive"
		}
		note := noteAndServer(o)
		if o.Need > 0 {
			note = joinNote(note, fmt.Sprintf("about %d requests would decide it", o.Need))
		}
		t.Rows = append(t.Rows, htmlpage.Row{Class: class, Cells: []string{o.Objective, o.Observed, interval(o), o.Budget, o.Margin,
			verdictMark(o, "pass", "FAIL", " (inconclusive)"), note}})
	}
	s.Tables = append(s.Tables, t)
	if rep.Replay != "" {
		s.Paragraphs = append(s.Paragraphs, "Rerun: "+rep.Replay)
	}
	return s
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// htmlDistributions is the distribution table, in one unit.
func htmlDistributions(ds []Distribution) htmlpage.Table {
	var all []time.Duration
	for _, d := range ds {
		s := d.Summary
		all = append(all, s.Min, s.P50, s.P90, s.P95, s.P99, s.Max)
	}
	u := format.UnitFor(all...)
	un := unitName2(u)
	t := htmlpage.Table{Head: []string{"metric", "n", "failed"}, Numeric: []bool{false}}
	for _, q := range []string{"min", "p50", "p90", "p95", "p99", "max"} {
		t.Head = append(t.Head, q+" ("+un+")")
	}
	t.Head = append(t.Head, "CV%", "p99/p50")
	for range len(t.Head) - 1 {
		t.Numeric = append(t.Numeric, true)
	}
	for _, d := range ds {
		s := d.Summary
		t.Rows = append(t.Rows, htmlpage.Row{Cells: []string{d.Metric, strconv.Itoa(s.N), strconv.Itoa(s.Failed),
			inUnitText(s.Min, u), inUnitText(s.P50, u), inUnitText(s.P90, u), inUnitText(s.P95, u), inUnitText(s.P99, u), inUnitText(s.Max, u),
			format.Float(s.CV, "%.0f"), format.Float(s.TailRatio, "%.2f")}})
	}
	return t
}

// htmlLevels is a sweep's overview: a row per level.
func htmlLevels(reps []Report) htmlpage.Table {
	metrics, u := levelColumns(reps)
	t := htmlpage.Table{Head: []string{"level", "verdict", "n", "failed"}, Numeric: []bool{false, false, true, true}}
	for _, m := range metrics {
		for _, q := range markedQuantiles {
			t.Head = append(t.Head, fmt.Sprintf("%s %s (%s)", m, QuantileName(q), unitName2(u)))
			t.Numeric = append(t.Numeric, true)
		}
	}
	for _, r := range reps {
		v, class := "pass", "pass"
		if !r.OK() {
			v, class = "FAIL", "fail"
			if r.Problem != "" {
				v += ": " + r.Problem
			}
		}
		row := append([]string{r.Title, v, strconv.Itoa(r.Counts.Kept + r.Counts.Failed), strconv.Itoa(r.Counts.Failed)}, levelCells(r, metrics, u)...)
		t.Rows = append(t.Rows, htmlpage.Row{Class: class, Cells: row})
	}
	return t
}

// htmlErrors is the errors-by-class table, with an example each when the
// report has them.
func htmlErrors(rep Report) (htmlpage.Table, bool) {
	switch {
	case len(rep.ErrorExamples) > 0:
		t := htmlpage.Table{Head: []string{"class", "requests", "example trace ID", "detail"}, Numeric: []bool{false, true}}
		for _, e := range rep.ErrorExamples {
			t.Rows = append(t.Rows, htmlpage.Row{Cells: []string{e.Class, strconv.Itoa(e.Count), e.ID, format.ShortDetail(e.Detail)}})
		}
		return t, true
	case len(rep.Errors) > 0:
		t := htmlpage.Table{Head: []string{"class", "requests"}, Numeric: []bool{false, true}}
		for _, k := range slices.Sorted(maps.Keys(rep.Errors)) {
			t.Rows = append(t.Rows, htmlpage.Row{Cells: []string{k, strconv.Itoa(rep.Errors[k])}})
		}
		return t, true
	}
	return htmlpage.Table{}, false
}

// htmlSlowest is the slowest requests with their trace IDs and causes.
func htmlSlowest(slow []Slow) htmlpage.Table {
	var vs []time.Duration
	for _, s := range slow {
		vs = append(vs, s.Value)
	}
	u := format.UnitFor(vs...)
	t := htmlpage.Table{Head: []string{"trace ID", "latency (" + unitName2(u) + ")", "error", "injected by the fake"}, Numeric: []bool{false, true}}
	for _, s := range slow {
		t.Rows = append(t.Rows, htmlpage.Row{Cells: []string{s.ID, inUnitText(s.Value, u), s.Err, s.Injected}})
	}
	return t
}

// htmlDisclosure is how the run was measured: the boxes left empty, where
// the raw records are, and the whole disclosure.
func htmlDisclosure(rep Report) htmlpage.Section {
	s := htmlpage.Section{ID: "disclosure", Heading: "Disclosure", Pre: rep.Disclosure}
	if len(rep.Missing) > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d disclosure boxes left empty", len(rep.Missing)))
		for _, b := range rep.Missing {
			line := fmt.Sprintf("%d. %s", b.N, b.Question)
			if b.Answer != "" {
				line += ": " + b.Answer
			}
			s.List = append(s.List, line)
		}
	}
	if rep.RawRecords != "" {
		s.Paragraphs = append(s.Paragraphs, "Raw records: "+rep.RawRecords)
	}
	if rep.Disclosure == "" && len(s.Paragraphs) == 0 && len(s.List) == 0 {
		s.Paragraphs = append(s.Paragraphs, "No disclosure: the records did not say how they were measured.")
	}
	return s
}

// htmlLengthCurve is the chain-length curve's table, the prediction
// labelled as one (as mdLengthCurve).
func htmlLengthCurve(c *chaincurve.Curve) htmlpage.Section {
	var all []time.Duration
	for _, p := range c.Points {
		all = append(all, p.Predicted.P50, p.Predicted.P95, p.Predicted.P99, p.Measured.P50, p.Measured.P95, p.Measured.P99)
	}
	u := format.UnitFor(all...)
	un := unitName2(u)
	t := htmlpage.Table{Head: []string{"length"}, Numeric: []bool{true}}
	for _, h := range []string{"predicted p50", "predicted p95", "predicted p99", "measured n", "measured p50", "measured p95", "measured p99"} {
		if h != "measured n" {
			h += " (" + un + ")"
		}
		t.Head, t.Numeric = append(t.Head, h), append(t.Numeric, true)
	}
	for _, p := range c.Points {
		m := [3]string{"", "", ""}
		if p.Measured.N > 0 {
			m = [3]string{inUnitText(p.Measured.P50, u), inUnitText(p.Measured.P95, u), inUnitText(p.Measured.P99, u)}
		}
		t.Rows = append(t.Rows, htmlpage.Row{Cells: []string{strconv.Itoa(p.Length), inUnitText(p.Predicted.P50, u), inUnitText(p.Predicted.P95, u),
			inUnitText(p.Predicted.P99, u), strconv.Itoa(p.Measured.N), m[0], m[1], m[2]}})
	}
	return htmlpage.Section{ID: "chain-length", Heading: "Chain total against chain length", Tables: []htmlpage.Table{t},
		Paragraphs: []string{fmt.Sprintf("Predicted: a bootstrap of the run's %d single calls, each drawn independently (%d chains a length, seed %d): a prediction, not a measurement. Measured: the chains run at that length, the ground truth where the two disagree (the calls of a chain are correlated).", c.Calls, c.Draws, c.Seed)}}
}
