// The objectives section: each key and the objectives it makes.

package slospec

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// specMetrics are the metrics a spec judges: its load is a closed-loop
// batch, so the open loop's from_schedule metrics have nothing to judge.
var specMetrics = []sloassert.Metric{sloassert.TTFT, sloassert.FirstAnswer, sloassert.Total, sloassert.ITL, sloassert.MaxGap}

// quantileOptions are the keys of a metric's objectives map that set its
// quantiles' options; the map's other keys are the kinds' (kindKeys).
var quantileOptions = []string{"allow_small_sample", "demonstrate", "refute"}

// objectives parses the objectives map: each key is a kind's
// (kindKeys(atTop)) or a metric's map of objectives.
func (p *specParser) objectives(e specEntry) []Objective {
	var out []Objective
	allowed := kindKeys(atTop)
	for _, m := range specMetrics {
		allowed = append(allowed, string(m))
	}
	entries, _ := p.mapping(e.v, e.path, false, allowed, nil)
	for _, f := range entries {
		if k := kindAt(atTop, f.key); k != nil {
			k.parse(p, f, where{}, &out)
		} else {
			p.metric(f, sloassert.Metric(f.key), &out)
		}
	}
	return out
}

// quantileSection is what a section's quantile keys share: its
// allow_small_sample, demonstrate and refute, and the quantiles named so
// far with their lines (p99 and p99.0 in one section are an error).
type quantileSection struct {
	allowSmall          bool
	demonstrate, refute float64
	seen                map[float64]int
}

// quantileSection reads a section's allow_small_sample, demonstrate and
// refute.
func (p *specParser) quantileSection(entries []specEntry) *quantileSection {
	o := &quantileSection{seen: map[float64]int{}}
	var conf []specEntry
	for _, g := range entries {
		switch g.key {
		case "allow_small_sample":
			o.allowSmall, _ = p.boolean(g)
		case "demonstrate":
			o.demonstrate, _ = p.percentage(g, 0, 100, true)
			conf = append(conf, g)
		case "refute":
			o.refute, _ = p.percentage(g, 0, 100, true)
			conf = append(conf, g)
		}
	}
	if len(conf) > 1 {
		p.errorf(conf[1].k.Line, conf[1].path, "conflicting: demonstrate and refute (give one)")
		o.demonstrate, o.refute = 0, 0
	}
	return o
}

// quantile adds so, a quantile objective of the section, from its key g
// (p99: 2s): the quantile, a positive duration budget, and the section's
// options. A second key for a quantile already named (p99 and p99.0) is an
// error naming the first line; the quantile counts as named even when its
// budget is bad.
func (o *quantileSection) quantile(p *specParser, g specEntry, so Objective, out *[]Objective) {
	q, ok := p.quantile(g)
	if !ok {
		return
	}
	if l, dup := o.seen[q]; dup {
		p.errorf(g.k.Line, g.path, "the same quantile as line %d", l)
		return
	}
	o.seen[q] = g.k.Line
	d, ok := p.duration(g, true)
	if !ok {
		return
	}
	so.Q, so.Budget = q, d
	so.AllowSmallSample, so.Demonstrate, so.Refute = o.allowSmall, o.demonstrate, o.refute
	p.objective(out, so, g.path)
}

// metric parses one metric's objectives: its kinds' keys
// (kindKeys(atMetric): cv, tail_ratio, max) and quantiles.
func (p *specParser) metric(f specEntry, m sloassert.Metric, out *[]Objective) {
	entries, ok := p.mapping(f.v, f.path, false, append(kindKeys(atMetric), quantileOptions...), isQuantileKey)
	if !ok {
		return
	}
	w := where{metric: m, sec: p.quantileSection(entries)}
	n := 0
	for _, g := range entries {
		if slices.Contains(quantileOptions, g.key) {
			continue
		}
		n++
		k := kindAt(atMetric, g.key)
		if k == nil {
			k = kindAt(atMetric, "") // a quantile key
		}
		k.parse(p, g, w, out)
	}
	if n == 0 {
		p.errorf(f.k.Line, f.path, "no objective (want a quantile such as p99, cv or tail_ratio)")
	}
}

func (p *specParser) tailRatio(g specEntry) (float64, bool) {
	v, ok := p.number(g, "a ratio p99/p50 such as 5")
	if ok && v < 1 {
		p.errorf(g.v.Line, g.path, "%g is below 1: p99 is never below p50", v)
		return 0, false
	}
	return v, ok
}

// byKind parses cv: {metric: 100%} and tail_ratio: {metric: 5}: each
// metric's value with parse, the kind's parser under a metric.
func (p *specParser) byKind(f specEntry, out *[]Objective, parse func(p *specParser, f specEntry, w where, out *[]Objective)) {
	var names []string
	for _, m := range specMetrics {
		names = append(names, string(m))
	}
	entries, ok := p.mapping(f.v, f.path, false, names, nil)
	if !ok {
		return
	}
	if len(entries) == 0 {
		p.errorf(f.k.Line, f.path, "no objective (want a metric: %s)", wantList(names, false))
	}
	for _, g := range entries {
		parse(p, g, where{metric: sloassert.Metric(g.key)}, out)
	}
}

