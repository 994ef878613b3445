package latencytest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// idleOf is the number of idle connections in o's fast-path pool for n
// requests in flight (-1: no such pool).
func idleOf(o *LLMProvider, n int) int {
	o.mu.Lock()
	p := o.pools[n]
	o.mu.Unlock()
	if p == nil {
		return -1
	}
	return len(p.Idle())
}

// A run's end closes its pool's idle connections only when no other run
// of the same concurrency uses the pool: a batch at concurrency 3 that
// ends while another run at 3 goes on leaves the connections idle for
// it; the last run's end closes them. Another concurrency's pool is not
// touched.
func TestRunEndKeepsAConcurrentRunsConnections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"a"}}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	o := OpenAI(srv.URL + "/v1")
	defer o.CloseIdleConnections()
	if o.h1req == nil {
		t.Skip("no fast path on this platform")
	}
	call := func(ctx context.Context) {
		t.Helper()
		if rec := o.Call(ctx, Request{ID: "x", Messages: []Message{{Role: "user", Content: "hi"}}}); !rec.OK() {
			t.Fatalf("record %+v", rec)
		}
	}
	other, endOther := withConcurrency(context.Background(), 3)
	call(other)
	two, endTwo := withConcurrency(context.Background(), 2)
	call(two)
	r, err := Batch{Requests: 9, NoWarmup: true, Concurrency: 3}.Run(context.Background(), o)
	if err != nil || r.Counts().Kept != 9 {
		t.Fatalf("batch: %v %+v", err, r.Counts())
	}
	if n := idleOf(o, 3); n < 1 {
		t.Fatalf("%d idle connections at 3 after the batch ended while another run at 3 went on", n)
	}
	call(other) // on a kept connection
	endOther()
	endOther() // twice: nothing more
	if n := idleOf(o, 3); n != 0 {
		t.Errorf("%d idle connections at 3 after the last run at 3 ended", n)
	}
	if n := idleOf(o, 2); n != 1 {
		t.Errorf("%d idle connections at 2 (a run still going), want 1", n)
	}
	endTwo()
	if n := idleOf(o, 2); n != 0 {
		t.Errorf("%d idle connections at 2 after its run ended", n)
	}
	// A call after its run's end uses the pool without holding it.
	call(two)
	if len(o.users) != 0 {
		t.Errorf("users %v after every run ended", o.users)
	}
}
