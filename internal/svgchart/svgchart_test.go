package svgchart_test

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/internal/svgchart"
)

// The -update flag rewrites the golden files under testdata/ (the name
// sloassert.UpdateFlag gives it across the module).
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

func updating() bool {
	g, ok := flag.Lookup("update").Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (rewrite it with go test -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (rewrite it with -update if the change is right)\ngot:\n%s", path, got)
	}
}

// wellFormed parses the SVG as XML to the end.
func wellFormed(t *testing.T, svg []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
	}
}

// texts returns the content of every <text> element, in order.
func texts(svg []byte) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllSubmatch(svg, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// Every feature in one chart: a log x axis, a step line, dots, a failed
// (+Inf) value on the top edge, a NaN break, rules of both kinds, notes,
// and text that needs escaping.
func TestChartGolden(t *testing.T) {
	c := svgchart.Chart{
		Title: "latency <ms> & more", Subtitle: "n = 5",
		X: svgchart.Axis{Label: "ttft (ms, log scale)", Log: true},
		Y: svgchart.Axis{Label: "share (%)", Min: 0, Max: 100, Suffix: "%"},
		Series: []svgchart.Series{
			{Name: "cdf", Style: svgchart.Step, Points: []svgchart.Point{{X: 120, Y: 0}, {X: 120, Y: 20}, {X: 300, Y: 40}, {X: 310, Y: 60}, {X: 2400, Y: 80}}},
			{Name: "line", Style: svgchart.Line, Dashed: true, Points: []svgchart.Point{{X: 150, Y: 10}, {X: 200, Y: 30}, {X: math.NaN(), Y: math.NaN()}, {X: 400, Y: 30}, {X: 500, Y: 50}}},
			{Name: "dots", Style: svgchart.Dots, Points: []svgchart.Point{{X: 1000, Y: 90}, {X: 1500, Y: math.Inf(1)}}},
		},
		Rules: []svgchart.Rule{
			{Vertical: true, Value: 300, Label: "p50 300ms"},
			{Vertical: true, Value: 310, Label: "p95 310ms"},
			{Vertical: true, Value: 1500, Label: "budget 1500ms", Color: "#d62728", Dashed: true},
			{Value: 95, Label: "95%"},
		},
		Notes: []string{"one failed request: the curve stops at 80%"},
	}
	svg := c.SVG()
	wellFormed(t, svg)
	if !bytes.Equal(svg, c.SVG()) {
		t.Error("two renderings differ")
	}
	got := strings.Join(texts(svg), "|")
	for _, want := range []string{"latency &lt;ms&gt; &amp; more", "|100|200|500|1000|2000|5000|", "|0%|20%|40%|60%|80%|100%|", "p50 300ms", "budget 1500ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("texts lack %q: %s", want, got)
		}
	}
	golden(t, "golden.svg", svg)
}

// Linear axes pick 1, 2 or 5 times a power of ten and widen to whole
// ticks; Zero starts them at 0; fixed ticks replace them.
func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    svgchart.Axis
		xs   []float64
		want string
	}{
		{"round", svgchart.Axis{}, []float64{130, 980}, "0|200|400|600|800|1000"},             // (980-130)/5 = 170: step 200
		{"zero", svgchart.Axis{Zero: true}, []float64{1200, 1340}, "0|500|1000|1500"},         // 1340/5 = 268: step 500
		{"decimals", svgchart.Axis{}, []float64{0.12, 0.31}, "0.10|0.15|0.20|0.25|0.30|0.35"}, // 0.19/5 = 0.038: step 0.05
		{"one value", svgchart.Axis{}, []float64{200, 200}, "199.0|199.5|200.0|200.5|201.0"},
		{"log decades", svgchart.Axis{Log: true}, []float64{0.3, 20000}, "1|10|100|1000|10000"}, // bounds 0.2 and 20000; over 3 decades only powers of ten
		{"fixed", svgchart.Axis{Log: true, Ticks: []float64{1, 8, 64}}, []float64{1, 64}, "1|8|64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pts []svgchart.Point
			for _, x := range tc.xs {
				pts = append(pts, svgchart.Point{X: x, Y: 1})
			}
			c := svgchart.Chart{X: tc.x, Y: svgchart.Axis{Min: 0, Max: 1}, Series: []svgchart.Series{{Points: pts}}}
			ts := texts(c.SVG())
			// The x tick labels come first, then the y ones (0.0 … 1.0).
			var xs []string
			for _, s := range ts {
				if _, err := strconv.ParseFloat(s, 64); err != nil {
					break
				}
				xs = append(xs, s)
			}
			ys := 6 // 0.0, 0.2, … 1.0
			if got := strings.Join(xs[:len(xs)-ys], "|"); got != tc.want {
				t.Errorf("ticks %s, want %s", got, tc.want)
			}
		})
	}
}

// A CDF of 100,000 values is a few vertices per pixel column, not
// 200,000.
func TestStepCompression(t *testing.T) {
	n := 100000
	pts := make([]svgchart.Point, n)
	for i := range pts {
		pts[i] = svgchart.Point{X: 100 + 900*float64(i)/float64(n), Y: 100 * float64(i+1) / float64(n)}
	}
	svg := svgchart.Chart{Series: []svgchart.Series{{Points: pts, Style: svgchart.Step}}}.SVG()
	wellFormed(t, svg)
	m := regexp.MustCompile(`<polyline points="([^"]*)"`).FindSubmatch(svg)
	if m == nil {
		t.Fatal("no polyline")
	}
	if v := len(strings.Fields(string(m[1]))); v > 2500 {
		t.Errorf("%d vertices for a 578-pixel-wide plot", v)
	}
	if len(svg) > 100000 {
		t.Errorf("%d bytes", len(svg))
	}
}

// Values a log axis cannot place (<= 0) and NaN are left out, and nothing
// panics on an empty chart.
func TestEmptyAndUnplaceable(t *testing.T) {
	for _, c := range []svgchart.Chart{
		{},
		{X: svgchart.Axis{Log: true}, Series: []svgchart.Series{{Points: []svgchart.Point{{X: 0, Y: 1}, {X: -1, Y: 2}, {X: math.NaN(), Y: 3}}}}},
		{Series: []svgchart.Series{{Style: svgchart.Dots, Points: []svgchart.Point{{X: 1, Y: math.Inf(1)}}}}},
	} {
		svg := c.SVG()
		wellFormed(t, svg)
		if bytes.Contains(svg, []byte("NaN")) || bytes.Contains(svg, []byte("Inf")) {
			t.Errorf("a non-finite coordinate was written:\n%s", svg)
		}
	}
}
