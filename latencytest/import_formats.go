package latencytest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// The importers, one a format. Each one's source (the tool's schema or
// code it was written from) is cited in testdata/import/README.md.

// ---- AIPerf: profile_export.jsonl ----

type aiperfValue struct {
	Value json.RawMessage `json:"value"`
	Unit  string          `json:"unit"`
}

type aiperfLine struct {
	Metadata *struct {
		XRequestID     string `json:"x_request_id"`
		SessionNum     *int   `json:"session_num"`
		RequestStartNS *int64 `json:"request_start_ns"`
		RequestEndNS   *int64 `json:"request_end_ns"`
		BenchmarkPhase string `json:"benchmark_phase"`
		WasCancelled   bool   `json:"was_cancelled"`
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

// inUnit converts a time in a declared unit; an unknown unit is an error.
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
	if json.Unmarshal(v.Value, &f) != nil || f < 0 {
		return 0, false
	}
	return int(f), true
}

func importAIPerf(r io.Reader) (*importer, error) {
	im := &importer{tool: "AIPerf",
		timed: "TTFT (time_to_first_token), first answer (time_to_first_output_token, else TTFT when no reasoning tokens were counted), " +
			"inter-token gaps (inter_chunk_latency), total (request_latency); token counts from AIPerf's own tokenizer unless it was told to use the server's; " +
			"not measured: connection setup, TTFB",
		warmup: "AIPerf's warm-up, ramp-up and stabilizing phases (benchmark_phase warmup, ramp_up, stabilizing) are discarded: marked warm-up"}
	cut, err := readLines(r, func(n int, b []byte) error {
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
		rec := Record{ID: md.XRequestID, Start: time.Unix(0, *md.RequestStartNS),
			TTFB: NotObserved, TTFT: NotObserved, FirstAnswer: NotObserved, LastToken: NotObserved, MaxGap: NotObserved}
		if rec.ID == "" {
			rec.ID = fmt.Sprintf("aiperf-%05d", len(im.recs))
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
			switch {
			case l.Error.Code != nil && *l.Error.Code == 499 || md.WasCancelled:
				rec.Err = ClassCanceled
			case l.Error.Code != nil:
				if c, ok := httpStatusClass(*l.Error.Code); ok {
					rec.Err, rec.Status = c, *l.Error.Code
				} else {
					rec.Err = textClass(l.Error.Type + " " + l.Error.Message)
				}
			default:
				rec.Err = textClass(l.Error.Type + " " + l.Error.Message)
			}
			im.recs = append(im.recs, rec)
			return nil
		}
		if !haveTotal {
			untimed(&rec, "AIPerf", "no metrics.request_latency, no metadata.request_end_ns")
			im.recs = append(im.recs, rec)
			return nil
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
				gaps := make([]time.Duration, len(fs))
				for i, f := range fs {
					if gaps[i], err = inUnit(f, icl.Unit); err != nil {
						return fmt.Errorf("line %d: metrics.inter_chunk_latency: %w", n, err)
					}
				}
				sum, longest := gapsOf(&rec, gaps)
				rec.TokenEvents += len(gaps)
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
		im.recs = append(im.recs, rec)
		return nil
	})
	if err := im.endLines(cut, err, len(im.recs), "record"); err != nil {
		return nil, err
	}
	return im, nil
}

// ---- vLLM: vllm bench serve --save-result --save-detailed ----

type vllmResult struct {
	Date           string           `json:"date"`
	Backend        string           `json:"backend"`
	ModelID        string           `json:"model_id"`
	MaxConcurrency *int             `json:"max_concurrency"`
	MeanTTFTms     *float64         `json:"mean_ttft_ms"`
	InputLens      []int            `json:"input_lens"`
	OutputLens     []int            `json:"output_lens"`
	TTFTs          []float64        `json:"ttfts"`
	ITLs           [][]float64      `json:"itls"`
	Errors         []string         `json:"errors"`
	Version        *json.RawMessage `json:"vllm_version"` // not written by every version
}

func importVLLM(r io.Reader) (*importer, error) {
	tree, truncated, err := readJSONTree(r)
	if err != nil {
		return nil, err
	}
	m, ok := tree.(map[string]any)
	if !ok {
		return nil, errors.New("want a JSON object (vllm bench serve --save-result)")
	}
	for _, k := range []string{"ttfts", "itls", "errors", "output_lens"} {
		if !has(m, k) {
			if truncated && (k == "errors" || k == "output_lens") {
				continue // cut before it: a request with no token still counts as failed
			}
			if truncated {
				return nil, fmt.Errorf("the file is cut short before %q: cannot tell which requests failed", k)
			}
			return nil, fmt.Errorf("no %q: want the JSON of vllm bench serve --save-result --save-detailed (without --save-detailed the per-request arrays are not written)", k)
		}
	}
	var v vllmResult
	if err := decodeTree(tree, &v); err != nil {
		return nil, err
	}
	im := &importer{tool: "vLLM bench serve",
		timed: "TTFT (ttfts: first token of any kind, reasoning included), inter-token gaps (itls), total = TTFT + the gaps (the end of the last token: vLLM does not save each request's latency); " +
			"output tokens from output_lens; not measured: first answer apart from reasoning, connection setup, TTFB, send times",
		warmup: "vLLM leaves its warm-up requests out of the saved arrays: none marked"}
	if v.Version != nil {
		var s string
		if json.Unmarshal(*v.Version, &s) == nil {
			im.version = s
		}
	}
	im.addModel(v.ModelID)
	cutErrors := truncated && !has(m, "errors")
	if cutErrors {
		v.Errors = make([]string, len(v.TTFTs))
	}
	if truncated && !has(m, "output_lens") {
		v.OutputLens = make([]int, len(v.TTFTs))
		for i := range min(len(v.TTFTs), len(v.ITLs)) {
			if v.TTFTs[i] > 0 {
				v.OutputLens[i] = len(v.ITLs[i]) + 1 // token events: the file was cut before output_lens
			}
		}
	}
	n := min(len(v.TTFTs), len(v.ITLs), len(v.Errors), len(v.OutputLens))
	if !truncated && (len(v.TTFTs) != n || len(v.ITLs) != n || len(v.Errors) != n || len(v.OutputLens) != n) {
		return nil, fmt.Errorf("per-request arrays differ in length (ttfts %d, itls %d, errors %d, output_lens %d)", len(v.TTFTs), len(v.ITLs), len(v.Errors), len(v.OutputLens))
	}
	if truncated {
		im.partial = append(im.partial, fmt.Sprintf("the file is cut short: %d request(s) complete in every array", n))
	}
	level := 0
	if v.MaxConcurrency != nil {
		level = *v.MaxConcurrency
		im.addLevel(level)
	}
	var sum float64
	ok2 := 0
	for i := range n {
		rec := Record{ID: fmt.Sprintf("vllm-%05d", i), Concurrency: level, TTFB: NotObserved, FirstAnswer: NotObserved,
			TTFT: NotObserved, LastToken: NotObserved, MaxGap: NotObserved}
		if i < len(v.InputLens) {
			rec.PromptTokens = v.InputLens[i]
		}
		ttft, good := seconds(v.TTFTs[i], maxPlausible)
		if !good {
			return nil, fmt.Errorf("ttfts[%d] = %g: vLLM writes seconds; this is not a plausible time in seconds (milliseconds?)", i, v.TTFTs[i])
		}
		if e := v.Errors[i]; e != "" || (ttft == 0 && v.OutputLens[i] == 0) {
			switch code := reasonStatus(e); {
			case code > 0:
				rec.Err, rec.Status = HTTPClass(code), code
			case e == "":
				rec.Err = ClassCallError
			default:
				rec.Err = textClass(e)
			}
			rec.Detail = firstLine(e)
			if e == "" {
				rec.Detail = "vLLM recorded neither a token nor an error text"
			}
			if cutErrors {
				rec.Detail = "no token; the file was cut before vLLM's errors array"
			}
			im.recs = append(im.recs, rec)
			continue
		}
		gaps := make([]time.Duration, len(v.ITLs[i]))
		for j, g := range v.ITLs[i] {
			if gaps[j], good = seconds(g, maxPlausible); !good {
				return nil, fmt.Errorf("itls[%d][%d] = %g: vLLM writes seconds; this is not a plausible time in seconds", i, j, g)
			}
		}
		rec.TTFT, rec.TokenEvents = ttft, 1+len(gaps)
		s, longest := gapsOf(&rec, gaps)
		rec.LastToken, rec.Total, rec.MaxGap = ttft+s, ttft+s, longest
		rec.CompletionTokens, rec.UsageReported = v.OutputLens[i], true
		sum += v.TTFTs[i]
		ok2++
		im.recs = append(im.recs, rec)
	}
	// The summary's mean TTFT (milliseconds) must agree with the
	// per-request seconds: a file whose arrays are in another unit does not.
	if v.MeanTTFTms != nil && ok2 > 0 && !truncated {
		mean := sum / float64(ok2) * 1000
		if math.Abs(mean-*v.MeanTTFTms) > 0.01*math.Max(*v.MeanTTFTms, 1e-3)+1e-6 {
			return nil, fmt.Errorf("ttfts disagree with mean_ttft_ms: their mean is %.4g s (%.4g ms), mean_ttft_ms is %.4g: the arrays are not in seconds", mean/1000, mean, *v.MeanTTFTms)
		}
	}
	return im, nil
}

// ---- GuideLLM: benchmarks report (schema version 1) ----

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
		TotalTokens *int `json:"total_tokens"`
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

func importGuideLLM(r io.Reader) (*importer, error) {
	tree, truncated, err := readJSONTree(r)
	if err != nil {
		return nil, err
	}
	var rep guidellmReport
	if err := decodeTree(tree, &rep); err != nil {
		return nil, err
	}
	if rep.Metadata == nil || rep.Metadata.Version == nil {
		return nil, errors.New("no metadata.version: want a GuideLLM benchmarks report of schema version 1 (guidellm 0.4 or later; older reports are not read)")
	}
	if *rep.Metadata.Version != 1 {
		return nil, fmt.Errorf("metadata.version %d: want report schema version 1", *rep.Metadata.Version)
	}
	if len(rep.Benchmarks) == 0 && !truncated {
		return nil, errors.New("no benchmarks: want a GuideLLM report with at least one benchmark")
	}
	im := &importer{tool: "GuideLLM", version: rep.Metadata.GuideLLMVersion,
		timed: "TTFT (first_token_iteration - request_start), total (request_end - request_start), last token; " +
			"tokens from input_metrics/output_metrics; not measured: each inter-token gap (GuideLLM keeps only the first and last token times), first answer apart from reasoning, connection setup, TTFB",
		warmup: "GuideLLM leaves its warm-up requests out of the report: none marked"}
	im.notes = append(im.notes, "a report GuideLLM sampled (--sample-requests) holds only the sampled requests")
	if truncated {
		im.partial = append(im.partial, "the file is cut short: the requests read before the cut")
	}
	for b, bm := range rep.Benchmarks {
		level := 0
		if bm.Config != nil && bm.Config.Strategy != nil && bm.Config.Strategy.Streams != nil && bm.Config.Strategy.Type == "concurrent" {
			level = *bm.Config.Strategy.Streams
			im.addLevel(level)
		}
		if bm.Requests == nil {
			if truncated {
				continue
			}
			return nil, fmt.Errorf("benchmarks[%d]: no requests: want requests.successful, errored and incomplete", b)
		}
		groups := []struct {
			name string
			reqs []guidellmRequest
		}{{"successful", bm.Requests.Successful}, {"errored", bm.Requests.Errored}, {"incomplete", bm.Requests.Incomplete}}
		for _, g := range groups {
			for i, q := range g.reqs {
				rec, err := guidellmRecord(q, g.name, level)
				if err != nil {
					return nil, fmt.Errorf("benchmarks[%d].requests.%s[%d]: %w", b, g.name, i, err)
				}
				if rec.ID == "" {
					rec.ID = fmt.Sprintf("guidellm-%d-%s-%05d", b, g.name, i)
				}
				im.recs = append(im.recs, rec)
			}
		}
	}
	return im, nil
}

func guidellmRecord(q guidellmRequest, group string, level int) (Record, error) {
	rec := Record{ID: q.RequestID, Concurrency: level, TTFB: NotObserved, TTFT: NotObserved, FirstAnswer: NotObserved,
		LastToken: NotObserved, MaxGap: NotObserved}
	if q.Info == nil || q.Info.Timings == nil {
		return rec, errors.New("no info.timings: want a GuideLLM report of schema version 1")
	}
	t := q.Info.Timings
	if q.InputMetrics != nil && q.InputMetrics.TotalTokens != nil {
		rec.PromptTokens = *q.InputMetrics.TotalTokens
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
		rec.Err, rec.Detail = guidellmClass(q.Info.Error), firstLine(q.Info.Error)
		if rec.Detail == "" {
			rec.Detail = "GuideLLM: errored, no error text"
		}
		return rec, nil
	case "incomplete":
		rec.Err, rec.Detail = ClassCanceled, "GuideLLM: incomplete (the benchmark ended before the request did)"
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
		rec.Err, rec.Detail = ClassEmptyStream, "GuideLLM: successful, but no token was timed"
	}
	return rec, nil
}

// guidellmClass classifies GuideLLM's error text, which names an HTTP
// status when there was one ("... status code 429 ...").
func guidellmClass(text string) string {
	l := strings.ToLower(text)
	for _, key := range []string{"status code ", "status ", "http "} {
		if i := strings.Index(l, key); i >= 0 {
			rest := l[i+len(key):]
			if len(rest) >= 3 {
				if code, err := strconv.Atoi(rest[:3]); err == nil {
					if c, ok := httpStatusClass(code); ok {
						return c
					}
				}
			}
		}
	}
	return textClass(text)
}

// ---- llmperf: *_individual_responses.json ----

type llmperfResponse struct {
	ErrorCode    *float64 `json:"error_code"`
	ErrorMsg     string   `json:"error_msg"`
	TTFT         *float64 `json:"ttft_s"`
	E2E          *float64 `json:"end_to_end_latency_s"`
	ITL          *float64 `json:"inter_token_latency_s"`
	OutputTokens *int     `json:"number_output_tokens"`
	InputTokens  *int     `json:"number_input_tokens"`
}

func importLLMPerf(r io.Reader) (*importer, error) {
	tree, truncated, err := readJSONTree(r)
	if err != nil {
		return nil, err
	}
	arr, ok := tree.([]any)
	if !ok {
		return nil, errors.New("want a JSON array of responses (llmperf's *_individual_responses.json; the *_summary.json holds no request)")
	}
	im := &importer{tool: "llmperf",
		timed: "TTFT = first answer (ttft_s: llmperf times the first non-empty content, so a reasoning model's reasoning is inside it), total (end_to_end_latency_s); " +
			"tokens from llmperf's own tokenizer; not measured: inter-token gaps (llmperf keeps only their mean), the last token, connection setup, TTFB, send times"}
	if truncated {
		im.partial = append(im.partial, fmt.Sprintf("the file is cut short: %d response(s) read", len(arr)))
	}
	for i, el := range arr {
		m, ok := el.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("[%d]: want an object", i)
		}
		for _, k := range []string{"end_to_end_latency_s", "ttft_s", "error_code"} {
			if !has(m, k) {
				return nil, fmt.Errorf("[%d]: no %q: want an llmperf individual response", i, k)
			}
		}
		var q llmperfResponse
		if err := decodeTree(m, &q); err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		rec := Record{ID: fmt.Sprintf("llmperf-%05d", i), TTFB: NotObserved, TTFT: NotObserved, FirstAnswer: NotObserved,
			LastToken: NotObserved, MaxGap: NotObserved}
		if q.InputTokens != nil {
			rec.PromptTokens = *q.InputTokens
		}
		if q.ErrorCode != nil {
			code := int(*q.ErrorCode)
			if c, ok := httpStatusClass(code); ok {
				rec.Err, rec.Status = c, code
			} else {
				rec.Err = textClass(q.ErrorMsg)
			}
			rec.Detail = firstLine(q.ErrorMsg)
			if rec.Detail == "" {
				rec.Detail = fmt.Sprintf("llmperf error_code %d", code)
			}
			im.recs = append(im.recs, rec)
			continue
		}
		if q.E2E == nil || *q.E2E <= 0 {
			untimed(&rec, "llmperf", "end_to_end_latency_s missing or 0")
			im.recs = append(im.recs, rec)
			continue
		}
		total, good := seconds(*q.E2E, maxPlausible)
		if !good {
			return nil, fmt.Errorf("[%d]: end_to_end_latency_s = %g: llmperf writes seconds; this is not a plausible time in seconds", i, *q.E2E)
		}
		rec.Total = total
		if q.TTFT != nil && *q.TTFT > 0 {
			ttft, good := seconds(*q.TTFT, *q.E2E)
			if !good {
				return nil, fmt.Errorf("[%d]: ttft_s = %g is not a time in seconds within end_to_end_latency_s %g", i, *q.TTFT, *q.E2E)
			}
			rec.TTFT, rec.FirstAnswer, rec.TokenEvents = ttft, ttft, 1
		} else {
			rec.Err, rec.Detail = ClassEmptyStream, "llmperf: no content token (ttft_s 0)"
		}
		if q.OutputTokens != nil {
			rec.CompletionTokens, rec.UsageReported = *q.OutputTokens, true
		}
		im.recs = append(im.recs, rec)
	}
	if len(arr) == 0 && !truncated {
		return nil, errors.New("no response in the file")
	}
	return im, nil
}

// ---- k6: k6 run --out json ----

// ---- vegeta: JSON results ----
