package records

import (
	"errors"
	"fmt"
	"io"

	"github.com/tailguard/tailguard/latencytest"
)

// LLMPerf is llmperf's *_individual_responses.json.
const LLMPerf = "llmperf"

var llmperfFormat = Format{
	Name:    LLMPerf,
	Tool:    "llmperf",
	Metrics: []string{"ttft", "first_answer", "total", "tokens"},
	Keys:    "[ttft_s+end_to_end_latency_s]",
	Detect:  func(s Sniff) bool { return s.Array && s.Has("end_to_end_latency_s", "ttft_s") },
	Decode:  decodeLLMPerf,
	Timed: "TTFT = first answer (ttft_s: llmperf times the first non-empty content, so a reasoning model's reasoning is inside it), total (end_to_end_latency_s); " +
		"tokens from llmperf's own tokenizer; not measured: inter-token gaps (llmperf keeps only their mean), the last token, connection setup, TTFB, send times",
}

type llmperfResponse struct {
	ErrorCode    *float64 `json:"error_code"`
	ErrorMsg     string   `json:"error_msg"`
	TTFT         *float64 `json:"ttft_s"`
	E2E          *float64 `json:"end_to_end_latency_s"`
	OutputTokens *int     `json:"number_output_tokens"`
	InputTokens  *int     `json:"number_input_tokens"`
}

func decodeLLMPerf(r io.Reader, s *Sink) error {
	docs, truncated, err := readDocs(r)
	if err != nil {
		return err
	}
	arr, ok := docs[0].([]any)
	if !ok || len(docs) > 1 {
		return errors.New("want one JSON array of responses (llmperf's *_individual_responses.json; the *_summary.json holds no request)")
	}
	if len(arr) == 0 {
		if truncated {
			return errors.New("the file is cut short before its first response")
		}
		return errors.New("no response in the file")
	}
	if truncated {
		s.Partial(fmt.Sprintf("the file is cut short: %d response(s) read", len(arr)))
	}
	for i, el := range arr {
		where := fmt.Sprintf("[%d]", i)
		m, ok := el.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object", where)
		}
		for _, k := range []string{"end_to_end_latency_s", "ttft_s", "error_code"} {
			if !has(m, k) {
				return fmt.Errorf("%s: no %q: want an llmperf individual response", where, k)
			}
		}
		var q llmperfResponse
		if err := decodeTree(m, &q); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		rec := notObserved(fmt.Sprintf("llmperf-%05d", i))
		if q.InputTokens != nil {
			rec.PromptTokens = *q.InputTokens
		}
		if q.ErrorCode != nil {
			code := int(*q.ErrorCode)
			if code < 100 || code > 599 {
				code = 0
			}
			classify(&rec, code, q.ErrorMsg)
			rec.Detail = firstLine(q.ErrorMsg)
			if rec.Detail == "" {
				rec.Detail = fmt.Sprintf("llmperf error_code %g", *q.ErrorCode)
			}
			if err := s.Add(&rec, where); err != nil {
				return err
			}
			continue
		}
		if q.E2E == nil || *q.E2E <= 0 {
			untimed(&rec, "llmperf", "end_to_end_latency_s missing or 0")
			if err := s.Add(&rec, where); err != nil {
				return err
			}
			continue
		}
		total, good := seconds(*q.E2E, maxPlausible)
		if !good {
			return fmt.Errorf("%s: end_to_end_latency_s = %g: llmperf writes seconds; this is not a plausible time in seconds", where, *q.E2E)
		}
		rec.Total = total
		if q.TTFT != nil && *q.TTFT > 0 {
			ttft, good := seconds(*q.TTFT, *q.E2E)
			if !good {
				return fmt.Errorf("%s: ttft_s = %g is not a time in seconds within end_to_end_latency_s %g", where, *q.TTFT, *q.E2E)
			}
			rec.TTFT, rec.FirstAnswer, rec.TokenEvents = ttft, ttft, 1
		} else {
			rec.Err, rec.Detail = latencytest.ClassEmptyStream, "llmperf: no content token (ttft_s 0)"
		}
		if q.OutputTokens != nil {
			rec.CompletionTokens, rec.UsageReported = *q.OutputTokens, true
		}
		if err := s.Add(&rec, where); err != nil {
			return err
		}
	}
	return nil
}
