package sloassert

import (
	"fmt"
	"time"

	"github.com/tailguard/tailguard/internal/svgchart"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/servermetrics"
)

// serverOf is the server metrics a result or chains scraped (nil for
// anything else).
func serverOf(s any) *servermetrics.Interval {
	switch s := s.(type) {
	case *latencytest.Result:
		if s != nil {
			return s.Server
		}
	case *latencytest.ChainResult:
		if s != nil {
			return s.Server
		}
	}
	return nil
}

// serverCharts draws the server's gauges at each scrape against the
// time since the first: waiting and running requests in one chart, the
// KV cache's use (percent) in another; a gauge the server does not
// export, or a run with fewer than two scrapes, draws none.
func serverCharts(iv *servermetrics.Interval) []Chart {
	if iv == nil || len(iv.Points) < 2 {
		return nil
	}
	t0 := iv.Points[0].At
	span := iv.Points[len(iv.Points)-1].At.Sub(t0)
	xu := time.Second
	if span >= 3*time.Minute {
		xu = time.Minute
	}
	series := func(g servermetrics.Gauge, scale float64) []svgchart.Point {
		var ps []svgchart.Point
		for _, p := range iv.Points {
			if v, ok := p.Values[g]; ok {
				ps = append(ps, svgchart.Point{X: inUnit(p.At.Sub(t0), xu), Y: v * scale})
			}
		}
		return ps
	}
	sub := fmt.Sprintf("%s, %d scrapes; between them not observed", iv.Server, len(iv.Points))
	x := svgchart.Axis{Label: "since the first scrape (" + unitName2(xu) + ")", Zero: true}
	var out []Chart
	reqs := svgchart.Chart{Title: "server requests over time", Subtitle: sub, Width: 640, Height: 300, X: x,
		Y: svgchart.Axis{Label: "requests", Zero: true}}
	for _, g := range []servermetrics.Gauge{servermetrics.Waiting, servermetrics.Running} {
		if ps := series(g, 1); len(ps) > 0 {
			reqs.Series = append(reqs.Series, svgchart.Series{Name: string(g), Points: ps, Style: svgchart.Line})
		}
	}
	if len(reqs.Series) > 0 {
		out = append(out, Chart{Name: "server-requests", Title: reqs.Title, chart: reqs})
	}
	if ps := series(servermetrics.KVCache, 100); len(ps) > 0 {
		kv := svgchart.Chart{Title: "server KV cache over time", Subtitle: sub, Width: 640, Height: 300, X: x,
			Y:      svgchart.Axis{Label: "KV cache used", Min: 0, Max: 100, Suffix: "%"},
			Series: []svgchart.Series{{Name: "KV cache", Points: ps, Style: svgchart.Line}}}
		out = append(out, Chart{Name: "server-kv-cache", Title: kv.Title, chart: kv})
	}
	return out
}
