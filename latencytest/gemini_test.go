package latencytest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/protocol"
)

// gchunk is a Gemini stream chunk: candidate 0 with parts (JSON objects)
// and a finish reason ("" for none), and the rest of the object.
func gchunk(finish string, rest string, parts ...string) string {
	c := `{"content":{"parts":[` + strings.Join(parts, ",") + `],"role":"model"},"index":0`
	if finish != "" {
		c += `,"finishReason":"` + finish + `"`
	}
	obj := `{"candidates":[` + c + `}],"modelVersion":"gemini-x"`
	if rest != "" {
		obj += "," + rest
	}
	return "data: " + obj + "}\r\n\r\n"
}

// gtext and gthought are a text part and a thought part.
func gtext(s string) string {
	q, _ := json.Marshal(s)
	return `{"text":` + string(q) + `}`
}

func gthought(s string) string {
	q, _ := json.Marshal(s)
	return `{"text":` + string(q) + `,"thought":true}`
}

// gcall is a functionCall part.
func gcall(name, args string) string {
	return `{"functionCall":{"name":"` + name + `","args":` + args + `}}`
}

const gusage = `"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":3,"thoughtsTokenCount":5,"totalTokenCount":15}`

// Gemini streams and errors, each from the built-in provider and through
// Instrument on the same bytes: the class the issue names (a safety stop
// is content_filter, MAX_TOKENS a success, a stream without a final
// finishReason truncated, an error body its HTTP class with Google's
// status and message), never a success without a token.
func TestGeminiClasses(t *testing.T) {
	type tc struct {
		name                 string
		status               int
		body                 string
		cut                  bool
		class, detail, note  string
		content, finish      string
		tokens, calls, comp  int
		reasoning, firstText int // the token event of the first answer, from 1 (0: none)
	}
	cases := []tc{
		{name: "text, STOP", body: gchunk("", "", gtext("Hi")) + gchunk("STOP", gusage, gtext(" there")),
			content: "Hi there", finish: "STOP", tokens: 2, comp: 8, reasoning: 5, firstText: 1},
		{name: "thoughts are reasoning, not the answer", body: gchunk("", "", gthought("hmm")) + gchunk("", "", gthought("so")) + gchunk("STOP", gusage, gtext("Yes")),
			content: "Yes", finish: "STOP", tokens: 3, comp: 8, reasoning: 5, firstText: 3},
		{name: "MAX_TOKENS is a success", body: gchunk("", "", gtext("Long")) + gchunk("MAX_TOKENS", gusage, gtext(" answer")),
			content: "Long answer", finish: "MAX_TOKENS", tokens: 2, comp: 8, reasoning: 5, firstText: 1},
		{name: "thoughts alone to MAX_TOKENS are no answer", body: gchunk("", "", gthought("hmm")) + gchunk("MAX_TOKENS", gusage),
			class: ClassEmptyAnswer, finish: "MAX_TOKENS", tokens: 1, comp: 8, reasoning: 5},
		{name: "functionCall alone is an answer", body: gchunk("STOP", gusage, gcall("get_weather", `{"city":"Paris"}`)),
			finish: "STOP", tokens: 1, calls: 1, comp: 8, reasoning: 5, firstText: 1},
		{name: "parallel functionCalls", body: gchunk("", "", gthought("plan")) + gchunk("STOP", gusage, gcall("a", `{}`), gcall("b", `{"x":1}`)),
			finish: "STOP", tokens: 2, calls: 2, comp: 8, reasoning: 5, firstText: 2},
		{name: "functionCall args that are no object", body: gchunk("STOP", "", gcall("f", `"x"`)),
			class: ClassBadStream, detail: "functionCall f: its args are not an object", finish: "STOP"},
		{name: "prompt blocked", body: `data: {"promptFeedback":{"blockReason":"SAFETY","safetyRatings":[]},"usageMetadata":{"promptTokenCount":9},"modelVersion":"gemini-x"}` + "\r\n\r\n",
			class: ClassContentFilter, note: "promptFeedback.blockReason SAFETY", finish: "content_filter"},
		{name: "clean end without a finishReason", body: gchunk("", "", gtext("Hi")) + gchunk("", "", gtext(" th")),
			class: ClassTruncated, detail: "without a chunk with a finishReason", content: "Hi th", tokens: 2, firstText: 1},
		{name: "connection drops mid-chunk", cut: true, body: gchunk("", "", gtext("Hi")) + `data: {"candidates":[{"content":{"pa`,
			class: ClassTruncated, content: "Hi", tokens: 1, firstText: 1},
		{name: "error object mid-stream", body: gchunk("", "", gtext("Hi")) + `data: {"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}` + "\r\n\r\n",
			class: ClassBadStream, detail: "error event: INTERNAL: An internal error has occurred.", content: "Hi", tokens: 1, firstText: 1},
		{name: "malformed chunk", body: gchunk("", "", gtext("Hi")) + "data: {\"candidates\":\r\n\r\n" + gchunk("STOP", "", gtext("!")),
			class: ClassBadStream, detail: "malformed event", content: "Hi", tokens: 1, firstText: 1},
		{name: "429 up front", status: 429, body: `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`,
			class: HTTPClass(429), detail: "RESOURCE_EXHAUSTED: Resource has been exhausted"},
		{name: "503 up front", status: 503, body: `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`,
			class: HTTPClass(503), detail: "UNAVAILABLE: The model is overloaded"},
		{name: "other candidates ignored", body: `data: {"candidates":[{"content":{"parts":[{"text":"B"}]},"index":1},{"content":{"parts":[{"text":"A"}]},"index":0,"finishReason":"STOP"}]}` + "\r\n\r\n",
			note: "candidates other than index 0 ignored", content: "A", finish: "STOP", tokens: 1, firstText: 1},
	}
	// Every documented safety and policy stop: content_filter, naming the
	// reason, after the text that came before it.
	for _, r := range []string{"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "MODEL_ARMOR"} {
		cases = append(cases, tc{name: "finishReason " + r, body: gchunk("", "", gtext("Here is")) + gchunk(r, gusage),
			class: ClassContentFilter, note: "finishReason " + r + ": a safety or policy stop", content: "Here is", finish: "content_filter",
			tokens: 1, comp: 8, reasoning: 5, firstText: 1})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				status, ct := cmpOr(tc.status, 200), "text/event-stream"
				if status != 200 {
					ct = "application/json"
				}
				built := protoProvider(protocol.Gemini, answerAs(status, ct, tc.body, tc.cut)).Call(context.Background(),
					Request{ID: "g-1", Messages: []Message{{Role: "user", Content: "hi"}}})
				hc := &http.Client{Transport: Instrument(answerAs(status, ct, tc.body, tc.cut).Transport)}
				inst := Func(func(ctx context.Context, _ Request) error {
					return rawRead(ctx, hc, "/v1beta"+protocol.Gemini.Path("gemini-x"))
				}).Call(context.Background(), Request{ID: "g-1"})
				for _, r := range []struct {
					what string
					rec  Record
				}{{"built-in", built}, {"through Instrument", inst}} {
					rec, detail := r.rec, r.rec.Detail
					for _, a := range rec.Attempts {
						detail += "\n" + a.Detail
					}
					ok := rec.Err == tc.class && strings.Contains(detail, tc.detail) && rec.Content == tc.content &&
						rec.TokenEvents == tc.tokens && rec.ToolCalls == tc.calls && rec.FinishReason == tc.finish &&
						rec.CompletionTokens == tc.comp && rec.ReasoningTokens == tc.reasoning &&
						(tc.note == "" || strings.Contains(strings.Join(rec.Notes, "\n"), tc.note))
					if tc.firstText > 0 && tc.class == "" && rec.FirstAnswer != rec.TTFT && tc.firstText == 1 {
						ok = false
					}
					if tc.firstText == 0 && rec.FirstAnswer != NotObserved {
						ok = false
					}
					if rec.OK() && (rec.TokenEvents == 0 || rec.TTFT < 0 || rec.FirstAnswer < 0) {
						t.Errorf("%s: a success without a token or an answer: %+v", r.what, rec)
					}
					if !ok {
						t.Errorf("%s: got class %q detail %q content %q tokens %d calls %d finish %q usage %d/%d first answer %v notes %q\nwant class %q detail ~%q content %q tokens %d calls %d finish %q usage %d/%d note ~%q",
							r.what, rec.Err, detail, rec.Content, rec.TokenEvents, rec.ToolCalls, rec.FinishReason, rec.CompletionTokens, rec.ReasoningTokens, rec.FirstAnswer, rec.Notes,
							tc.class, tc.detail, tc.content, tc.tokens, tc.calls, tc.finish, tc.comp, tc.reasoning, tc.note)
					}
				}
			})
		})
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// Each Gemini fixture cut after every one of its chunks, ending cleanly
// (the chunked body's end) or with the connection dropped at every byte
// (every 7th under -short), through both HTTP paths: the same record on
// both, never a success before the chunk with the finishReason, the text
// read so far kept; whole, it is a success.
func TestGeminiCutAtEveryPointBothPaths(t *testing.T) {
	step := 1
	if testing.Short() {
		step = 7
	}
	for _, f := range protoFixtures {
		if f.api != protocol.Gemini {
			continue
		}
		_, blocks := f.read(t)
		run := func(what, raw string, keep bool) Record {
			t.Helper()
			var recs [2]Record
			for i, fast := range []bool{true, false} {
				srv := &pipeServer{respond: func(w io.Writer, _ *http.Request, _ int) bool { return writeBytes(w, raw, false) && keep }}
				o := pipeProto(t, f.api, srv, fast)
				recs[i] = o.Call(context.Background(), Request{ID: "c-1", Messages: []Message{{Role: "user", Content: "hi"}}})
				o.CloseIdleConnections()
				srv.close()
			}
			for i := range recs {
				recs[i].FirstToolCall, recs[i].ToolArgsDone = 0, 0
			}
			sameRecords(t, f.file+" "+what, recs[0], recs[1])
			return recs[0]
		}
		body := ""
		for k, b := range blocks {
			body += b
			rec := run(fmt.Sprintf("after chunk %d", k), sseHead+"Transfer-Encoding: chunked\r\n\r\n"+chunked(body), true)
			last := k == len(blocks)-1
			if last != rec.OK() || !last && rec.Err != ClassTruncated || !strings.HasPrefix(f.content, rec.Content) {
				t.Errorf("%s after chunk %d of %d: class %q content %q", f.file, k, len(blocks), rec.Err, rec.Content)
			}
		}
		for i := 1; i < len(body)-1; i += step {
			rec := run(fmt.Sprintf("dropped at byte %d", i), sseHead+"Transfer-Encoding: chunked\r\n\r\n"+strings.TrimSuffix(chunked(body[:i]), "0\r\n\r\n"), false)
			if rec.OK() {
				t.Errorf("%s dropped at byte %d: a success: %+v", f.file, i, rec)
			}
			if t.Failed() {
				return
			}
		}
	}
}

