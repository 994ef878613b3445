package sloassert

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/svgchart"
	"github.com/tailguard/tailguard/latencytest"
)

// Chart is one SVG chart of a judged result: a CDF, p50/p95/p99 against
// concurrency for a sweep, or latency over the time of a run.
type Chart struct {
	// Name is the chart's file name without ".svg": "cdf-ttft",
	// "timeline-total", "sweep-ttft".
	Name string
	// Title says what it shows.
	Title string
	chart svgchart.Chart
}

// SVG renders the chart. The same chart gives the same bytes.
func (c Chart) SVG() []byte { return c.chart.SVG() }

// Chart colors: quantile markers grey, budgets red.
const (
	colorQuantile = "#555555"
	colorBudget   = "#d62728"
	colorFailed   = "#d62728"
)

// logSpread is the max/min ratio above which a latency axis is
// logarithmic.
const logSpread = 20

// timelineSpan is the run length from which Charts adds a latency-over-time
// chart to a closed-loop run (open-loop runs always get one).
const timelineSpan = 10 * time.Minute

// maxDots caps the dots of a timeline: beyond it, every k-th request and
// every request above the run's p99 are drawn.
const maxDots = 4000

// Charts draws the charts of s, judged by Evaluate into rep; a nil s gives
// no chart.
//
// For a result: the CDF of TTFT and of total (and of any other latency
// metric rep judged with a quantile) with p50, p95 and p99 marked and the
// budgets of rep's quantile objectives marked (red dashed lines and a dot
// at each objective's (budget, q): a CDF passing left of the dot meets
// it); and, for an open-loop run or one longer than 10 minutes, total
// latency against start time, a dot per request.
//
// For chains: the CDF of the chain totals and of the calls' totals, with
// p50, p95 and p99 marked and the budgets of rep's chain quantile
// objectives; and chain totals against chain length ("chain-length"):
// p50, p95 and p99 predicted from the run's single calls drawn
// independently (labelled a prediction), the measured chains' beside
// them (latencytest.ChainResult.LengthCurve).
//
// For a sweep: p50, p95 and p99 against concurrency, one chart per metric
// of the levels' distributions ("sweep-ttft", "sweep-total"), with the
// budgets of the quantile objectives as red dashed lines, drawn from
// rep.Levels. A level that did not run, or whose requests do not share one
// concurrency, is left out. A quantile that reaches a failed request is a
// triangle on the top edge; one from fewer requests than MinSamples is
// left out, and the chart says so. The concurrency axis is logarithmic
// when the levels spread more than 20x.
func Charts[S Subject](s S, rep Report) []Chart {
	switch s := any(s).(type) {
	case *latencytest.ChainResult:
		return chainCharts(s, rep)
	case *latencytest.SweepResult:
		return sweepCharts(rep.Levels)
	case *latencytest.Result:
		return resultCharts(s, rep)
	}
	return nil
}

// resultCharts draws a result's charts (Charts).
func resultCharts(r *latencytest.Result, rep Report) []Chart {
	if r == nil {
		return nil
	}
	metrics := []Metric{TTFT, Total}
	for _, m := range allMetrics {
		if !slices.Contains(metrics, m) && slices.ContainsFunc(rep.Outcomes, func(o Outcome) bool { return o.metric == m }) {
			metrics = append(metrics, m)
		}
	}
	var out []Chart
	for _, m := range metrics {
		s, err := m.Sample(r)
		if err != nil {
			continue
		}
		unit := "requests"
		if m == ITL {
			unit = "gaps"
		}
		out = append(out, cdfChart("cdf-"+string(m), string(m), rep.Title, unit, s, budgetsOf(rep.Outcomes, m)))
	}
	if span, open := runSpan(r); open || span >= timelineSpan {
		out = append(out, timelineChart(r, Total, 0))
	}
	return out
}

