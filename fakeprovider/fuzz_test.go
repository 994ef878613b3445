package fakeprovider

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParseProfile feeds ParseProfile arbitrary YAML. Invariants: it never
// panics; an error carries the package prefix; a profile it accepts passes
// Validate and starts a Fake without panicking.
func FuzzParseProfile(f *testing.F) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed profiles in testdata (%v)", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"",
		"model: m\n---\nmodel: n\n",
		"ttft: {dist: lognormal, median: 2s, p99: 1s}\n",
		"ttft: {dist: mixture, parts: [{weight: 0.9, value: 1s}, {weight: 0.1, dist: uniform, min: 1s, max: 30s}]}\n",
		"ttft: {dist: mixture, parts: [{weight: 0.5}, {weight: 0.5, value: 1s}]}\n",
		"itl:\n  dist: empirical\n  values: [1ms, 2ms, -3ms]\n",
		"output_tokens: {dist: normal, mean: 64, stddev: 200}\nreasoning_tokens: {dist: uniform, min: 0, max: 9}\n",
		"cold_start: {after_idle: 5m}\n",
		"cold_start: {initial: true, duration: {dist: lognormal, median: 30s, p99: 2m}}\n",
		"stall: {probability: 5%, duration: 1s}\n",
		"faults: {http_529: 0.6, http_429: 0.6}\n",
		"faults: {malformed: 1, after_token: 3, retry_after: 2s}\n",
		"prefix_cache: {enabled: false, ttft_factor: 0.5}\n",
		"prefix_cache: [1]\n",
		"script:\n  - {request: 0, cold_start: 30s, ttft: 1s}\n  - {id: abc, stall: {after_token: 2, duration: 1m}, fault: disconnect, after_token: 1}\n  - {request: 3, status: 600}\n",
		"replicas: 3\nslots_per_replica: 2\nslowdown_per_inflight: 0.05\n",
		"replicas: 99999999999999\n", // New panicked allocating a counter per replica
		"ttft: &a 1s\nitl: *a\n",
		"ttft: !!binary aGVsbG8=\n",
		"{ttft: [}\n",
		"ttft: 2562047h47m16.854775807s\noutput_tokens: 9223372036854775807\n",
		"prefill: {per_1k_tokens: 2s, exponent: 1.5, per_1k_tokens_squared: 1s, from_tokens: 175, ttft_scale: 270ms, chars_per_token: 5.2, template_tokens: 14}\n",
		"prefill: {per_1k_tokens: 2562047h, exponent: 4, chars_per_token: 0.5}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fakeprovider: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParseProfile accepted a profile that Validate refuses: %v\n%s", err, data)
		}
		fk := New(p) // a panic here fails the fuzz run
		fk.Close()
	})
}

// fuzzProfile finishes every request at once: zero TTFT and ITL, three
// tokens, no faults; so a fuzzed request never waits on a clock.
var fuzzProfile = Profile{TTFT: Fixed(time.Duration(0)), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(3)}

// FuzzChatRequest posts arbitrary bodies to /v1/chat/completions.
// Invariants: the handler never panics; the status is 200, 400 or 413; an
// error body is OpenAI's JSON error object; a 200 is a whole answer (an SSE
// stream of JSON events ending in [DONE], or a chat.completion object).
func FuzzChatRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"fake-model","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"fake-model","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"stream":true,"max_tokens":2}`,
		`{"model":"fake-model","messages":[{"role":"system","content":null},{"role":"user","content":"hi"}],"max_completion_tokens":1}`,
		`{"model":"fake-model","messages":[{"role":"user","content":"` + strings.Repeat("prefix-cache ", 20) + `"}],"stream":true}`,
		`{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"max_tokens":-1}`,
		`{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"max_tokens":1048577}`,
		`{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"max_tokens":1e30}`,
		`{"model":"fake-model","messages":[{"role":"user","content":42}]}`,
		`{"model":"fake-model","messages":[{"content":"hi"}]}`,
		`{"model":"fake-model","messages":[]}`,
		`{"model":"other","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":true}}`,
		`{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"stream":true,"n":2}`,
		`{"model":"","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"stream":"yes"}`,
		`{"model":"fake-model","messages":[`,
		`null`,
		`[]`,
		``,
		"\x00\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fk := New(fuzzProfile)
		defer fk.Close()
		req := httptest.NewRequest("POST", "/v1/chat/completions", bytes.NewReader(body))
		rec := httptest.NewRecorder()
		fk.ServeHTTP(rec, req)

		out := rec.Body.Bytes()
		switch rec.Code {
		case http.StatusOK:
			checkAnswer(t, rec.Header().Get("Content-Type"), out)
		case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge: // 404: model_not_found
			var e struct {
				Error *struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(out, &e); err != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("status %d with a body that is not an OpenAI error (%v): %s", rec.Code, err, out)
			}
		default:
			t.Fatalf("status %d, want 200, 400, 404 or 413; body %s", rec.Code, out)
		}
	})
}

