package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

const fixtures = "../../records/testdata"

// writeVLLM writes a vllm bench serve --save-detailed result of n
// requests at max_concurrency 8: TTFT ttft seconds, 15 gaps of 10ms.
func writeVLLM(t *testing.T, path string, n int, ttft float64) {
	t.Helper()
	var ttfts []float64
	var itls [][]float64
	var errs []string
	var outs []int
	for range n {
		gaps := make([]float64, 15)
		for j := range gaps {
			gaps[j] = 0.01
		}
		ttfts, itls, errs, outs = append(ttfts, ttft), append(itls, gaps), append(errs, ""), append(outs, 16)
	}
	writeVLLMRequests(t, path, ttfts, itls, errs, outs)
}

// writeVLLMRequests writes a vllm bench serve --save-detailed result of
// model "m" at max_concurrency 8 with these per-request figures.
func writeVLLMRequests(t *testing.T, path string, ttfts []float64, itls [][]float64, errs []string, outs []int) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"model_id": "m", "max_concurrency": 8, "output_lens": outs, "ttfts": ttfts, "itls": itls, "errors": errs})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeSpread writes n successful vllm requests with TTFTs of 100ms, 101ms,
// ... (one millisecond apart), so a quantile has a real interval.
func writeSpread(t *testing.T, path string, n int) {
	t.Helper()
	var ttfts []float64
	var itls [][]float64
	var errs []string
	var outs []int
	for i := range n {
		ttfts, itls, errs, outs = append(ttfts, 0.1+float64(i)/1000), append(itls, []float64{0.01}), append(errs, ""), append(outs, 2)
	}
	b, err := json.Marshal(map[string]any{"output_lens": outs, "ttfts": ttfts, "itls": itls, "errors": errs})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestJudge(t *testing.T) {
	dir := t.TempDir()
	writeVLLM(t, filepath.Join(dir, "run.json"), 200, 0.2)
	pass := writeFile(t, filepath.Join(dir, "pass.yaml"), "target: {records: run.json, format: vllm}\nobjectives:\n  ttft: {p99: 200ms}\n  total: {p95: 350ms}\n")
	fail := writeFile(t, filepath.Join(dir, "fail.yaml"), "target: {records: run.json}\nobjectives:\n  ttft: {p99: 199ms}\n")
	noTTFT := writeFile(t, filepath.Join(dir, "k6.yaml"), "target: {records: run.json}\nobjectives:\n  ttft: {p50: 1s}\n")
	// 200 TTFTs 100..299ms: p50 199.5ms; its 95% upper bound lies above 200ms.
	writeSpread(t, filepath.Join(dir, "spread.json"), 200)
	point := writeFile(t, filepath.Join(dir, "point.yaml"), "target: {records: spread.json, format: vllm}\nobjectives:\n  ttft: {p50: 200ms}\n")
	demand := writeFile(t, filepath.Join(dir, "demand.yaml"), "target: {records: spread.json, format: vllm}\nobjectives:\n  ttft: {p50: 200ms, demonstrate: 95%}\n")
	md := filepath.Join(dir, "report.md")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"pass, format from the spec", []string{"judge", "-markdown", md, "-svg", filepath.Join(dir, "svg"), pass}, 0, "PASS"},
		{"fail, format detected", []string{"judge", fail}, 1, "FAIL"},
		{"records on the command line", []string{"judge", fail, filepath.Join(dir, "run.json")}, 1, "ttft"},
		{"k6 measures no TTFT", []string{"judge", "-format", "k6", noTTFT, filepath.Join(fixtures, "k6.json")}, 2, "k6 records do not measure ttft"},
		{"point estimate within budget", []string{"judge", point}, 0, "PASS"},
		{"inconclusive where the spec demands a decision", []string{"judge", demand}, 2, "inconclusive"},
		{"k6 detected: no TTFT", []string{"judge", noTTFT, filepath.Join(fixtures, "k6.json")}, 2, "k6 records do not measure ttft"},
		{"no spec", []string{"judge"}, 2, "give a spec"},
		{"missing spec", []string{"judge", filepath.Join(dir, "nope.yaml")}, 2, "nope.yaml"},
		{"bad format flag", []string{"judge", "-format", "locust", pass}, 2, "locust"},
		{"unknown subcommand", []string{"bench"}, 2, "unknown subcommand"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCmd(tt.args...)
			if code != tt.code || !strings.Contains(out+errs, tt.want) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s%s", code, tt.code, tt.want, out, errs)
			}
		})
	}
	b, err := os.ReadFile(md)
	if err != nil || !strings.Contains(string(b), "PASS") {
		t.Errorf("markdown report: %v\n%s", err, b)
	}
	if svgs, _ := filepath.Glob(filepath.Join(dir, "svg", "c8-*.svg")); len(svgs) == 0 {
		t.Error("no SVG chart written")
	}
}

