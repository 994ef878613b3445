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
	key := func(name, value string) {
		if src, ok := rep.Sources[name]; ok {
			b.WriteString("# " + name + ": " + src + "\n")
		}
		b.WriteString(name + ": " + value + "\n")
	}
	key("model", strconv.Quote(p.Model))
	key("seed", strconv.FormatUint(p.Seed, 10))
	if p.TTFT.IsSet() {
		key("ttft", durDist(p.TTFT))
	}
	if p.PrefillPer1kTokens.IsSet() {
		key("prefill_per_1k_tokens", durDist(p.PrefillPer1kTokens))
	}
	if p.ITL.IsSet() {
		key("itl", durDist(p.ITL))
	}
	key("itl_per_request", strconv.FormatBool(p.ITLPerRequest))
	if p.TTFTITLCorrelation != 0 {
		key("ttft_itl_correlation", strconv.FormatFloat(p.TTFTITLCorrelation, 'g', -1, 64))
	}
	if p.OutputTokens.IsSet() {
		key("output_tokens", intDist(p.OutputTokens))
	}
	if p.ReasoningTokens.IsSet() {
		key("reasoning_tokens", intDist(p.ReasoningTokens))
	}
	if p.TokensPerChunk.IsSet() {
		key("tokens_per_chunk", intDist(p.TokensPerChunk))
	}
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
		}
	}
	if p.Stall.Probability > 0 {
		key("stall", fmt.Sprintf("{probability: %s, after_token: %d, duration: %s}",
			strconv.FormatFloat(p.Stall.Probability, 'g', -1, 64), p.Stall.AfterToken, durDist(p.Stall.Duration)))
	}
	f := p.Faults
	var faults []string
	for _, x := range []struct {
		name string
		v    float64
	}{{"http_529", f.HTTP529}, {"http_429", f.HTTP429}, {"http_500", f.HTTP500}, {"http_503", f.HTTP503},
		{"empty", f.Empty}, {"disconnect", f.Disconnect}, {"malformed", f.Malformed}, {"error_event", f.ErrorEvent}} {
		if x.v > 0 {
			if src, ok := rep.Sources["faults."+x.name]; ok {
				b.WriteString("# faults." + x.name + ": " + src + "\n")
			}
			faults = append(faults, x.name+": "+strconv.FormatFloat(x.v, 'g', -1, 64))
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
		return "{dist: empirical" + interp + ", values: [" + strings.Join(vals, ", ") + "]}"
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
