package latencytest_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/redact/redacttest"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// runKey is the key the run-echoing server is sent; 37 bytes, as the
// key whose echo without its first 3 bytes left 34.
const runKey = "sk-ant-api03-Kx7qLm2PzR9vTw4YbN8cHd5J"

// runEchoes are the parts of the key a hostile server echoes, one per
// request (by index, over runPlaces): never the whole key.
var runEchoes = []struct{ name, echo string }{
	{"key[3:]", runKey[3:]},
	{"middle key[6:30]", runKey[6:30]},
	{"key[:len-4]", runKey[:len(runKey)-4]},
	{"hex of key[3:]", hex.EncodeToString([]byte(runKey[3:]))},
	{"HEX of key[8:20]", strings.ToUpper(hex.EncodeToString([]byte(runKey[8:20])))},
}

// runPlaces are where the server puts the echo.
var runPlaces = []string{"429 JSON error", "answer text", "500 HTML page"}

// runServer answers each protocol (chat completions, Responses,
// Messages) with the echo its request's index names.
func runServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		var i int
		fmt.Sscanf(r.Header.Get("X-Request-ID"), "c1-%d", &i)
		echo := runEchoes[i/len(runPlaces)%len(runEchoes)].echo
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		ev := func(typ, rest string) string {
			return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"" + rest + "}\n\n"
		}
		switch runPlaces[i%len(runPlaces)] {
		case "429 JSON error":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":`+q("slow down "+echo)+`,"type":"rate_limit_error"}}`)
			return
		case "500 HTML page":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(500)
			io.WriteString(w, "<html><body>internal error for "+echo+"</body></html>")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		text := "your key is " + echo + " ok"
		switch {
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			io.WriteString(w, `data: {"model":"m","choices":[{"index":0,"delta":{"content":`+q(text)+`}}]}`+"\n\n"+
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
		case strings.HasSuffix(r.URL.Path, "/responses"):
			io.WriteString(w, ev("response.created", `,"response":{"id":"resp_1","status":"in_progress","model":"m"}`)+
				ev("response.output_text.delta", `,"output_index":0,"delta":`+q(text))+
				ev("response.completed", `,"response":{"status":"completed","usage":{"input_tokens":5,"output_tokens":2}}`))
		case strings.HasSuffix(r.URL.Path, "/messages"):
			io.WriteString(w, ev("message_start", `,"message":{"model":"m","usage":{"input_tokens":5,"output_tokens":1}}`)+
				ev("content_block_start", `,"index":0,"content_block":{"type":"text","text":""}`)+
				ev("content_block_delta", `,"index":0,"delta":{"type":"text_delta","text":`+q(text)+`}`)+
				ev("content_block_stop", `,"index":0`)+
				ev("message_delta", `,"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}`)+
				ev("message_stop", ""))
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A server that echoes parts of the key (without its first bytes, a
// middle slice, without its last bytes, hex in either case) in an error
// body, an HTML page or the answer, for each protocol and each client,
// leaves no run of 8 bytes of the key in any output: the records, their
// JSON, records.jsonl, summary.json, report.md, the job summary, the log
// and the failure messages.
func TestSecretRunsNeverLeak(t *testing.T) {
	srv := runServer(t)
	for _, proto := range []string{"OpenAI", "Responses", "Anthropic"} {
		for _, client := range []string{"own HTTP/1.1 client", "net/http"} {
			t.Run(proto+"/"+client, func(t *testing.T) {
				opts := []latencytest.Option{latencytest.WithAPIKey(runKey), latencytest.WithModel("m")}
				if client == "net/http" {
					opts = append(opts, latencytest.WithNetHTTP())
				}
				var p *latencytest.LLMProvider
				switch proto {
				case "OpenAI":
					p = latencytest.OpenAI(srv.URL+"/v1", opts...)
				case "Responses":
					p = latencytest.Responses(srv.URL+"/v1", opts...)
				case "Anthropic":
					p = latencytest.Anthropic(srv.URL, opts...)
				}
				defer p.CloseIdleConnections()
				stepSummary := filepath.Join(t.TempDir(), "summary.md")
				t.Setenv("GITHUB_STEP_SUMMARY", stepSummary)
				t.Setenv(sloassert.EnvSummary, "on")
				c := &captureT{T: t}
				n := len(runEchoes) * len(runPlaces)
				r := latencytest.Batch{NoWarmup: true, Requests: n, Load: latencytest.Load{NoNonce: true, MaxTokens: 4, KeepContent: true}}.Measure(c, p)
				sloassert.Check(c, r, sloassert.Q(sloassert.TTFT, 0.5, time.Nanosecond), sloassert.MaxErrorRate(0))
				if len(r.Records) != n {
					t.Fatalf("%d records, want %d", len(r.Records), n)
				}
				texts := map[string]string{"log and failures": strings.Join(c.out, "\n"), "summary": r.Summarize().String() + r.Disclosure.String()}
				redacted := 0
				for i, rec := range r.Records {
					b, _ := json.Marshal(rec)
					echo, place := runEchoes[i/len(runPlaces)], runPlaces[i%len(runPlaces)]
					if l := redacttest.Runs(string(b), runKey); len(l) > 0 {
						t.Errorf("%s in the %s: %q leak into the record:\n%s", echo.name, place, l, b)
					}
					if strings.Contains(string(b), "[redacted]") {
						redacted++
					}
					if place == "answer text" && (!rec.OK() || !strings.HasPrefix(rec.Content, "your key is [redacted]")) {
						t.Errorf("%s in the %s: %s %q: the answer did not come through", echo.name, place, rec.Err, rec.Content)
					}
				}
				if redacted != n {
					t.Errorf("%d of %d records were redacted: an echo did not reach its record, so the test proves less", redacted, n)
				}
				readOutputs(t, stepSummary, texts)
				for where, text := range texts {
					if l := redacttest.Runs(text, runKey); len(l) > 0 {
						t.Errorf("%q leak into %s", l, where)
					}
				}
			})
		}
	}
}
