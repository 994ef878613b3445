package svgchart

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Style is how a series is drawn.
type Style int

const (
	// Line joins the points with straight segments.
	Line Style = iota
	// Step goes horizontally, then vertically, from each point to the
	// next: the shape of an empirical CDF.
	Step
	// Dots draws each point on its own.
	Dots
)

// Point is one point, in the units of the axes.
type Point struct{ X, Y float64 }

// Series is one named set of points.
type Series struct {
	// Name is shown in the legend ("" leaves the series out of it).
	Name   string
	Points []Point
	Style  Style
	// Color is an SVG color; "" picks one from Palette by the series'
	// index.
	Color string
	// Dashed draws a Line or Step series dashed.
	Dashed bool
	// Size is the diameter of a Dots series' dots in pixels (0: 4).
	Size float64
}

// Axis is one axis: its label (with the unit), scale and bounds.
type Axis struct {
	// Label names the quantity and its unit: "total (ms)".
	Label string
	// Log makes the axis logarithmic. Values <= 0 cannot be placed on it
	// and are left out.
	Log bool
	// Zero makes a linear axis start at 0 (or end there, for negative
	// data).
	Zero bool
	// Min and Max fix the bounds when Max > Min; otherwise the bounds are
	// the data's (with the rules'), widened to whole ticks.
	Min, Max float64
	// Suffix is appended to every tick label ("%").
	Suffix string
	// Ticks, when set, replace the automatic ticks (those outside the
	// bounds are left out).
	Ticks []float64
}

// Rule is a labelled reference line across the plot: a quantile, a
// budget.
type Rule struct {
	// Vertical draws the line at X = Value; otherwise at Y = Value.
	Vertical bool
	Value    float64
	// Label is written along the line and in the legend.
	Label string
	// Color is an SVG color ("" is dark grey).
	Color  string
	Dashed bool
}

// Chart is a chart with a title, two axes, series, reference lines and a
// legend on the right (with free-text notes under it).
type Chart struct {
	Title, Subtitle string
	// Width and Height in pixels; 0 gives 860 by 440.
	Width, Height int
	X, Y          Axis
	Series        []Series
	Rules         []Rule
	// Notes are short lines shown under the legend (wrapped at about 30
	// characters).
	Notes []string
}

// Palette is the colors series take by index when they name none.
var Palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf"}

const (
	marginLeft   = 72
	marginRight  = 210
	marginTop    = 58
	marginBottom = 52
	ruleColor    = "#444444"
)

// scale maps an axis' values to pixels.
type scale struct {
	log      bool
	lo, hi   float64 // domain (log10 of it for a log axis)
	p0, p1   float64 // pixels of lo and hi
	ticks    []float64
	decimals []int
}

func (s scale) px(v float64) float64 {
	if s.log {
		v = math.Log10(v)
	}
	return s.p0 + (v-s.lo)/(s.hi-s.lo)*(s.p1-s.p0)
}

// placeable reports whether v can be drawn on the axis.
func (s scale) placeable(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!s.log || v > 0)
}

