package latencytest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
)

// idleOf is the number of idle connections in o's fast-path pool for n
// requests in flight (-1: no such pool).
func idleOf(o *openAI, n int) int {
	o.mu.Lock()
	p := o.pools[n]
	o.mu.Unlock()
	if p == nil {
		return -1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
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
	o := OpenAI(srv.URL + "/v1").(*openAI)
	defer o.CloseIdleConnections()
	if o.h1Head == nil {
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

// A connection handed back after closeIdle (a run's last request
// finishing after its end) is closed, not kept; the next get keeps
// connections again, as net/http's CloseIdleConnections.
func TestPoolClosesWhatReturnsAfterCloseIdle(t *testing.T) {
	p := &h1Pool{limit: 2, maxIdle: 2, open: 2}
	a, a2 := net.Pipe()
	defer a2.Close()
	b, b2 := net.Pipe()
	defer b2.Close()
	p.put(&h1Conn{nc: a})
	p.closeIdle()
	if _, err := a.Write([]byte("x")); err == nil {
		t.Fatal("idle connection not closed")
	}
	p.put(&h1Conn{nc: b})
	if _, err := b.Write([]byte("x")); err == nil || len(p.idle) != 0 || p.open != 0 {
		t.Fatalf("returned after closeIdle: write err %v, idle %d, open %d", err, len(p.idle), p.open)
	}
	c, c2 := net.Pipe()
	defer c2.Close()
	p.dialer = func(context.Context, string, string) (net.Conn, error) { return c, nil }
	got, err := p.get(context.Background(), &httptrace.ClientTrace{})
	if err != nil {
		t.Fatal(err)
	}
	p.put(got)
	if len(p.idle) != 1 {
		t.Errorf("%d idle after a get, want 1", len(p.idle))
	}
	p.closeIdle()
}
