package fit

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
)

// WriteProfile writes p as a YAML profile that fakeprovider.ParseProfile
// reads back to the same profile, with a comment above each key saying
// where its value came from (rep.Sources) and, at the top, the report's
// statistics and KS tests. Latencies are written to the microsecond.
// Script entries are not written (Fit makes none).
func WriteProfile(w io.Writer, p fakeprovider.Profile, rep FitReport) error {
	var b strings.Builder
	b.WriteString("# Fitted by tailguard's fit package from " + strconv.Itoa(rep.Records) + " measured records.\n")
	b.WriteString("# Records against a replay of this profile (KS: two-sample Kolmogorov-Smirnov):\n")
	for _, line := range strings.Split(strings.TrimRight(rep.String(), "\n"), "\n")[1:] {
		b.WriteString("#   " + line + "\n")
	}
	if len(rep.Tests) > 0 {
		b.WriteString("# " + rep.Check(DefaultCheckAlpha).String() + "\n")
	}
	key := func(name, value string) {
		if src, ok := rep.Sources[name]; ok {
			b.WriteString("# " + name + ": " + src + "\n")
		}
		b.WriteString(name + ": " + value + "\n")
	}
	// A distribution's key is written only when it is set.
	durKey := func(name string, d fakeprovider.Dist[time.Duration]) {
		if d.IsSet() {
			key(name, durDist(d))
		}
	}
	intKey := func(name string, d fakeprovider.Dist[int]) {
		if d.IsSet() {
			key(name, intDist(d))
		}
	}
	key("model", strconv.Quote(p.Model))
	key("seed", strconv.FormatUint(p.Seed, 10))
	durKey("ttft", p.TTFT)
	durKey("prefill_per_1k_tokens", p.PrefillPer1kTokens)
	if c := p.Prefill; c.IsSet() {
		key("prefill", prefillMap(c))
	}
	durKey("itl", p.ITL)
	key("itl_per_request", strconv.FormatBool(p.ITLPerRequest))
	if p.TTFTITLCorrelation != 0 {
		key("ttft_itl_correlation", strconv.FormatFloat(p.TTFTITLCorrelation, 'g', -1, 64))
	}
	intKey("output_tokens", p.OutputTokens)
	intKey("reasoning_tokens", p.ReasoningTokens)
	intKey("tokens_per_chunk", p.TokensPerChunk)
	if p.SlotsPerReplica != 0 {
		key("slots_per_replica", strconv.Itoa(p.SlotsPerReplica))
	}
	if len(p.Load) > 0 {
		if src, ok := rep.Sources["load"]; ok {
			b.WriteString("# load: " + src + "\n")
		}
		b.WriteString("load:\n")
		for _, l := range p.Load {
			b.WriteString("  - in_flight: " + strconv.Itoa(l.InFlight) + "\n")
			if l.TTFT.IsSet() {
				b.WriteString("    ttft: " + durDist(l.TTFT) + "\n")
			}
			if l.ITL.IsSet() {
				b.WriteString("    itl: " + durDist(l.ITL) + "\n")
			}
			if l.TTFTITLCorrelation != nil {
				b.WriteString("    ttft_itl_correlation: " + strconv.FormatFloat(*l.TTFTITLCorrelation, 'g', -1, 64) + "\n")
			}
			if l.ReasoningTokens.IsSet() {
				b.WriteString("    reasoning_tokens: " + intDist(l.ReasoningTokens) + "\n")
			}
			if l.Stall != nil {
				b.WriteString("    stall: " + stallMap(*l.Stall) + "\n")
			}
			if l.Faults != nil {
				b.WriteString("    faults: {" + strings.Join(faultList(*l.Faults), ", ") + "}\n")
			}
		}
	}
	if p.Stall.Probability > 0 {
		key("stall", stallMap(p.Stall))
	} else if src, ok := rep.Sources["stall"]; ok {
		b.WriteString("# stall: " + src + "\n")
	}
	faults := faultList(p.Faults)
	for _, name := range faultNames {
		if src, ok := rep.Sources["faults."+name]; ok {
			b.WriteString("# faults." + name + ": " + src + "\n")
		}
	}
	if len(faults) > 0 {
		b.WriteString("faults: {" + strings.Join(faults, ", ") + "}\n")
	}
	if p.Conversation.ICC > 0 {
		if src, ok := rep.Sources["conversation.icc"]; ok {
			b.WriteString("# conversation.icc: " + src + "\n")
		}
		shape := ""
		if sh := p.Conversation.Shape; len(sh) > 0 {
			vals := make([]string, len(sh))
			for i, x := range sh {
				vals[i] = strconv.FormatFloat(x, 'g', -1, 64)
			}
			shape = ", shape: [" + strings.Join(vals, ", ") + "]"
		}
		b.WriteString("conversation: {icc: " + strconv.FormatFloat(p.Conversation.ICC, 'g', -1, 64) + shape + "}\n")
	}
	for _, n := range rep.Notes {
		b.WriteString("# Not fitted: " + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// faultNames are the fault keys in the order they are written.
var faultNames = []string{"http_529", "http_429", "http_500", "http_503", "empty", "disconnect", "malformed", "error_event"}

// faultList is the non-zero fault probabilities (and after_token) as
// YAML "key: value" pairs.
func faultList(f fakeprovider.Faults) []string {
	var out []string
	for i, v := range []float64{f.HTTP529, f.HTTP429, f.HTTP500, f.HTTP503, f.Empty, f.Disconnect, f.Malformed, f.ErrorEvent} {
		if v > 0 {
			out = append(out, faultNames[i]+": "+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	if f.AfterToken > 0 {
		out = append(out, "after_token: "+strconv.Itoa(f.AfterToken))
	}
	return out
}

func stallMap(s fakeprovider.Stall) string {
	d := ""
	if s.Duration.IsSet() {
		d = ", duration: " + durDist(s.Duration)
	}
	return fmt.Sprintf("{probability: %s, after_token: %d%s}", strconv.FormatFloat(s.Probability, 'g', -1, 64), s.AfterToken, d)
}

func dur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.Round(time.Microsecond).String()
}

func durDist(d fakeprovider.Dist[time.Duration]) string {
	switch d.Kind {
	case "fixed":
		return dur(d.Value)
	case "empirical":
		vals := make([]string, len(d.Values))
		for i, v := range d.Values {
			vals[i] = dur(v)
		}
		interp := ""
		if d.Interpolate {
			interp = ", interpolate: true"
		}
		tail := ""
		if t := d.Tail; t != nil {
			tail = fmt.Sprintf(", tail: {share: %s, threshold: %s, shape: %s, scale: %s, points: %d}",
				strconv.FormatFloat(t.Share, 'g', -1, 64), dur(t.Threshold), strconv.FormatFloat(t.Shape, 'g', -1, 64), dur(t.Scale), t.Points)
		}
		return "{dist: empirical" + interp + ", values: [" + strings.Join(vals, ", ") + "]" + tail + "}"
	case "lognormal":
		return "{dist: lognormal, median: " + dur(d.Median) + ", p99: " + dur(d.P99) + "}"
	case "uniform":
		return "{dist: uniform, min: " + dur(d.Min) + ", max: " + dur(d.Max) + "}"
	case "normal":
		return "{dist: normal, mean: " + dur(d.Mean) + ", stddev: " + dur(d.Stddev) + "}"
	case "mixture":
		parts := make([]string, len(d.Parts))
		for i, p := range d.Parts {
			parts[i] = "{weight: " + strconv.FormatFloat(p.Weight, 'g', -1, 64) + ", " + strings.TrimPrefix(durDistMap(p.Dist), "{")
		}
		return "{dist: mixture, parts: [" + strings.Join(parts, ", ") + "]}"
	}
	return "{}"
}

// durDistMap is durDist always as a map (a mixture part needs one).
func durDistMap(d fakeprovider.Dist[time.Duration]) string {
	if d.Kind == "fixed" {
		return "{dist: fixed, value: " + dur(d.Value) + "}"
	}
	return durDist(d)
}

func intDist(d fakeprovider.Dist[int]) string {
	switch d.Kind {
	case "fixed":
		return strconv.Itoa(d.Value)
	case "mixture":
		parts := make([]string, len(d.Parts))
		for i, p := range d.Parts {
			if p.Dist.Kind != "fixed" {
				return "{}"
			}
			parts[i] = "{weight: " + strconv.FormatFloat(p.Weight, 'g', -1, 64) + ", value: " + strconv.Itoa(p.Dist.Value) + "}"
		}
		return "{dist: mixture, parts: [" + strings.Join(parts, ", ") + "]}"
	case "empirical":
		vals := make([]string, len(d.Values))
		for i, v := range d.Values {
			vals[i] = strconv.Itoa(v)
		}
		return "{dist: empirical, values: [" + strings.Join(vals, ", ") + "]}"
	}
	return "{}"
}

// prefillMap writes a prefill curve as a YAML flow map, its durations to
// the nanosecond (a curve's coefficient can be small).
func prefillMap(c fakeprovider.Prefill) string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	parts := []string{"per_1k_tokens: " + c.Per1kTokens.String()}
	if c.Exponent != 0 {
		parts = append(parts, "exponent: "+f(c.Exponent))
	}
	if c.Per1kTokensSquared != 0 {
		parts = append(parts, "per_1k_tokens_squared: "+c.Per1kTokensSquared.String())
	}
	parts = append(parts, "from_tokens: "+strconv.Itoa(c.FromTokens))
	if c.TTFTScale != 0 {
		parts = append(parts, "ttft_scale: "+c.TTFTScale.String())
	}
	if c.CharsPerToken != 0 {
		parts = append(parts, "chars_per_token: "+f(c.CharsPerToken))
	}
	if c.TemplateTokens != 0 {
		parts = append(parts, "template_tokens: "+strconv.Itoa(c.TemplateTokens))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