// chainCharts draws a chain run's charts (Charts).
func chainCharts(cr *latencytest.ChainResult, rep Report) []Chart {
	if cr == nil {
		return nil
	}
	var chainBudgets []budget
	for _, o := range rep.Outcomes {
		if q, b, ok := chainBudget(o); ok {
			chainBudgets = append(chainBudgets, budget{q: q, d: b, verdict: o.Verdict})
		}
	}
	charts := []Chart{
		cdfChart("cdf-chain-total", "chain total", rep.Title, "chains", cr.Totals(), chainBudgets),
		cdfChart("cdf-call-total", "call total", rep.Title, "calls", cr.Calls().Total(), nil),
	}
	c := rep.LengthCurve
	if c == nil {
		c = chainLengthCurve(cr)
	}
	if c != nil {
		charts = append(charts, lengthCurveChart(c))
	}
	return charts
}

// chainBudget reads a chain quantile objective's quantile and budget from
// its name ("chain total p95 <= 5000.0ms"): ChainQ's outcomes do not carry
// them as Q's do.
func chainBudget(o Outcome) (q float64, d time.Duration, ok bool) {
	if o.metric != chainTotalMetric || o.budget <= 0 {
		return 0, 0, false
	}
	return o.q, o.budget, true
}

// budget is one quantile objective's budget, for marking.
type budget struct {
	q       float64
	d       time.Duration
	verdict Verdict
}

// budgetsOf returns the budgets of the quantile objectives on m.
func budgetsOf(outs []Outcome, m Metric) []budget {
	var bs []budget
	for _, o := range outs {
		if o.metric == m && o.budget > 0 && o.q > 0 && o.q < 1 {
			bs = append(bs, budget{q: o.q, d: o.budget, verdict: o.Verdict})
		}
	}
	return bs
}

// runSpan is the time from a run's Start to its last measured request's
// start, and whether any request was sent open-loop.
func runSpan(r *latencytest.Result) (span time.Duration, open bool) {
	for _, rec := range r.All() {
		open = open || rec.OpenLoop
		if !rec.Warmup {
			span = max(span, rec.Start.Sub(r.Start))
		}
	}
	return span, open
}

// markedQuantiles are the quantiles a CDF marks.
var markedQuantiles = []float64{0.5, 0.95, 0.99}

// cdfChart draws the empirical CDF of s: a failed value counts as
// infinitely slow, so with failures the curve stops short of 100%.
func cdfChart(name, metric, title, unitName string, s latencytest.Sample, budgets []budget) Chart {
	sum := s.Summarize()
	fin := s.Finite()
	slices.Sort(fin)
	n := len(s)
	all := slices.Clone([]time.Duration(fin))
	for _, b := range budgets {
		all = append(all, b.d)
	}
	u := format.UnitFor(all...)
	uname := unitName2(u)
	log := useLog(fin)
	c := svgchart.Chart{
		Title: fmt.Sprintf("%s CDF: %s", metric, title),
		X:     svgchart.Axis{Label: metric + " (" + uname + ")", Log: log},
		Y:     svgchart.Axis{Label: "share of " + unitName + " at or below (%)", Min: 0, Max: 100, Suffix: "%"},
	}
	if log {
		c.X.Label = metric + " (" + uname + ", log scale)"
	}
	c.Subtitle = fmt.Sprintf("n = %d %s, %d failed", n, unitName, sum.Failed)
	if !math.IsNaN(sum.CV) && !math.IsInf(sum.CV, 0) {
		c.Subtitle += fmt.Sprintf("; CV %.0f%%", sum.CV)
	}
	if r := sum.TailRatio; !math.IsNaN(r) && !math.IsInf(r, 0) {
		c.Subtitle += fmt.Sprintf("; p99/p50 %.2f", r)
	}
	if len(fin) > 0 {
		pts := make([]svgchart.Point, 0, len(fin)+1)
		pts = append(pts, svgchart.Point{X: inUnit(fin[0], u), Y: 0})
		for i, v := range fin {
			pts = append(pts, svgchart.Point{X: inUnit(v, u), Y: 100 * float64(i+1) / float64(n)})
		}
		c.Series = append(c.Series, svgchart.Series{Name: metric + " CDF", Points: pts, Style: svgchart.Step})
	}
	if sum.Failed > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d of %d failed: counted as infinitely slow, the curve stops at %s", sum.Failed, n, share(float64(n-sum.Failed)/float64(n))))
	}
	for _, q := range markedQuantiles {
		v := s.Quantile(q)
		switch {
		case n < MinSamples(q):
			c.Notes = append(c.Notes, fmt.Sprintf("%s not marked: needs n >= %d (have %d)", QuantileName(q), MinSamples(q), n))
		case v == latencytest.Failed:
			c.Notes = append(c.Notes, QuantileName(q)+" failed: it reaches a failed value")
		default:
			c.Rules = append(c.Rules, svgchart.Rule{Vertical: true, Value: inUnit(v, u), Color: colorQuantile,
				Label: QuantileName(q) + " " + format.In(v, u)})
		}
	}
	var targets []svgchart.Point
	for _, b := range budgets {
		label := fmt.Sprintf("%s budget %s", QuantileName(b.q), format.In(b.d, u))
		if b.verdict != "" {
			label += ": " + string(b.verdict)
		}
		c.Rules = append(c.Rules, svgchart.Rule{Vertical: true, Value: inUnit(b.d, u), Label: label, Color: colorBudget, Dashed: true})
		targets = append(targets, svgchart.Point{X: inUnit(b.d, u), Y: 100 * b.q})
	}
	if len(targets) > 0 {
		c.Series = append(c.Series, svgchart.Series{Name: "objective (budget, q)", Points: targets, Style: svgchart.Dots, Color: colorBudget, Size: 9})
		c.Notes = append(c.Notes, "an objective is met when the curve passes left of its dot")
	}
	return Chart{Name: name, Title: c.Title, chart: c}
}

