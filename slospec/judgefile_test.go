package slospec_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
	"github.com/tailguard/tailguard/slospec"
)

// JudgeFile with records needs no target and plans no load; without
// records it needs the spec's target.
func TestJudgeFileWithoutTarget(t *testing.T) {
	dir := t.TempDir()
	writeVLLM(t, filepath.Join(dir, "run.json"), 200)
	records := filepath.Join(dir, "run.json")
	for _, tc := range []struct{ name, spec string }{
		{"no target", "objectives:\n  ttft: {p99: 200ms}\n"},
		// the planned load (75 requests) could not give p99: the records can
		{"a live target, not run", "target: {preset: mistral-3-14b}\nobjectives:\n  ttft: {p99: 200ms}\n"},
	} {
		spec := writeSpec(t, dir, tc.spec)
		reps, err := slospec.JudgeFile(spec, "", records)
		if err != nil || len(reps) != 1 || reps[0].Verdict() != sloassert.Pass {
			t.Errorf("%s: %v %+v", tc.name, err, reps)
		}
		if _, err := slospec.JudgeFile(spec, ""); err == nil {
			t.Errorf("%s: judged with no records given and none in the spec", tc.name)
		}
	}
	spec := writeSpec(t, dir, "objectives:\n  ttft: {p99: 200ms}\n")
	if _, err := slospec.JudgeFile(spec, ""); err == nil || !strings.Contains(err.Error(), "target: missing") {
		t.Errorf("no records, no target: %v", err)
	}
}

// A level whose sample is too small for an objective cannot be judged,
// unless the data already prove the failure; a partial level cannot be
// judged either.
func TestJudgeUndecided(t *testing.T) {
	dir := t.TempDir()
	writeVLLM(t, filepath.Join(dir, "few.json"), 40) // 39 of TTFT 200ms, 1 failed
	few := filepath.Join(dir, "few.json")
	for _, tc := range []struct {
		name, spec string
		verdict    sloassert.Verdict
		undecided  string
	}{
		{"p99 from 40", "objectives:\n  ttft: {p99: 1s}\n", sloassert.Inconclusive, "ttft_p99: p99 needs n >= 100 (the records hold 40 at c8)"},
		{"allowed small", "objectives:\n  ttft: {p99: 1s, allow_small_sample: true}\n", sloassert.Fail, ""}, // p99 reaches the failed request
		{"p95 from 40", "objectives:\n  ttft: {p90: 1s}\n", sloassert.Pass, ""},
		// the lower bound of p99 from 40 requests is 200ms, over 100ms
		{"failure proven", "objectives:\n  ttft: {p99: 100ms}\n", sloassert.Fail, ""},
		{"tail ratio", "objectives:\n  ttft: {p90: 1s, tail_ratio: 5}\n", sloassert.Inconclusive, "ttft_tail_ratio: p99/p50 needs n >= 100"},
		// an upper 95% bound on p95 needs n >= 59
		{"demonstrate", "objectives:\n  ttft: {p95: 1s, demonstrate: 95%}\n  error_rate: 5%\n", sloassert.Inconclusive, "ttft_p95: inconclusive where the spec demands a decision"},
		// the rule counts ITL's requests, not its gaps (40 x 15)
		{"itl p99 from 40 requests", "objectives:\n  itl: {p99: 1s}\n", sloassert.Inconclusive, "itl_p99: p99 needs n >= 100 (the records hold 40 at c8)"},
		{"one proven failure", "objectives:\n  ttft: {p50: 100ms, p99: 1s}\n", sloassert.Fail, "ttft_p99: p99 needs n >= 100"},
	} {
		reps, err := slospec.JudgeFile(writeSpec(t, dir, tc.spec), "", few)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := strings.Join(reps[0].Undecided, "\n")
		if v := reps[0].Verdict(); v != tc.verdict || tc.undecided == "" && got != "" || !strings.Contains(got, tc.undecided) {
			t.Errorf("%s: verdict %s (want %s), undecided %q (want %q)\n%s", tc.name, v, tc.verdict, got, tc.undecided, reps[0].Report)
		}
	}
}

// RecordsFormat names the tool whose records a result holds.
func TestRecordsFormatOfResult(t *testing.T) {
	dir := t.TempDir()
	writeVLLM(t, filepath.Join(dir, "run.json"), 20)
	res, err := records.ImportFile("", filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f := slospec.RecordsFormat(res); f != records.VLLM {
		t.Errorf("vllm records: %q", f)
	}
	if f := slospec.RecordsFormat(&latencytest.Result{}); f != records.Tailguard {
		t.Errorf("own records: %q", f)
	}
}
