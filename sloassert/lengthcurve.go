package sloassert

import (
	"fmt"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/chaincurve"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/svgchart"
	"github.com/tailguard/tailguard/latencytest"
)

// curveSeed seeds the chain-length curve of a chain report.
const curveSeed = 1

// chainLengthCurve is the chain-length curve a chain report draws
// (latencytest.ChainResult.LengthCurve, seed 1): lengths 1 to twice the
// longest chain, at least 10 and at most 50; nil without a call.
func chainLengthCurve(cr *latencytest.ChainResult) *chaincurve.Curve {
	longest, calls := 0, 0
	for i := range cr.Chains {
		longest, calls = max(longest, len(cr.Chains[i].Calls)), calls+len(cr.Chains[i].Calls)
	}
	if calls == 0 {
		return nil
	}
	c := cr.LengthCurve(min(max(2*longest, 10), 50), curveSeed)
	return &c
}

// curveQuantiles are the quantiles a length curve shows, with their
// values in a point's Quantiles.
var curveQuantiles = []struct {
	name string
	of   func(chaincurve.Quantiles) time.Duration
}{
	{"p50", func(q chaincurve.Quantiles) time.Duration { return q.P50 }},
	{"p95", func(q chaincurve.Quantiles) time.Duration { return q.P95 }},
	{"p99", func(q chaincurve.Quantiles) time.Duration { return q.P99 }},
}

// lengthCurveChart draws chain totals against chain length: the
// predicted p50, p95 and p99 as lines (labelled a prediction), the
// measured ones as large dots where a length was measured (a measured
// quantile from fewer chains than MinSamples left out, and said). The
// total axis is logarithmic when the values spread more than 20x.
func lengthCurveChart(c *chaincurve.Curve) Chart {
	var all []time.Duration
	for _, p := range c.Points {
		for _, q := range curveQuantiles {
			all = append(all, q.of(p.Predicted))
			if p.Measured.N > 0 {
				all = append(all, q.of(p.Measured))
			}
		}
	}
	u := format.UnitFor(all...)
	ch := svgchart.Chart{
		Title:    "chain total against chain length",
		Subtitle: fmt.Sprintf("lines: predicted from %d single calls drawn independently (bootstrap, %d chains a length, seed %d): a prediction; dots: measured chains, the ground truth", c.Calls, c.Draws, c.Seed),
		X:        svgchart.Axis{Label: "chain length (calls)", Zero: true},
		Y:        svgchart.Axis{Label: "chain total (" + unitName2(u) + ")", Log: useLog(all), Zero: !useLog(all)},
	}
	for i, q := range curveQuantiles {
		color := svgchart.Palette[i]
		var pred, meas []svgchart.Point
		var few []string
		for _, p := range c.Points {
			pred = append(pred, svgchart.Point{X: float64(p.Length), Y: inUnit(q.of(p.Predicted), u)})
			switch {
			case p.Measured.N == 0:
			case p.Measured.N < MinSamples([]float64{0.5, 0.95, 0.99}[i]):
				few = append(few, fmt.Sprintf("length %d (n=%d)", p.Length, p.Measured.N))
			default:
				meas = append(meas, svgchart.Point{X: float64(p.Length), Y: inUnit(q.of(p.Measured), u)})
			}
		}
		ch.Series = append(ch.Series, svgchart.Series{Name: q.name + " predicted", Points: pred, Style: svgchart.Line, Color: color, Dashed: i > 0})
		if len(meas) > 0 {
			ch.Series = append(ch.Series, svgchart.Series{Name: q.name + " measured", Points: meas, Style: svgchart.Dots, Color: color, Size: 10})
		}
		if len(few) > 0 {
			ch.Notes = append(ch.Notes, fmt.Sprintf("measured %s left out at %s: needs n >= %d", q.name, strings.Join(few, ", "), MinSamples([]float64{0.5, 0.95, 0.99}[i])))
		}
	}
	if c.Failed > 0 {
		ch.Notes = append(ch.Notes, fmt.Sprintf("%d of %d calls failed: a chain that draws one fails (top edge)", c.Failed, c.Calls))
	}
	return Chart{Name: "chain-length", Title: ch.Title, chart: ch}
}

// mdLengthCurve is the chain-length curve as a Markdown table, one unit
// for every column, the prediction labelled as one.
func mdLengthCurve(c *chaincurve.Curve) string {
	var all []time.Duration
	for _, p := range c.Points {
		all = append(all, p.Predicted.P50, p.Predicted.P95, p.Predicted.P99, p.Measured.P50, p.Measured.P95, p.Measured.P99)
	}
	u := format.UnitFor(all...)
	un := unitName2(u)
	var sb strings.Builder
	fmt.Fprintf(&sb, "### Chain total against chain length\n\nPredicted: a bootstrap of the run's %d single calls, each drawn independently (%d chains a length, seed %d): a prediction, not a measurement. Measured: the chains run at that length, the ground truth where the two disagree (the calls of a chain are correlated).\n\n",
		c.Calls, c.Draws, c.Seed)
	fmt.Fprintf(&sb, "| length | predicted p50 (%[1]s) | predicted p95 (%[1]s) | predicted p99 (%[1]s) | measured n | measured p50 (%[1]s) | measured p95 (%[1]s) | measured p99 (%[1]s) |\n|--:|--:|--:|--:|--:|--:|--:|--:|\n", un)
	for _, p := range c.Points {
		m := [3]string{"", "", ""}
		if p.Measured.N > 0 {
			m = [3]string{inUnitText(p.Measured.P50, u), inUnitText(p.Measured.P95, u), inUnitText(p.Measured.P99, u)}
		}
		fmt.Fprintf(&sb, "| %d | %s | %s | %s | %d | %s | %s | %s |\n", p.Length, inUnitText(p.Predicted.P50, u), inUnitText(p.Predicted.P95, u),
			inUnitText(p.Predicted.P99, u), p.Measured.N, m[0], m[1], m[2])
	}
	return sb.String()
}
