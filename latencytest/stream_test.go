package latencytest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/internal/sse/ssetest"
)

// tok is one SSE event carrying answer content for choice 0.
func tok(s string) string {
	b, _ := json.Marshal(s)
	return `data: {"choices":[{"index":0,"delta":{"content":` + string(b) + `}}]}` + "\n\n"
}

const done = "data: [DONE]\n\n"

// answerAs is answer with another Content-Type; with cut, the connection
// drops after the body (io.ErrUnexpectedEOF).
func answerAs(status int, contentType, body string, cut bool) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		if contentType != "" {
			h.Set("Content-Type", contentType)
		}
		var rd io.Reader = strings.NewReader(body)
		if cut {
			rd = io.MultiReader(rd, iotest.ErrReader(io.ErrUnexpectedEOF))
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(rd), Request: r}, nil
	})}
}

// step writes data at a time after the request arrived.
type step struct {
	at   time.Duration
	data string
}

// scripted is an in-memory server that writes the exact bytes of steps at
// their times (inside synctest.Test: exactly), then either ends the body
// or, with hold, keeps it open until the client closes it or gives up.
// closed is set when the client closed the body.
func scripted(steps []step, hold bool, closed *atomic.Bool) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		pr, pw := io.Pipe()
		gone := make(chan struct{})
		start := time.Now()
		go func() {
			defer pw.Close()
			for _, s := range steps {
				t := time.NewTimer(time.Until(start.Add(s.at)))
				select {
				case <-t.C:
				case <-gone:
					t.Stop()
					return
				case <-r.Context().Done():
					t.Stop()
					return
				}
				if _, err := io.WriteString(pw, s.data); err != nil {
					return
				}
			}
			if hold {
				select {
				case <-gone:
				case <-r.Context().Done():
				}
			}
		}()
		body := &notifyBody{ReadCloser: pr, gone: gone, closed: closed}
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body, Request: r}, nil
	})}
}

type notifyBody struct {
	io.ReadCloser
	gone   chan struct{}
	once   atomic.Bool
	closed *atomic.Bool
}

func (b *notifyBody) Close() error {
	if b.once.CompareAndSwap(false, true) {
		if b.closed != nil {
			b.closed.Store(true)
		}
		close(b.gone)
	}
	return b.ReadCloser.Close()
}

// The stream ends at [DONE]: the time of [DONE] is the total, nothing
// after it counts, and a server that keeps the connection open adds no
// time. Timed on synctest's clock, so every figure is exact.
func TestStreamEndsAtDone(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name, why   string
		steps       []step
		hold        bool
		class       string
		ttft, total time.Duration
		content     string
		events      int
		detail      string
	}{
		{name: "held open after [DONE]", why: "the server keeps the connection open after [DONE]: total is the time of [DONE], not the 10 s timeout",
			steps: []step{{100 * ms, tok("a")}, {200 * ms, tok("b")}, {300 * ms, done}}, hold: true,
			ttft: 100 * ms, total: 300 * ms, content: "ab", events: 2},
		{name: "nothing after [DONE] counts", why: "a chunk and usage after [DONE] in the same write are not part of the answer",
			steps: []step{{100 * ms, tok("a") + done + tok("c") + `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":9}}` + "\n\n"}},
			ttft:  100 * ms, total: 100 * ms, content: "a", events: 1},
		{name: "[DONE] at EOF without a line end", why: "data: [DONE] with no blank line, then EOF, is a clean end, not truncated",
			steps: []step{{100 * ms, tok("a")}, {200 * ms, "data: [DONE]"}},
			ttft:  100 * ms, total: 200 * ms, content: "a", events: 1},
		{name: "[DONE] at EOF with one LF", why: "one line end but no blank line is a clean end too",
			steps: []step{{100 * ms, tok("a")}, {250 * ms, "data: [DONE]\n"}},
			ttft:  100 * ms, total: 250 * ms, content: "a", events: 1},
		{name: "EOF without [DONE]", why: "the end of the stream without [DONE] is truncated, timed at the end",
			steps: []step{{100 * ms, tok("a")}, {400 * ms, ": bye\n\n"}},
			class: ClassTruncated, ttft: 100 * ms, total: 400 * ms, content: "a", events: 1, detail: "without [DONE]"},
		{name: "byte-order mark", why: "a leading BOM is stripped: the first event is the first token (it used to be lost, TTFT one gap late)",
			steps: []step{{100 * ms, ssetest.BOM + tok("a")}, {200 * ms, tok("b")}, {300 * ms, done}},
			ttft:  100 * ms, total: 300 * ms, content: "ab", events: 2},
		{name: "error event ends the stream", why: "an SSE error event fails the request at once, even if the server holds the connection",
			steps: []step{{100 * ms, tok("a")}, {200 * ms, "event: error\ndata: {\"message\":\"overloaded\"}\n\n"}}, hold: true,
			class: ClassBadStream, ttft: 100 * ms, total: 200 * ms, content: "a", events: 1, detail: "overloaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var closed atomic.Bool
				rec := call(t, scripted(tc.steps, tc.hold, &closed), Request{TotalTimeout: 10 * time.Second})
				if rec.Err != tc.class || rec.TTFT != tc.ttft || rec.Total != tc.total || rec.Content != tc.content || rec.TokenEvents != tc.events ||
					!strings.Contains(rec.Detail, tc.detail) {
					t.Errorf("%s\ngot  class %q ttft %v total %v content %q events %d detail %q\nwant class %q ttft %v total %v content %q events %d detail ~%q",
						tc.why, rec.Err, rec.TTFT, rec.Total, rec.Content, rec.TokenEvents, rec.Detail, tc.class, tc.ttft, tc.total, tc.content, tc.events, tc.detail)
				}
				if rec.UsageReported || rec.PromptTokens != 0 {
					t.Errorf("%s: usage after [DONE] was taken: %+v", tc.why, rec)
				}
				synctest.Wait()
				if tc.hold && !closed.Load() {
					t.Errorf("%s: the body was not closed", tc.why)
				}
			})
		})
	}
}

