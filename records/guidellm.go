package records

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// GuideLLM is GuideLLM's benchmarks report (benchmarks.json, report
// schema version 1).
const GuideLLM = "guidellm"

var guidellmFormat = Format{
	Name:    GuideLLM,
	Tool:    "GuideLLM",
	Metrics: []string{"ttft", "total", "tokens"},
	Keys:    "benchmarks",
	Detect:  func(s Sniff) bool { return !s.Array && s.Has("benchmarks") },
	Decode:  decodeGuideLLM,
	Timed: "TTFT (first_token_iteration - request_start), total (request_end - request_start), last token; " +
		"tokens from input_metrics/output_metrics, the prompt's characters from input_metrics.text_characters; not measured: each inter-token gap (GuideLLM keeps only the first and last token times), first answer apart from reasoning, connection setup, TTFB",
	Warmup: "GuideLLM leaves its warm-up requests out of the report: none marked",
}

type guidellmRequest struct {
	RequestID string `json:"request_id"`
	Info      *struct {
		Status  string `json:"status"`
		Error   string `json:"error"`
		Timings *struct {
			RequestStart        *float64 `json:"request_start"`
			FirstTokenIteration *float64 `json:"first_token_iteration"`
			LastTokenIteration  *float64 `json:"last_token_iteration"`
			TokenIterations     int      `json:"token_iterations"`
			RequestEnd          *float64 `json:"request_end"`
		} `json:"timings"`
	} `json:"info"`
	InputMetrics *struct {
		TotalTokens    *int `json:"total_tokens"`
		TextCharacters *int `json:"text_characters"`
	} `json:"input_metrics"`
	OutputMetrics *struct {
		TotalTokens *int `json:"total_tokens"`
	} `json:"output_metrics"`
	TTFTms *float64 `json:"time_to_first_token_ms"`
}

type guidellmReport struct {
	Metadata *struct {
		Version         *int   `json:"version"`
		GuideLLMVersion string `json:"guidellm_version"`
	} `json:"metadata"`
	Benchmarks []struct {
		Config *struct {
			Strategy *struct {
				Type    string `json:"type_"`
				Streams *int   `json:"streams"`
			} `json:"strategy"`
		} `json:"config"`
		Requests *struct {
			Successful []guidellmRequest `json:"successful"`
			Errored    []guidellmRequest `json:"errored"`
			Incomplete []guidellmRequest `json:"incomplete"`
		} `json:"requests"`
	} `json:"benchmarks"`
}

func decodeGuideLLM(r io.Reader, s *Sink) error {
	docs, truncated, err := readDocs(r)
	if err != nil {
		return err
	}
	if len(docs) > 1 {
		return fmt.Errorf("the file holds %d JSON documents: want one GuideLLM report", len(docs))
	}
	var rep guidellmReport
	if err := decodeTree(docs[0], &rep); err != nil {
		return err
	}
	if rep.Metadata == nil || rep.Metadata.Version == nil {
		if truncated {
			return errors.New("the file is cut short before metadata.version: no request can be read")
		}
		return errors.New("no metadata.version: want a GuideLLM benchmarks report of schema version 1 (guidellm 0.4 or later; older reports are not read)")
	}
	if *rep.Metadata.Version != 1 {
		return fmt.Errorf("metadata.version %d: want report schema version 1", *rep.Metadata.Version)
	}
	if len(rep.Benchmarks) == 0 && !truncated {
		return errors.New("no benchmarks: want a GuideLLM report with at least one benchmark")
	}
	s.Version(rep.Metadata.GuideLLMVersion)
	s.Note("a report GuideLLM sampled (--sample-requests) holds only the sampled requests")
	for b, bm := range rep.Benchmarks {
		level := 0
		if bm.Config != nil && bm.Config.Strategy != nil && bm.Config.Strategy.Streams != nil && bm.Config.Strategy.Type == "concurrent" {
			level = *bm.Config.Strategy.Streams
			s.Level(level)
		}
		if bm.Requests == nil {
			if truncated {
				continue
			}
			return fmt.Errorf("benchmarks[%d]: no requests: want requests.successful, errored and incomplete", b)
		}
		groups := []struct {
			name string
			reqs []guidellmRequest
		}{{"successful", bm.Requests.Successful}, {"errored", bm.Requests.Errored}, {"incomplete", bm.Requests.Incomplete}}
		for _, g := range groups {
			for i, q := range g.reqs {
				where := fmt.Sprintf("benchmarks[%d].requests.%s[%d]", b, g.name, i)
				rec, err := guidellmRecord(q, g.name, level)
				if err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
				if rec.ID == "" {
					rec.ID = fmt.Sprintf("guidellm-%d-%s-%05d", b, g.name, i)
				}
				if err := s.Add(&rec, where); err != nil {
					return err
				}
			}
		}
	}
	if truncated {
		if s.Records() == 0 {
			return errors.New("the file is cut short before its first request: 0 requests read (GuideLLM writes the requests after each benchmark's metrics)")
		}
		s.Partial(fmt.Sprintf("the file is cut short: %d request(s) read before the cut", s.Records()))
	}
	return nil
}

