package records_test

// The fixtures under testdata/import are written from each tool's
// documented schema or source; testdata/import/README.md cites them
// (ai-dynamo/aiperf docs/tutorials/working-with-profile-exports.md,
// vllm-project/vllm vllm/benchmarks/serve.py, vllm-project/guidellm
// src/guidellm/schemas/request_stats.py and info.py, ray-project/llmperf
// token_benchmark_ray.py, the k6 docs' results-output/real-time/json,
// tsenart/vegeta lib/results.go).

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
)

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

func importUpdating() bool {
	g, ok := flag.Lookup("update").Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

var importFixtures = map[string]string{
	records.AIPerf:   "aiperf.jsonl",
	records.VLLM:     "vllm.json",
	records.GuideLLM: "guidellm.json",
	records.LLMPerf:  "llmperf.json",
	records.K6:       "k6.json",
	records.Vegeta:   "vegeta.jsonl",
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportGolden imports each fixture and compares the records and the
// disclosure with the golden file.
func TestImportGolden(t *testing.T) {
	for format, name := range importFixtures {
		t.Run(format, func(t *testing.T) {
			b := readFixture(t, name)
			got, err := records.Detect(b)
			if err != nil || got != format {
				t.Fatalf("DetectFormat = %q, %v; want %q", got, err, format)
			}
			res, err := records.Import(format, bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if res.Partial {
				t.Errorf("a whole file is partial: %s", res.PartialReason)
			}
			var out bytes.Buffer
			if err := latencytest.WriteRecords(&out, res.Records); err != nil {
				t.Fatal(err)
			}
			out.WriteString("--- disclosure\n" + res.Disclosure.String())
			path := filepath.Join("testdata", name+".golden")
			if importUpdating() {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (write it with go test -run TestImportGolden -update)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("import of %s differs from %s (rewrite with -update if right)\ngot:\n%s", name, path, out.Bytes())
			}
		})
	}
}

// TestImportSemantics pins what each importer makes of the fixtures'
// requests: the figures a judgement reads, not only the golden text.
func TestImportSemantics(t *testing.T) {
	imp := func(format string) *latencytest.Result {
		t.Helper()
		res, err := records.Import(format, bytes.NewReader(readFixture(t, importFixtures[format])))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ms := func(f float64) time.Duration { return time.Duration(f * 1e6) }

	a := imp(records.AIPerf)
	if c := a.Counts(); c.Sent != 6 || c.Discarded != 1 || c.Kept != 2 || c.Failed != 2 || c.Cancelled != 1 {
		t.Errorf("aiperf counts %+v: want 6 sent, 1 warm-up, 2 kept, 2 failed (429, untimed), 1 cancelled by AIPerf on purpose", c)
	}
	if r := a.Records[4]; r.Err != "cancelled" || r.CancelAt != 624928 {
		t.Errorf("aiperf cancelled record: %s at %v; want cancelled at 624.928µs", r.Err, r.CancelAt)
	}
	if r := a.Records[1]; r.TTFT != ms(255.886568) || r.Total != ms(297.525228) || r.Gaps.Len() != 8 || r.TokenEvents != 9 || r.MaxGap != ms(5.674918) || r.FirstAnswer != r.TTFT {
		t.Errorf("aiperf record 1: TTFT %v total %v gaps %d events %d max gap %v first answer %v", r.TTFT, r.Total, r.Gaps.Len(), r.TokenEvents, r.MaxGap, r.FirstAnswer)
	}
	if r := a.Records[2]; r.FirstAnswer != ms(1150) || r.TTFT != ms(210) || r.ReasoningTokens != 40 {
		t.Errorf("aiperf reasoning record: first answer %v TTFT %v reasoning %d; want 1.15s, 210ms, 40", r.FirstAnswer, r.TTFT, r.ReasoningTokens)
	}
	if e := a.Errors(); e["http_429"] != 1 || e["call_error"] != 1 || len(e) != 2 {
		t.Errorf("aiperf errors %v: want http_429 and call_error (the untimed record) once each", e)
	}
	if r := a.Records[5]; len(r.Notes) == 0 || !strings.Contains(r.Detail, "without timing") {
		t.Errorf("aiperf untimed record: detail %q notes %v: want a note", r.Detail, r.Notes)
	}

	v := imp(records.VLLM)
	if r := v.Records[0]; r.TTFT != 125*time.Millisecond || r.Total != 655*time.Millisecond || r.MaxGap != 500*time.Millisecond || r.Concurrency != 4 || r.FirstAnswer != latencytest.NotObserved {
		t.Errorf("vllm record 0: TTFT %v total %v max gap %v level %d first answer %v", r.TTFT, r.Total, r.MaxGap, r.Concurrency, r.FirstAnswer)
	}
	if e := v.Errors(); e["http_429"] != 1 || e["transport"] != 1 {
		t.Errorf("vllm errors %v: want http_429 (reason phrase) and transport (connect error)", e)
	}
	if fa := v.FirstAnswer(); fa.Failures() != len(fa) {
		t.Errorf("vllm does not tell the first answer apart: every first answer must count as failed, have %v", fa)
	}

	g := imp(records.GuideLLM)
	if r := g.Records[0]; r.TTFT != 250*time.Millisecond || r.Total != 1050*time.Millisecond || r.LastToken != time.Second || r.TokenEvents != 16 || r.CompletionTokens != 16 || r.Concurrency != 2 {
		t.Errorf("guidellm record 0: TTFT %v total %v last %v events %d tokens %d level %d", r.TTFT, r.Total, r.LastToken, r.TokenEvents, r.CompletionTokens, r.Concurrency)
	}
	// input_metrics.text_characters where the report gives it, 0 (not
	// known) where it does not.
	if a, b, c := g.Records[0].PromptChars, g.Records[1].PromptChars, g.Records[2].PromptChars; a != 530 || b != 261 || c != 0 {
		t.Errorf("guidellm prompt characters %d, %d, %d: want 530, 261, 0", a, b, c)
	}
	if e := g.Errors(); e["http_503"] != 1 || e["canceled"] != 1 {
		t.Errorf("guidellm errors %v: want http_503 and canceled (incomplete)", e)
	}
	if ms := g.MaxGap(); ms[0] != latencytest.Failed || ms[1] != 0 {
		t.Errorf("guidellm max gaps %v: unknown with 16 token events (failed), 0 with one", ms)
	}

	l := imp(records.LLMPerf)
	if r := l.Records[0]; r.TTFT != 312500*time.Microsecond || r.FirstAnswer != r.TTFT || r.Total != 3500*time.Millisecond || r.MaxGap != latencytest.NotObserved {
		t.Errorf("llmperf record 0: TTFT %v first answer %v total %v max gap %v", r.TTFT, r.FirstAnswer, r.Total, r.MaxGap)
	}
	if e := l.Errors(); e["http_429"] != 1 || e["empty_stream"] != 1 {
		t.Errorf("llmperf errors %v: want http_429 and empty_stream (no content token)", e)
	}

	k := imp(records.K6)
	if len(k.Records) != 3 {
		t.Fatalf("k6: %d requests, want 3", len(k.Records))
	}
	if r := k.Records[0]; r.Total != ms(459.865729) || r.TTFB != ms(120.5) || r.Status != 200 || !r.OK() {
		t.Errorf("k6 record 0: total %v TTFB %v status %d err %q", r.Total, r.TTFB, r.Status, r.Err)
	}
	if e := k.Errors(); e["http_503"] != 1 || e["transport"] != 1 {
		t.Errorf("k6 errors %v: want http_503 and transport", e)
	}
	if tt := k.TTFT(); tt.Failures() != len(tt) {
		t.Errorf("k6 measures no TTFT: every TTFT must count as failed, have %v", tt)
	}

	vg := imp(records.Vegeta)
	if r := vg.Records[1]; r.Total != 1250*time.Millisecond || r.ID != "vegeta-00001" || !r.Start.Equal(time.Date(2025, 12, 1, 10, 15, 0, 1e8, time.UTC)) {
		t.Errorf("vegeta record 1: total %v id %s start %v", r.Total, r.ID, r.Start)
	}
	if e := vg.Errors(); e["http_429"] != 1 || e["total_timeout"] != 1 {
		t.Errorf("vegeta errors %v: want http_429 and total_timeout (client timeout, no response)", e)
	}
	for _, res := range []*latencytest.Result{a, v, g, l, k, vg} {
		if b := res.Disclosure.Box(1); !strings.Contains(b.Answer, "imported from") || !strings.Contains(b.Answer, "not measured") {
			t.Errorf("box 1 %q: want the tool and what it did not measure", b.Answer)
		}
	}
	if b := g.Disclosure.Box(1).Answer; !strings.Contains(b, "GuideLLM 0.4.0") {
		t.Errorf("guidellm box 1 %q: want its version", b)
	}
}

// TestImportTruncated cuts each fixture short: the result is partial and
// holds the requests read before the cut, never an error or a silent
// whole.
func TestImportTruncated(t *testing.T) {
	for format, name := range importFixtures {
		t.Run(format, func(t *testing.T) {
			b := readFixture(t, name)
			whole, err := records.Import(format, bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			cut := b[:len(b)*3/4]
			res, err := records.Import(format, bytes.NewReader(cut))
			if err != nil {
				t.Fatalf("cut at %d of %d bytes: %v", len(cut), len(b), err)
			}
			if !res.Partial || res.PartialReason == "" {
				t.Errorf("cut file not partial (%d records)", len(res.Records))
			}
			// vLLM's per-request arrays are parallel: a cut before its
			// errors array keeps every request, their error classes unknown.
			if len(res.Records) > len(whole.Records) || len(res.Records) == len(whole.Records) && format != records.VLLM {
				t.Errorf("cut file has %d records, the whole %d", len(res.Records), len(whole.Records))
			}
			for i, r := range res.Records {
				w := whole.Records[i]
				sameErr := r.Err == w.Err || format == records.VLLM && !r.OK() && !w.OK()
				if r.ID != w.ID || r.Total != w.Total || !sameErr {
					t.Errorf("record %d differs from the whole file's: %+v vs %+v", i, r, w)
				}
			}
			if !strings.Contains(res.Disclosure.Box(2).Answer, "PARTIAL") {
				t.Errorf("box 2 %q does not say partial", res.Disclosure.Box(2).Answer)
			}
		})
	}
}

// TestImportRefuses feeds each importer files of another format or
// version and values in the wrong unit: each is an error naming the field.
func TestImportRefuses(t *testing.T) {
	aiperfLine := string(bytes.SplitN(readFixture(t, "aiperf.jsonl"), []byte("\n"), 2)[0])
	vllm := string(readFixture(t, "vllm.json"))
	tests := []struct {
		name, format, input, want string
	}{
		{"aiperf reads a vegeta file", "aiperf", string(readFixture(t, "vegeta.jsonl")), "no metadata"},
		{"aiperf old schema", "aiperf", `{"metadata":{"timestamp_ns":1,"credit_phase":"profiling"},"metrics":{}}` + "\n", "metadata.request_start_ns"},
		{"aiperf unknown unit", "aiperf", strings.Replace(aiperfLine, `"unit":"ms"`, `"unit":"fortnights"`, 1) + "\n", `unit "fortnights"`},
		{"aiperf unknown phase", "aiperf", strings.Replace(aiperfLine, `"warmup"`, `"cooldown"`, 1) + "\n", "benchmark_phase"},
		{"vllm without --save-detailed", "vllm", `{"backend":"openai-chat","mean_ttft_ms":12}`, `"ttfts"`},
		{"vllm arrays in milliseconds", "vllm", strings.Replace(vllm, `"ttfts": [0.125, 0.375, 0.0, 0.0]`, `"ttfts": [125, 375, 0.0, 0.0]`, 1), "mean_ttft_ms"},
		{"vllm implausible seconds", "vllm", strings.Replace(vllm, `"ttfts": [0.125`, `"ttfts": [125000`, 1), "ttfts[0]"},
		{"guidellm old report", "guidellm", `{"benchmarks":[{"requests":{"successful":[]}}]}`, "metadata.version"},
		{"guidellm negative characters", "guidellm", strings.Replace(string(readFixture(t, "guidellm.json")), `"text_characters": 530`, `"text_characters": -530`, 1), "input_metrics.text_characters = -530"},
		{"guidellm future schema", "guidellm", `{"metadata":{"version":2},"benchmarks":[]}`, "metadata.version 2"},
		{"guidellm milliseconds", "guidellm", strings.Replace(string(readFixture(t, "guidellm.json")), `"request_start": 1764584100.25`, `"request_start": 1764584100250`, 1), "request_start"},
		{"llmperf summary file", "llmperf", `{"results": {}}`, "array"},
		{"llmperf missing field", "llmperf", `[{"ttft_s": 1}]`, `"end_to_end_latency_s"`},
		{"llmperf milliseconds", "llmperf", `[{"error_code": null, "ttft_s": 250, "end_to_end_latency_s": 2250000}]`, "end_to_end_latency_s"},
		{"k6 reads aiperf", "k6", aiperfLine + "\n", "type"},
		{"k6 undeclared unit", "k6", `{"type":"Point","data":{"time":"2025-12-01T10:15:00Z","value":459.8,"tags":{"status":"200"}},"metric":"http_req_duration"}` + "\n", "contains: time"},
		{"vegeta reads k6", "vegeta", `{"type":"Point","data":{},"metric":"vus"}` + "\n", `"code"`},
		{"vegeta fractional latency", "vegeta", `{"code":200,"timestamp":"2025-12-01T10:15:00Z","latency":312.5,"error":""}` + "\n", "integer nanoseconds"},
		{"vegeta milliseconds", "vegeta", `{"code":200,"timestamp":"2025-12-01T10:15:00Z","latency":312,"error":""}` + "\n", "nanoseconds"},
		{"unknown format", "locust", "{}", "unknown format"},
		{"empty aiperf", "aiperf", "", "no record"},
		{"empty k6", "k6", "\n", "no line in the file"},
		{"empty vegeta", "vegeta", "", "no result in the file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := records.Import(tt.format, strings.NewReader(tt.input))
			if err == nil {
				t.Fatalf("no error (%d records)", len(res.Records))
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "records: ") {
				t.Errorf("error %q: want the prefix records: and %q", err, tt.want)
			}
		})
	}
}

// TestDetectFormat: each fixture is recognised; a file that fits no format
// or several is an error.
func TestDetectFormat(t *testing.T) {
	var own bytes.Buffer
	if err := latencytest.WriteRecords(&own, []latencytest.Record{{ID: "c1-0000", TTFT: time.Second, Total: time.Second}}); err != nil {
		t.Fatal(err)
	}
	if f, err := records.Detect(own.Bytes()); err != nil || f != records.Tailguard {
		t.Errorf("own records: %q, %v", f, err)
	}
	for _, bad := range []string{"", "hello", `{"x":1}`, "[1,2]"} {
		if f, err := records.Detect([]byte(bad)); err == nil {
			t.Errorf("DetectFormat(%q) = %q, want an error", bad, f)
		}
	}
	both := `{"metadata":{},"metrics":{},"code":200,"latency":1,"timestamp":"2025-12-01T10:15:00Z"}`
	if _, err := records.Detect([]byte(both)); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("a line with aiperf and vegeta keys: %v, want ambiguous", err)
	}
	// Import("", r) detects the same way, and refuses what detection refuses.
	if res, err := records.Import("", bytes.NewReader(own.Bytes())); err != nil || res.Len() != 1 {
		t.Errorf(`Import("", own records): %v`, err)
	}
	for _, bad := range []string{"", "hello", both} {
		if _, err := records.Import("", strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "name the format") {
			t.Errorf(`Import("", %q) = %v, want a detection error`, bad, err)
		}
	}
}

// TestImportLevels imports two files of one format: levels split, IDs
// prefixed so they cannot collide.
func TestImportLevels(t *testing.T) {
	dir := t.TempDir()
	b := readFixture(t, "vllm.json")
	// b.json is another run: its TTFTs differ (mean 250 ms still).
	other := bytes.Replace(b, []byte(`"ttfts": [0.125, 0.375,`), []byte(`"ttfts": [0.126, 0.374,`), 1)
	for n, content := range map[string][]byte{"a.json": b, "b.json": other} {
		if err := os.WriteFile(filepath.Join(dir, n), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	levels, err := records.ImportLevels("", filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := levels[4]
	if len(levels) != 1 || res == nil || len(res.Records) != 8 {
		t.Fatalf("levels %v: want one level (4) of 8 requests", levels)
	}
	if res.Records[0].ID != "a.json:vllm-00000" || res.Records[4].ID != "b.json:vllm-00000" {
		t.Errorf("IDs %s, %s: want the file's name as a prefix", res.Records[0].ID, res.Records[4].ID)
	}
	if b3 := res.Disclosure.Box(3).Answer; !strings.Contains(b3, "(vllm, imported)") || res.Disclosure.Format != records.VLLM {
		t.Errorf("box 3 %q, format %q: want the format", b3, res.Disclosure.Format)
	}
	// Files of two tools in one glob are refused, naming both.
	if err := os.WriteFile(filepath.Join(dir, "c.json"), readFixture(t, "k6.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := records.ImportLevels("", filepath.Join(dir, "*.json")); err == nil || !strings.Contains(err.Error(), "c.json is k6") {
		t.Errorf("mixed formats: %v", err)
	}
}

// TestImportVegetaRealRun imports a real vegeta run (see
// testdata/import/README.md) and checks it against vegeta's own report of
// the same file (vegeta-real.report.txt): 60 requests, all 200, latency
// min 279.751ms, mean 354.956ms, max 1.049s.
func TestImportVegetaRealRun(t *testing.T) {
	b := readFixture(t, "vegeta-real.jsonl")
	if f, err := records.Detect(b); err != nil || f != records.Vegeta {
		t.Fatalf("DetectFormat = %q, %v", f, err)
	}
	res, err := records.Import(records.Vegeta, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	report := string(readFixture(t, "vegeta-real.report.txt"))
	if !strings.Contains(report, "Latencies     [min, mean, 50, 90, 95, 99, max]  279.751ms, 354.956ms,") || !strings.Contains(report, "1.049s") {
		t.Fatalf("vegeta's report is not the one this test pins:\n%s", report)
	}
	tot := res.Total()
	c := res.Counts()
	if c.Sent != 60 || c.Kept != 60 || tot.Failures() != 0 {
		t.Fatalf("counts %+v, %d failures: want 60 kept (Requests total 60, Success 100%%)", c, tot.Failures())
	}
	round := func(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
	if lo, hi, mean := round(tot.Quantile(0)), tot.Quantile(1).Round(time.Millisecond), round(tot.Mean()); lo != 279751*time.Microsecond || hi != 1049*time.Millisecond || mean != 354956*time.Microsecond {
		t.Errorf("min %v max %v mean %v: vegeta reports 279.751ms, 1.049s, 354.956ms", lo, hi, mean)
	}
	if tt := res.TTFT(); tt.Failures() != len(tt) {
		t.Error("vegeta measures no TTFT: every TTFT must count as failed")
	}
}

// FuzzImport: no input makes detection or any importer of the registry
// panic, and no imported result holds a record that could not have been
// measured (so no verdict can pass on one): every clock is NotObserved or
// in [0, a day]; a success took time, its first token (when it has one)
// came after 0 and by its end, as did its first answer, last token,
// longest gap and first byte; token events mean a timed first token. An
// import that succeeds holds at least one request.
func FuzzImport(f *testing.F) {
	for _, name := range importFixtures {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(`{"seq":0,"code":200,"timestamp":"2025-12-01T10:15:00Z","latency":0,"error":""}` + "\n"))
	f.Add([]byte(`{"metadata":{"request_start_ns":1764584100000000000},"metrics":{"time_to_first_token":{"value":450,"unit":"ms"},"request_latency":{"value":0.3,"unit":"s"}}}` + "\n"))
	f.Add([]byte(`{"ttfts":[0.5],"itls":[[0.1]],"errors":[""],"output_lens":[2],"latencies":[0.2]}`))
	f.Add([]byte(`[{"error_code":null,"ttft_s":2,"end_to_end_latency_s":1}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = records.Detect(b)
		for _, format := range append(records.Formats(), "") {
			res, err := records.Import(format, bytes.NewReader(b))
			if err != nil {
				continue
			}
			if res.Len() == 0 {
				t.Fatalf("%q: a result with no request and no error", format)
			}
			for _, r := range res.All() {
				if why := implausible(r, res.Disclosure.Format); why != "" {
					t.Fatalf("%q: record %s: %s: %+v", format, r.ID, why, *r)
				}
			}
		}
	})
}

// implausible says why a record could not have been measured ("" when it
// could), independently of the importers' own check.
func implausible(r *latencytest.Record, format string) string {
	for _, d := range []time.Duration{r.TTFB, r.TTFT, r.FirstAnswer, r.LastToken, r.Total, r.MaxGap} {
		if d != latencytest.NotObserved && (d < 0 || d > 24*time.Hour) {
			return fmt.Sprintf("clock %v", d)
		}
	}
	for _, d := range r.Gaps.All() {
		if d < 0 || d > r.Total {
			return fmt.Sprintf("gap %v", d)
		}
	}
	if !r.OK() {
		return ""
	}
	switch {
	case r.Total < 0:
		return "a negative total"
	case r.Total == 0 && (format != records.Tailguard || r.Start.IsZero()):
		return "a success that took no time (one of this module's own, on synctest's clock, has a send time)"
	case r.TokenEvents > 0 && r.TTFT < 0, r.TokenEvents > 0 && r.TTFT == 0 && r.Total != 0:
		return "token events without a first token"
	case r.TTFT > r.Total:
		return "first token after the end"
	case r.FirstAnswer > r.Total, r.LastToken > r.Total, r.MaxGap > r.Total, r.TTFB > r.Total:
		return "a clock after the end"
	case r.FirstAnswer > 0 && r.TTFT > r.FirstAnswer:
		return "first token after the first answer"
	}
	return ""
}

// TestImportFileGzip: k6 writes gzip with --out json=results.gz.
func TestImportFileGzip(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(readFixture(t, "k6.json"))
	zw.Close()
	path := filepath.Join(t.TempDir(), "results.gz")
	if err := os.WriteFile(path, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := records.ImportFile("", path)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 3 || !strings.Contains(res.Disclosure.Box(3).Answer, "(k6, imported)") {
		t.Errorf("%d records, box 3 %q", len(res.Records), res.Disclosure.Box(3).Answer)
	}
}

// TestImportK6RealRun imports a real k6 run (gzipped, as k6 --out
// json=FILE.gz writes it; see testdata/import/README.md) and checks it
// against k6's own end-of-test summary of the run (k6-real.summary.txt):
// 40 requests, none failed, http_req_duration avg 373.61ms, med 326.99ms
// (k6 cuts to two decimals of a millisecond: the median of the file's
// durations is 326.996237ms, shown as 326.99ms).
func TestImportK6RealRun(t *testing.T) {
	res, err := records.ImportFile("", filepath.Join("testdata", "k6-real.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	summary := string(readFixture(t, "k6-real.summary.txt"))
	if !strings.Contains(summary, "avg=373.61ms med=326.99ms") || !strings.Contains(summary, "0 out of 40") {
		t.Fatalf("k6's summary is not the one this test pins:\n%s", summary)
	}
	c := res.Counts()
	if c.Sent != 40 || c.Kept != 40 {
		t.Fatalf("counts %+v: want 40 kept (http_reqs 40, http_req_failed 0 out of 40)", c)
	}
	tot := res.Total()
	if mean, med := tot.Mean().Truncate(10*time.Microsecond), tot.Quantile(0.5).Truncate(10*time.Microsecond); mean != 373610*time.Microsecond || med != 326990*time.Microsecond {
		t.Errorf("mean %v, median %v: k6 reports avg=373.61ms med=326.99ms", mean, med)
	}
	for _, r := range res.Records {
		if r.TTFB <= 0 || r.TTFB > r.Total || r.Status != 200 {
			t.Errorf("%s: TTFB %v total %v status %d: want 0 < TTFB <= total, 200", r.ID, r.TTFB, r.Total, r.Status)
		}
	}
}