// Over a real socket: a server that keeps the connection open after
// [DONE] does not hold the client (it used to run to the total timeout).
func TestStreamDoneOverSocket(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, tok("a")+done)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // until the client goes
	}))
	defer srv.Close()
	p := OpenAI(srv.URL+"/v1", WithHTTPClient(srv.Client()))
	rec := p.Call(context.Background(), Request{ID: "held", TotalTimeout: 5 * time.Second, Messages: []Message{{Role: "user", Content: "hi"}}})
	if !rec.OK() || rec.Content != "a" || rec.Total >= 5*time.Second {
		t.Errorf("record %+v: want success well before the 5 s timeout", rec)
	}
}

// How a stream is judged: error events, content types, lenient decoding,
// refusals and several choices.
func TestStreamClassification(t *testing.T) {
	const role = `data: {"model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n"
	for _, tc := range []struct {
		name, why   string
		contentType string
		body        string
		cut         bool // the connection drops after body
		class       string
		content     string
		events      int
		detail      []string // substrings of Detail
		notes       []string // substrings of the notes
		check       func(t *testing.T, rec Record)
	}{
		// 3. errors in the stream
		{name: "error event with JSON data", why: "event: error fails the request with the server's message",
			body:  tok("a") + "event: error\ndata: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n" + done,
			class: ClassBadStream, content: "a", events: 1, detail: []string{"overloaded"}},
		{name: "error event whatever its data", why: "event: error fails even when its data looks like a chunk",
			body:  tok("a") + "event: error\ndata: " + `{"choices":[{"delta":{"content":"b"}}]}` + "\n\n" + done,
			class: ClassBadStream, content: "a", events: 1, detail: []string{"error event"}},
		{name: "error event with plain text", why: "the message may be plain text",
			body:  "event: error\ndata: upstream connect error\n\n",
			class: ClassBadStream, detail: []string{"upstream connect error"}},
		{name: "vLLM in-band error", why: `vLLM sends data: {"error": {"object":"error", ...}} mid-stream`,
			body:  tok("a") + `data: {"error":{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}}` + "\n\n" + done,
			class: ClassBadStream, content: "a", events: 1, detail: []string{"max_tokens is too large"}},
		{name: "gateway error as a string", why: `a gateway may send {"error": "..."}`,
			body:  tok("a") + `data: {"error":"upstream timed out"}` + "\n\n" + done,
			class: ClassBadStream, content: "a", events: 1, detail: []string{"upstream timed out"}},
		{name: "top-level error object", why: `{"object":"error","message":...} is an error too`,
			body:  `data: {"object":"error","message":"model overloaded"}` + "\n\n" + done,
			class: ClassBadStream, detail: []string{"model overloaded"}},
		// 5. not a stream
		{name: "HTML page", why: "a proxy's HTML error page with status 200 is a bad stream naming the content type and its start, never truncated",
			contentType: "text/html; charset=utf-8", body: "<html><body>502 Bad Gateway</body></html>" + strings.Repeat("x", 500),
			class: ClassBadStream, detail: []string{"text/html", "502 Bad Gateway"},
			check: func(t *testing.T, rec Record) {
				if len(rec.Detail) > 320 {
					t.Errorf("detail of %d bytes: want the first 200 bytes of the body", len(rec.Detail))
				}
			}},
		{name: "JSON error body", why: "a JSON error with status 200 gives its message",
			contentType: "application/json", body: `{"error":{"message":"you must provide a model parameter","type":"invalid_request_error"}}`,
			class: ClassBadStream, detail: []string{"application/json", "you must provide a model parameter"}},
		{name: "stream ignored", why: "a server that ignored stream:true sends one JSON completion: bad_stream, not a success",
			contentType: "application/json", body: `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`,
			class: ClassBadStream, detail: []string{"application/json", "chat.completion"}},
		{name: "HTML cut short", why: "a non-stream answer whose connection drops is still bad_stream, never truncated",
			contentType: "text/html", body: "", cut: true, class: ClassBadStream, detail: []string{"text/html"}},
		{name: "plain text even with SSE lines", why: "text/plain is not an event stream",
			contentType: "text/plain", body: tok("a") + done, class: ClassBadStream, detail: []string{"text/plain"}},
		{name: "charset and case", why: "text/event-stream; charset=utf-8 in any case is an event stream",
			contentType: "Text/Event-Stream; charset=UTF-8", body: tok("a") + done, content: "a", events: 1},
		{name: "no content type", why: "a server that names no type is given the benefit of the doubt",
			contentType: "", body: tok("a") + done, content: "a", events: 1},
		// 6. lenient decoding
		{name: "content parts", why: "delta.content may be an array of typed parts",
			body:    `data: {"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"Hel"},{"type":"text","text":"lo"}]}}]}` + "\n\n" + done,
			content: "Hello", events: 1},
		{name: "odd model type", why: `"model": 5 loses the model, not the event`,
			body:    `data: {"model":5,"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n" + done,
			content: "a", events: 1, notes: []string{"model"}},
		{name: "odd usage type", why: `"usage": "x" loses the usage, not the event`,
			body:    `data: {"choices":[{"index":0,"delta":{"content":"a"}}],"usage":"x"}` + "\n\n" + done,
			content: "a", events: 1, notes: []string{"usage"},
			check: func(t *testing.T, rec Record) {
				if rec.UsageReported {
					t.Error("usage reported from a string")
				}
			}},
		{name: "odd finish_reason type", why: `"finish_reason": 3 loses the finish reason, not the event`,
			body:    `data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":3}]}` + "\n\n" + done,
			content: "a", events: 1, notes: []string{"finish_reason"}},
		{name: "huge usage number", why: "a count beyond 1<<31 is ignored with a note; the timing stays",
			body:    tok("a") + tok("b") + `data: {"choices":[],"usage":{"prompt_tokens":1e40,"completion_tokens":99999999999}}` + "\n\n" + done,
			content: "ab", events: 2, notes: []string{"prompt_tokens", "completion_tokens"},
			check: func(t *testing.T, rec Record) {
				if rec.PromptTokens != 0 || rec.CompletionTokens != 0 || rec.UsageReported {
					t.Errorf("usage %d/%d reported %v, want ignored", rec.PromptTokens, rec.CompletionTokens, rec.UsageReported)
				}
			}},
		{name: "negative usage", why: "a negative count is ignored with a note; the other counts stay",
			body:    tok("a") + `data: {"choices":[],"usage":{"prompt_tokens":-3,"completion_tokens":1}}` + "\n\n" + done,
			content: "a", events: 1, notes: []string{"prompt_tokens"},
			check: func(t *testing.T, rec Record) {
				if rec.PromptTokens != 0 || rec.CompletionTokens != 1 || !rec.UsageReported {
					t.Errorf("usage %d/%d reported %v", rec.PromptTokens, rec.CompletionTokens, rec.UsageReported)
				}
			}},
		{name: "malformed JSON is still a bad stream", why: "an event that is not JSON at all fails the request",
			body: `data: {"choices":[{"delta":{"content":"a"}` + "\n\n" + done, class: ClassBadStream, detail: []string{"malformed event"}},
		// 7. refusals
		{name: "refusal", why: "a refusal is an answer of its own kind, not an empty stream; its text is in Detail",
			body:  role + `data: {"choices":[{"index":0,"delta":{"refusal":"I can't"}}]}` + "\n\n" + `data: {"choices":[{"index":0,"delta":{"refusal":" help with that."}}]}` + "\n\n" + done,
			class: ClassRefusal, events: 2, detail: []string{"I can't help with that."},
			check: func(t *testing.T, rec Record) {
				if rec.TTFT < 0 || rec.FirstAnswer < 0 {
					t.Errorf("refusal timing lost: TTFT %v first answer %v", rec.TTFT, rec.FirstAnswer)
				}
			}},
		{name: "long refusal", why: "Detail keeps the refusal's start",
			body:  `data: {"choices":[{"index":0,"delta":{"refusal":"` + strings.Repeat("no ", 400) + `"}}]}` + "\n\n" + done,
			class: ClassRefusal, events: 1, detail: []string{"no no no"},
			check: func(t *testing.T, rec Record) {
				if len(rec.Detail) > 400 {
					t.Errorf("detail of %d bytes, want it truncated", len(rec.Detail))
				}
			}},
		// 8. several choices
		{name: "n=2 in separate events", why: "choice 1 is neither content nor a token event",
			body:    tok("a") + `data: {"choices":[{"index":1,"delta":{"content":"X"}}]}` + "\n\n" + tok("b") + `data: {"choices":[{"index":1,"delta":{"content":"Y"}}]}` + "\n\n" + done,
			content: "ab", events: 2, notes: []string{"index 0"}},
		{name: "n=2 in one event", why: "choice 1 in the same event as choice 0 is ignored too",
			body:    `data: {"choices":[{"index":1,"delta":{"content":"X"}},{"index":0,"delta":{"content":"a"}}]}` + "\n\n" + done,
			content: "a", events: 1, notes: []string{"index 0"}},
		{name: "choice 1 only", why: "an event with choice 1 only is not a token: no token of choice 0 means an empty stream",
			body:  `data: {"choices":[{"index":1,"delta":{"content":"X"}}]}` + "\n\n" + done,
			class: ClassEmptyStream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct := tc.contentType
			if ct == "" && !strings.HasPrefix(tc.name, "no content type") {
				ct = "text/event-stream"
			}
			rec := call(t, answerAs(200, ct, tc.body, tc.cut), Request{})
			if rec.Err != tc.class || rec.Content != tc.content || rec.TokenEvents != tc.events {
				t.Errorf("%s\ngot  class %q content %q events %d (detail %q)\nwant class %q content %q events %d", tc.why,
					rec.Err, rec.Content, rec.TokenEvents, rec.Detail, tc.class, tc.content, tc.events)
			}
			for _, d := range tc.detail {
				if !strings.Contains(rec.Detail, d) {
					t.Errorf("%s: detail %q lacks %q", tc.why, rec.Detail, d)
				}
			}
			notes := strings.Join(rec.Notes, "; ")
			for _, n := range tc.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("%s: notes %q lack %q", tc.why, notes, n)
				}
			}
			if len(tc.notes) == 0 && len(rec.Notes) > 0 && tc.class == "" {
				t.Errorf("%s: unexpected notes %q", tc.why, rec.Notes)
			}
			if tc.check != nil {
				tc.check(t, rec)
			}
		})
	}
}

