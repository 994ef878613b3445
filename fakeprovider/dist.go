package fakeprovider

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tailguard/tailguard/internal/stats"
)

// z99 is the standard normal quantile at 0.99: a lognormal with median m and
// 99th percentile p has sigma = ln(p/m)/z99.
const z99 = 2.3263478740408408

// Quantity is what a Dist draws: a latency (time.Duration) or a count (int,
// e.g. tokens).
type Quantity interface{ time.Duration | int }

// Dist is a distribution of a latency or a count. The zero Dist is "unset":
// Profile fields that are unset take their documented defaults. Build one with
// Fixed, Uniform, Normal, LogNormal, Empirical or Mixture; in YAML a plain
// value ("200ms", 64) is Fixed and a map names the kind:
//
//	{dist: uniform, min: 1s, max: 3s}
//	{dist: normal, mean: 300ms, stddev: 50ms}
//	{dist: lognormal, median: 300ms, p99: 1.5s}
//	{dist: empirical, values: [1s, 2s, 37s]}
//	{dist: empirical, values: [1s, 2s, 37s], interpolate: true}
//	{dist: empirical, values: [1s, 2s, 37s], interpolate: true, tail: {share: 0.1, threshold: 30s, shape: 0.3, scale: 5s, points: 8}}
//	{dist: mixture, parts: [{weight: 0.9, dist: fixed, value: 1s}, {weight: 0.1, value: 30s}]}
//
// Draws are never negative: a normal is truncated at zero. Counts are rounded
// to the nearest integer.
type Dist[T Quantity] struct {
	// Kind is "fixed", "uniform", "normal", "lognormal", "empirical" or
	// "mixture"; empty means unset.
	Kind string
	// Value is the fixed value.
	Value T
	// Min and Max bound a uniform draw.
	Min, Max T
	// Mean and Stddev define a normal.
	Mean, Stddev T
	// Median and P99 define a lognormal.
	Median, P99 T
	// Values are drawn uniformly by an empirical distribution.
	Values []T
	// Interpolate makes an empirical distribution continuous: a draw is
	// the linear-interpolation quantile (numpy's default, R type 7) of
	// Values at a uniform u in [0,1), so the q-quantile of many draws is
	// the q-quantile of Values as tailguard computes it from records (a
	// plain empirical draw's p99 of 75 values is their maximum). Values
	// need not be sorted.
	Interpolate bool
	// Tail, when set, replaces the top Tail.Share of an interpolated
	// empirical distribution with a generalised Pareto tail over
	// Tail.Threshold, so that draws go past the largest value (see Tail).
	// Only an empirical distribution with Interpolate takes one. Default
	// nil: no draw exceeds the largest value.
	Tail *Tail[T]
	// Parts are the weighted components of a mixture; weights sum to 1.
	Parts []Part[T]
}

// Tail is a generalised Pareto (GPD) tail spliced onto an interpolated
// empirical distribution (peaks over threshold): a draw at uniform u below
// 1-Share is the empirical quantile at u, as without a tail; a draw at u
// of 1-Share or more is Threshold plus the GPD quantile at
// p = (u-(1-Share))/Share:
//
//	Scale/Shape × ((1-p)^(-Shape) - 1)    (Shape != 0)
//	-Scale × ln(1-p)                       (Shape == 0)
//
// So P(draw > Threshold + y) = Share × (1 + Shape·y/Scale)^(-1/Shape) for
// y >= 0. Threshold should be the values' (1-Share)-quantile, so the two
// parts join; the fit package sets it so (WithTail). In YAML:
// tail: {share: 0.1, threshold: 1.2s, shape: 0.3, scale: 400ms, points: 20}.
type Tail[T Quantity] struct {
	// Share is the fraction of draws from the tail, in (0, 1): the share
	// of the sample above Threshold.
	Share float64
	// Threshold is where the tail starts (not negative).
	Threshold T
	// Shape is the GPD shape ξ, in (-1, 1): above 0 a heavy (Pareto-like)
	// tail, 0 exponential, below 0 bounded at Threshold + Scale/-Shape.
	Shape float64
	// Scale is the GPD scale σ, above 0.
	Scale T
	// Points is how many sample values the tail was fitted from (at least
	// 1): it says how much to trust it; draws do not use it.
	Points int
}

// quantile is the tail's GPD quantile at p in [0,1), over Threshold.
func (t *Tail[T]) quantile(p float64) float64 {
	var y float64
	if t.Shape == 0 {
		y = -float64(t.Scale) * math.Log1p(-p)
	} else {
		y = float64(t.Scale) / t.Shape * math.Expm1(-t.Shape*math.Log1p(-p))
	}
	return float64(t.Threshold) + y
}

