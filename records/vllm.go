package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// VLLM is the JSON that vllm bench serve writes with --save-result
// --save-detailed (per-request arrays); with --append-result, one JSON
// document a run.
const VLLM = "vllm"

var vllmFormat = Format{
	Name:    VLLM,
	Tool:    "vLLM bench serve",
	Metrics: []string{"ttft", "itl", "max_gap", "total", "tokens"},
	Keys:    "ttfts or mean_ttft_ms",
	// The summary keys alone (mean_ttft_ms) are a file saved without
	// --save-detailed: detected, so that Decode can say so.
	Detect: func(s Sniff) bool {
		return !s.Array && (s.Has("ttfts") || s.Has("itls") || s.Has("mean_ttft_ms") && (s.Has("backend") || s.Has("request_throughput")))
	},
	Decode: decodeVLLM,
	Timed: "TTFT (ttfts: first token of any kind, reasoning included), inter-token gaps (itls), total (vLLM's own per-request latency where the file has it, " +
		"else TTFT + the gaps, the end of the last token); output tokens from output_lens; not measured: first answer apart from reasoning, connection setup, TTFB, send times",
	Warmup: "vLLM leaves its warm-up requests out of the saved arrays: none marked",
}

type vllmResult struct {
	ModelID        string           `json:"model_id"`
	MaxConcurrency *int             `json:"max_concurrency"`
	MeanTTFTms     *float64         `json:"mean_ttft_ms"`
	InputLens      []int            `json:"input_lens"`
	OutputLens     []int            `json:"output_lens"`
	TTFTs          []float64        `json:"ttfts"`
	ITLs           [][]float64      `json:"itls"`
	Latencies      []float64        `json:"latencies"` // each request's end-to-end latency (seconds), where written
	E2ELs          []float64        `json:"e2els"`
	Errors         []string         `json:"errors"`
	Version        *json.RawMessage `json:"vllm_version"`
}

func decodeVLLM(r io.Reader, s *Sink) error {
	docs, truncated, err := readDocs(r)
	if err != nil {
		return err
	}
	if len(docs) > 1 && !s.split {
		return fmt.Errorf("the file holds %d runs (vllm bench serve --append-result): one result would mix them; "+
			"read it level by level (ImportLevels, tailguard judge) or keep one run a file", len(docs))
	}
	if len(docs) > 1 {
		seen := map[int]int{} // max_concurrency -> run
		for i, d := range docs {
			m, _ := d.(map[string]any)
			level := -1
			if n, ok := m["max_concurrency"].(json.Number); ok {
				if v, err := n.Int64(); err == nil {
					level = int(v)
				}
			}
			if j, dup := seen[level]; dup && !(truncated && i == len(docs)-1) {
				what := fmt.Sprintf("max_concurrency %d", level)
				if level < 0 {
					what = "no max_concurrency"
				}
				return fmt.Errorf("the file holds %d runs (vllm bench serve --append-result) and runs %d and %d both have %s: "+
					"runs are judged one per load level, so two runs at one level would be judged as one sample; keep one run a file", len(docs), j+1, i+1, what)
			}
			seen[level] = i
		}
		s.Note(fmt.Sprintf("%d runs in the file (--append-result), each at its own max_concurrency: judged per run, as load levels", len(docs)))
	}
	for i, d := range docs {
		run := ""
		if len(docs) > 1 {
			run = fmt.Sprintf("run %d: ", i+1)
		}
		last := i == len(docs)-1
		if err := vllmRun(d, truncated && last, s, i, len(docs) > 1); err != nil {
			return fmt.Errorf("%s%w", run, err)
		}
	}
	return nil
}

