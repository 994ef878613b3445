package servermetrics

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"mime"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot is what one scrape read: the server's histograms and gauges
// at an instant, as cumulative counts since the server started.
type Snapshot struct {
	// At is when the scrape's answer arrived (the client's clock).
	At time.Time
	// Server is the names the text was read with (never Auto).
	Server Server
	// Histograms holds the stages the server exports.
	Histograms map[Stage]Histogram
	// Gauges holds the gauges the server exports.
	Gauges map[Gauge]float64
	// Series says which series were read (Source.Labels, Source.Model):
	// `model_name="m"`, or "all series summed" and why.
	Series string
}

// Histogram is one stage's cumulative histogram, the series of its
// metric that the Source selects (every model_name, say) summed.
type Histogram struct {
	// Metric is the metric's name in the text.
	Metric string
	// Bounds are the buckets' upper bounds in seconds, ascending, the
	// +Inf bucket left out.
	Bounds []float64
	// Cumulative[i] counts the observations <= Bounds[i].
	Cumulative []float64
	// Count counts every observation (the +Inf bucket); Sum adds them,
	// in seconds.
	Count, Sum float64
}

// maxText bounds a metrics text: beyond it the scrape is an error.
const maxText = 32 << 20

// Parse reads a metrics text in the Prometheus text format (0.0.4) or
// OpenMetrics 1.0, with prometheus/common's text-format parser (see
// openmetrics.go for the OpenMetrics lines it rewrites). contentType is the
// answer's Content-Type; when it is empty or names neither format, a
// text whose last line is "# EOF" is read as OpenMetrics (which ends
// that way), any other as the Prometheus text format. server picks the
// names (Auto: the first server in VLLM, SGLang, TGI order whose names
// the text holds). Every series of a metric is summed (one server, many
// models); series of one metric with different buckets are an error. An
// empty text, a text that does not parse, a histogram whose counts go
// down or are not numbers, and a text with none of the server's names are
// errors that say which.
func Parse(data []byte, contentType string, server Server) (Snapshot, error) {
	return parse(Source{Names: server}, data, contentType)
}

// parse is Parse with s's names, reading the series s selects.
func parse(s Source, data []byte, contentType string) (Snapshot, error) {
	server := s.Names
	if len(bytes.TrimSpace(data)) == 0 {
		return Snapshot{}, errors.New("servermetrics: empty metrics text")
	}
	fams, err := decode(data, contentType)
	if err != nil {
		return Snapshot{}, err
	}
	try := tables
	if server != Auto && server != "" {
		t, err := tableFor(server)
		if err != nil {
			return Snapshot{}, err
		}
		try = []table{*t}
	}
	for _, t := range try {
		sel, err := selection(s, fams, &t)
		if err != nil {
			return Snapshot{}, err
		}
		snap, found, err := read(fams, &t, sel)
		if err != nil {
			return Snapshot{}, err
		}
		if found {
			snap.Series = sel.desc
			return snap, nil
		}
	}
	if len(try) == 1 {
		return Snapshot{}, fmt.Errorf("servermetrics: the text holds none of %s's metrics (%d families; names: %s)", try[0].server, len(fams), try[0].server)
	}
	return Snapshot{}, fmt.Errorf("servermetrics: the text holds no vLLM, SGLang or TGI metric (%d families; names: auto)", len(fams))
}

// isOpenMetrics reports whether the text is OpenMetrics: its
// Content-Type says so, or, without a known one, its last line is # EOF.
func isOpenMetrics(data []byte, contentType string) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		switch mt {
		case expfmt.OpenMetricsType:
			return true
		case "text/plain":
			return false
		}
	}
	return bytes.HasSuffix(bytes.TrimRight(data, "\n"), []byte("\n# EOF")) || string(bytes.TrimSpace(data)) == "# EOF"
}

// decode parses the text into its metric families, by name, with
// prometheus/common's text-format parser (OpenMetrics first rewritten by
// openMetricsToText).
func decode(data []byte, contentType string) (map[string]*dto.MetricFamily, error) {
	kind := "Prometheus text"
	if isOpenMetrics(data, contentType) {
		kind = "OpenMetrics"
		var err error
		if data, err = openMetricsToText(data); err != nil {
			return nil, err
		}
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("servermetrics: parse %s: %w", kind, err)
	}
	return fams, nil
}