// Whether the server reported usage and cached tokens is recorded, so
// that "not reported" is never read as zero.
func TestStreamUsageReported(t *testing.T) {
	for _, tc := range []struct {
		name, why        string
		usage            string
		usageOK, cacheOK bool
		unit             string
	}{
		{"no usage", "no usage chunk: nothing reported, decode rate from token events", ``, false, false, "events/s"},
		{"usage without details", "usage without prompt_tokens_details reports no cache figure", `{"prompt_tokens":7,"completion_tokens":3}`, true, false, "tokens/s"},
		{"cached 0", "cached_tokens 0 is a report of zero cache hits", `{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":0}}`, true, true, "tokens/s"},
		{"cached 5", "cached_tokens 5", `{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":5}}`, true, true, "tokens/s"},
		{"null usage", `"usage": null is no report`, `null`, false, false, "events/s"},
		{"details without cached_tokens", "prompt_tokens_details {} reports no cache figure", `{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{}}`, true, false, "tokens/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tok("a") + tok("b") + tok("c")
			if tc.usage != "" {
				body += `data: {"choices":[],"usage":` + tc.usage + "}\n\n"
			}
			rec := call(t, answer(200, body+done, nil), Request{})
			if !rec.OK() || rec.UsageReported != tc.usageOK || rec.CachedReported != tc.cacheOK || rec.decodeRateUnit() != tc.unit {
				t.Errorf("%s: ok %v usage_reported %v cached_reported %v unit %q; want %v %v %q", tc.why, rec.OK(), rec.UsageReported, rec.CachedReported,
					rec.decodeRateUnit(), tc.usageOK, tc.cacheOK, tc.unit)
			}
			b, _ := json.Marshal(rec)
			if tc.usageOK != strings.Contains(string(b), `"usage_reported":true`) || tc.cacheOK != strings.Contains(string(b), `"cached_reported":true`) {
				t.Errorf("JSON %s", b)
			}
		})
	}
}

