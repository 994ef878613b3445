package latencytest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/redact/redacttest"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// The secrets a hostile server echoes: the API key, a header value given
// with WithHeader, and a key in the base URL's query (percent-encoded).
const (
	secretKey    = "sk-hostile-KEY-0123456789abcdef"
	secretHeader = "org-hostile-HEADER-4242"
	secretQuery  = "q/hostile-QUERY+77"
)

// markers are pieces of each secret: a cut secret leaks them too.
var markers = []string{"hostile-KEY", "hostile-HEADER", "hostile-QUERY", "0123456789abcdef"}

// echoPlaces are the places a hostile server puts what it received, one
// per request (in trace-ID order).
var echoPlaces = []struct{ name, why string }{
	{"model", "the model name the stream reports"},
	{"content", "the answer, each secret split across two chunks"},
	{"http_error", "the JSON body of a 401"},
	{"error_event", "an SSE error event"},
	{"inband_error", `an in-band {"error": ...} event`},
	{"finish_reason", "the finish reason"},
	{"notes", "a usage count that is not a count (it becomes a note)"},
	{"odd_model", "a model field of the wrong type, long enough to be cut in the note"},
	{"html", "a 200 HTML page (its start goes into Detail)"},
	{"refusal", "a refusal (its text goes into Detail), split across chunks"},
	{"long_refusal", "a refusal whose 200-byte cut falls inside a secret"},
	{"injected", "the fake provider's Tailguard-Injected header"},
	{"bom_content", "content after a byte-order mark"},
}