// Exceeds is the probability that a draw of a distribution with this tail
// is above x: Share × the GPD's survival at x - Threshold; for x below
// Threshold it returns NaN (the body is empirical, not the tail's).
func (t Tail[T]) Exceeds(x T) float64 {
	y := float64(x) - float64(t.Threshold)
	if y < 0 {
		return math.NaN()
	}
	if t.Shape == 0 {
		return t.Share * math.Exp(-y/float64(t.Scale))
	}
	z := 1 + t.Shape*y/float64(t.Scale)
	if z <= 0 {
		return 0
	}
	return t.Share * math.Pow(z, -1/t.Shape)
}

// validate checks a tail's parameters; pre prefixes the message.
func (t *Tail[T]) validate(pre string) error {
	switch {
	case !(t.Share > 0 && t.Share < 1):
		return fmt.Errorf("%stail.share %v is outside (0, 1)", pre, t.Share)
	case t.Threshold < 0:
		return fmt.Errorf("%stail.threshold is negative (%v)", pre, t.Threshold)
	case !(t.Shape > -1 && t.Shape < 1):
		return fmt.Errorf("%stail.shape %v is outside (-1, 1)", pre, t.Shape)
	case t.Scale <= 0:
		return fmt.Errorf("%stail.scale must be positive (have %v)", pre, t.Scale)
	case t.Points < 1:
		return fmt.Errorf("%stail.points %d is below 1 (the sample values the tail was fitted from)", pre, t.Points)
	}
	return nil
}

// Part is one weighted component of a mixture.
type Part[T Quantity] struct {
	Weight float64
	Dist   Dist[T]
}

// Fixed returns the distribution that always draws v.
func Fixed[T Quantity](v T) Dist[T] { return Dist[T]{Kind: "fixed", Value: v} }

// Uniform returns the uniform distribution on [lo, hi].
func Uniform[T Quantity](lo, hi T) Dist[T] { return Dist[T]{Kind: "uniform", Min: lo, Max: hi} }

// Normal returns the normal distribution with that mean and standard
// deviation, truncated at zero.
func Normal[T Quantity](mean, stddev T) Dist[T] {
	return Dist[T]{Kind: "normal", Mean: mean, Stddev: stddev}
}

// LogNormal returns the lognormal distribution with that median and 99th
// percentile (p99 >= median).
func LogNormal[T Quantity](median, p99 T) Dist[T] {
	return Dist[T]{Kind: "lognormal", Median: median, P99: p99}
}

// Empirical returns the distribution that draws one of values uniformly.
func Empirical[T Quantity](values ...T) Dist[T] {
	return Dist[T]{Kind: "empirical", Values: slices.Clone(values)}
}

// Interpolated returns the continuous empirical distribution of values: a
// draw is their linear-interpolation quantile at a uniform u (see
// Dist.Interpolate). The values are kept sorted.
func Interpolated[T Quantity](values ...T) Dist[T] {
	v := slices.Clone(values)
	slices.Sort(v)
	return Dist[T]{Kind: "empirical", Values: v, Interpolate: true}
}

// Mixture returns the mixture of parts; their weights must sum to 1.
func Mixture[T Quantity](parts ...Part[T]) Dist[T] {
	return Dist[T]{Kind: "mixture", Parts: slices.Clone(parts)}
}

// Weighted is shorthand for a Part of a Mixture.
func Weighted[T Quantity](weight float64, d Dist[T]) Part[T] { return Part[T]{Weight: weight, Dist: d} }

// IsSet reports whether the distribution was given.
func (d Dist[T]) IsSet() bool { return d.Kind != "" }

// or returns d, or def when d is unset.
func (d Dist[T]) or(def Dist[T]) Dist[T] {
	if d.IsSet() {
		return d
	}
	return def
}