// useLog reports whether latencies spread widely enough (max/min above 20)
// for a log axis.
func useLog(ds []time.Duration) bool {
	lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
	for _, d := range ds {
		if d != latencytest.Failed && d > 0 {
			lo, hi = min(lo, d), max(hi, d)
		}
	}
	return hi > 0 && float64(hi)/float64(lo) > logSpread
}

// inUnit is d in unit, +Inf for Failed.
func inUnit(d, unit time.Duration) float64 {
	if d == latencytest.Failed {
		return math.Inf(1)
	}
	return float64(d) / float64(unit)
}

// unitName2 names a duration unit.
func unitName2(u time.Duration) string {
	switch u {
	case time.Hour:
		return "h"
	case time.Minute:
		return "min"
	case time.Second:
		return "s"
	}
	return "ms"
}

// timelineChart draws latency against time: each measured request's
// metric (TTFT, FirstAnswer, Total or MaxGap) at its start offset from the
// run's Start, a failed request as a red triangle on the top edge, and
// each window's median (and p99, in windows of at least 100 requests) as
// steps. window <= 0 picks a round length giving about 20 windows. Above
// 4000 requests, every k-th request and every request above the run's p99
// are drawn (the chart says so). It panics for ITL, which pools gaps
// rather than giving one value per request, and for a window that would
// make more than 100,000 windows.
func timelineChart(r *latencytest.Result, m Metric, window time.Duration) Chart {
	if m == ITL {
		panic("sloassert: timeline chart: itl pools inter-token gaps; it has no one value per request")
	}
	c := svgchart.Chart{Title: fmt.Sprintf("%s over time", m)}
	ch := Chart{Name: "timeline-" + string(m), Title: c.Title}
	if r == nil {
		ch.chart = c
		return ch
	}
	s, err := m.Sample(r)
	if err != nil {
		panic("sloassert: timeline chart: " + err.Error())
	}
	recs := r.Measured()
	span, open := runSpan(r)
	if window <= 0 {
		window = roundWindow(span / 20)
	}
	if err := r.CheckWindows(window); window > 0 && err != nil {
		panic("sloassert: timeline chart: " + strings.TrimPrefix(err.Error(), "latencytest: "))
	}
	xu := time.Second
	switch {
	case span >= 3*time.Hour:
		xu = time.Hour
	case span >= 3*time.Minute:
		xu = time.Minute
	}
	fin := s.Finite()
	yu := format.UnitFor(fin...)
	log := useLog(fin)
	c.X = svgchart.Axis{Label: "request start since the run began (" + unitName2(xu) + ")", Zero: true}
	c.Y = svgchart.Axis{Label: string(m) + " (" + unitName2(yu) + ")", Log: log, Zero: !log}
	if log {
		c.Y.Label = string(m) + " (" + unitName2(yu) + ", log scale)"
	}
	kind := "closed-loop"
	if open {
		kind = "open-loop"
	}
	c.Subtitle = fmt.Sprintf("%d requests, %s, %d failed; windows of %v", len(recs), kind, s.Failures(), window)
	p99 := s.Quantile(0.99)
	stride := 1
	if len(recs) > maxDots {
		stride = (len(recs) + maxDots - 1) / maxDots
		c.Notes = append(c.Notes, fmt.Sprintf("dots: every %d-th request and every one above the run's p99", stride))
	}
	var dots, failed []svgchart.Point
	for i, rec := range recs {
		v := s[i]
		x := inUnit(rec.Start.Sub(r.Start), xu)
		switch {
		case v == latencytest.Failed:
			failed = append(failed, svgchart.Point{X: x, Y: math.Inf(1)})
		case i%stride == 0 || v > p99:
			dots = append(dots, svgchart.Point{X: x, Y: inUnit(v, yu)})
		}
	}
	c.Series = append(c.Series, svgchart.Series{Name: "one request", Points: dots, Style: svgchart.Dots})
	if len(failed) > 0 {
		c.Series = append(c.Series, svgchart.Series{Name: "failed (top edge)", Points: failed, Style: svgchart.Dots, Color: colorFailed})
	}
	var med, tail []svgchart.Point
	short := 0
	for _, w := range r.Windows(window) {
		ws, _ := m.Sample(w.Result)
		from, to := inUnit(w.From, xu), inUnit(w.To, xu)
		if len(ws) == 0 {
			med = append(med, svgchart.Point{X: math.NaN(), Y: math.NaN()})
			tail = append(tail, svgchart.Point{X: math.NaN(), Y: math.NaN()})
			continue
		}
		q50 := inUnit(ws.Quantile(0.5), yu)
		med = append(med, svgchart.Point{X: from, Y: q50}, svgchart.Point{X: to, Y: q50})
		if len(ws) < MinSamples(0.99) {
			short++
			tail = append(tail, svgchart.Point{X: math.NaN(), Y: math.NaN()})
			continue
		}
		q99 := inUnit(ws.Quantile(0.99), yu)
		tail = append(tail, svgchart.Point{X: from, Y: q99}, svgchart.Point{X: to, Y: q99})
	}
	c.Series = append(c.Series, svgchart.Series{Name: "window p50", Points: med, Style: svgchart.Line, Color: "#2ca02c"})
	if short < len(r.Windows(window)) {
		c.Series = append(c.Series, svgchart.Series{Name: "window p99", Points: tail, Style: svgchart.Line, Color: "#ff7f0e"})
	}
	if short > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("window p99 left out of %d windows with fewer than %d requests", short, MinSamples(0.99)))
	}
	ch.chart = c
	return ch
}