// WithoutStreaming asks for :generateContent and reads the whole
// GenerateContentResponse: thoughts are not the answer, every
// functionCall a call, usage as a stream's; a JSON array of chunks (a
// stream without alt=sse) reads through Instrument as one answer; a
// safety stop is content_filter.
func TestGeminiWhole(t *testing.T) {
	whole := `{"candidates":[{"content":{"parts":[{"text":"plan","thought":true},{"text":"Checking."},` +
		`{"functionCall":{"name":"a","args":{}}},{"functionCall":{"name":"b","args":{"x":1}}}],"role":"model"},"finishReason":"STOP","index":0}],` +
		`"usageMetadata":{"promptTokenCount":11,"candidatesTokenCount":6,"thoughtsTokenCount":4,"cachedContentTokenCount":2},"modelVersion":"gemini-x"}`
	synctest.Test(t, func(t *testing.T) {
		var path, query, accept string
		hc := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			path, query, accept = r.URL.Path, r.URL.RawQuery, r.Header.Get("Accept")
			return jsonAnswer(200, whole).Transport.RoundTrip(r)
		})}
		p := NewLLM("http://fake/v1beta", protocol.Gemini, WithHTTPClient(hc), WithAPIKey(key), WithModel("gemini-x"), WithoutStreaming())
		rec := p.Call(context.Background(), Request{ID: "w-1", Messages: []Message{{Role: "user", Content: "hi"}}})
		if path != "/v1beta/models/gemini-x:generateContent" || query != "" || accept != "application/json" {
			t.Errorf("request %s?%s accept %s", path, query, accept)
		}
		if !rec.OK() || rec.Content != "Checking." || rec.ToolCalls != 2 || rec.PromptTokens != 11 || rec.CompletionTokens != 10 ||
			rec.ReasoningTokens != 4 || rec.CachedTokens != 2 || rec.FinishReason != "STOP" || rec.TTFT != NotObserved || rec.Model != "gemini-x" {
			t.Errorf("whole record %+v", rec)
		}
		if d := p.Describe(); d.Kind != "gemini-generate-content (not streaming)" {
			t.Errorf("kind %q", d.Kind)
		}
	})
	for _, tc := range []struct {
		name, body, class, content string
	}{
		{"array of chunks", `[{"candidates":[{"content":{"parts":[{"text":"Hi"}]},"index":0}]},` +
			`{"candidates":[{"content":{"parts":[{"text":" there"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}]`, "", "Hi there"},
		{"safety stop", `{"candidates":[{"finishReason":"SAFETY","index":0}],"usageMetadata":{"promptTokenCount":3}}`, ClassContentFilter, ""},
		{"prompt blocked", `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"}}`, ClassContentFilter, ""},
		{"error object in a 2xx", `{"error":{"code":500,"message":"boom","status":"INTERNAL"},"candidates":[]}`, ClassBadStream, ""},
	} {
		synctest.Test(t, func(t *testing.T) {
			req := Request{ID: "w-2", Messages: []Message{{Role: "user", Content: "hi"}}}
			hc := &http.Client{Transport: Instrument(jsonAnswer(200, tc.body).Transport)}
			inst := Func(func(ctx context.Context, _ Request) error {
				return rawRead(ctx, hc, "/v1beta/models/gemini-x:streamGenerateContent")
			}).Call(context.Background(), req)
			recs := []Record{inst}
			if tc.name != "array of chunks" {
				recs = append(recs, protoProvider(protocol.Gemini, jsonAnswer(200, tc.body), WithoutStreaming()).Call(context.Background(), req))
			}
			for i, rec := range recs {
				if rec.Err != tc.class || rec.Content != tc.content || rec.Total != 700*time.Millisecond {
					t.Errorf("%s (%d: 0 Instrument, 1 built-in): class %q content %q total %v, want %q %q: %+v", tc.name, i, rec.Err, rec.Content, rec.Total, tc.class, tc.content, rec)
				}
			}
		})
	}
}

