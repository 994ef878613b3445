package servermetrics

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// modelLabels are the labels that name a series' model, in the order
// tried: vLLM's and SGLang's model_name, then model.
var modelLabels = []string{"model_name", "model"}

// selected is the series a Source reads: those carrying every label of
// want (nil: every series), and the words that say so.
type selected struct {
	want map[string]string
	desc string
}

// match reports whether series m carries every wanted label value.
func (sel selected) match(m *dto.Metric) bool {
	for k, v := range sel.want {
		if value, ok := labelOf(m, k); !ok || value != v {
			return false
		}
	}
	return true
}

// any reports whether a series of mf is selected.
func (sel selected) any(mf *dto.MetricFamily) bool {
	return slices.ContainsFunc(mf.GetMetric(), sel.match)
}

func labelOf(m *dto.Metric, name string) (string, bool) {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue(), true
		}
	}
	return "", false
}

// selection decides which series of t's metrics s reads: s.Labels when
// set (an error when no series carries them), else the series of s.Model
// when the series carry a model label and some are that model's, else
// every series.
func selection(s Source, fams map[string]*dto.MetricFamily, t *table) (selected, error) {
	var series []*dto.Metric
	for _, names := range slices.Concat(slices.Collect(maps.Values(t.stages)), slices.Collect(maps.Values(t.gauges))) {
		for _, n := range names {
			if mf := fams[n]; mf != nil {
				series = append(series, mf.GetMetric()...)
			}
		}
	}
	if len(s.Labels) > 0 {
		sel := selected{want: s.Labels, desc: labelsText(s.Labels)}
		if len(series) > 0 && !slices.ContainsFunc(series, sel.match) {
			k := slices.Min(slices.Collect(maps.Keys(s.Labels)))
			return sel, fmt.Errorf("servermetrics: no series of %s's metrics has %s (%s in the text: %s)", t.server, sel.desc, k, valuesOf(series, k))
		}
		return sel, nil
	}
	for _, l := range modelLabels {
		values := valuesOf(series, l)
		if values == "" {
			continue
		}
		sel := selected{want: map[string]string{l: s.Model}, desc: labelsText(map[string]string{l: s.Model}) + " (the measured model)"}
		switch {
		case s.Model == "":
			return selected{desc: "all series summed (no model named; " + l + ": " + values + ")"}, nil
		case !slices.ContainsFunc(series, sel.match):
			return selected{desc: fmt.Sprintf("all series summed: none has %s=%q, the measured model (%s: %s)", l, s.Model, l, values)}, nil
		}
		return sel, nil
	}
	return selected{desc: "all series summed (no model label)"}, nil
}

// valuesOf lists the values label l takes in series, sorted ("" when no
// series carries it).
func valuesOf(series []*dto.Metric, l string) string {
	var vs []string
	for _, m := range series {
		if v, ok := labelOf(m, l); ok && !slices.Contains(vs, strconv.Quote(v)) {
			vs = append(vs, strconv.Quote(v))
		}
	}
	slices.Sort(vs)
	return strings.Join(vs, ", ")
}

// labelsText is a label set as PromQL writes a matcher: a="x", b="y".
func labelsText(ls map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		parts = append(parts, k+"="+strconv.Quote(ls[k]))
	}
	return strings.Join(parts, ", ")
}