// decodeRates parses tokens_per_second: {p5: 10}.
func (p *specParser) decodeRates(f specEntry, out *[]Objective) {
	entries, ok := p.mapping(f.v, f.path, false, nil, isQuantileKey)
	if !ok {
		return
	}
	if len(entries) == 0 {
		p.errorf(f.k.Line, f.path, "no objective (want a low quantile and a floor in tokens/s, such as p5: 10)")
	}
	for _, g := range entries {
		q, ok := p.quantile(g)
		if !ok {
			continue
		}
		v, ok := p.number(g, "a floor in tokens/s such as 10")
		if !ok {
			continue
		}
		if v <= 0 {
			p.errorf(g.v.Line, g.path, "a floor of %g tokens/s judges nothing: want a positive number", v)
			continue
		}
		p.objective(out, Objective{Key: "tokens_per_second_" + g.key, Line: g.k.Line, Kind: kindDecodeRate, Q: q, Limit: v}, g.path)
	}
}

// coldStart parses cold_start: 10s or {max: 10s, after_idle: 2s}.
func (p *specParser) coldStart(f specEntry, out *[]Objective) {
	so := Objective{Key: "cold_start", Line: f.k.Line, Kind: kindColdStart}
	if f.v.Kind != yaml.MappingNode {
		if d, ok := p.duration(f, true); ok {
			so.Budget = d
			p.objective(out, so, f.path)
		}
		return
	}
	entries, ok := p.mapping(f.v, f.path, false, []string{"max", "after_idle"}, nil)
	if !ok {
		return
	}
	hasMax, valid := false, true
	for _, g := range entries {
		var d time.Duration
		var ok bool
		switch g.key {
		case "max":
			hasMax = true
			d, ok = p.duration(g, true)
			so.Budget = d
		case "after_idle":
			d, ok = p.duration(g, true)
			so.AfterIdle = d
		}
		valid = valid && ok
	}
	if !hasMax {
		p.errorf(f.v.Line, f.path, "no max: write the cold-start budget, such as {max: 10s, after_idle: 2s}")
		return
	}
	if valid {
		p.objective(out, so, f.path)
	}
}

// errorRateLimit parses an error-rate limit: a percentage in [0%, 100%).
// 100% would let every request fail, and an all-failed run never passes.
func (p *specParser) errorRateLimit(e specEntry) (float64, bool) {
	v, ok := p.percentage(e, 0, 100, false)
	if ok && v == 1 {
		p.errorf(e.v.Line, e.path, "100%% lets every request fail, and an all-failed run never passes: give a limit below 100%%, or leave the error rate out")
		return 0, false
	}
	return v, ok
}

// errorRate parses error_rate: 1% or {max: 1%, classes: [...]}.
func (p *specParser) errorRate(f specEntry, out *[]Objective) {
	so := Objective{Key: "error_rate", Line: f.k.Line, Kind: kindErrorRate}
	if f.v.Kind != yaml.MappingNode {
		v, ok := p.errorRateLimit(f)
		if ok {
			so.Limit = v
			p.objective(out, so, f.path)
		}
		return
	}
	entries, ok := p.mapping(f.v, f.path, false, []string{"max", "classes"}, nil)
	if !ok {
		return
	}
	hasMax := false
	for _, g := range entries {
		switch g.key {
		case "max":
			hasMax = true
			so.Limit, ok = p.errorRateLimit(g)
		case "classes":
			if g.v.Kind != yaml.SequenceNode || len(g.v.Content) == 0 {
				p.errorf(g.v.Line, g.path, "want a list of error classes such as [http_529, http_429], not %s", nodeDesc(g.v))
				continue
			}
			seen := map[string]bool{}
			for i, n := range g.v.Content {
				el := specEntry{key: g.key, path: fmt.Sprintf("%s[%d]", g.path, i), k: n, v: n}
				c, ok := p.str(el)
				if !ok {
					continue
				}
				if seen[c] {
					p.errorf(n.Line, el.path, "class %q given twice", c)
					continue
				}
				if err := latencytest.CheckClass(c); err != nil {
					p.errorf(n.Line, el.path, "%s", strings.TrimPrefix(err.Error(), "latencytest: "))
					continue
				}
				seen[c] = true
				so.Classes = append(so.Classes, c)
			}
		}
	}
	if !hasMax {
		p.errorf(f.k.Line, f.path, "missing max (the error rate allowed, such as 1%%)")
		return
	}
	if ok {
		p.objective(out, so, f.path)
	}
}