// checkAnswer fails t unless out is a whole answer of fuzzProfile.
func checkAnswer(t *testing.T, contentType string, out []byte) {
	t.Helper()
	switch contentType {
	case "text/event-stream":
		if !bytes.HasSuffix(out, []byte("data: [DONE]\n\n")) {
			t.Fatalf("stream does not end with [DONE]:\n%s", out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if ok && data != "[DONE]" && !json.Valid([]byte(data)) {
				t.Fatalf("event is not JSON: %s", data)
			}
		}
	case "application/json":
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(out, &c); err != nil || c.Object != "chat.completion" || len(c.Choices) != 1 || c.Choices[0].FinishReason == "" {
			t.Fatalf("not a finished chat.completion (%v): %s", err, out)
		}
	default:
		t.Fatalf("200 with Content-Type %q: %s", contentType, out)
	}
}

// FuzzProtocolRequest posts arbitrary bodies to /v1/responses (messages
// false) and /v1/messages. Invariants: the handler never panics; the
// status is 200, 400, 404 or 413; an error body is the protocol's error
// JSON (OpenAI's, or Anthropic's {"type":"error",...}); a 200 is a whole
// answer: a stream of JSON events ending in response.completed,
// response.incomplete or message_stop, or a response or message object.
func FuzzProtocolRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"fake-model","input":"hi"}`,
		`{"model":"fake-model","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}],"stream":true,"max_output_tokens":2}`,
		`{"model":"fake-model","instructions":"be brief","input":"hi","tools":[{"type":"function","name":"f"}],"stream":true}`,
		`{"model":"fake-model","max_tokens":2,"messages":[{"role":"user","content":"hi"}],"stream":true}`,
		`{"model":"fake-model","max_tokens":9,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
		`{"model":"fake-model","max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"fake-model","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"other","input":"hi","max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"fake-model","input":null,"max_tokens":3,"messages":[{"role":"tool","content":"hi"}]}`,
		`{"model":"fake-model","input":{"a":[1,{"b":"c"}]},"max_tokens":3,"messages":[{"role":"user"}]}`,
		`{"model":"fake-model","max_output_tokens":1e30,"input":"x"}`,
		`null`,
		``,
	} {
		f.Add(false, []byte(s))
		f.Add(true, []byte(s))
	}
	f.Fuzz(func(t *testing.T, messages bool, body []byte) {
		p := fuzzProfile
		p.ReasoningTokens = Fixed(1)
		p.ToolCalls = ToolCalls{Probability: 0.5, ArgumentsTokens: Fixed(3)}
		fk := New(p)
		defer fk.Close()
		path := "/v1/responses"
		if messages {
			path = "/v1/messages"
		}
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		rec := httptest.NewRecorder()
		fk.ServeHTTP(rec, req)
		out := rec.Body.Bytes()
		switch rec.Code {
		case http.StatusOK:
			checkProtocolAnswer(t, messages, rec.Header().Get("Content-Type"), out)
		case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge:
			var e struct {
				Type  string `json:"type"`
				Error *struct {
					Message string `json:"message"`
					Type    string `json:"type"`
				} `json:"error"`
			}
			if err := json.Unmarshal(out, &e); err != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" ||
				messages != (e.Type == "error") {
				t.Fatalf("status %d with a body that is not this protocol's error (%v): %s", rec.Code, err, out)
			}
		default:
			t.Fatalf("status %d, want 200, 400, 404 or 413; body %s", rec.Code, out)
		}
	})
}

// checkProtocolAnswer fails t unless out is a whole Responses (messages
// false) or Messages answer.
func checkProtocolAnswer(t *testing.T, messages bool, contentType string, out []byte) {
	t.Helper()
	switch contentType {
	case "text/event-stream":
		last := ""
		for _, line := range strings.Split(string(out), "\n") {
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				last = name
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok && !json.Valid([]byte(data)) {
				t.Fatalf("event is not JSON: %s", data)
			}
		}
		if want := map[bool]string{false: "response.completed", true: "message_stop"}[messages]; last != want &&
			!(last == "response.incomplete" && !messages) {
			t.Fatalf("stream ends with %q, want %q:\n%s", last, want, out)
		}
	case "application/json":
		var a struct {
			Type   string `json:"type"`
			Object string `json:"object"`
			Status string `json:"status"`
			Stop   string `json:"stop_reason"`
		}
		err := json.Unmarshal(out, &a)
		if err != nil || (messages && (a.Type != "message" || a.Stop == "")) ||
			(!messages && (a.Object != "response" || (a.Status != "completed" && a.Status != "incomplete"))) {
			t.Fatalf("not a finished answer (%v): %s", err, out)
		}
	default:
		t.Fatalf("200 with Content-Type %q: %s", contentType, out)
	}
}
