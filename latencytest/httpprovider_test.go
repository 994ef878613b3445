package latencytest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// slowAPI answers after its headers delay, then sends body in two halves
// 100 ms apart; paths under /fail answer 503 with an OpenAI error body,
// /moved redirects to /ok. It records each request it saw.
type slowAPI struct {
	headers time.Duration
	mu      sync.Mutex
	seen    []*http.Request
	bodies  []string
}

func (s *slowAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	b := []byte{}
	if r.Body != nil {
		b, _ = io.ReadAll(r.Body)
	}
	s.mu.Lock()
	s.seen, s.bodies = append(s.seen, r), append(s.bodies, string(b))
	s.mu.Unlock()
	time.Sleep(s.headers)
	switch r.URL.Path {
	case "/fail":
		return &http.Response{StatusCode: 503, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"error":{"message":"try later"}}`)), Request: r}, nil
	case "/moved":
		return &http.Response{StatusCode: 302, Header: http.Header{"Location": {"/ok"}}, Body: http.NoBody, Request: r}, nil
	case "/loop":
		return &http.Response{StatusCode: 307, Header: http.Header{"Location": {"/loop?api-key=" + key}}, Body: http.NoBody, Request: r}, nil
	case "/sse", "/ndjson":
		// Events that are not OpenAI chunks, 100 ms apart.
		ct, ev := "text/event-stream", "event: tick\ndata: {\"n\":%d}\n\n"
		if r.URL.Path == "/ndjson" {
			ct, ev = "application/x-ndjson", "{\"n\":%d}\n"
		}
		pr, pw := io.Pipe()
		go func() {
			for i := range 3 {
				if i > 0 {
					time.Sleep(100 * time.Millisecond)
				}
				_, _ = fmt.Fprintf(pw, ev, i)
			}
			pw.Close()
		}()
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ct}}, Body: pr, Request: r}, nil
	}
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, `{"rows":`)
		time.Sleep(100 * time.Millisecond)
		_, _ = io.WriteString(pw, `[1,2,3]}`)
		pw.Close()
	}()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: pr, Request: r}, nil
}

// HTTP measures any API: time to the headers, total to the end of the
// body, the status; a 503 is http_503 with the server's message; the body
// and headers of the options are sent, and the trace ID as X-Request-ID.
func TestHTTPProvider(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		api := &slowAPI{headers: 40 * ms}
		opts := []Option{WithHTTPClient(&http.Client{Transport: api}), WithHeader("X-Tenant", "blue"),
			WithBody("application/json", []byte(`{"q":"select 1"}`)), WithAPIKey(key)}
		rec := HTTP("POST", "http://api.test/query", opts...).Call(context.Background(), Request{ID: "h-1"})
		// Headers at 40 ms, the rest of the body 100 ms later.
		if rec.Err != "" || rec.Status != 200 || rec.TTFB != 40*ms || rec.Total != 140*ms || len(rec.Attempts) != 1 || rec.Attempts[0].Total != 140*ms {
			t.Errorf("record %+v", rec)
		}
		r := api.seen[0]
		if r.Method != "POST" || r.Header.Get("X-Request-ID") != "h-1" || r.Header.Get("X-Tenant") != "blue" ||
			r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "Bearer "+key || api.bodies[0] != `{"q":"select 1"}` {
			t.Errorf("request %s %v %q", r.Method, r.Header, api.bodies[0])
		}

		rec = HTTP("GET", "http://api.test/fail", opts...).Call(context.Background(), Request{ID: "h-2"})
		if rec.Err != "http_503" || rec.Status != 503 || rec.Detail != "HTTP 503: try later" || rec.TTFB != 40*ms {
			t.Errorf("record %+v", rec)
		}

		// A redirect the client follows is an attempt of its own: the 302
		// at 40 ms, then the answer 40+140 ms later.
		rec = HTTP("GET", "http://api.test/moved", opts...).Call(context.Background(), Request{ID: "h-3"})
		if rec.Err != "" || len(rec.Attempts) != 2 || rec.Attempts[0].Status != 302 || rec.Attempts[1].ID != "h-3-a2" || rec.TTFB != 80*ms || rec.Total != 180*ms {
			t.Errorf("record %+v", rec)
		}
		if d := describe(HTTP("GET", "http://api.test/x?key=abcdefghij")); d.Kind != "http GET" || d.Endpoint != "http://api.test/x" {
			t.Errorf("description %+v", d)
		}
	})
}

// Over a real socket (real time, so only the outcome is judged) and under
// a batch, with a connection that is refused.
func TestHTTPProviderOverLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok "+r.Header.Get("X-Request-ID"))
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	r, err := Batch{NoWarmup: true, Requests: 5, Concurrency: 2}.Run(context.Background(), HTTP("GET", srv.URL+"/health", WithHTTPClient(&http.Client{Transport: tr})))
	if err != nil {
		t.Fatal(err)
	}
	if r.ErrorRate() != 0 || r.Total().Failures() != 0 || r.Records[0].TTFB <= 0 {
		t.Errorf("errors %v, first record %+v", r.Errors(), r.Records[0])
	}
	srv.Close()
	rec := HTTP("GET", srv.URL+"/health", WithHTTPClient(&http.Client{Transport: tr})).Call(context.Background(), Request{ID: "down"})
	if rec.Err != ClassTransport || rec.Attempts[0].Err != ClassTransport {
		t.Errorf("record %+v", rec)
	}
}

func TestHTTPProviderPanicsOnBadInput(t *testing.T) {
	for _, tc := range []struct{ method, url string }{{"GET", "ftp://x/"}, {"GET", "not a url"}, {"BAD METHOD", "http://x/"}, {"", "http://x/"}} {
		func() {
			defer func() {
				if e, _ := recover().(string); !strings.HasPrefix(e, "latencytest: ") {
					t.Errorf("%q %q: panic %q", tc.method, tc.url, e)
				}
			}()
			HTTP(tc.method, tc.url)
		}()
	}
}

// HTTP times any body as bytes, a stream included: an event stream that
// is not OpenAI chunks, or NDJSON, is a success whose first byte (TTFT),
// last byte (LastToken), longest silence (MaxGap) and end (Total) are
// measured; it used to fail every request as bad_stream. Only
// WithOpenAIStream judges it as chat chunks.
func TestHTTPTimesStreamsAsBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		api := &slowAPI{headers: 40 * ms}
		c := WithHTTPClient(&http.Client{Transport: api})
		for _, path := range []string{"/sse", "/ndjson", "/ok"} {
			rec := HTTP("GET", "http://api.test"+path, c).Call(context.Background(), Request{ID: "b" + path})
			// Headers at 40 ms, bytes at 40, 140 and 240 ms (/ok: 40, 140).
			last := 240 * ms
			if path == "/ok" {
				last = 140 * ms
			}
			if !rec.OK() || rec.TTFB != 40*ms || rec.TTFT != 40*ms || rec.FirstAnswer != 40*ms ||
				rec.LastToken != last || rec.MaxGap != 100*ms || rec.Total != last || rec.TokenEvents != 0 {
				t.Errorf("%s: record %+v", path, rec)
			}
		}
		rec := HTTP("GET", "http://api.test/sse", c, WithOpenAIStream()).Call(context.Background(), Request{ID: "chunks"})
		if rec.Err != ClassBadStream && rec.Err != ClassEmptyStream && rec.Err != ClassTruncated {
			t.Errorf("WithOpenAIStream did not judge the stream as chat chunks: %+v", rec)
		}
	})
}

// A redirect is never a fast success. Not followed (the provider's own
// client, or a client that returns it), it is http_3xx naming where it
// pointed without the query's key; followed by the client, a redirect to
// a slow page is timed to the final answer, and a loop fails.
func TestHTTPRedirectsAreNotFastSuccesses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		api := &slowAPI{headers: 40 * ms}
		noFollow := &http.Client{Transport: api, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		rec := HTTP("GET", "http://api.test/loop", WithHTTPClient(noFollow), WithAPIKey(key)).Call(context.Background(), Request{ID: "r-1"})
		if rec.Err != "http_307" || rec.Status != 307 || rec.Detail != "HTTP 307: redirected to http://api.test/loop (not followed: give the final URL to HTTP)" ||
			len(rec.Attempts) != 1 || rec.Attempts[0].Err != "http_307" {
			t.Errorf("not followed: record %+v", rec)
		}
		// Followed: /moved answers at 40 ms, /ok's body ends 140 ms later.
		rec = HTTP("GET", "http://api.test/moved", WithHTTPClient(&http.Client{Transport: api})).Call(context.Background(), Request{ID: "r-2"})
		if !rec.OK() || rec.Total != 180*ms || len(rec.Attempts) != 2 {
			t.Errorf("followed to a slow page: record %+v", rec)
		}
		// A loop: net/http stops after 10 redirects, 40 ms each.
		rec = HTTP("GET", "http://api.test/loop", WithHTTPClient(&http.Client{Transport: api}), WithAPIKey(key)).Call(context.Background(), Request{ID: "r-3"})
		if rec.OK() || rec.Total != 400*ms || strings.Contains(rec.Detail, key) {
			t.Errorf("a redirect loop: record %+v", rec)
		}
	})
	// The provider's own client, over loopback.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere?api-key="+key, http.StatusFound)
	}))
	defer srv.Close()
	p := HTTP("GET", srv.URL+"/start", WithAPIKey(key))
	defer p.CloseIdleConnections()
	rec := p.Call(context.Background(), Request{ID: "r-4"})
	if rec.Err != "http_302" || !strings.Contains(rec.Detail, "redirected to "+srv.URL+"/elsewhere (not followed") || strings.Contains(rec.Detail, key) {
		t.Errorf("own client: record %+v", rec)
	}
}
