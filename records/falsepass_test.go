package records_test

// One test per false pass and per importer failure of issue 30: each
// input made a wrong verdict, or a vague error, before Sink.Add checked
// every record and the importers used each tool's own figures.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
)

func writeBytes(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The same k6 run under two file names was 40 + 40 requests: refused,
// naming both files. Once, it is 40 requests.
func TestSameRunUnderTwoNamesRefused(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "k6-real.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	a := writeBytes(t, dir, "run.json.gz", b)
	copyPath := writeBytes(t, dir, "copy.json.gz", b)
	_, err = records.ImportLevels("", a, copyPath)
	if err == nil || !strings.Contains(err.Error(), "copy.json.gz") || !strings.Contains(err.Error(), "run.json.gz") || !strings.Contains(err.Error(), "40 of its 40") {
		t.Fatalf("the same run twice: %v; want a refusal naming both files", err)
	}
	levels, err := records.ImportLevels("", a)
	if err != nil || levels[0].Len() != 40 {
		t.Fatalf("once: %v, %v", levels, err)
	}
}

// vegetaLines writes n vegeta results of the given latencies (cycled).
func vegetaLines(n int, lat ...time.Duration) []byte {
	var b bytes.Buffer
	t0 := time.Date(2025, 12, 1, 10, 15, 0, 0, time.UTC)
	for i := range n {
		fmt.Fprintf(&b, `{"seq":%d,"code":200,"timestamp":%q,"latency":%d,"error":""}`+"\n", i, t0.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), lat[i%len(lat)])
	}
	return b.Bytes()
}

// A vegeta file whose latencies are all 0 passed total p99 <= 1ms: a
// success that took no time is not a measurement, and the error names
// the line.
func TestVegetaZeroLatencyRefused(t *testing.T) {
	_, err := records.Import("", bytes.NewReader(vegetaLines(200, 0)))
	if err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "took 0s") {
		t.Fatalf("all-zero latencies: %v; want an error naming line 1", err)
	}
	// One zero among honest values is refused too, at its line.
	b := vegetaLines(200, 300*time.Millisecond)
	lines := bytes.Split(b, []byte("\n"))
	lines[57] = bytes.Replace(lines[57], []byte(`"latency":300000000`), []byte(`"latency":0`), 1)
	_, err = records.Import(records.Vegeta, bytes.NewReader(bytes.Join(lines, []byte("\n"))))
	if err == nil || !strings.Contains(err.Error(), "line 58") {
		t.Fatalf("one zero latency: %v; want line 58", err)
	}
}

// vllmDoc is a vllm bench serve --save-detailed result: n requests at
// max_concurrency level, TTFT 100 ms and 3 gaps of 10 ms (the last token
// at 130 ms), each request's own end-to-end latency e2e seconds.
func vllmDoc(n, level int, e2e float64) map[string]any {
	var ttfts, lats []float64
	var itls [][]float64
	var errs []string
	var outs []int
	for range n {
		ttfts, lats = append(ttfts, 0.1), append(lats, e2e)
		itls, errs, outs = append(itls, []float64{0.01, 0.01, 0.01}), append(errs, ""), append(outs, 4)
	}
	return map[string]any{"backend": "openai-chat", "max_concurrency": level, "ttfts": ttfts, "itls": itls, "errors": errs, "output_lens": outs, "latencies": lats}
}

// vLLM's per-request latencies were ignored and total computed as TTFT +
// gaps (130 ms here): a budget under vLLM's own e2e p50 (180 ms) passed.
func TestVLLMUsesItsOwnLatencies(t *testing.T) {
	b, _ := json.Marshal(vllmDoc(200, 4, 0.18))
	res, err := records.Import("", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r := res.Record(0)
	if r.Total != 180*time.Millisecond || r.LastToken != 130*time.Millisecond || r.TTFT != 100*time.Millisecond {
		t.Fatalf("total %v last token %v TTFT %v: want vLLM's 180ms, 130ms, 100ms", r.Total, r.LastToken, r.TTFT)
	}
	rep := sloassert.Evaluate(res, sloassert.Q(sloassert.Total, 0.5, 180*time.Millisecond-time.Microsecond))
	if rep.OK() {
		t.Errorf("a budget 1µs under vLLM's own e2e p50 passed:\n%s", rep)
	}
	// A latency shorter than TTFT + the gaps cannot be: refused.
	b, _ = json.Marshal(vllmDoc(10, 4, 0.12))
	if _, err := records.Import("", bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), "request 0") {
		t.Errorf("latency before the last token: %v; want an error naming request 0", err)
	}
}