// validate checks the parameters; the error names the broken bound. field is
// the path used in the message.
func (d Dist[T]) validate(field string) error {
	pre := ""
	if field != "" {
		pre = field + ": "
	}
	neg := func(name string, v T) error {
		if v < 0 {
			return fmt.Errorf("%s%s is negative (%v)", pre, name, v)
		}
		return nil
	}
	if d.Interpolate && d.Kind != "empirical" {
		return fmt.Errorf("%sinterpolate is only allowed in an empirical distribution (have %q)", pre, d.Kind)
	}
	if d.Tail != nil {
		if d.Kind != "empirical" || !d.Interpolate {
			return fmt.Errorf("%stail is only allowed in an empirical distribution with interpolate: true (have %q)", pre, d.Kind)
		}
		if err := d.Tail.validate(pre); err != nil {
			return err
		}
	}
	switch d.Kind {
	case "":
		return nil
	case "fixed":
		return neg("value", d.Value)
	case "uniform":
		if err := neg("min", d.Min); err != nil {
			return err
		}
		if d.Max < d.Min {
			return fmt.Errorf("%suniform max %v is below min %v", pre, d.Max, d.Min)
		}
	case "normal":
		if err := neg("mean", d.Mean); err != nil {
			return err
		}
		return neg("stddev", d.Stddev)
	case "lognormal":
		if d.Median <= 0 {
			return fmt.Errorf("%slognormal median must be positive (have %v)", pre, d.Median)
		}
		if d.P99 < d.Median {
			return fmt.Errorf("%slognormal p99 %v is below the median %v", pre, d.P99, d.Median)
		}
	case "empirical":
		if len(d.Values) == 0 {
			return fmt.Errorf("%sempirical distribution has no values", pre)
		}
		for i, v := range d.Values {
			if err := neg(fmt.Sprintf("values[%d]", i), v); err != nil {
				return err
			}
		}
	case "mixture":
		if len(d.Parts) == 0 {
			return fmt.Errorf("%smixture has no parts", pre)
		}
		sum := 0.0
		for i, p := range d.Parts {
			pf := fmt.Sprintf("parts[%d]", i)
			if field != "" {
				pf = field + "." + pf
			}
			if !(p.Weight > 0 && p.Weight <= 1) {
				return fmt.Errorf("%s: weight %v is outside (0,1]", pf, p.Weight)
			}
			if !p.Dist.IsSet() {
				return fmt.Errorf("%s: no distribution", pf)
			}
			if err := p.Dist.validate(pf); err != nil {
				return err
			}
			sum += p.Weight
		}
		if math.Abs(sum-1) > 1e-6 {
			return fmt.Errorf("%smixture weights sum to %v, not 1", pre, sum)
		}
	default:
		return fmt.Errorf("%sunknown distribution %q (want fixed, uniform, normal, lognormal, empirical or mixture)", pre, d.Kind)
	}
	return nil
}

// Sample draws one value with r. An unset distribution draws zero.
func (d Dist[T]) Sample(r *rand.Rand) T {
	return fromFloat[T](d.sample(r))
}

func (d Dist[T]) sample(r *rand.Rand) float64 {
	switch d.Kind {
	case "fixed":
		return float64(d.Value)
	case "uniform":
		return float64(d.Min) + r.Float64()*float64(d.Max-d.Min)
	case "normal":
		return math.Max(0, float64(d.Mean)+float64(d.Stddev)*r.NormFloat64())
	case "lognormal":
		sigma := math.Log(float64(d.P99)/float64(d.Median)) / z99
		return float64(d.Median) * math.Exp(sigma*r.NormFloat64())
	case "empirical":
		if d.Interpolate {
			return d.interpolated(r.Float64())
		}
		return float64(d.Values[r.IntN(len(d.Values))])
	case "mixture":
		u := r.Float64()
		for _, p := range d.Parts {
			if u < p.Weight {
				return p.Dist.sample(r)
			}
			u -= p.Weight
		}
		return d.Parts[len(d.Parts)-1].Dist.sample(r)
	}
	return 0
}

// quantile is the distribution's u-quantile, u in (0,1): the inverse
// CDF, for draws that must keep a rank (Profile.TTFTITLCorrelation). A
// mixture has no closed form and is refused by validation where quantile
// is used; it returns the first part's quantile.
func (d Dist[T]) quantile(u float64) float64 {
	switch d.Kind {
	case "fixed":
		return float64(d.Value)
	case "uniform":
		return float64(d.Min) + u*float64(d.Max-d.Min)
	case "normal":
		return math.Max(0, float64(d.Mean)+float64(d.Stddev)*normalQuantile(u))
	case "lognormal":
		sigma := math.Log(float64(d.P99)/float64(d.Median)) / z99
		return float64(d.Median) * math.Exp(sigma*normalQuantile(u))
	case "empirical":
		if d.Interpolate {
			return d.interpolated(u)
		}
		values := d.Values
		if !slices.IsSorted(values) {
			values = slices.Clone(values)
			slices.Sort(values)
		}
		return float64(values[min(int(u*float64(len(values))), len(values)-1)])
	case "mixture":
		return d.Parts[0].Dist.quantile(u)
	}
	return 0
}

