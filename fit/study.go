package fit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// Study is the serverless tail-latency study's raw data for one model
// (the results_<model>.json and bounded_<model>.jsonl files of the
// study's data directory), as latencytest records.
type Study struct {
	// Model is the model ID the file names.
	Model string
	// Sweep holds the baseline cells by concurrency (1, 5, 20); a bounded
	// .jsonl file is one sequential cell at concurrency 1.
	Sweep map[int][]latencytest.Record
	// Chains holds every chain call, chain by chain, with trace IDs
	// "chainNN-callMM", Chain and Call set; nil when the file has none.
	Chains []latencytest.Record
}

// LoadStudy reads one file of the study. Each request becomes a Record:
// TTFT and FirstAnswer are both the study's ttft_ms (its time to the first
// *content* token; reasoning before it is not timed, so for a reasoning
// model TTFT here is the first answer), Total and LastToken its total_ms,
// token counts its usage (UsageReported when completion_tokens is given),
// MaxTokens 64 and Status 200. A null ttft_ms is an empty answer (Err
// "empty_answer", TTFT NotObserved): the study's 64-token budget went to
// reasoning. Trace IDs are "cC-NNNN" in the sweep and "chainNN-callMM" in
// chains, as latencytest's runners write them.
func LoadStudy(path string) (*Study, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	type call struct {
		TTFT             *float64 `json:"ttft_ms"`
		Total            *float64 `json:"total_ms"`
		PromptTokens     *int     `json:"prompt_tokens"`
		CompletionTokens *int     `json:"completion_tokens"`
		Content          *string  `json:"content"`
		Error            *string  `json:"error"`
		I                *int     `json:"i"`
	}
	convert := func(c call, id string, conc int) latencytest.Record {
		ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
		r := latencytest.Record{ID: id, Concurrency: conc, MaxTokens: 64, Status: 200,
			TTFB: latencytest.NotObserved, TTFT: latencytest.NotObserved, FirstAnswer: latencytest.NotObserved}
		if c.Total != nil {
			r.Total = ms(*c.Total)
			r.LastToken = r.Total
		}
		if c.PromptTokens != nil {
			r.PromptTokens = *c.PromptTokens
		}
		if c.CompletionTokens != nil {
			r.CompletionTokens, r.UsageReported = *c.CompletionTokens, true
			r.TokenEvents = r.CompletionTokens
		}
		if c.Content != nil {
			r.Content = *c.Content
		}
		switch {
		case c.Error != nil:
			r.Err, r.Detail = latencytest.ClassCallError, *c.Error
		case c.TTFT == nil:
			r.Err, r.Detail = latencytest.ClassEmptyAnswer, "no content token (study: the budget went to reasoning)"
			r.FinishReason = "length"
		default:
			r.TTFT = ms(*c.TTFT)
			r.FirstAnswer = r.TTFT
		}
		return r
	}
	st := &Study{Sweep: map[int][]latencytest.Record{}}
	if strings.HasSuffix(path, ".jsonl") {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for line := 1; sc.Scan(); line++ {
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			var c call
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				return nil, fmt.Errorf("fit: %s line %d: %w", path, line, err)
			}
			i := len(st.Sweep[1])
			if c.I != nil {
				i = *c.I
			}
			st.Sweep[1] = append(st.Sweep[1], convert(c, fmt.Sprintf("c1-%04d", i), 1))
		}
		name := strings.TrimSuffix(strings.TrimPrefix(path[strings.LastIndex(path, "/")+1:], "bounded_"), ".jsonl")
		st.Model = name
		return st, sc.Err()
	}
	var raw struct {
		Model string `json:"model"`
		Sweep map[string]struct {
			Records []call `json:"records"`
		} `json:"baseline_sweep"`
		Chained struct {
			Chains []struct {
				Index int    `json:"chain_index"`
				Calls []call `json:"calls"`
			} `json:"chains"`
		} `json:"chained_session"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("fit: %s: %w", path, err)
	}
	st.Model = raw.Model
	for cell, v := range raw.Sweep {
		var conc int
		if _, err := fmt.Sscanf(cell, "concurrency_%d", &conc); err != nil {
			return nil, fmt.Errorf("fit: %s: unknown cell %q", path, cell)
		}
		for i, c := range v.Records {
			st.Sweep[conc] = append(st.Sweep[conc], convert(c, fmt.Sprintf("c%d-%04d", conc, i), conc))
		}
	}
	for _, ch := range raw.Chained.Chains {
		for k, c := range ch.Calls {
			r := convert(c, fmt.Sprintf("chain%02d-call%02d", ch.Index, k), 1)
			r.Chain, r.Call = ch.Index, k
			st.Chains = append(st.Chains, r)
		}
	}
	return st, nil
}