// WithModel("") keeps the default model rather than sending an empty one.
// The record names no model: the answer's chunks named none (only the
// request did).
func TestWithModelEmptyIsTheDefault(t *testing.T) {
	var seen http.Request
	p := OpenAI("https://api.example.test/v1", WithHTTPClient(answer(200, tok("a")+done, &seen)), WithModel("m-1"), WithModel(""))
	rec := p.Call(context.Background(), Request{ID: "x", Messages: []Message{{Role: "user", Content: "hi"}}})
	var body map[string]any
	b, _ := io.ReadAll(seen.Body)
	if err := json.Unmarshal(b, &body); err != nil || body["model"] != "fake-model" || rec.Model != "" {
		t.Errorf("body %s, record model %q: want the default model sent, none recorded", b, rec.Model)
	}
	if d := p.Describe(); d.Model != "fake-model" {
		t.Errorf("description %+v", d)
	}
}

// The disclosure says when decode rates are event rates (some or all
// successes reported no usage) and when cached tokens were never
// reported (no proof of cache misses).
func TestDisclosureSaysWhatUsageProves(t *testing.T) {
	withUsage := Record{ID: "a", CompletionTokens: 5, UsageReported: true, CachedReported: true}
	noUsage := Record{ID: "b", TokenEvents: 5}
	for _, tc := range []struct {
		name, why  string
		recs       []Record
		box1, box5 string // substrings; "" wants no note
		unit       string
	}{
		{"all reported", "usage and cached tokens from every request: nothing to add", []Record{withUsage, withUsage}, "", "", "tokens/s"},
		{"none reported", "no usage at all: every rate is events/s and the cache is unproven", []Record{noUsage, noUsage}, "events/s), not tokens/s", "unique nonce; cached prompt tokens not reported; the server reported no cached-token count", "events/s"},
		{"some reported", "one of two without usage", []Record{withUsage, noUsage}, "1 of 2 requests are token events per second", "reported by 1 of 2 requests", "events/s"},
		{"failures and warm-up do not count", "only measured successes have rates", []Record{withUsage, {ID: "w", Warmup: true}, {ID: "f", Err: ClassTruncated}}, "", "", "tokens/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := Batch{}.normalized()
			res := &Result{Run: Run{Start: time.Now(), End: time.Now()}, Records: tc.recs}
			if u := res.decodeRateUnit(); u != tc.unit {
				t.Errorf("%s: unit %q, want %q", tc.why, u, tc.unit)
			}
			d := b.disclose(nil, res)
			for _, c := range []struct {
				n    int
				want string
				mark string
			}{{1, tc.box1, "events/s"}, {5, tc.box5, "cached-token count"}} {
				got := d.Box(c.n).Answer
				if c.want == "" && strings.Contains(got, c.mark) || c.want != "" && !strings.Contains(got, c.want) ||
					c.n == 5 && tc.name == "none reported" && strings.Contains(got, "0 cached prompt tokens reported") { // not reported is not zero
					t.Errorf("%s: box %d %q, want ~%q", tc.why, c.n, got, c.want)
				}
			}
		})
	}
}