// interpolated is an interpolated empirical distribution's u-quantile,
// from its tail when it has one and u is in it.
func (d Dist[T]) interpolated(u float64) float64 {
	if t := d.Tail; t != nil && u >= 1-t.Share {
		return t.quantile(min((u-(1-t.Share))/t.Share, 1-1e-15))
	}
	return interpolatedQuantile(d.Values, u)
}

// normalQuantile is the standard normal's inverse CDF.
func normalQuantile(u float64) float64 { return math.Sqrt2 * math.Erfinv(2*u-1) }

// normalCDF is the standard normal's CDF.
func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// interpolatedQuantile is the linear-interpolation quantile (R type 7) of
// values at u in [0,1]. It sorts a copy only when values are not sorted.
func interpolatedQuantile[T Quantity](values []T, u float64) float64 {
	if !slices.IsSorted(values) {
		values = slices.Sorted(slices.Values(values))
	}
	return stats.Quantile(values, u)
}

func fromFloat[T Quantity](f float64) T {
	f = math.Round(f)
	if f >= math.MaxInt64 { // float64(MaxInt64) is 2^63, which T cannot hold
		var top int64 = math.MaxInt64
		return T(top)
	}
	return T(f)
}

// String renders the distribution in its YAML form.
func (d Dist[T]) String() string {
	switch d.Kind {
	case "":
		return "unset"
	case "fixed":
		return fmt.Sprint(d.Value)
	case "uniform":
		return fmt.Sprintf("uniform(%v, %v)", d.Min, d.Max)
	case "normal":
		return fmt.Sprintf("normal(mean %v, stddev %v)", d.Mean, d.Stddev)
	case "lognormal":
		return fmt.Sprintf("lognormal(median %v, p99 %v)", d.Median, d.P99)
	case "empirical":
		if d.Interpolate {
			if t := d.Tail; t != nil {
				return fmt.Sprintf("interpolated%v+gpd(share %g, threshold %v, shape %g, scale %v, points %d)", d.Values, t.Share, t.Threshold, t.Shape, t.Scale, t.Points)
			}
			return fmt.Sprintf("interpolated%v", d.Values)
		}
		return fmt.Sprintf("empirical%v", d.Values)
	case "mixture":
		parts := make([]string, len(d.Parts))
		for i, p := range d.Parts {
			parts[i] = fmt.Sprintf("%g×%v", p.Weight, p.Dist)
		}
		return "mixture(" + strings.Join(parts, ", ") + ")"
	}
	return d.Kind
}

// UnmarshalYAML decodes a plain value (fixed) or a map naming the kind.
// Unknown keys are errors.
func (d *Dist[T]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		v, err := parseQuantity[T](n)
		if err != nil {
			return err
		}
		*d = Fixed(v)
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return nodeErr(n, "want a value or a distribution map")
	}
	var out Dist[T]
	var weightSeen bool
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return nodeErr(k, fmt.Sprintf("key %q given twice", k.Value))
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "dist":
			out.Kind = v.Value
		case "value":
			out.Value, err = parseQuantity[T](v)
		case "min":
			out.Min, err = parseQuantity[T](v)
		case "max":
			out.Max, err = parseQuantity[T](v)
		case "mean":
			out.Mean, err = parseQuantity[T](v)
		case "stddev":
			out.Stddev, err = parseQuantity[T](v)
		case "median":
			out.Median, err = parseQuantity[T](v)
		case "p99":
			out.P99, err = parseQuantity[T](v)
		case "values":
			if v.Kind != yaml.SequenceNode {
				return nodeErr(v, "values: want a list")
			}
			for _, e := range v.Content {
				q, err := parseQuantity[T](e)
				if err != nil {
					return err
				}
				out.Values = append(out.Values, q)
			}
		case "parts":
			if v.Kind != yaml.SequenceNode {
				return nodeErr(v, "parts: want a list")
			}
			for _, e := range v.Content {
				var p Part[T]
				if err := p.UnmarshalYAML(e); err != nil {
					return err
				}
				out.Parts = append(out.Parts, p)
			}
		case "interpolate":
			if err := v.Decode(&out.Interpolate); err != nil || v.ShortTag() != "!!bool" {
				return nodeErr(v, fmt.Sprintf("interpolate: %q is not true or false", v.Value))
			}
		case "tail":
			out.Tail, err = parseTail[T](v)
		case "weight":
			weightSeen = true // handled by Part
		default:
			return nodeErr(k, fmt.Sprintf("unknown key %q in distribution", k.Value))
		}
		if err != nil {
			return err
		}
	}
	if weightSeen {
		return nodeErr(n, "weight is only allowed in a mixture's parts")
	}
	if out.Interpolate {
		slices.Sort(out.Values) // draws interpolate between neighbours
	}
	if out.Kind == "" {
		return nodeErr(n, "distribution map needs a dist key (fixed, uniform, normal, lognormal, empirical, mixture)")
	}
	if err := out.validate(""); err != nil {
		return nodeErr(n, err.Error())
	}
	*d = out
	return nil
}

