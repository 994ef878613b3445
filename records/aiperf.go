package records

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/cancel"
	"github.com/tailguard/tailguard/latencytest"
)

// AIPerf is AIPerf's profile_export.jsonl (one record a line).
const AIPerf = "aiperf"

var aiperfFormat = Format{
	Name:    AIPerf,
	Tool:    "AIPerf",
	Metrics: []string{"ttft", "first_answer", "itl", "max_gap", "total", "tokens"},
	Keys:    "metadata+metrics",
	Detect:  func(s Sniff) bool { return s.Lines && s.Has("metadata", "metrics") },
	Decode:  decodeAIPerf,
	Timed: "TTFT (time_to_first_token), first answer (time_to_first_output_token, else TTFT when no reasoning tokens were counted), " +
		"inter-token gaps (inter_chunk_latency), total (request_latency); token counts from AIPerf's own tokenizer unless it was told to use the server's; " +
		"not measured: connection setup, TTFB",
	Warmup: "AIPerf's warm-up, ramp-up and stabilizing phases (benchmark_phase warmup, ramp_up, stabilizing) are discarded: marked warm-up",
}

type aiperfValue struct {
	Value json.RawMessage `json:"value"`
	Unit  string          `json:"unit"`
}

type aiperfLine struct {
	Metadata *struct {
		XRequestID     string `json:"x_request_id"`
		RequestStartNS *int64 `json:"request_start_ns"`
		RequestEndNS   *int64 `json:"request_end_ns"`
		BenchmarkPhase string `json:"benchmark_phase"`
		WasCancelled   bool   `json:"was_cancelled"`
		CancelledAtNS  *int64 `json:"cancellation_time_ns"`
	} `json:"metadata"`
	Metrics map[string]aiperfValue `json:"metrics"`
	Error   *struct {
		Code    *int   `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// aiperfDuration reads a time metric in its declared unit.
func aiperfDuration(line int, m map[string]aiperfValue, key string) (time.Duration, bool, error) {
	v, ok := m[key]
	if !ok {
		return 0, false, nil
	}
	var f float64
	if err := json.Unmarshal(v.Value, &f); err != nil {
		return 0, false, fmt.Errorf("line %d: metrics.%s.value: want a number: %w", line, key, err)
	}
	d, err := inUnit(f, v.Unit)
	if err != nil {
		return 0, false, fmt.Errorf("line %d: metrics.%s: %w", line, key, err)
	}
	return d, true, nil
}

// inUnit converts a time in a declared unit; an unknown unit, or a value
// that is not a plausible time in it, is an error.
func inUnit(f float64, unit string) (time.Duration, error) {
	scale := map[string]float64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "sec": 1e9}[unit]
	if scale == 0 {
		return 0, fmt.Errorf("unit %q: want ns, us, ms, s or sec", unit)
	}
	if math.IsNaN(f) || f < 0 || f*scale > maxPlausible*1e9 {
		return 0, fmt.Errorf("value %g %s is not a plausible time", f, unit)
	}
	return time.Duration(math.Round(f * scale)), nil
}

func aiperfTokens(m map[string]aiperfValue, key string) (int, bool) {
	v, ok := m[key]
	if !ok || v.Unit != "tokens" {
		return 0, false
	}
	var f float64
	if json.Unmarshal(v.Value, &f) != nil || f < 0 || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

func decodeAIPerf(r io.Reader, s *Sink) error {
	err := readLines(r, s, func(b []byte) error {
		n := s.line
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(b, &keys); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if _, ok := keys["metadata"]; !ok {
			return fmt.Errorf("line %d: no metadata: want an AIPerf profile_export.jsonl record (metadata, metrics, error)", n)
		}
		var l aiperfLine
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if l.Metadata == nil {
			return fmt.Errorf("line %d: metadata is null: want an AIPerf profile_export.jsonl record", n)
		}
		md := l.Metadata
		if md.RequestStartNS == nil {
			return fmt.Errorf("line %d: no metadata.request_start_ns: want an AIPerf profile_export.jsonl record of AIPerf 0.2 or later", n)
		}
		rec := notObserved(md.XRequestID)
		rec.Start = time.Unix(0, *md.RequestStartNS)
		if rec.ID == "" {
			rec.ID = fmt.Sprintf("aiperf-%05d", s.Records())
		}
		switch strings.ToLower(md.BenchmarkPhase) {
		case "warmup", "ramp_up", "stabilizing": // not steady state: AIPerf excludes them from its own figures
			rec.Warmup = true
		case "profiling", "":
		default:
			return fmt.Errorf("line %d: metadata.benchmark_phase %q: want profiling, warmup, ramp_up or stabilizing", n, md.BenchmarkPhase)
		}
		if *md.RequestStartNS < 1e17 { // before 1973 in nanoseconds: not epoch nanoseconds
			return fmt.Errorf("line %d: metadata.request_start_ns %d is not Unix nanoseconds", n, *md.RequestStartNS)
		}
		m := l.Metrics
		total, haveTotal, err := aiperfDuration(n, m, "request_latency")
		if err != nil {
			return err
		}
		if !haveTotal && md.RequestEndNS != nil && *md.RequestEndNS >= *md.RequestStartNS {
			total, haveTotal = time.Duration(*md.RequestEndNS-*md.RequestStartNS), true
		}
		rec.Total = total
		if l.Error != nil {
			rec.Detail = firstLine(strings.TrimPrefix(l.Error.Type+": "+l.Error.Message, ": "))
			code := 0
			if l.Error.Code != nil {
				code = *l.Error.Code
			}
			switch {
			case md.WasCancelled:
				// AIPerf's own deliberate cancel (its request cancellation
				// rate): the class cancelled, no failure (latencytest.Cancel).
				rec.Err = cancel.Class
				if at := md.CancelledAtNS; at != nil && md.RequestStartNS != nil && *at >= *md.RequestStartNS {
					rec.CancelAt = time.Duration(*at - *md.RequestStartNS)
				}
			case code == 499:
				rec.Err = latencytest.ClassCanceled
			default:
				classify(&rec, code, l.Error.Type+" "+l.Error.Message)
			}
			return s.Add(&rec, "")
		}
		if !haveTotal {
			untimed(&rec, "AIPerf", "no metrics.request_latency, no metadata.request_end_ns")
			return s.Add(&rec, "")
		}
		ttft, haveTTFT, err := aiperfDuration(n, m, "time_to_first_token")
		if err != nil {
			return err
		}
		if haveTTFT {
			rec.TTFT, rec.TokenEvents = ttft, 1
			if icl, ok := m["inter_chunk_latency"]; ok {
				var fs []float64
				if err := json.Unmarshal(icl.Value, &fs); err != nil {
					return fmt.Errorf("line %d: metrics.inter_chunk_latency.value: want a list of numbers: %w", n, err)
				}
				var sum, longest time.Duration
				for _, f := range fs {
					g, err := inUnit(f, icl.Unit)
					if err != nil {
						return fmt.Errorf("line %d: metrics.inter_chunk_latency: %w", n, err)
					}
					rec.Gaps.Add(g)
					sum += g
					longest = max(longest, g)
				}
				rec.TokenEvents += len(fs)
				rec.LastToken, rec.MaxGap = ttft+sum, longest
			} else {
				rec.LastToken, rec.MaxGap = ttft, 0
			}
			reasoning, _ := aiperfTokens(m, "reasoning_token_count")
			rec.ReasoningTokens = reasoning
			fa, haveFA, err := aiperfDuration(n, m, "time_to_first_output_token")
			switch {
			case err != nil:
				return err
			case haveFA:
				rec.FirstAnswer = fa
			case reasoning == 0:
				rec.FirstAnswer = ttft
			}
		}
		rec.PromptTokens, _ = aiperfTokens(m, "input_sequence_length")
		out, ok := aiperfTokens(m, "output_token_count")
		if !ok {
			out, ok = aiperfTokens(m, "output_sequence_length")
		}
		rec.CompletionTokens, rec.UsageReported = out, ok
		return s.Add(&rec, "")
	})
	if err != nil {
		return err
	}
	if s.Records() == 0 {
		return fmt.Errorf("no record in the file")
	}
	return nil
}
