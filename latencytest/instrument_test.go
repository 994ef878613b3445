package latencytest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
)

// askStream is "your own client": it posts a chat completion through hc
// and reads the SSE lines until [DONE], returning the answer.
func askStream(ctx context.Context, hc *http.Client, req Request) (string, error) {
	body, _ := json.Marshal(map[string]any{"model": defaultModel, "messages": req.Messages, "stream": true,
		"stream_options": map[string]bool{"include_usage": true}, "max_tokens": req.MaxTokens})
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://fake/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(hreq)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	var answer strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			return answer.String(), nil
		}
		var ch struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(line), &ch) == nil && len(ch.Choices) > 0 {
			answer.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	if sc.Err() != nil {
		return answer.String(), sc.Err()
	}
	return answer.String(), io.ErrUnexpectedEOF
}

// Instrument around a hand-written client measures, inside synctest, the
// same TTFT, first answer, gaps, total and usage as the OpenAI provider,
// to the nanosecond: same profile, same trace IDs, fixed latencies and a
// scripted stall.
func TestInstrumentMatchesOpenAIProvider(t *testing.T) {
	profile := fakeprovider.Profile{
		Seed:         3,
		TTFT:         fakeprovider.LogNormal(200*time.Millisecond, 900*time.Millisecond),
		ITL:          fakeprovider.Fixed(10 * time.Millisecond),
		OutputTokens: fakeprovider.Fixed(40),
		Script:       []fakeprovider.ScriptEntry{{ID: "c2-0005", Stall: &fakeprovider.ScriptStall{AfterToken: 10, Duration: 3 * time.Second}}},
	}
	run := func(own bool) *Result {
		var r *Result
		synctest.Test(t, func(t *testing.T) {
			f := fakeprovider.New(profile)
			defer f.Close()
			var p Provider = OpenAI("http://fake/v1", WithHTTPClient(f.Client()))
			if own {
				hc := &http.Client{Transport: Instrument(f.Transport())}
				p = Func(func(ctx context.Context, req Request) error {
					_, err := askStream(ctx, hc, req)
					return err
				})
			}
			var err error
			r, err = Batch{NoWarmup: true, Requests: 20, Concurrency: 2, Load: Load{NoNonce: true}}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
		})
		return r
	}
	want, got := run(false), run(true)
	if len(got.Records) != len(want.Records) || len(want.Records) < 20 {
		t.Fatalf("records %d and %d", len(got.Records), len(want.Records))
	}
	for i := range want.Records {
		w, g := want.Records[i], got.Records[i]
		if g.ID != w.ID || g.Err != "" || w.Err != "" || g.TTFB != w.TTFB || g.TTFT != w.TTFT || g.FirstAnswer != w.FirstAnswer ||
			g.Total != w.Total || g.MaxGap != w.MaxGap || g.LastToken != w.LastToken || g.TokenEvents != w.TokenEvents ||
			g.PromptTokens != w.PromptTokens || g.CompletionTokens != w.CompletionTokens || g.Content != w.Content ||
			fmt.Sprint(g.Gaps.All()) != fmt.Sprint(w.Gaps.All()) {
			t.Errorf("%s: instrumented\n%+v\nOpenAI provider\n%+v", w.ID, g, w)
		}
		if len(g.Attempts) != 1 || g.Attempts[0].ID != w.ID || g.Attempts[0].TTFT != w.TTFT || g.Attempts[0].Total != w.Total {
			t.Errorf("%s: attempts %+v", w.ID, g.Attempts)
		}
	}
	// The stall: 3 s after the 10th token, plus its 10 ms ITL.
	stalled := 0
	for _, s := range got.Records {
		if s.ID == "c2-0005" {
			stalled++
			if s.MaxGap != 3*time.Second+10*time.Millisecond {
				t.Errorf("stall measured as %v", s.MaxGap)
			}
		}
	}
	if stalled != 1 {
		t.Errorf("c2-0005 found %d times", stalled)
	}
	if d := describe(Func(func(context.Context, Request) error { return nil })); d.Kind != "Go function (Func)" {
		t.Errorf("description %+v", d)
	}
}