// SVG renders the chart.
func (c Chart) SVG() []byte {
	w, h := c.Width, c.Height
	if w <= 0 || h <= 0 {
		w, h = 860, 440
	}
	x0, x1 := float64(marginLeft), float64(w-marginRight)
	y0, y1 := float64(marginTop), float64(h-marginBottom) // top, bottom
	var xs, ys []float64
	for _, s := range c.Series {
		for _, p := range s.Points {
			xs = append(xs, p.X)
			ys = append(ys, p.Y)
		}
	}
	for _, r := range c.Rules {
		if r.Vertical {
			xs = append(xs, r.Value)
		} else {
			ys = append(ys, r.Value)
		}
	}
	sx := newScale(c.X, xs, x0, x1)
	sy := newScale(c.Y, ys, y1, y0)

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", w, h)
	if c.Title != "" {
		fmt.Fprintf(&b, `<text x="%s" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", f1(x0), esc(c.Title))
	}
	if c.Subtitle != "" {
		fmt.Fprintf(&b, `<text x="%s" y="40" fill="#555555">%s</text>`+"\n", f1(x0), esc(c.Subtitle))
	}

	// Grid, ticks and tick labels.
	b.WriteString(`<g stroke="#e6e6e6" stroke-width="1">` + "\n")
	for _, t := range sx.ticks {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", f1(sx.px(t)), f1(y0), f1(sx.px(t)), f1(y1))
	}
	for _, t := range sy.ticks {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", f1(x0), f1(sy.px(t)), f1(x1), f1(sy.px(t)))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999999"/>`+"\n", f1(x0), f1(y0), f1(x1-x0), f1(y1-y0))
	b.WriteString(`<g fill="#333333" font-size="11">` + "\n")
	for i, t := range sx.ticks {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", f1(sx.px(t)), f1(y1+16), esc(num(t, sx.decimals[i])+c.X.Suffix))
	}
	for i, t := range sy.ticks {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end">%s</text>`+"\n", f1(x0-6), f1(sy.px(t)+4), esc(num(t, sy.decimals[i])+c.Y.Suffix))
	}
	b.WriteString("</g>\n")
	if c.X.Label != "" {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", f1((x0+x1)/2), f1(y1+40), esc(c.X.Label))
	}
	if c.Y.Label != "" {
		fmt.Fprintf(&b, `<text transform="translate(18,%s) rotate(-90)" text-anchor="middle">%s</text>`+"\n", f1((y0+y1)/2), esc(c.Y.Label))
	}

	// Series, then rules over them.
	for i, s := range c.Series {
		writeSeries(&b, s, seriesColor(s, i), sx, sy, y0)
	}
	writeRules(&b, c.Rules, sx, sy, x0, x1, y0, y1)
	writeLegend(&b, c, x1+18, y0)
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func seriesColor(s Series, i int) string {
	if s.Color != "" {
		return s.Color
	}
	return Palette[i%len(Palette)]
}

// stroke gives the rule's colour (ruleColor when unset) and the SVG
// attribute that dashes it ("" for a solid rule).
func (r Rule) stroke() (color, dash string) {
	color = r.Color
	if color == "" {
		color = ruleColor
	}
	if r.Dashed {
		dash = ` stroke-dasharray="5 3"`
	}
	return color, dash
}

// newScale fits an axis to its values and picks its ticks.
func newScale(a Axis, vs []float64, p0, p1 float64) scale {
	s := fitScale(a, vs, p0, p1)
	if len(a.Ticks) == 0 {
		return s
	}
	s.ticks, s.decimals = nil, nil
	lo, hi := s.lo, s.hi
	if s.log {
		lo, hi = math.Pow(10, lo), math.Pow(10, hi)
	}
	for _, t := range a.Ticks {
		if s.placeable(t) && t >= lo*(1-1e-9) && t <= hi*(1+1e-9) {
			s.ticks = append(s.ticks, t)
			s.decimals = append(s.decimals, decimals(t))
		}
	}
	return s
}

// decimals is how many decimals (up to 6) write t exactly enough.
func decimals(t float64) int {
	for d := 0; d < 6; d++ {
		if v, _ := strconv.ParseFloat(strconv.FormatFloat(t, 'f', d, 64), 64); math.Abs(v-t) <= 1e-9*math.Abs(t) {
			return d
		}
	}
	return 6
}

// fitScale fits an axis to its values and picks round ticks.
func fitScale(a Axis, vs []float64, p0, p1 float64) scale {
	s := scale{log: a.Log, p0: p0, p1: p1}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if s.placeable(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if a.Max > a.Min {
		lo, hi = a.Min, a.Max
	} else if lo > hi { // no data
		lo, hi = 0, 1
		if a.Log {
			lo, hi = 1, 10
		}
	}
	if a.Log {
		if !(a.Max > a.Min) {
			lo, hi = floor125(lo), ceil125(hi)
		}
		if hi <= lo {
			hi = lo * 10
		}
		s.lo, s.hi = math.Log10(lo), math.Log10(hi)
		s.ticks, s.decimals = logTicks(lo, hi)
		return s
	}
	if a.Zero && !(a.Max > a.Min) {
		lo, hi = min(lo, 0), max(hi, 0)
	}
	if hi == lo {
		lo, hi = lo-1, hi+1
		if a.Zero && lo < 0 && hi-1 >= 0 {
			lo = 0
		}
	}
	step := niceStep((hi - lo) / 5)
	if !(a.Max > a.Min) {
		lo, hi = math.Floor(lo/step+1e-9)*step, math.Ceil(hi/step-1e-9)*step
	}
	s.lo, s.hi = lo, hi
	dec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	first := math.Ceil(lo/step - 1e-9)
	for i := first; i*step <= hi+step*1e-9; i++ {
		s.ticks = append(s.ticks, i*step)
		s.decimals = append(s.decimals, dec)
	}
	return s
}

// niceStep is the smallest of 1, 2, 5 times a power of ten at least raw.
func niceStep(raw float64) float64 {
	if !(raw > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// floor125 is the largest 1, 2 or 5 times a power of ten at most v.
func floor125(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= v*(1+1e-9) {
			return m * p
		}
	}
	return p
}

// ceil125 is the smallest 1, 2 or 5 times a power of ten at least v.
func ceil125(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// logTicks are 1, 2 and 5 times each power of ten in [lo, hi]; only the
// powers of ten when that would make more than 10 ticks.
func logTicks(lo, hi float64) ([]float64, []int) {
	var ticks []float64
	var decs []int
	kmin, kmax := int(math.Floor(math.Log10(lo)+1e-9)), int(math.Ceil(math.Log10(hi)-1e-9))
	mult := []float64{1, 2, 5}
	if kmax-kmin > 3 {
		mult = []float64{1}
	}
	for k := kmin; k <= kmax; k++ {
		for _, m := range mult {
			v := m * math.Pow(10, float64(k))
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				ticks = append(ticks, v)
				decs = append(decs, max(0, -k))
			}
		}
	}
	return ticks, decs
}

// writeSeries draws one series: a polyline (broken at NaN) or dots, and a
// triangle on the top edge for each +Inf Y.
func writeSeries(b *bytes.Buffer, s Series, color string, sx, sy scale, top float64) {
	var off []float64 // pixels x of +Inf Y values
	if s.Style == Dots {
		var d strings.Builder
		for _, p := range s.Points {
			switch {
			case math.IsInf(p.Y, 1) && sx.placeable(p.X):
				off = append(off, sx.px(p.X))
			case sx.placeable(p.X) && sy.placeable(p.Y):
				fmt.Fprintf(&d, "M%s %sh0.1", f1(sx.px(p.X)), f1(sy.px(p.Y)))
			}
		}
		if d.Len() > 0 {
			// A dot is a round-capped stroke a tenth of a pixel long: a few
			// bytes each, and every renderer draws it.
			size, opacity := s.Size, "0.55"
			if size <= 0 {
				size = 4
			} else {
				opacity = "1"
			}
			fmt.Fprintf(b, `<path d="%s" stroke="%s" stroke-opacity="%s" stroke-width="%s" stroke-linecap="round" fill="none"/>`+"\n", d.String(), color, opacity, f1(size))
		}
	} else {
		var runs [][][2]float64
		var cur [][2]float64
		flush := func() {
			if len(cur) > 1 {
				runs = append(runs, cur)
			}
			cur = nil
		}
		// add appends a vertex, rounded to half a pixel; a vertex
		// that goes on in the direction of the last segment (vertical or
		// horizontal) replaces the last one, so a CDF of a million values
		// stays a few vertices per pixel column.
		add := func(x, y float64) {
			v := [2]float64{math.Round(x*2) / 2, math.Round(y*2) / 2}
			n := len(cur)
			if n > 0 && cur[n-1] == v {
				return
			}
			if n > 1 {
				a, c := cur[n-2], cur[n-1]
				vertical := a[0] == c[0] && c[0] == v[0] && (c[1]-a[1])*(v[1]-c[1]) > 0
				horizontal := a[1] == c[1] && c[1] == v[1] && (c[0]-a[0])*(v[0]-c[0]) > 0
				if vertical || horizontal {
					cur[n-1] = v
					return
				}
			}
			cur = append(cur, v)
		}
		var prev *Point
		for i := range s.Points {
			p := s.Points[i]
			if math.IsInf(p.Y, 1) && sx.placeable(p.X) {
				off = append(off, sx.px(p.X))
			}
			if !sx.placeable(p.X) || !sy.placeable(p.Y) {
				flush()
				prev = nil
				continue
			}
			if s.Style == Step && prev != nil {
				add(sx.px(p.X), sy.px(prev.Y))
			}
			add(sx.px(p.X), sy.px(p.Y))
			prev = &s.Points[i]
		}
		flush()
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		for _, run := range runs {
			pts := make([]string, len(run))
			for i, v := range run {
				pts[i] = f1(v[0]) + "," + f1(v[1])
			}
			fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.8" stroke-linejoin="round"%s/>`+"\n", strings.Join(pts, " "), color, dash)
		}
	}
	if len(off) > 0 {
		var d strings.Builder
		for _, x := range off {
			fmt.Fprintf(&d, "M%s %sl-4 -7h8z", f1(x), f1(top-1))
		}
		fmt.Fprintf(b, `<path d="%s" fill="%s"/>`+"\n", d.String(), color)
	}
}

// writeRules draws the reference lines with their labels along them
// (labels of vertical lines pushed apart when the lines are close).
func writeRules(b *bytes.Buffer, rules []Rule, sx, sy scale, x0, x1, y0, y1 float64) {
	type placed struct {
		r  Rule
		px float64
	}
	var vs []placed
	for _, r := range rules {
		color, dash := r.stroke()
		if r.Vertical {
			if !sx.placeable(r.Value) {
				continue
			}
			p := sx.px(r.Value)
			fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"%s/>`+"\n", f1(p), f1(y0), f1(p), f1(y1), color, dash)
			vs = append(vs, placed{r, p})
			continue
		}
		if !sy.placeable(r.Value) {
			continue
		}
		p := sy.px(r.Value)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"%s/>`+"\n", f1(x0), f1(p), f1(x1), f1(p), color, dash)
		if r.Label != "" {
			fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" fill="%s" %s>%s</text>`+"\n", f1(x1-4), f1(p-4), color, halo, esc(r.Label))
		}
	}
	slices.SortStableFunc(vs, func(a, c placed) int { return cmp.Compare(a.px, c.px) })
	last := math.Inf(-1) // right edge of the last label
	for _, v := range vs {
		if v.r.Label == "" {
			continue
		}
		color, _ := v.r.stroke()
		// A label rotated -90 degrees sits left of its baseline: it spans
		// [x-12, x]. Put it just left of its line; when that would overlap
		// the last label, just right of its line; else right of the last.
		x := v.px - 3
		if x-12 <= last {
			x = max(v.px+14, last+13)
		}
		last = x
		fmt.Fprintf(b, `<text transform="translate(%s,%s) rotate(-90)" text-anchor="end" font-size="11" fill="%s" %s>%s</text>`+"\n", f1(x), f1(y0+4), color, halo, esc(v.r.Label))
	}
}

const halo = `stroke="#ffffff" stroke-width="3" paint-order="stroke"`

// writeLegend lists the named series and labelled rules, then the notes.
func writeLegend(b *bytes.Buffer, c Chart, x, y float64) {
	y += 6
	for i, s := range c.Series {
		if s.Name == "" {
			continue
		}
		color := seriesColor(s, i)
		if s.Style == Dots {
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", f1(x+9), f1(y-4), color)
		} else {
			dash := ""
			if s.Dashed {
				dash = ` stroke-dasharray="6 4"`
			}
			fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"%s/>`+"\n", f1(x), f1(y-4), f1(x+18), f1(y-4), color, dash)
		}
		fmt.Fprintf(b, `<text x="%s" y="%s">%s</text>`+"\n", f1(x+24), f1(y), esc(s.Name))
		y += 18
	}
	for _, r := range c.Rules {
		if r.Label == "" {
			continue
		}
		color, dash := r.stroke()
		if r.Vertical {
			fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"%s/>`+"\n", f1(x+9), f1(y-11), f1(x+9), f1(y+2), color, dash)
		} else {
			fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"%s/>`+"\n", f1(x), f1(y-4), f1(x+18), f1(y-4), color, dash)
		}
		fmt.Fprintf(b, `<text x="%s" y="%s">%s</text>`+"\n", f1(x+24), f1(y), esc(r.Label))
		y += 18
	}
	if len(c.Notes) > 0 {
		y += 6
	}
	for _, n := range c.Notes {
		for _, line := range wrap(n, 30) {
			fmt.Fprintf(b, `<text x="%s" y="%s" font-size="11" fill="#555555">%s</text>`+"\n", f1(x), f1(y), esc(line))
			y += 14
		}
		y += 4
	}
}

// wrap breaks s into lines of at most width characters at spaces (a
// longer word stays whole).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// f1 writes a pixel coordinate with one decimal ("-0.0" as "0.0").
func f1(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if s == "-0.0" {
		return "0.0"
	}
	return s
}

// num writes a tick value with dec decimals.
func num(v float64, dec int) string {
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.TrimLeft(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	return s
}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

func esc(s string) string { return escaper.Replace(s) }