// hostile returns a server that echoes every secret it received in the
// place the request's index names.
func hostile(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got := []string{r.Header.Get("Authorization"), r.Header.Get("X-Org"), r.URL.Query().Get("api-key"), r.URL.RawQuery}
		all := strings.Join(got, " | ")
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		chunk := func(delta string) string {
			return `data: {"choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n"
		}
		var i int
		fmt.Sscanf(r.Header.Get("X-Request-ID"), "c1-%d", &i)
		place := echoPlaces[i%len(echoPlaces)].name
		w.Header().Set("Content-Type", "text/event-stream")
		if place == "injected" {
			w.Header().Set("Tailguard-Injected", all)
		}
		var body strings.Builder
		switch place {
		case "model":
			body.WriteString(`data: {"model":` + q("echo "+all) + `,"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n")
		case "content", "bom_content":
			if place == "bom_content" {
				body.WriteString("\xEF\xBB\xBF")
			}
			for _, s := range got {
				body.WriteString(chunk(`{"content":` + q(s[:len(s)/2]) + `}`))
				body.WriteString(chunk(`{"content":` + q(s[len(s)/2:]+" ") + `}`))
			}
		case "http_error":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			body.WriteString(`{"error":{"message":` + q("Incorrect API key provided: "+all) + `,"type":"invalid_request_error"}}`)
		case "error_event":
			body.WriteString(chunk(`{"content":"a"}`) + "event: error\ndata: " + q("denied for "+all) + "\n\n")
		case "inband_error":
			body.WriteString(chunk(`{"content":"a"}`) + `data: {"error":{"message":` + q("denied for "+all) + `}}` + "\n\n")
		case "finish_reason":
			body.WriteString(`data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":` + q(all) + `}]}` + "\n\n")
		case "notes":
			body.WriteString(chunk(`{"content":"a"}`) + `data: {"choices":[],"usage":{"prompt_tokens":` + q(got[0]) + `,"completion_tokens":` + q(got[1]) + `}}` + "\n\n")
		case "odd_model":
			body.WriteString(`data: {"model":{"id":` + q("xxxxxxxxxxxxxxxxxxxxxxxxx"+got[0]) + `},"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n")
		case "html":
			w.Header().Set("Content-Type", "text/html")
			body.WriteString("<html><body>" + strings.Repeat("x", 180) + all + "</body></html>")
		case "refusal":
			for _, s := range got {
				body.WriteString(chunk(`{"refusal":` + q(s[:len(s)/2]) + `}`))
				body.WriteString(chunk(`{"refusal":` + q(s[len(s)/2:]+" ") + `}`))
			}
		case "long_refusal":
			body.WriteString(chunk(`{"refusal":` + q(strings.Repeat("n", 190)+all) + `}`))
		case "injected":
			body.WriteString(chunk(`{"content":"a"}`))
		}
		body.WriteString("data: [DONE]\n\n")
		_, _ = io.WriteString(w, body.String())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// hostileProvider is the OpenAI provider on srv: through net/http (the
// server's client), or with fast through the provider's own HTTP/1.1
// client (its default transport on a plain http:// URL).
func hostileProvider(srv *httptest.Server, fast bool) *latencytest.LLMProvider {
	base := srv.URL + "/v1?api-version=1&api-key=" + strings.ReplaceAll(strings.ReplaceAll(secretQuery, "/", "%2F"), "+", "%2B")
	opts := []latencytest.Option{latencytest.WithAPIKey(secretKey),
		latencytest.WithHeader("X-Org", secretHeader), latencytest.WithHeader("X-Short", "7"), latencytest.WithModel("m-1")}
	if !fast {
		opts = append(opts, latencytest.WithHTTPClient(srv.Client()))
	}
	return latencytest.OpenAI(base, opts...)
}

// leaks names the secrets (or pieces of them) found in s.
func leaks(s string) []string {
	var out []string
	for _, m := range append([]string{secretKey, secretHeader, secretQuery, "q%2Fhostile"}, markers...) {
		if strings.Contains(s, m) {
			out = append(out, m)
		}
	}
	return out
}

// WithAPIKey's promise holds for every string the library keeps: a server
// that echoes the key, a WithHeader value or the base URL's query into any
// field of its answer never gets them into a record, its JSON, Detail,
// Notes, the artifacts or the log.
func TestSecretsNeverLeak(t *testing.T) {
	for _, fast := range []bool{false, true} {
		t.Run(map[bool]string{false: "net/http", true: "fast path"}[fast], func(t *testing.T) { secretsNeverLeak(t, fast) })
	}
}

func secretsNeverLeak(t *testing.T, fast bool) {
	srv := hostile(t)
	p := hostileProvider(srv, fast)
	if fast {
		defer p.CloseIdleConnections()
	}
	l := newLogTB(t)
	r := latencytest.Batch{NoWarmup: true, Requests: len(echoPlaces), Load: latencytest.Load{NoNonce: true, MaxTokens: 4, KeepContent: true}}.Measure(l, p)
	if len(r.Records) != len(echoPlaces) {
		t.Fatalf("%d records", len(r.Records))
	}
	for i, place := range echoPlaces {
		rec := r.Records[i]
		b, _ := json.Marshal(rec)
		if found := leaks(string(b) + rec.Detail + strings.Join(rec.Notes, "\n")); len(found) > 0 {
			t.Errorf("%s (%s): %q leak into the record:\n%s", place.name, place.why, found, b)
		}
		if !strings.Contains(string(b), "Bearer") {
			t.Errorf("%s (%s): the server's echo did not reach the record, so the test proves nothing:\n%s", place.name, place.why, b)
		}
	}
	dir := artifactDir(t)
	for _, name := range []string{"records.jsonl", "summary.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if found := leaks(string(b)); len(found) > 0 {
			t.Errorf("%q leak into %s", found, name)
		}
	}
	if found := leaks(strings.Join(l.logs, "\n") + r.Summarize().String() + r.Disclosure.String()); len(found) > 0 {
		t.Errorf("%q leak into the log or the summary", found)
	}
}

// Values shorter than 8 bytes are not searched for: a WithHeader value
// "7" must not turn every 7 of an answer into [redacted].
func TestShortSecretsAreNotSearched(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"7 days"}}],"usage":{"prompt_tokens":77,"completion_tokens":7}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p := latencytest.OpenAI(srv.URL+"/v1", latencytest.WithHTTPClient(srv.Client()), latencytest.WithHeader("X-Short", "7"), latencytest.WithAPIKey("k"))
	rec := p.Call(t.Context(), latencytest.Request{ID: "s", Messages: []latencytest.Message{{Role: "user", Content: "hi"}}})
	if !rec.OK() || rec.Content != "7 days" || rec.PromptTokens != 77 {
		t.Errorf("record %+v: a 1-byte header value mangled the answer", rec)
	}
}

// echoPlacesEncoded are the places a hostile server echoes an encoded key
// in, one per request (in trace-ID order): the /http/ paths are asked by
// the HTTP provider, the others by the OpenAI provider.
var echoPlacesEncoded = []struct{ name, why string }{
	{"json_401", "the message of a JSON 401 body"},
	{"long_json_error", "a JSON error message decoded, then cut at 200 bytes inside the key"},
	{"long_html_error", "a 500 HTML page cut at 200 bytes inside the key"},
	{"redirect", "the Location of a 302 (path and query)"},
	{"sse_content", "the answer"},
	{"sse_model", "the model name"},
	{"error_event", "an SSE error event, cut at 200 bytes inside the key"},
	{"injected", "the fake's Tailguard-Injected header"},
	{"http/long_error", "HTTP(): a 401 body cut at 200 bytes inside the key"},
	{"http/redirect", "HTTP(): the Location of a 307"},
	{"http/ok", "HTTP(): a 200 body (never kept)"},
}

// encodedEcho returns a server that echoes enc (the key, encoded) in the
// place the request's index (or its /http/ path) names.
func encodedEcho(t *testing.T, enc string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		var i int
		fmt.Sscanf(r.Header.Get("X-Request-ID"), "c1-%d", &i)
		place := echoPlacesEncoded[i%8].name
		if p, ok := strings.CutPrefix(r.URL.Path, "/http/"); ok {
			place = "http/" + p
		}
		pad := strings.Repeat("n", 190) // the cut at 200 falls inside the key
		chunk := func(delta string) string {
			return `data: {"choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n"
		}
		switch place {
		case "json_401", "long_json_error":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			msg := "Incorrect API key provided: " + enc
			if place == "long_json_error" {
				msg = pad + enc
			}
			io.WriteString(w, `{"error":{"message":"`+msg+`","type":"invalid_request_error"}}`)
		case "long_html_error", "http/long_error":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(map[bool]int{true: 401, false: 500}[place == "http/long_error"])
			io.WriteString(w, "<p>"+pad[3:]+enc+"</p>")
		case "redirect", "http/redirect":
			w.Header().Set("Location", "/v1/"+enc+"/moved?k="+enc)
			w.WriteHeader(map[bool]int{true: 307, false: 302}[place == "http/redirect"])
		case "http/ok":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "ok "+enc)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			switch place {
			case "injected":
				w.Header().Set("Tailguard-Injected", "stall for "+enc)
				io.WriteString(w, chunk(`{"content":"a"}`))
			case "sse_content":
				io.WriteString(w, chunk(`{"content":"your key is `+enc+` "}`))
			case "sse_model":
				io.WriteString(w, `data: {"model":"echo `+enc+`","choices":[{"index":0,"delta":{"content":"a"}}]}`+"\n\n")
			case "error_event":
				io.WriteString(w, chunk(`{"content":"a"}`)+"event: error\ndata: {\"error\":{\"message\":\""+pad+enc+"\"}}\n\n")
			}
			io.WriteString(w, "data: [DONE]\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// captureT captures what the library logs and the failures sloassert
// reports, and gives them a fresh artifact directory.
type captureT struct {
	*testing.T
	out []string
}

func (c *captureT) Errorf(format string, args ...any) {
	c.out = append(c.out, fmt.Sprintf(format, args...))
}
func (c *captureT) Logf(format string, args ...any) {
	c.out = append(c.out, fmt.Sprintf(format, args...))
}
func (c *captureT) Log(args ...any) { c.out = append(c.out, fmt.Sprint(args...)) }

// Each encoding a server can echo the key in (raw, query- and
// path-escaped, JSON-escaped, HTML references, nested, base64 of
// "user:key"), in each place it can echo it (error bodies cut at 200
// bytes inside the key, a redirect's Location, the stream, a header),
// never reaches a record, records.jsonl, summary.json, report.md, the job
// summary, the log or a failure message: not even 5 bytes of the key.
func TestSecretsEveryEncodingEveryPlace(t *testing.T) {
	key := redacttest.Key
	for _, e := range redacttest.Encodings {
		name := e.Name
		t.Run(name, func(t *testing.T) {
			enc := e.Enc(key)
			srv := encodedEcho(t, enc)
			stepSummary := filepath.Join(t.TempDir(), "summary.md")
			t.Setenv("GITHUB_STEP_SUMMARY", stepSummary)
			t.Setenv(sloassert.EnvSummary, "on") // CI turns the summary off for the project's tests; this test reads it
			c := &captureT{T: t}
			p := latencytest.OpenAI(srv.URL+"/v1", latencytest.WithAPIKey(key), latencytest.WithHTTPClient(srv.Client()))
			r := latencytest.Batch{NoWarmup: true, Requests: 8, Load: latencytest.Load{NoNonce: true, MaxTokens: 4, KeepContent: true}}.Measure(c, p)
			var recs []latencytest.Record
			recs = append(recs, r.Records...)
			// The same places through the provider's own HTTP/1.1 client.
			fast := latencytest.OpenAI(srv.URL+"/v1", latencytest.WithAPIKey(key))
			defer fast.CloseIdleConnections()
			for j := range 8 {
				recs = append(recs, fast.Call(t.Context(), latencytest.Request{ID: fmt.Sprintf("c1-%04d", j), MaxTokens: 4,
					Messages: []latencytest.Message{{Role: "user", Content: "hi"}}}))
			}
			for _, path := range []string{"long_error", "redirect", "ok"} {
				h := latencytest.HTTP("GET", srv.URL+"/http/"+path, latencytest.WithAPIKey(key),
					latencytest.WithHTTPClient(&http.Client{Transport: srv.Client().Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}))
				recs = append(recs, h.Call(t.Context(), latencytest.Request{ID: "h-" + path}))
			}
			sloassert.Check(c, r, sloassert.Q(sloassert.TTFT, 0.5, time.Nanosecond), sloassert.MaxErrorRate(0))

			// The echo reached the records, so the test proves something.
			all, _ := json.Marshal(recs)
			if !strings.Contains(string(all), "[redacted]") {
				t.Fatalf("no echo was redacted: the test proves nothing:\n%s", all)
			}
			texts := map[string]string{"records": string(all), "log and failures": strings.Join(c.out, "\n")}
			readOutputs(t, stepSummary, texts)
			for where, text := range texts {
				if l := redacttest.Leaks(text, key); len(l) > 0 {
					t.Errorf("%s: %q leak into %s", name, l, where)
				}
			}
			for j, rec := range recs {
				b, _ := json.Marshal(rec)
				if l := redacttest.Leaks(string(b), key); len(l) > 0 {
					place := echoPlacesEncoded[min(j%16%8+j/16*8, len(echoPlacesEncoded)-1)]
					t.Errorf("%s, %s (%s): %q leak into the record:\n%s", name, place.name, place.why, l, b)
				}
			}
		})
	}
}

// A key given where a URL belongs (arguments swapped, a variable mixed
// up) is never echoed by the panic or the error that refuses it, in any
// of the places a URL is taken: HTTP, OpenAI and the base URL variable.
func TestSecretsNeverInPanicsOrURLErrors(t *testing.T) {
	key := redacttest.Key
	for _, raw := range []string{key, "Bearer " + key, "ftp://user:" + key + "@host/x?k=" + key} {
		for name, f := range map[string]func(){
			"HTTP":   func() { latencytest.HTTP("GET", raw) },
			"OpenAI": func() { latencytest.OpenAI(raw) },
		} {
			msg := func() (msg string) {
				defer func() { msg = fmt.Sprint(recover()) }()
				f()
				return ""
			}()
			if !strings.HasPrefix(msg, "latencytest: ") || len(redacttest.Leaks(msg, key)) > 0 {
				t.Errorf("%s(%q): panic %q", name, raw, msg)
			}
		}
		t.Setenv(latencytest.EnvBaseURL, raw)
		t.Setenv(latencytest.EnvAPIKey, key)
		t.Setenv(latencytest.EnvModel, "m")
		if _, err := latencytest.OpenAIFromEnv(); err == nil || len(redacttest.Leaks(err.Error(), key)) > 0 {
			t.Errorf("%s=%q: error %v", latencytest.EnvBaseURL, raw, err)
		}
	}
}

// readOutputs adds to texts what a Measure run wrote for people to read:
// its artifacts (records.jsonl, summary.json, report.md) and the job
// summary at stepSummary (which must not be empty), each by its name.
func readOutputs(t *testing.T, stepSummary string, texts map[string]string) {
	t.Helper()
	dir := artifactDir(t)
	for _, f := range []string{"records.jsonl", "summary.json", "report.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(b)
	}
	b, err := os.ReadFile(stepSummary)
	if err != nil || len(b) == 0 {
		t.Fatalf("no job summary: %v", err)
	}
	texts["job summary"] = string(b)
}