// roundWindow rounds d up to a round window length (1 s at least).
func roundWindow(d time.Duration) time.Duration {
	for _, w := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second,
		30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
		30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour} {
		if d <= w {
			return w
		}
	}
	return 24 * time.Hour * ((d + 24*time.Hour - 1) / (24 * time.Hour))
}

// sweepCharts draws a sweep's charts from its level reports (Charts).
func sweepCharts(reps []Report) []Chart {
	type level struct {
		c   int
		rep Report
	}
	var levels []level
	var ticks []float64
	var left []string
	for _, rep := range reps {
		switch {
		case len(rep.Concurrency) == 1 && len(rep.Distributions) > 0:
			levels = append(levels, level{rep.Concurrency[0], rep})
			ticks = append(ticks, float64(rep.Concurrency[0]))
		case rep.Problem != "":
			left = append(left, rep.Problem)
		default:
			left = append(left, rep.Title+": not one concurrency level")
		}
	}
	if len(levels) == 0 {
		return nil
	}
	var metrics []string
	for _, l := range levels {
		for _, d := range l.rep.Distributions {
			if !slices.Contains(metrics, d.Metric) {
				metrics = append(metrics, d.Metric)
			}
		}
	}
	lo, hi := levels[0].c, levels[0].c
	for _, l := range levels {
		lo, hi = min(lo, l.c), max(hi, l.c)
	}
	var out []Chart
	for _, m := range metrics {
		var all []time.Duration
		for _, l := range levels {
			for _, d := range l.rep.Distributions {
				if d.Metric == m {
					all = append(all, d.Summary.P50, d.Summary.P95, d.Summary.P99)
				}
			}
		}
		var budgets []budget
		for _, l := range levels {
			for _, b := range budgetsOf(l.rep.Outcomes, Metric(m)) {
				if !slices.ContainsFunc(budgets, func(x budget) bool { return x.q == b.q && x.d == b.d }) {
					budgets = append(budgets, budget{q: b.q, d: b.d})
					all = append(all, b.d)
				}
			}
		}
		u := format.UnitFor(all...)
		c := svgchart.Chart{
			Title:    fmt.Sprintf("%s quantiles against concurrency", m),
			Subtitle: fmt.Sprintf("%d levels: %s", len(levels), levelList(levels, func(l level) int { return l.c })),
			X:        svgchart.Axis{Label: "concurrency (requests in flight)", Log: lo > 0 && float64(hi)/float64(lo) > logSpread, Ticks: ticks},
			Y:        svgchart.Axis{Label: m + " (" + unitName2(u) + ")", Zero: true},
		}
		for _, l := range left {
			c.Notes = append(c.Notes, "left out: "+l)
		}
		for i, q := range markedQuantiles {
			var pts []svgchart.Point
			var few []string
			for _, l := range levels {
				for _, d := range l.rep.Distributions {
					if d.Metric != m {
						continue
					}
					if d.Summary.N < MinSamples(q) {
						few = append(few, fmt.Sprintf("c%d", l.c))
						pts = append(pts, svgchart.Point{X: math.NaN(), Y: math.NaN()})
						continue
					}
					v := []time.Duration{d.Summary.P50, d.Summary.P95, d.Summary.P99}[i]
					pts = append(pts, svgchart.Point{X: float64(l.c), Y: inUnit(v, u)})
				}
			}
			color := svgchart.Palette[i]
			c.Series = append(c.Series, svgchart.Series{Name: QuantileName(q), Points: pts, Style: svgchart.Line, Color: color},
				svgchart.Series{Points: pts, Style: svgchart.Dots, Color: color, Size: 6})
			if len(few) > 0 {
				c.Notes = append(c.Notes, fmt.Sprintf("%s left out at %s: needs n >= %d", QuantileName(q), strings.Join(few, ", "), MinSamples(q)))
			}
		}
		for _, b := range budgets {
			c.Rules = append(c.Rules, svgchart.Rule{Value: inUnit(b.d, u), Color: colorBudget, Dashed: true,
				Label: fmt.Sprintf("%s budget %s", QuantileName(b.q), format.In(b.d, u))})
		}
		out = append(out, Chart{Name: "sweep-" + strings.ReplaceAll(m, " ", "-"), Title: c.Title, chart: c})
	}
	return out
}

func levelList[T any](xs []T, f func(T) int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = "c" + strconv.Itoa(f(x))
	}
	return strings.Join(parts, ", ")
}

// writeCharts writes each chart to dir as Name.svg and returns the file
// names written, in order. The first error stops it.
func writeCharts(dir string, charts ...Chart) ([]string, error) {
	var names []string
	for _, c := range charts {
		name := c.Name + ".svg"
		if err := os.WriteFile(filepath.Join(dir, name), c.SVG(), 0o644); err != nil {
			return names, fmt.Errorf("sloassert: writing chart: %w", err)
		}
		names = append(names, name)
	}
	return names, nil
}
