package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportErrorsExit2: input an importer refuses is bad input (exit 2),
// and the message says what was wrong with which file, not a generic
// "none of the formats".
func TestImportErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	k6, err := os.ReadFile(filepath.Join(fixtures, "k6-real.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "k6-a.json.gz"), string(k6))
	writeFile(t, filepath.Join(dir, "k6-b.json.gz"), string(k6))
	twice := writeFile(t, filepath.Join(dir, "twice.yaml"), "target: {records: \"k6-*.json.gz\"}\nobjectives:\n  total: {p50: 10s}\n")
	zero := writeFile(t, filepath.Join(dir, "zero.jsonl"), `{"seq":0,"code":200,"timestamp":"2025-12-01T10:15:00Z","latency":0,"error":""}`+"\n")
	nan := writeFile(t, filepath.Join(dir, "nan.json"), "{\n \"backend\": \"openai-chat\",\n \"mean_ttft_ms\": NaN\n}\n")
	summary := writeFile(t, filepath.Join(dir, "summary.json"), `{"backend":"openai-chat","request_throughput":2.5,"mean_ttft_ms":120.5}`)
	g, err := os.ReadFile(filepath.Join(fixtures, "guidellm.json"))
	if err != nil {
		t.Fatal(err)
	}
	cut := writeFile(t, filepath.Join(dir, "cut.json"), string(g[:strings.Index(string(g), `"successful"`)+20]))
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"one run under two names", []string{"judge", twice}, []string{"k6-b.json.gz", "also in", "k6-a.json.gz"}},
		{"zero latency", []string{"report", zero}, []string{"zero.jsonl", "line 1", "took 0s"}},
		{"NaN literal", []string{"report", nan}, []string{"nan.json", "line 3: NaN is not JSON"}},
		{"vLLM without --save-detailed", []string{"report", summary}, []string{"summary.json", "--save-detailed"}},
		{"GuideLLM cut before its requests", []string{"report", cut}, []string{"cut.json", "0 requests read"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCmd(tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2:\n%s%s", code, out, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}