func TestReportCompareFit(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCmd("report", "-svg", filepath.Join(dir, "charts"), filepath.Join(fixtures, "vllm.json"))
	if code != 0 || !strings.Contains(out, "http_429 1") || !strings.Contains(out, "ttft") || !strings.Contains(out, "vLLM bench serve") {
		t.Errorf("report: exit %d\n%s%s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "charts", "cdf-ttft.svg")); err != nil || !bytes.HasPrefix(b, []byte("<svg")) {
		t.Errorf("report -svg: %v %.40s", err, b)
	}
	code, out, errs = runCmd("report", filepath.Join(fixtures, "k6.json"))
	if code != 0 || !strings.Contains(out, "failed") || !strings.Contains(out, "transport 1") {
		t.Errorf("report k6: exit %d\n%s%s", code, out, errs)
	}
	writeVLLM(t, filepath.Join(dir, "base.json"), 300, 0.2)
	writeVLLM(t, filepath.Join(dir, "same.json"), 300, 0.2)
	writeVLLM(t, filepath.Join(dir, "slow.json"), 300, 0.4)
	if code, out, errs := runCmd("compare", filepath.Join(dir, "base.json"), filepath.Join(dir, "same.json")); code != 0 {
		t.Errorf("compare same: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCmd("compare", filepath.Join(dir, "base.json"), filepath.Join(dir, "slow.json")); code != 1 {
		t.Errorf("compare 2x slower TTFT: exit %d, want 1\n%s%s", code, out, errs)
	}
	writeFile(t, filepath.Join(dir, "junk.json"), `{"hello": 1}`)
	if code, _, errs := runCmd("report", filepath.Join(dir, "junk.json")); code != 2 || !strings.Contains(errs, "name the format") {
		t.Errorf("report of an unknown file: exit %d\n%s", code, errs)
	}
	writeSpread(t, filepath.Join(dir, "spread.json"), 300)
	for _, args := range [][]string{{"fit", filepath.Join(dir, "spread.json")}, {"fit", "-tail", filepath.Join(dir, "spread.json")}} {
		code, out, errs := runCmd(args...)
		tailed := strings.Contains(out, "tail: {share: ")
		if code != 0 || tailed != (args[1] == "-tail") {
			t.Errorf("%q: exit %d, tail written %v\n%s%s", args, code, tailed, out, errs)
		}
	}
	code, out, errs = runCmd("fit", filepath.Join(fixtures, "aiperf.jsonl"))
	if code != 0 && code != 2 {
		t.Errorf("fit: exit %d\n%s%s", code, out, errs)
	}
	if code == 0 && !strings.Contains(out, "ttft") {
		t.Errorf("fit wrote no profile:\n%s", out)
	}
}

// TestBinary builds the command and runs it as CI would: exit statuses
// and output.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "tailguard")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	writeVLLM(t, filepath.Join(dir, "run.json"), 200, 0.2)
	pass := writeFile(t, filepath.Join(dir, "pass.yaml"), "target: {records: run.json, format: vllm}\nobjectives:\n  ttft: {p99: 200ms}\n")
	fail := writeFile(t, filepath.Join(dir, "fail.yaml"), "target: {records: run.json, format: vllm}\nobjectives:\n  ttft: {p99: 100ms}\n")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"judge", pass}, 0, "PASS"},
		{[]string{"judge", fail}, 1, "FAIL"},
		{[]string{"judge", filepath.Join(dir, "missing.yaml")}, 2, "tailguard:"},
		{[]string{"report", filepath.Join(fixtures, "vegeta.jsonl")}, 0, "total_timeout 1"},
	} {
		cmd := exec.Command(bin, tt.args...)
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.code || !strings.Contains(string(out), tt.want) {
			t.Errorf("tailguard %v: exit %d (want %d), output lacks %q:\n%s", tt.args, code, tt.code, tt.want, out)
		}
	}
}

// TestJudgeOwnRecords: tailguard's own records, detected, merged by level.
func TestJudgeOwnRecords(t *testing.T) {
	dir := t.TempDir()
	var recs []latencytest.Record
	for i := range 120 {
		recs = append(recs, latencytest.Record{ID: fmt.Sprintf("c4-%04d", i), Concurrency: 4, TTFT: 200 * time.Millisecond,
			FirstAnswer: 200 * time.Millisecond, LastToken: 300 * time.Millisecond, Total: 300 * time.Millisecond, TokenEvents: 11, Status: 200})
	}
	f, err := os.Create(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := latencytest.WriteRecords(f, recs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	spec := writeFile(t, filepath.Join(dir, "slo.yaml"), "target: {records: \"*.jsonl\"}\nobjectives:\n  ttft: {p99: 200ms}\n  total: {p95: 300ms}\n")
	if code, out, errs := runCmd("judge", spec); code != 0 || !strings.Contains(out, "c4") {
		t.Errorf("own records: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCmd("report", filepath.Join(dir, "records.jsonl")); code != 0 || !strings.Contains(out, "120 requests") {
		t.Errorf("report own records: exit %d\n%s%s", code, out, errs)
	}
}