func vllmRun(tree any, truncated bool, s *Sink, runIndex int, multi bool) error {
	m, ok := tree.(map[string]any)
	if !ok {
		return errors.New("want a JSON object (vllm bench serve --save-result)")
	}
	for _, k := range []string{"ttfts", "itls", "errors", "output_lens"} {
		if !has(m, k) {
			if truncated && (k == "errors" || k == "output_lens") {
				continue // cut before it: a request with no token still counts as failed
			}
			if truncated {
				if s.Records() == 0 {
					return fmt.Errorf("the file is cut short before %q: no request can be read", k)
				}
				return fmt.Errorf("the file is cut short before %q: cannot tell which requests failed", k)
			}
			return fmt.Errorf("no per-request %q: this is vllm bench serve's summary only; rerun with --save-result --save-detailed, which writes each request's ttfts, itls, errors and output_lens", k)
		}
	}
	var v vllmResult
	if err := decodeTree(tree, &v); err != nil {
		return err
	}
	if v.Version != nil {
		var str string
		if json.Unmarshal(*v.Version, &str) == nil {
			s.Version(str)
		}
	}
	s.Model(v.ModelID)
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
	lats, latKey := v.Latencies, "latencies"
	if lats == nil {
		lats, latKey = v.E2ELs, "e2els"
	}
	n := min(len(v.TTFTs), len(v.ITLs), len(v.Errors), len(v.OutputLens))
	if !truncated && (len(v.TTFTs) != n || len(v.ITLs) != n || len(v.Errors) != n || len(v.OutputLens) != n) {
		return fmt.Errorf("per-request arrays differ in length (ttfts %d, itls %d, errors %d, output_lens %d)", len(v.TTFTs), len(v.ITLs), len(v.Errors), len(v.OutputLens))
	}
	if lats != nil && !truncated && len(lats) != n {
		return fmt.Errorf("%s has %d values for %d requests", latKey, len(lats), n)
	}
	if truncated {
		if n == 0 {
			return errors.New("the file is cut short before any request is complete in every array")
		}
		s.Partial(fmt.Sprintf("the file is cut short: %d request(s) complete in every array", n))
	}
	level := 0
	if v.MaxConcurrency != nil {
		level = *v.MaxConcurrency
		s.Level(level)
	}
	prefix := "vllm-"
	if multi {
		prefix = fmt.Sprintf("vllm-r%d-", runIndex+1)
	}
	var sum float64
	ok2 := 0
	for i := range n {
		where := fmt.Sprintf("request %d (ttfts[%d])", i, i)
		rec := notObserved(fmt.Sprintf("%s%05d", prefix, i))
		rec.Concurrency = level
		if i < len(v.InputLens) {
			rec.PromptTokens = v.InputLens[i]
		}
		ttft, good := seconds(v.TTFTs[i], maxPlausible)
		if !good {
			return fmt.Errorf("ttfts[%d] = %g: vLLM writes seconds; this is not a plausible time in seconds (milliseconds?)", i, v.TTFTs[i])
		}
		if e := v.Errors[i]; e != "" || (ttft == 0 && v.OutputLens[i] == 0) {
			rec.Total = 0
			if e == "" {
				rec.Err, rec.Detail = latencytest.ClassCallError, "vLLM recorded neither a token nor an error text"
			} else {
				classify(&rec, 0, e)
				rec.Detail = firstLine(e)
			}
			if cutErrors {
				rec.Detail = "no token; the file was cut before vLLM's errors array"
			}
			if err := s.Add(&rec, where); err != nil {
				return err
			}
			continue
		}
		var gapSum, longest time.Duration
		for j, g := range v.ITLs[i] {
			d, good := seconds(g, maxPlausible)
			if !good {
				return fmt.Errorf("itls[%d][%d] = %g: vLLM writes seconds; this is not a plausible time in seconds", i, j, g)
			}
			rec.Gaps.Add(d)
			gapSum += d
			longest = max(longest, d)
		}
		rec.TTFT, rec.TokenEvents, rec.MaxGap = ttft, 1+len(v.ITLs[i]), longest
		rec.LastToken, rec.Total = ttft+gapSum, ttft+gapSum
		if i < len(lats) {
			total, good := seconds(lats[i], maxPlausible)
			if !good {
				return fmt.Errorf("%s[%d] = %g: vLLM writes seconds; this is not a plausible time in seconds", latKey, i, lats[i])
			}
			rec.Total = total
			// vLLM's latency and TTFT + gaps are the same float instants
			// subtracted differently: equal within each value's rounding
			// to the nanosecond, one a value.
			if over := rec.LastToken - total; over > 0 && over <= time.Duration(rec.TokenEvents+1) {
				rec.LastToken = total
			}
		}
		rec.CompletionTokens, rec.UsageReported = v.OutputLens[i], true
		sum += v.TTFTs[i]
		ok2++
		if err := s.Add(&rec, where); err != nil {
			return err
		}
	}
	// The summary's mean TTFT (milliseconds) must agree with the
	// per-request seconds: a file whose arrays are in another unit does not.
	if v.MeanTTFTms != nil && ok2 > 0 && !truncated {
		mean := sum / float64(ok2) * 1000
		if math.Abs(mean-*v.MeanTTFTms) > 0.01*math.Max(*v.MeanTTFTms, 1e-3)+1e-6 {
			return fmt.Errorf("ttfts disagree with mean_ttft_ms: their mean is %.4g s (%.4g ms), mean_ttft_ms is %.4g: the arrays are not in seconds", mean/1000, mean, *v.MeanTTFTms)
		}
	}
	return nil
}