// GeminiFromEnv names what is unset, reads GOOGLE_API_KEY when
// GEMINI_API_KEY is unset, defaults to Google's base URL with /v1beta
// (never contacted: the client here answers), sends the key as
// x-goog-api-key and redacts it from an error body that echoes it.
func TestGeminiFromEnv(t *testing.T) {
	for _, v := range []string{"GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_MODEL"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	if _, err := GeminiFromEnv(); err == nil || err.Error() !=
		"latencytest: GEMINI_API_KEY or GOOGLE_API_KEY (set it empty for a server without keys), GEMINI_MODEL not set" {
		t.Errorf("error %v", err)
	}
	t.Setenv("GOOGLE_API_KEY", key)
	t.Setenv("GEMINI_MODEL", "gemini-2.5-flash")
	for base, want := range map[string]string{"": "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"http://127.0.0.1:9/gw/": "http://127.0.0.1:9/gw/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"http://127.0.0.1:9/v1":  "http://127.0.0.1:9/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse"} {
		t.Setenv("GOOGLE_GEMINI_BASE_URL", base)
		var got, apiKey string
		c := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			got, apiKey = r.URL.String(), r.Header.Get("X-Goog-Api-Key")
			return &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(`{"error":{"code":400,"message":"API key not valid: ` + key + `","status":"INVALID_ARGUMENT"}}`)), Request: r}, nil
		})}
		p, err := GeminiFromEnv(WithHTTPClient(c))
		if err != nil {
			t.Fatal(err)
		}
		rec := p.Call(context.Background(), Request{ID: "e-1", Messages: []Message{{Role: "user", Content: "hi"}}})
		if got != want || apiKey != key || rec.Err != HTTPClass(400) || rec.Detail != "INVALID_ARGUMENT: API key not valid: [redacted]" ||
			strings.Contains(fmt.Sprintf("%+v", rec), key) {
			t.Errorf("base %q: url %s (want %s), key sent %v, record %+v", base, got, want, apiKey == key, rec)
		}
	}
}

