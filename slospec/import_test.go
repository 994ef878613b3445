package slospec_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/slospec"
)

// writeVLLM writes a vllm bench serve --save-detailed result of n
// requests at max_concurrency 8: TTFT 200ms, 15 gaps of 10ms (total
// 350ms), the last one failed with 429.
func writeVLLM(t *testing.T, path string, n int) {
	t.Helper()
	ttfts, itls, errs, outs, ins := []float64{}, [][]float64{}, []string{}, []int{}, []int{}
	for i := range n {
		gaps := make([]float64, 15)
		for j := range gaps {
			gaps[j] = 0.01
		}
		ttft, e, out := 0.2, "", 16
		if i == n-1 {
			ttft, gaps, e, out = 0, []float64{}, "Too Many Requests", 0
		}
		ttfts, itls, errs, outs, ins = append(ttfts, ttft), append(itls, gaps), append(errs, e), append(outs, out), append(ins, 100)
	}
	b, err := json.Marshal(map[string]any{"backend": "openai-chat", "model_id": "m", "max_concurrency": 8,
		"input_lens": ins, "output_lens": outs, "ttfts": ttfts, "itls": itls, "errors": errs, "mean_ttft_ms": 200.0})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A records target with a format judges another tool's records with the
// same objectives, through RunFile and through Judge (no testing.T).
func TestRecordsFormat(t *testing.T) {
	dir := t.TempDir()
	writeVLLM(t, filepath.Join(dir, "run.json"), 200)
	spec := writeSpec(t, dir, `
target: {records: "run.json", format: vllm}
objectives:
  ttft: {p50: 200ms, p95: 200ms}
  total: {p95: 350ms}
  error_rate: 1%
`)
	ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
	if !ok {
		t.Fatalf("the imported records should pass:\n%s", out)
	}
	s, err := slospec.LoadSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	reps, err := slospec.Judge(s, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || reps[0].Name != "c8" || !reps[0].Report.OK() {
		t.Fatalf("Judge: %d level(s); want c8 passing: %+v", len(reps), reps)
	}
	// 1ns under the exact figure fails; so does an error budget under 1 in 200.
	s.Objectives[2].Budget--
	reps, err = slospec.Judge(s, "")
	if err != nil || reps[0].Report.OK() {
		t.Errorf("total p95 349.999999ms should fail: %v %v", err, reps[0].Report.String())
	}
}

// Judge refuses an objective on a clock the format does not measure, and
// the spec parser refuses a format it does not know or a format on a
// target that is not records, with the line.
func TestRecordsFormatRefused(t *testing.T) {
	dir := t.TempDir()
	writeVLLM(t, filepath.Join(dir, "run.json"), 200)
	s, err := slospec.ParseSpec([]byte("target: {records: \"run.json\", format: k6}\nobjectives:\n  ttft: {p50: 200ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := slospec.Judge(s, "", filepath.Join(dir, "run.json")); err == nil || !strings.Contains(err.Error(), "k6 records do not measure ttft") {
		t.Errorf("k6 with a TTFT objective: %v", err)
	}
	// Objectives that need a clock without naming it: the decode speed
	// (the gaps between tokens), the longest stall, cold starts (TTFT).
	for _, tt := range []struct{ format, objective, want string }{
		{"guidellm", "tokens_per_second: {p50: 10}", "guidellm records do not measure itl"},
		{"llmperf", "max_gap: {max: 5s}", "llmperf records do not measure max_gap"},
		{"k6", "cold_start: 10s", "k6 records do not measure ttft"},
	} {
		s, err := slospec.ParseSpec([]byte("target: {records: \"run.json\", format: " + tt.format + "}\nobjectives:\n  " + tt.objective + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := slospec.Judge(s, ""); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s with %s: %v, want %q", tt.format, tt.objective, err, tt.want)
		}
	}
	spec := writeSpec(t, dir, "target: {records: \"run.json\", format: vegeta}\nobjectives:\n  ttft: {p50: 200ms}\n")
	ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
	if ok || !strings.Contains(out, "vegeta records do not measure ttft") {
		t.Errorf("RunFile with vegeta records and a TTFT objective should fail saying why:\n%s", out)
	}
	for _, tt := range []struct{ spec, want string }{
		{"target: {records: \"x\", format: locust}\nobjectives: {error_rate: 0%}\n", "line 1: target.format: unknown format \"locust\""},
		{"target: {preset: mistral-3-14b, format: vllm}\nobjectives: {error_rate: 0%}\n", "a format applies to a records target"},
	} {
		if _, err := slospec.ParseSpec([]byte(tt.spec)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.spec, err, tt.want)
		}
	}
}
