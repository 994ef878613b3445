package sloassert

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailguard/tailguard/internal/svgchart"
	"github.com/tailguard/tailguard/servermetrics"
)

// TestServerCharts: the gauges at each scrape, against the seconds since
// the first: waiting and running in requests, the KV cache in percent;
// a gauge the server does not export draws nothing, and one scrape no
// chart.
func TestServerCharts(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pt := func(s float64, w, r, kv float64) servermetrics.Point {
		return servermetrics.Point{At: t0.Add(time.Duration(s * float64(time.Second))),
			Values: map[servermetrics.Gauge]float64{servermetrics.Waiting: w, servermetrics.Running: r, servermetrics.KVCache: kv}}
	}
	iv := &servermetrics.Interval{Server: servermetrics.VLLM, Points: []servermetrics.Point{pt(0, 0, 0, 0), pt(10, 3, 1, 0.5), pt(20, 1, 1, 0.25)}}
	cs := serverCharts(iv)
	require.Len(t, cs, 2)
	assert.Equal(t, "server-requests", cs[0].Name)
	assert.Equal(t, []svgchart.Series{
		{Name: "waiting", Points: []svgchart.Point{{X: 0, Y: 0}, {X: 10, Y: 3}, {X: 20, Y: 1}}, Style: svgchart.Line},
		{Name: "running", Points: []svgchart.Point{{X: 0, Y: 0}, {X: 10, Y: 1}, {X: 20, Y: 1}}, Style: svgchart.Line},
	}, cs[0].chart.Series)
	assert.Equal(t, "vllm, 3 scrapes; between them not observed", cs[0].chart.Subtitle)
	assert.Equal(t, "server-kv-cache", cs[1].Name)
	assert.Equal(t, []svgchart.Point{{X: 0, Y: 0}, {X: 10, Y: 50}, {X: 20, Y: 25}}, cs[1].chart.Series[0].Points, "percent")
	// 0%, 50%, 25% on a 0-100% axis from y=248 to y=58.
	svg := string(cs[1].SVG())
	assert.Contains(t, svg, `<polyline points="72.0,248.0 251.0,153.0 430.0,200.5"`)
	assert.Contains(t, svg, ">100%</text>")

	// TGI exports no KV cache gauge: no chart of it.
	for _, p := range iv.Points {
		delete(p.Values, servermetrics.KVCache)
	}
	cs = serverCharts(iv)
	require.Len(t, cs, 1)
	assert.Equal(t, "server-requests", cs[0].Name)
	assert.Empty(t, serverCharts(&servermetrics.Interval{Points: iv.Points[:1]}), "one scrape is no line")
	assert.Empty(t, serverCharts(nil))
}