// The built-in Gemini provider on the fake, in memory on synctest's
// clock: every clock exact. A text answer: thoughts at 100 and 110 ms
// (TTFT), the answer from 120 ms, the last chunk with STOP and the usage
// at 150 ms. Two parallel calls of 5 argument tokens, 2 tokens a chunk
// after 2 reasoning tokens: the thought at 100 ms, call 0 whole at
// 150 ms (its last argument token), call 1 at 200 ms. Instrument around
// a client of one's own reads the same record from the same bytes.
func TestGeminiOnFakeExact(t *testing.T) {
	for _, tc := range []struct {
		name                                 string
		prof                                 fakeprovider.Profile
		ttft, answer, tool, args, total      time.Duration
		events, calls, completion, reasoning int
		finish                               string
	}{
		{"text", fakeprovider.Profile{Seed: 1, TTFT: fakeprovider.Fixed(100 * time.Millisecond), ITL: fakeprovider.Fixed(10 * time.Millisecond),
			ReasoningTokens: fakeprovider.Fixed(2), OutputTokens: fakeprovider.Fixed(4)},
			100 * time.Millisecond, 120 * time.Millisecond, 0, 0, 150 * time.Millisecond, 6, 0, 6, 2, "STOP"},
		{"parallel calls", fakeprovider.Profile{Seed: 3, TTFT: fakeprovider.Fixed(100 * time.Millisecond), ITL: fakeprovider.Fixed(10 * time.Millisecond),
			ReasoningTokens: fakeprovider.Fixed(2), OutputTokens: fakeprovider.Fixed(8), TokensPerChunk: fakeprovider.Fixed(2),
			ToolCalls: fakeprovider.ToolCalls{Probability: 1, ArgumentsTokens: fakeprovider.Fixed(5), Parallel: fakeprovider.Fixed(2)}},
			100 * time.Millisecond, 150 * time.Millisecond, 150 * time.Millisecond, 150 * time.Millisecond, 200 * time.Millisecond, 3, 2, 12, 2, "STOP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := fakeprovider.New(tc.prof)
				t.Cleanup(f.Close)
				p := Gemini("http://fake/v1beta", WithHTTPClient(f.Client()), WithModel("fake-model"), WithAPIKey(key))
				req := Request{ID: "g-1", MaxTokens: 64, Messages: []Message{{Role: "user", Content: "hello there"}}}
				built := p.Call(context.Background(), req)
				hc := &http.Client{Transport: Instrument(f.Client().Transport)}
				body, _ := protocol.Gemini.Body(protocol.Request{Model: "fake-model", MaxTokens: 64, Messages: []protocol.Message{{Role: "user", Content: "hello there"}}})
				inst := Func(func(ctx context.Context, r Request) error {
					hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://fake/v1beta"+protocol.Gemini.Path("fake-model"), strings.NewReader(string(body)))
					if err != nil {
						return err
					}
					hr.Header.Set("X-Request-ID", r.ID)
					resp, err := hc.Do(hr)
					if err != nil {
						return err
					}
					defer resp.Body.Close()
					_, err = io.Copy(io.Discard, resp.Body)
					return err
				}).Call(context.Background(), Request{ID: "g-2"})
				served := f.Served()
				if len(inst.Attempts) != 1 || len(served) != 2 {
					t.Fatalf("%d attempts through Instrument, %d served", len(inst.Attempts), len(served))
				}
				for i, rec := range []Record{built, inst} {
					if !rec.OK() || rec.TTFT != tc.ttft || rec.FirstAnswer != tc.answer || rec.FirstToolCall != tc.tool || rec.ToolArgsDone != tc.args ||
						rec.Total != tc.total || rec.LastToken != tc.total || rec.TokenEvents != tc.events || rec.ToolCalls != tc.calls ||
						rec.CompletionTokens != tc.completion || rec.ReasoningTokens != tc.reasoning || rec.FinishReason != tc.finish ||
						rec.PromptTokens != 2 /* 11 bytes, a token per 4 */ || rec.Model != "fake-model" || len(rec.Notes) != 0 {
						t.Errorf("record %d (0 built-in, 1 Instrument): %+v", i, rec)
					}
					if served[i].Protocol != fakeprovider.ProtocolGemini || served[i].Tokens != tc.completion || served[i].ToolCalls != tc.calls {
						t.Errorf("served %d: %+v", i, served[i])
					}
				}
				if tc.calls == 0 && (built.Content == "" || built.Content != inst.Content) {
					t.Errorf("content %q, through Instrument %q", built.Content, inst.Content)
				}
			})
		})
	}
}