// UnmarshalYAML decodes one part: a distribution map with a weight key. A
// part without a dist key but with a value is fixed.
func (p *Part[T]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return nodeErr(n, "mixture part: want a map with weight")
	}
	rest := &yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Column: n.Column}
	hasDist, hasValue := false, false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "weight":
			w, err := parseProbability(v, "weight") // a fraction or a percentage
			if err != nil {
				return err
			}
			p.Weight = w
			continue
		case "dist":
			hasDist = true
		case "value":
			hasValue = true
		}
		rest.Content = append(rest.Content, k, v)
	}
	if !hasDist && !hasValue {
		return nodeErr(n, "mixture part needs a dist or a value")
	}
	if !hasDist {
		rest.Content = append([]*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "dist", Line: n.Line},
			{Kind: yaml.ScalarNode, Value: "fixed", Line: n.Line},
		}, rest.Content...)
	}
	if err := p.Dist.UnmarshalYAML(rest); err != nil {
		return err
	}
	if !(p.Weight > 0 && p.Weight <= 1) {
		return nodeErr(n, fmt.Sprintf("mixture part weight %v is outside (0,1]", p.Weight))
	}
	return nil
}

// parseTail reads {share, threshold, shape, scale, points}, every key
// required, strictly.
func parseTail[T Quantity](n *yaml.Node) (*Tail[T], error) {
	if n.Kind != yaml.MappingNode {
		return nil, nodeErr(n, "tail: want a map {share, threshold, shape, scale, points}")
	}
	t := &Tail[T]{}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return nil, nodeErr(k, fmt.Sprintf("tail: key %q given twice", k.Value))
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "share":
			t.Share, err = parseProbability(v, "share")
		case "threshold":
			t.Threshold, err = parseQuantity[T](v)
		case "scale":
			t.Scale, err = parseQuantity[T](v)
		case "shape":
			if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!float" && v.ShortTag() != "!!int") || v.Decode(&t.Shape) != nil {
				return nil, nodeErr(v, fmt.Sprintf("tail.shape: %q is not a number", v.Value))
			}
		case "points":
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&t.Points) != nil {
				return nil, nodeErr(v, fmt.Sprintf("tail.points: %q is not a whole number", v.Value))
			}
		default:
			return nil, nodeErr(k, fmt.Sprintf("unknown key %q in tail (want share, threshold, shape, scale, points)", k.Value))
		}
		if err != nil {
			return nil, err
		}
	}
	for _, k := range []string{"share", "threshold", "shape", "scale", "points"} {
		if !seen[k] {
			return nil, nodeErr(n, fmt.Sprintf("tail: %s is missing (want share, threshold, shape, scale, points)", k))
		}
	}
	return t, nil
}

// parseQuantity reads a duration ("250ms") or a count (64) from a scalar.
func parseQuantity[T Quantity](n *yaml.Node) (T, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, nodeErr(n, "want a single value")
	}
	var zero T
	switch any(zero).(type) {
	case time.Duration:
		d, err := time.ParseDuration(n.Value)
		if err != nil {
			if n.Value == "0" {
				return 0, nil
			}
			return 0, nodeErr(n, fmt.Sprintf("%q is not a duration (write it like 250ms or 1.5s)", n.Value))
		}
		if d < 0 {
			return 0, nodeErr(n, fmt.Sprintf("negative duration %s", n.Value))
		}
		return T(d), nil
	default:
		v, err := strconv.Atoi(n.Value)
		if err != nil {
			return 0, nodeErr(n, fmt.Sprintf("%q is not a whole number", n.Value))
		}
		if v < 0 {
			return 0, nodeErr(n, fmt.Sprintf("negative count %d", v))
		}
		return T(v), nil
	}
}

// lineError is a decoding error at a line (and column) of the YAML input.
type lineError struct {
	line, col int
	msg       string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func nodeErr(n *yaml.Node, msg string) error {
	return &lineError{line: n.Line, col: n.Column, msg: msg}
}