// read takes table t's metrics from fams; found reports whether any of
// them was there.
func read(fams map[string]*dto.MetricFamily, t *table, sel selected) (s Snapshot, found bool, err error) {
	s = Snapshot{Server: t.server, Histograms: map[Stage]Histogram{}, Gauges: map[Gauge]float64{}}
	for _, st := range stages {
		for _, name := range t.stages[st] {
			mf := fams[name]
			if mf == nil || !sel.any(mf) {
				continue
			}
			h, err := histogram(mf, sel)
			if err != nil {
				return s, false, err
			}
			s.Histograms[st] = h
			found = true
			break
		}
	}
	for _, g := range gauges {
		for _, name := range t.gauges[g] {
			mf := fams[name]
			if mf == nil || !sel.any(mf) {
				continue
			}
			v, err := gauge(mf, sel)
			if err != nil {
				return s, false, err
			}
			s.Gauges[g] = v
			found = true
			break
		}
	}
	return s, found, nil
}

// count is a bucket's or a histogram's count, integer or float.
func count(f float64, u uint64) float64 {
	if f != 0 {
		return f
	}
	return float64(u)
}

// histogram sums the series of a histogram family.
func histogram(mf *dto.MetricFamily, sel selected) (Histogram, error) {
	name := mf.GetName()
	if mf.GetType() != dto.MetricType_HISTOGRAM {
		return Histogram{}, fmt.Errorf("servermetrics: %s is a %s, not a histogram", name, strings.ToLower(mf.GetType().String()))
	}
	h := Histogram{Metric: name}
	i := -1
	for _, m := range mf.GetMetric() {
		if !sel.match(m) {
			continue
		}
		i++
		mh := m.GetHistogram()
		var bounds, cum []float64
		for _, b := range mh.GetBucket() {
			ub, c := b.GetUpperBound(), count(b.GetCumulativeCountFloat(), b.GetCumulativeCount())
			if math.IsInf(ub, +1) {
				continue
			}
			if math.IsNaN(ub) || math.IsNaN(c) || math.IsInf(c, 0) {
				return Histogram{}, fmt.Errorf("servermetrics: %s: bucket le=%v holds %v, not a count", name, ub, c)
			}
			if n := len(bounds); n > 0 && (ub <= bounds[n-1] || c < cum[n-1]) {
				return Histogram{}, fmt.Errorf("servermetrics: %s: buckets out of order at le=%v (bounds must rise and counts must not fall)", name, ub)
			}
			bounds, cum = append(bounds, ub), append(cum, c)
		}
		total, sum := count(mh.GetSampleCountFloat(), mh.GetSampleCount()), mh.GetSampleSum()
		if math.IsNaN(total) || math.IsNaN(sum) || math.IsInf(sum, 0) || (len(cum) > 0 && total < cum[len(cum)-1]) {
			return Histogram{}, fmt.Errorf("servermetrics: %s: count %v and sum %v do not fit its buckets", name, total, sum)
		}
		if i == 0 {
			h.Bounds, h.Cumulative = bounds, cum
		} else {
			if !slices.Equal(bounds, h.Bounds) {
				return Histogram{}, fmt.Errorf("servermetrics: %s: its series have different buckets (%v and %v): cannot be summed", name, h.Bounds, bounds)
			}
			for j := range cum {
				h.Cumulative[j] += cum[j]
			}
		}
		h.Count += total
		h.Sum += sum
	}
	return h, nil
}

// gauge sums the series of a gauge family.
func gauge(mf *dto.MetricFamily, sel selected) (float64, error) {
	name := mf.GetName()
	if mf.GetType() != dto.MetricType_GAUGE && mf.GetType() != dto.MetricType_UNTYPED {
		return 0, fmt.Errorf("servermetrics: %s is a %s, not a gauge", name, strings.ToLower(mf.GetType().String()))
	}
	var v float64
	for _, m := range mf.GetMetric() {
		if !sel.match(m) {
			continue
		}
		x := m.GetGauge().GetValue()
		if mf.GetType() == dto.MetricType_UNTYPED {
			x = m.GetUntyped().GetValue()
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("servermetrics: %s is %v, not a number", name, x)
		}
		v += x
	}
	return v, nil
}