// The built-in Gemini provider on the fake over a real loopback socket,
// through its own HTTP/1.1 client and through net/http (WithNetHTTP),
// streamed and whole: the same answer as in memory, each clock at or
// after the profile's (a socket only adds time), the Tailguard-Injected
// header kept.
func TestGeminiOnFakeSocket(t *testing.T) {
	f := fakeprovider.New(fakeprovider.Profile{Seed: 1, TTFT: fakeprovider.Fixed(30 * time.Millisecond), ITL: fakeprovider.Fixed(2 * time.Millisecond),
		ReasoningTokens: fakeprovider.Fixed(2), OutputTokens: fakeprovider.Fixed(4),
		Script: []fakeprovider.ScriptEntry{{ID: "s-cold", ColdStart: 40 * time.Millisecond}, {ID: "s-429", Status: 429}}})
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()
	for _, tc := range []struct {
		name string
		opts []Option
	}{{"own client", nil}, {"net/http", []Option{WithNetHTTP()}}, {"whole", []Option{WithoutStreaming()}}} {
		p := Gemini(srv.URL+"/v1beta", append([]Option{WithModel("fake-model"), WithAPIKey(key)}, tc.opts...)...)
		msgs := []Message{{Role: "user", Content: "hello there"}}
		rec := p.Call(context.Background(), Request{ID: "s-ok-" + tc.name, Messages: msgs})
		stream := tc.name != "whole"
		if !rec.OK() || rec.Content != " is where users live" || rec.CompletionTokens != 6 || rec.ReasoningTokens != 2 ||
			rec.Total < 40*time.Millisecond || stream && (rec.TTFT < 30*time.Millisecond || rec.FirstAnswer < 34*time.Millisecond || rec.TokenEvents != 6) {
			t.Errorf("%s: %+v", tc.name, rec)
		}
		cold := p.Call(context.Background(), Request{ID: "s-cold", Messages: msgs})
		if !cold.OK() || cold.Injected != "cold_start=40ms" || cold.Total < 80*time.Millisecond {
			t.Errorf("%s cold start: %+v", tc.name, cold)
		}
		limited := p.Call(context.Background(), Request{ID: "s-429", Messages: msgs})
		if limited.Err != HTTPClass(429) || limited.Detail != "RESOURCE_EXHAUSTED: Rate limit reached for requests" || limited.Injected != "http_429" {
			t.Errorf("%s 429: %+v", tc.name, limited)
		}
		p.CloseIdleConnections()
	}
}
