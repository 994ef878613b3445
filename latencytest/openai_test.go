package latencytest

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// roundTrip is an in-memory transport answering with a fixed status and body.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func answer(status int, body string, seen *http.Request) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		if seen != nil {
			*seen = *r
		}
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})}
}

const key = "sk-test-SECRET-0123456789abcdef"

func call(t *testing.T, c *http.Client, req Request) Record {
	t.Helper()
	p := OpenAI("https://api.example.test/v1", WithHTTPClient(c), WithAPIKey(key), WithModel("m-1"))
	if req.ID == "" {
		req.ID = "t-0000"
	}
	if req.Messages == nil {
		req.Messages = []Message{{Role: "user", Content: "hi"}}
	}
	return p.Call(context.Background(), req)
}

func TestStreamParsing(t *testing.T) {
	const role = `data: {"model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n"
	for _, tc := range []struct {
		name, body string
		class      string
		events     int
		content    string
	}{
		{"plain stream", role + `data: {"choices":[{"delta":{"content":"Hel"}}]}` + "\n\n" + `data: {"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]}` + "\n\n" +
			`data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":3}}}` + "\n\ndata: [DONE]\n\n", "", 2, "Hello"},
		{"CRLF, comments, multi-line data", ": keep-alive\r\n\r\n" + "data: {\"choices\":[{\"delta\":\r\ndata: {\"content\":\"x\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n", "", 1, "x"},
		{"role-only chunk is not a token", role + "data: [DONE]\n\n", ClassEmptyStream, 0, ""},
		{"reasoning is a token, not an answer", role + `data: {"choices":[{"delta":{"reasoning_content":"hmm"},"finish_reason":"length"}]}` + "\n\ndata: [DONE]\n\n", ClassEmptyAnswer, 1, ""},
		{"vLLM's reasoning field counts too", `data: {"choices":[{"delta":{"reasoning":"hmm"}}]}` + "\n\n" + `data: {"choices":[{"delta":{"content":"ok"}}]}` + "\n\ndata: [DONE]\n\n", "", 2, "ok"},
		{"no [DONE]", role + `data: {"choices":[{"delta":{"content":"a"}}]}` + "\n\n", ClassTruncated, 1, "a"},
		{"error object mid-stream", `data: {"choices":[{"delta":{"content":"a"}}]}` + "\n\n" + `data: {"error":{"message":"overloaded","type":"server_error"}}` + "\n\ndata: [DONE]\n\n", ClassBadStream, 1, "a"},
		{"malformed chunk", `data: {"choices":[{"delta":{"content":"a"}` + "\n\ndata: [DONE]\n\n", ClassBadStream, 0, ""},
		{"a 1 MiB event", `data: {"choices":[{"delta":{"content":"` + strings.Repeat("z", 1<<20) + `"}}]}` + "\n\ndata: [DONE]\n\n", "", 1, strings.Repeat("z", 1<<20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen http.Request
			rec := call(t, answer(200, tc.body, &seen), Request{ID: "trace-7", MaxTokens: 9})
			if rec.Err != tc.class || rec.TokenEvents != tc.events || rec.Content != tc.content {
				t.Errorf("class %q events %d content %.20q detail %q; want %q %d %.20q", rec.Err, rec.TokenEvents, rec.Content, rec.Detail, tc.class, tc.events, tc.content)
			}
			if seen.Header.Get("X-Request-ID") != "trace-7" || seen.Header.Get("Authorization") != "Bearer "+key {
				t.Errorf("headers %v", seen.Header)
			}
			var body map[string]any
			b, _ := io.ReadAll(seen.Body)
			if err := json.Unmarshal(b, &body); err != nil || body["stream"] != true || body["model"] != "m-1" || body["max_tokens"] != 9.0 {
				t.Errorf("request body %s", b)
			}
		})
	}
	rec := call(t, answer(200, role+`data: {"choices":[{"delta":{"content":"Hel"}}]}`+"\n\n"+`data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":1}}}`+"\n\ndata: [DONE]\n\n", nil), Request{})
	if rec.PromptTokens != 7 || rec.CompletionTokens != 2 || rec.CachedTokens != 3 || rec.ReasoningTokens != 1 || rec.Model != "m-1" {
		t.Errorf("usage %+v", rec)
	}
}