func guidellmRecord(q guidellmRequest, group string, level int) (latencytest.Record, error) {
	rec := notObserved(q.RequestID)
	rec.Concurrency = level
	if q.Info == nil || q.Info.Timings == nil {
		return rec, errors.New("no info.timings: want a GuideLLM report of schema version 1")
	}
	t := q.Info.Timings
	if q.InputMetrics != nil && q.InputMetrics.TotalTokens != nil {
		rec.PromptTokens = *q.InputMetrics.TotalTokens
	}
	if q.InputMetrics != nil && q.InputMetrics.TextCharacters != nil {
		if *q.InputMetrics.TextCharacters < 0 {
			return rec, fmt.Errorf("input_metrics.text_characters = %d: want a count, 0 or more", *q.InputMetrics.TextCharacters)
		}
		rec.PromptChars = *q.InputMetrics.TextCharacters
	}
	if q.OutputMetrics != nil && q.OutputMetrics.TotalTokens != nil {
		rec.CompletionTokens, rec.UsageReported = *q.OutputMetrics.TotalTokens, true
	}
	if t.RequestStart != nil {
		if *t.RequestStart < 1e8 || *t.RequestStart > 1e10 {
			return rec, fmt.Errorf("info.timings.request_start = %g: want Unix seconds (GuideLLM writes seconds; this is another unit)", *t.RequestStart)
		}
		sec, frac := math.Modf(*t.RequestStart)
		rec.Start = time.Unix(int64(sec), int64(math.Round(frac*1e9)))
	}
	since := func(field string, at *float64) (time.Duration, bool, error) {
		if at == nil || t.RequestStart == nil {
			return 0, false, nil
		}
		// Unix seconds as float64 hold about a microsecond: round there.
		d, ok := seconds(math.Round((*at-*t.RequestStart)*1e6)/1e6, maxPlausible)
		if !ok {
			return 0, false, fmt.Errorf("info.timings.%s = %g is not within a day after request_start %g (seconds)", field, *at, *t.RequestStart)
		}
		return d, true, nil
	}
	total, haveTotal, err := since("request_end", t.RequestEnd)
	if err != nil {
		return rec, err
	}
	rec.Total = total
	switch group {
	case "errored":
		text := q.Info.Error
		classify(&rec, 0, text)
		rec.Detail = firstLine(text)
		if rec.Detail == "" {
			rec.Detail = "GuideLLM: errored, no error text"
		}
		return rec, nil
	case "incomplete":
		rec.Err, rec.Detail = latencytest.ClassCanceled, "GuideLLM: incomplete (the benchmark ended before the request did)"
		return rec, nil
	}
	if !haveTotal {
		untimed(&rec, "GuideLLM", "no info.timings.request_start or request_end")
		return rec, nil
	}
	ttft, haveTTFT, err := since("first_token_iteration", t.FirstTokenIteration)
	if err != nil {
		return rec, err
	}
	if haveTTFT {
		rec.TTFT, rec.TokenEvents = ttft, max(t.TokenIterations, 1)
		if q.TTFTms != nil && math.Abs(*q.TTFTms-float64(ttft)/1e6) > 0.01 {
			return rec, fmt.Errorf("time_to_first_token_ms %g disagrees with the timings (%g ms): units?", *q.TTFTms, float64(ttft)/1e6)
		}
		last, haveLast, err := since("last_token_iteration", t.LastTokenIteration)
		if err != nil {
			return rec, err
		}
		if haveLast {
			rec.LastToken = last
		}
		if rec.TokenEvents == 1 {
			rec.MaxGap = 0
		}
	} else {
		rec.Err, rec.Detail = latencytest.ClassEmptyStream, "GuideLLM: successful, but no token was timed"
	}
	return rec, nil
}