// countingBody counts the bytes read from it and whether it was closed.
type countingBody struct {
	r      io.Reader
	n      atomic.Int64
	closed atomic.Bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n.Add(int64(n))
	return n, err
}
func (b *countingBody) Close() error { b.closed.Store(true); return nil }

// Outside a Func call the transport is a pass-through: no header is added
// and the body is the inner transport's own.
func TestInstrumentPassesThroughOutsideFunc(t *testing.T) {
	var seen http.Header
	inner := &countingBody{r: strings.NewReader("hello")}
	hc := &http.Client{Transport: Instrument(roundTrip(func(r *http.Request) (*http.Response, error) {
		seen = r.Header.Clone()
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: inner, Request: r}, nil
	}))}
	resp, err := hc.Get("http://example.test/")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Body != io.ReadCloser(inner) || seen.Get("X-Request-ID") != "" {
		t.Errorf("the request was touched: body %T, headers %v", resp.Body, seen)
	}
	resp.Body.Close()
}

// The body is timed as the client reads it, never read ahead: after Do
// returns nothing was consumed; a client that reads late shows the late
// reads in its gaps, as the user saw them; an early Close ends the
// attempt at that instant and reaches the inner body.
func TestInstrumentTimesReadsNotArrivals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body := &countingBody{r: strings.NewReader(tok("a") + tok("b") + tok("c") + done)}
		hc := &http.Client{Transport: Instrument(roundTrip(func(r *http.Request) (*http.Response, error) {
			time.Sleep(50 * time.Millisecond) // headers at 50 ms
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body, Request: r}, nil
		}))}
		rec := Func(func(ctx context.Context, req Request) error {
			hreq, _ := http.NewRequestWithContext(ctx, "POST", "http://x/v1/chat/completions", nil)
			resp, err := hc.Do(hreq)
			if err != nil {
				return err
			}
			if n := body.n.Load(); n != 0 {
				t.Errorf("%d bytes read before the client read any", n)
			}
			buf := make([]byte, len(tok("a")))
			for range 2 { // one event a read, 100 ms apart
				time.Sleep(100 * time.Millisecond)
				if _, err := io.ReadFull(resp.Body, buf); err != nil {
					return err
				}
			}
			time.Sleep(100 * time.Millisecond)
			return resp.Body.Close() // at 350 ms, before "c" and [DONE]
		}).Call(context.Background(), Request{ID: "t-1"})
		// Headers at 50 ms; "a" read at 150 ms, "b" at 250 ms; Close at 350 ms.
		if rec.Err != "" || rec.TTFB != 50*time.Millisecond || rec.TTFT != 150*time.Millisecond || rec.LastToken != 250*time.Millisecond ||
			rec.Total != 350*time.Millisecond || rec.Content != "ab" || rec.TokenEvents != 2 || !body.closed.Load() {
			t.Errorf("record %+v", rec)
		}
		if len(rec.Attempts) != 1 || rec.Attempts[0].Total != 350*time.Millisecond || rec.Attempts[0].ID != "t-1" {
			t.Errorf("attempts %+v", rec.Attempts)
		}
		if len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0], "closed the stream before [DONE]") {
			t.Errorf("notes %q", rec.Notes)
		}
	})
}

// byID answers each request by its X-Request-ID: a status, or a stream of
// steps (see scripted), and records the IDs it saw.
type byID struct {
	mu     sync.Mutex
	ids    []string
	status map[string]int
	steps  []step
}

func (s *byID) client() *http.Client {
	stream := scripted(s.steps, false, nil)
	return &http.Client{Transport: Instrument(roundTrip(func(r *http.Request) (*http.Response, error) {
		id := r.Header.Get("X-Request-ID")
		s.mu.Lock()
		s.ids = append(s.ids, id)
		s.mu.Unlock()
		if st := s.status[id]; st != 0 {
			return &http.Response{StatusCode: st, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(`{"error":{"message":"Overloaded","type":"overloaded_error"}}`)), Request: r}, nil
		}
		return stream.Transport.RoundTrip(r)
	}))}
}