// A --append-result vLLM file was judged on its last run only, silently:
// runs at different levels are judged per level; two runs at one level
// are refused with the reason.
func TestVLLMAppendResult(t *testing.T) {
	dir := t.TempDir()
	var two bytes.Buffer
	for _, level := range []int{1, 4} {
		b, _ := json.Marshal(vllmDoc(20, level, 0.15))
		two.Write(append(b, '\n'))
	}
	levels, err := records.ImportLevels("", writeBytes(t, dir, "sweep.json", two.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(levels) != 2 || levels[1].Len() != 20 || levels[4].Len() != 20 {
		t.Fatalf("levels %v: want runs at 1 and 4, 20 requests each", levels)
	}
	if id := levels[4].Record(0).ID; id != "vllm-r2-00000" {
		t.Errorf("second run's ID %s", id)
	}
	// Read as one result (report, compare, fit), the runs would mix.
	if _, err := records.ImportFile("", filepath.Join(dir, "sweep.json")); err == nil || !strings.Contains(err.Error(), "2 runs") {
		t.Errorf("one result of two runs: %v; want a refusal", err)
	}
	var same bytes.Buffer
	for range 2 {
		b, _ := json.Marshal(vllmDoc(20, 4, 0.15))
		same.Write(append(b, '\n'))
	}
	_, err = records.ImportLevels("", writeBytes(t, dir, "same.json", same.Bytes()))
	if err == nil || !strings.Contains(err.Error(), "2 runs") || !strings.Contains(err.Error(), "max_concurrency 4") {
		t.Fatalf("two runs at one level: %v; want a refusal with the reason", err)
	}
}

// AIPerf accepted a record whose TTFT exceeds its total (mixed units);
// llmperf refused it. Every importer refuses it now, naming the line.
func TestAIPerfTTFTOverTotalRefused(t *testing.T) {
	line := `{"metadata":{"x_request_id":"r1","request_start_ns":1764584100000000000,"benchmark_phase":"profiling"},` +
		`"metrics":{"time_to_first_token":{"value":450,"unit":"ms"},"request_latency":{"value":0.3,"unit":"s"}},"error":null}`
	ok := strings.Replace(line, `"value":450`, `"value":45`, 1)
	_, err := records.Import(records.AIPerf, strings.NewReader(ok+"\n"+line+"\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "TTFT 450ms after total 300ms") {
		t.Fatalf("TTFT over total: %v; want an error naming line 2", err)
	}
}

// Imported texts printed ?api_key=... and let request IDs inject
// newlines and terminal escapes: every text is cleaned.
func TestImportedTextsScrubbed(t *testing.T) {
	key := "sk-proj-abcdefghijklmnopqrstuvwxyz0123"
	lines := fmt.Sprintf(`{"seq":0,"code":200,"timestamp":"2025-12-01T10:15:00Z","latency":312500000,"error":""}
{"seq":1,"code":401,"timestamp":"2025-12-01T10:15:01Z","latency":2000000,"error":"Post \"http://127.0.0.1:9/v1?api_key=%s&x=1\": 401 Unauthorized\n\u001b[31mBearer %s"}
`, key, key)
	res, err := records.Import("", strings.NewReader(lines))
	if err != nil {
		t.Fatal(err)
	}
	d := res.Record(1).Detail
	if strings.Contains(d, key[8:16]) || strings.ContainsAny(d, "\n\x1b") || !strings.Contains(d, "api_key=[redacted]") {
		t.Errorf("detail %q: want no key, no control character", d)
	}
	// llmperf IDs are its own; GuideLLM's request IDs come from the file.
	g := bytes.Replace(readFixture(t, "guidellm.json"), []byte(`"request_id": "0b6e1a0e-0001", "request_type"`), []byte(`"request_id": "evil\u001b]0;title\u0007\nFAIL x", "request_type"`), 1)
	gr, err := records.Import(records.GuideLLM, bytes.NewReader(g))
	if err != nil {
		t.Fatal(err)
	}
	if id := gr.Record(0).ID; strings.ContainsAny(id, "\n\x1b\x07") || id != "evil FAIL x" {
		t.Errorf("request ID %q: want the escape dropped and the newline a space", id)
	}
}

// NaN literals got a generic "none of the formats": the error names the
// literal and the line.
func TestNaNLiteralNamed(t *testing.T) {
	doc := "{\n  \"backend\": \"openai-chat\",\n  \"mean_ttft_ms\": NaN,\n  \"ttfts\": [0.1]\n}\n"
	for _, format := range []string{"", records.VLLM} {
		_, err := records.Import(format, strings.NewReader(doc))
		if err == nil || !strings.Contains(err.Error(), "line 3: NaN is not JSON") {
			t.Errorf("format %q: %v; want line 3: NaN", format, err)
		}
	}
	vegeta := `{"seq":0,"code":200,"timestamp":"2025-12-01T10:15:00Z","latency":NaN,"error":""}` + "\n"
	if _, err := records.Import("", strings.NewReader(vegeta)); err == nil || !strings.Contains(err.Error(), "NaN is not JSON") {
		t.Errorf("a JSON-lines NaN: %v", err)
	}
}

// A vLLM file saved without --save-detailed got "none of the formats":
// it is detected as vLLM, and the error says which flag writes the
// per-request arrays.
func TestVLLMWithoutSaveDetailed(t *testing.T) {
	summary := `{"date":"20251201-101500","backend":"openai-chat","model_id":"m","completed":100,"request_throughput":3.2,"mean_ttft_ms":120.5,"p99_ttft_ms":400.1}`
	_, err := records.Import("", strings.NewReader(summary))
	if err == nil || !strings.Contains(err.Error(), "import vllm") || !strings.Contains(err.Error(), "--save-detailed") {
		t.Fatalf("summary only: %v; want vllm's error naming --save-detailed", err)
	}
}

// A GuideLLM report cut before its first request gave 0 requests and no
// error; cut inside a later one, it keeps every request read whole.
func TestGuideLLMCutReport(t *testing.T) {
	b := readFixture(t, "guidellm.json")
	i := bytes.Index(b, []byte(`"successful"`))
	_, err := records.Import(records.GuideLLM, bytes.NewReader(b[:i+30]))
	if err == nil || !strings.Contains(err.Error(), "0 requests read") {
		t.Fatalf("cut before the first request: %v; want an error", err)
	}
	j := bytes.Index(b, []byte(`"errored"`))
	res, err := records.Import(records.GuideLLM, bytes.NewReader(b[:j-20]))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial || res.Len() != 2 {
		t.Errorf("cut after two successes: partial %v, %d requests; want partial, 2", res.Partial, res.Len())
	}
}

// httpx and aiohttp 401 texts were call_error: the status they name is
// the class.
func TestClientTextsNameTheirStatus(t *testing.T) {
	texts := map[string]string{
		"httpx.HTTPStatusError: Client error '401 Unauthorized' for url 'http://127.0.0.1:8000/v1/chat/completions'": "http_401",
		"aiohttp.client_exceptions.ClientResponseError: 401, message='Unauthorized', url='http://127.0.0.1:8000/v1'": "http_401",
		"401, message='Unauthorized', url=URL('http://127.0.0.1:8000/v1')":                                           "http_401",
		"openai.AuthenticationError: Error code: 401 - {'error': {'message': 'bad key'}}":                            "http_401",
		"Too Many Requests": "http_429",
		"Traceback (most recent call last):\n  File \"x.py\"\nhttpx.ConnectError: [Errno 111] Connection refused": "transport",
		"Cannot connect to host 127.0.0.1:8000 ssl:default":                                                       "transport",
	}
	for text, want := range texts {
		doc := vllmDoc(1, 1, 0.2)
		doc["ttfts"], doc["itls"], doc["output_lens"], doc["errors"] = []float64{0}, [][]float64{{}}, []int{0}, []string{text}
		delete(doc, "latencies")
		b, _ := json.Marshal(doc)
		res, err := records.Import(records.VLLM, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Record(0).Err; got != want {
			t.Errorf("%q: class %s, want %s", text, got, want)
		}
	}
}

// This module's own records are checked too: a first token after the
// end is refused, naming the file and the request; a success of 0s
// stands (synctest's virtual clock measures a call that only computes as
// 0s).
func TestOwnRecordsChecked(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, recs ...latencytest.Record) string {
		var b bytes.Buffer
		if err := latencytest.WriteRecords(&b, recs); err != nil {
			t.Fatal(err)
		}
		return writeBytes(t, dir, name, b.Bytes())
	}
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // synctest's clock starts there
	ok := write("ok.jsonl", latencytest.Record{ID: "c1-0000", Start: t0, TTFT: 0, Total: 0})
	if levels, err := records.ImportLevels(records.Tailguard, ok); err != nil || levels[0].Len() != 1 {
		t.Fatalf("a 0s success of this module's own: %v", err)
	}
	// Without a send time it is no measurement: {} read as a record.
	if _, err := records.Import("", strings.NewReader(`{"id":"x","ttft_ns":0,"total_ns":0}`+"\n")); err == nil || !strings.Contains(err.Error(), "without a send time") {
		t.Errorf("a 0s success without a send time: %v", err)
	}
	bad := write("bad.jsonl", latencytest.Record{ID: "c1-0000", TTFT: 2 * time.Second, Total: time.Second, TokenEvents: 1})
	_, err := records.ImportLevels("", bad)
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl") || !strings.Contains(err.Error(), "c1-0000") || !strings.Contains(err.Error(), "TTFT 2s after total 1s") {
		t.Fatalf("TTFT after total: %v", err)
	}
	if _, err := records.ImportFile("", bad); err == nil {
		t.Fatal("ImportFile took TTFT after total")
	}
}

// An error that quotes the file quotes it clean.
func TestImportErrorsScrubbed(t *testing.T) {
	line := `{"metadata":{"request_start_ns":1764584100000000000,"benchmark_phase":"x\u001b[2J?api_key=hunter2hunter2"},"metrics":{}}` + "\n"
	_, err := records.Import(records.AIPerf, strings.NewReader(line))
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "\x1b") || !strings.Contains(err.Error(), "benchmark_phase") {
		t.Fatalf("%v", err)
	}
}