// The API key never reaches a record, an error string or an artifact, even
// when the server echoes it back.
func TestAPIKeyNeverLeaks(t *testing.T) {
	echo := `{"error":{"message":"Incorrect API key provided: ` + key + `","type":"invalid_request_error"}}`
	rec := call(t, answer(401, echo, nil), Request{})
	if rec.Err != "http_401" || !strings.Contains(rec.Detail, "[redacted]") {
		t.Errorf("record %+v", rec)
	}
	mid := `data: {"error":{"message":"bad key ` + key + `"}}` + "\n\n"
	rec2 := call(t, answer(200, mid, nil), Request{})
	var sb strings.Builder
	if err := WriteRecords(&sb, []Record{rec, rec2}); err != nil {
		t.Fatal(err)
	}
	r := &Result{Records: []Record{rec, rec2}}
	b, _ := json.Marshal(r.Summarize())
	for what, s := range map[string]string{"records": sb.String(), "summary": string(b), "summary text": r.Summarize().String(), "detail": rec2.Detail} {
		if strings.Contains(s, key) || strings.Contains(s, "SECRET") {
			t.Errorf("the key leaks into the %s: %s", what, s)
		}
	}
	// A transport error names the endpoint, never the key, even when the
	// key rides in the base URL's query.
	pq := OpenAI("http://127.0.0.1:1/v1?api-key="+key, WithAPIKey("other"))
	if rec := pq.Call(context.Background(), Request{ID: "q", Messages: []Message{{Role: "user", Content: "hi"}}}); rec.Err != ClassTransport || strings.Contains(rec.Detail, key) {
		t.Errorf("query key leaks: %+v", rec)
	}
	p := OpenAI("http://127.0.0.1:1/v1", WithAPIKey(key))
	rec3 := p.Call(context.Background(), Request{ID: "x", Messages: []Message{{Role: "user", Content: "hi"}}})
	if rec3.Err != ClassTransport || strings.Contains(rec3.Detail, key) {
		t.Errorf("transport record %+v", rec3)
	}
	if d := p.Describe(); strings.Contains(d.Endpoint+d.Model+d.Kind, key) {
		t.Errorf("description leaks the key: %+v", d)
	}
}

func TestOpenAIFromEnv(t *testing.T) {
	t.Setenv(EnvBaseURL, "")
	t.Setenv(EnvModel, "")
	t.Setenv(EnvAPIKey, key)
	if _, err := OpenAIFromEnv(); err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL, OPENAI_MODEL not set") {
		t.Errorf("error %v", err)
	}
	// An unset key is an error (a real endpoint would answer 401 to every
	// request); an empty one is a server without keys.
	os.Unsetenv(EnvAPIKey)
	t.Setenv(EnvBaseURL, "http://127.0.0.1:1/v1")
	t.Setenv(EnvModel, "m")
	if _, err := OpenAIFromEnv(); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY (set it empty for a server without keys) not set") {
		t.Errorf("error %v", err)
	}
	t.Setenv(EnvAPIKey, "")
	if _, err := OpenAIFromEnv(); err != nil {
		t.Errorf("empty key: %v", err)
	}
	t.Setenv(EnvAPIKey, key)
	t.Setenv(EnvBaseURL, "ftp://x")
	t.Setenv(EnvModel, "m")
	if _, err := OpenAIFromEnv(); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("error %v", err)
	}
	t.Setenv(EnvBaseURL, "https://user:pw@host.test/v1?k=1")
	p, err := OpenAIFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Describe(); d.Model != "m" || d.Endpoint != "https://host.test/v1/chat/completions" {
		t.Errorf("description %+v (credentials and query must be dropped)", d)
	}
}

func TestOpenAIPanicsOnBadURL(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "latencytest: OpenAI base URL") {
			t.Errorf("panic %v", v)
		}
	}()
	OpenAI("not a url")
}

// Over a real loopback socket: connection setup is traced, the stream is
// measured, and a server that stops sending is cut off by the total
// timeout. Margins are wide: nothing here depends on the machine's speed.
func TestRealSocket(t *testing.T) {
	stall := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"a"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		if r.Header.Get("X-Request-ID") == "stall" {
			select {
			case <-stall:
			case <-r.Context().Done():
			}
			return
		}
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"b"}}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	defer close(stall)
	p := OpenAI(srv.URL+"/v1", WithHTTPClient(srv.Client()))
	rec := p.Call(context.Background(), Request{ID: "ok", Messages: []Message{{Role: "user", Content: "hi"}}})
	if !rec.OK() || rec.Content != "ab" || rec.Connect <= 0 || rec.TTFB < 0 || rec.TTFT < rec.TTFB || rec.Total < rec.TTFT {
		t.Errorf("record %+v", rec)
	}
	rec = p.Call(context.Background(), Request{ID: "stall", TotalTimeout: 200 * time.Millisecond, Messages: []Message{{Role: "user", Content: "hi"}}})
	if rec.Err != ClassTotalTimeout || rec.Total < 200*time.Millisecond || rec.Content != "a" {
		t.Errorf("stalled record %+v", rec)
	}
	// A closed port: transport.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	rec = OpenAI("http://"+addr+"/v1").Call(context.Background(), Request{ID: "refused", Messages: []Message{{Role: "user", Content: "hi"}}})
	if rec.Err != ClassTransport || rec.Status != 0 {
		t.Errorf("refused: %+v", rec)
	}
}