// A retry is an attempt: the first carries the trace ID, the retry
// "<ID>-a2" (so the fake draws it anew); the record's stream figures come
// from the attempt that succeeded, timed from the call's start, and the
// total covers the whole call. FirstAttempt reports the first attempt
// (failed) beside Total (with retries).
func TestInstrumentRetryIsAnAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		srv := &byID{status: map[string]int{"t-1": 529}, steps: []step{{100 * ms, tok("a")}, {110 * ms, tok("b")}, {120 * ms, done}}}
		hc := srv.client()
		p := Func(func(ctx context.Context, req Request) error {
			for try := 0; ; try++ {
				_, err := askStream(ctx, hc, req)
				if err == nil || try == 2 {
					return err
				}
				time.Sleep(time.Second) // backoff
			}
		})
		rec := p.Call(context.Background(), Request{ID: "t-1"})
		// Attempt 1 fails at 0; attempt 2 starts at 1 s: first token at
		// 1.1 s, [DONE] at 1.12 s.
		if rec.Err != "" || rec.TTFT != 1100*ms || rec.Total != 1120*ms || rec.MaxGap != 10*ms || rec.Status != 200 || rec.Content != "ab" {
			t.Errorf("record %+v", rec)
		}
		want := []Attempt{
			{ID: "t-1", Start: 0, TTFB: 0, TTFT: NotObserved, Total: 0, Status: 529, Err: "http_529", Detail: "overloaded_error: Overloaded"},
			{ID: "t-1-a2", Start: time.Second, TTFB: 0, TTFT: 100 * ms, Total: 120 * ms, Status: 200},
		}
		if fmt.Sprint(rec.Attempts) != fmt.Sprint(want) {
			t.Errorf("attempts\n%+v\nwant\n%+v", rec.Attempts, want)
		}
		if fmt.Sprint(srv.ids) != "[t-1 t-1-a2]" {
			t.Errorf("X-Request-IDs %v", srv.ids)
		}
		res := &Result{Records: []Record{rec, {ID: "plain", Total: 5 * ms, TTFT: NotObserved}}}
		if fa, tot := res.FirstAttempt(), res.Total(); fa[0] != Failed || fa[1] != 5*ms || tot[0] != 1120*ms {
			t.Errorf("first attempt %v, total %v", fa, tot)
		}
		if calls, attempts := res.Attempts(); calls != 2 || attempts != 3 || res.Retried() != 1 {
			t.Errorf("calls %d attempts %d retried %d", calls, attempts, res.Retried())
		}

		// Every try fails: the class is the last attempt's, the detail
		// the client's error.
		srv2 := &byID{status: map[string]int{"t-2": 529, "t-2-a2": 529, "t-2-a3": 503}}
		hc = srv2.client()
		rec = p.Call(context.Background(), Request{ID: "t-2"})
		if rec.Err != "http_503" || !strings.HasPrefix(rec.Detail, "status 503") || len(rec.Attempts) != 3 || rec.Total != 2*time.Second {
			t.Errorf("record %+v", rec)
		}
	})
}

// The classes of a Func call: fn's own error, timeouts through ctx, the
// verdict on a stream fn accepted, and a first-token timeout that binds
// only calls that stream through Instrument.
func TestFuncClasses(t *testing.T) {
	ms := time.Millisecond
	reasoning := `data: {"choices":[{"delta":{"reasoning_content":"hmm"},"finish_reason":"length"}]}` + "\n\n"
	for _, tc := range []struct {
		name, why string
		req       Request
		steps     []step
		noHTTP    bool
		fnErr     error
		class     string
		total     time.Duration
	}{
		{name: "plain error", why: "an error no attempt explains is call_error",
			noHTTP: true, fnErr: errors.New("db: no rows"), class: ClassCallError, total: 300 * ms},
		{name: "total timeout", why: "TotalTimeout cancels ctx: total_timeout at exactly the limit",
			req: Request{TotalTimeout: 200 * ms}, noHTTP: true, class: ClassTotalTimeout, total: 200 * ms},
		{name: "hard cap", why: "without TotalTimeout the hard cap bounds the call",
			req: Request{HardCap: 250 * ms}, noHTTP: true, class: ClassTotalTimeout, total: 250 * ms},
		{name: "first token not bound without HTTP", why: "a call that sends no instrumented request has no tokens: FirstTokenTimeout does not end it",
			req: Request{FirstTokenTimeout: 100 * ms}, noHTTP: true, total: 300 * ms},
		{name: "first token timeout", why: "the stream's first token at 500 ms is after the 400 ms first-token timeout",
			req: Request{FirstTokenTimeout: 400 * ms}, steps: []step{{500 * ms, tok("a")}, {510 * ms, done}}, class: ClassFirstTokenTimeout, total: 400 * ms},
		{name: "first token in time", why: "a token at 300 ms stops the 400 ms first-token timer",
			req: Request{FirstTokenTimeout: 400 * ms}, steps: []step{{300 * ms, tok("a")}, {900 * ms, done}}, total: 900 * ms},
		{name: "empty answer accepted by fn", why: "fn returned nil, but the stream held reasoning only: empty_answer, as the OpenAI provider judges it",
			steps: []step{{100 * ms, reasoning}, {120 * ms, done}}, class: ClassEmptyAnswer, total: 120 * ms},
		{name: "truncated", why: "the stream ends without [DONE] and the client reports it: truncated, from the attempt",
			steps: []step{{100 * ms, tok("a")}}, class: ClassTruncated, total: 100 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hc := &http.Client{Transport: Instrument(scripted(tc.steps, false, nil).Transport)}
				rec := Func(func(ctx context.Context, req Request) error {
					if tc.noHTTP {
						select {
						case <-time.After(300 * ms):
							return tc.fnErr
						case <-ctx.Done():
							return ctx.Err()
						}
					}
					_, err := askStream(ctx, hc, req)
					return err
				}).Call(context.Background(), tc.req)
				if rec.Err != tc.class || rec.Total != tc.total {
					t.Errorf("%s: class %q total %v (detail %q), want %q %v", tc.why, rec.Err, rec.Total, rec.Detail, tc.class, tc.total)
				}
				if tc.fnErr != nil && rec.Detail != tc.fnErr.Error() {
					t.Errorf("detail %q", rec.Detail)
				}
			})
		})
	}
}

// Concurrent requests of one call are attempts of their own (numbered in
// the order they were sent), timed without a race.
func TestInstrumentConcurrentAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		srv := &byID{steps: []step{{100 * ms, tok("x")}, {150 * ms, done}}}
		hc := srv.client()
		rec := Func(func(ctx context.Context, req Request) error {
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range 4 {
				wg.Go(func() { _, errs[i] = askStream(ctx, hc, req) })
			}
			wg.Wait()
			return errors.Join(errs...)
		}).Call(context.Background(), Request{ID: "fan"})
		if rec.Err != "" || len(rec.Attempts) != 4 || rec.TTFT != 100*ms || rec.Total != 150*ms {
			t.Fatalf("record %+v", rec)
		}
		ids := map[string]bool{}
		for _, a := range rec.Attempts {
			ids[a.ID] = true
			if a.TTFT != 100*ms || a.Total != 150*ms || a.Start != 0 {
				t.Errorf("attempt %+v", a)
			}
		}
		if len(ids) != 4 || !ids["fan"] || !ids["fan-a4"] {
			t.Errorf("ids %v", ids)
		}
	})
}

// Credentials the client sends never reach the record, even when the
// server echoes them into an error body or fn's error.
func TestInstrumentRedactsCredentials(t *testing.T) {
	hc := &http.Client{Transport: Instrument(roundTrip(func(r *http.Request) (*http.Response, error) {
		body := `{"error":{"message":"bad key ` + key + ` for ` + r.URL.Query().Get("api-key") + `"}}`
		return &http.Response{StatusCode: 401, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}))}
	rec := Func(func(ctx context.Context, req Request) error {
		hreq, _ := http.NewRequestWithContext(ctx, "POST", "https://x.test/v1/chat?api-key=QUERYSECRET123", nil)
		hreq.Header.Set("Authorization", "Bearer "+key)
		resp, err := hc.Do(hreq)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("status %d: %s (sent %s)", resp.StatusCode, b, hreq.URL)
	}).Call(context.Background(), Request{ID: "k"})
	var sb strings.Builder
	if err := WriteRecords(&sb, []Record{rec}); err != nil {
		t.Fatal(err)
	}
	if rec.Err != "http_401" || strings.Contains(sb.String(), "SECRET") || !strings.Contains(rec.Attempts[0].Detail, "[redacted]") {
		t.Errorf("record %s", sb.String())
	}
}
