package latencytest_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/tailguard/tailguard/latencytest"
)

// countingServer is a loopback server answering "ok" that counts the
// connections it accepts; it closes when the test ends.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var opened atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &opened
}

// The HTTP provider's own transport keeps enough idle connections for its
// concurrency: 60 requests at 8 in flight over loopback open at most 8
// connections (with net/http's default of 2 idle per host it opened more), so
// connection setup stays out of the measured latencies.
func TestHTTPProviderReusesConnections(t *testing.T) {
	srv, opened := countingServer(t)
	p := latencytest.HTTP("GET", srv.URL+"/health")
	defer p.CloseIdleConnections()
	r, err := latencytest.Batch{Requests: 60, NoWarmup: true, Concurrency: 8}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Counts(); c.Kept != 60 {
		t.Fatalf("counts %+v", c)
	}
	if n := opened.Load(); n > 8 {
		t.Errorf("%d connections opened for 8 in flight", n)
	}
}

// An open loop bounds the provider's connections by its MaxInFlight.
func TestOpenLoopBoundsConnections(t *testing.T) {
	srv, opened := countingServer(t)
	p := latencytest.HTTP("GET", srv.URL+"/health")
	defer p.CloseIdleConnections()
	r, err := latencytest.OpenLoop{Rate: 2000, Arrivals: "constant", Requests: 60, MaxInFlight: 3}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Counts(); c.Kept != 60 {
		t.Fatalf("counts %+v", c)
	}
	if n := opened.Load(); n > 3 {
		t.Errorf("%d connections opened for at most 3 in flight", n)
	}
}

// A client that stops reading at [DONE] and closes the body (as most SDKs
// do) keeps its connection through Instrument: Close reads the rest of
// the body (the chunked end, which the server here sends only once the
// client has seen [DONE]), so the transport reuses the connection instead
// of closing it. 8 calls in turn open one connection; the bound of 4
// leaves room for a loaded machine that misses the read's grace, while a
// Close that does not read on opens one per call.
func TestInstrumentReadsToTheEndAfterDone(t *testing.T) {
	var opened atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(`data: {"choices":[{"delta":{"content":"a"}}]}` + "\n\ndata: [DONE]\n\n"))
		w.(http.Flusher).Flush()
		select { // the body's end waits until the client has read [DONE]
		case <-release:
		case <-r.Context().Done():
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: latencytest.Instrument(tr)}
	p := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error {
		req, err := http.NewRequestWithContext(ctx, "POST", srv.URL, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() && sc.Text() != "data: [DONE]" {
		}
		release <- struct{}{}
		return sc.Err()
	})
	const calls = 8
	for i := range calls {
		if rec := p.Call(context.Background(), latencytest.Request{ID: fmt.Sprint("c", i)}); !rec.OK() || rec.TokenEvents != 1 {
			t.Fatalf("call %d: %+v", i, rec)
		}
	}
	if n := opened.Load(); n > calls/2 {
		t.Errorf("%d connections opened for %d calls in turn; want most calls to reuse one", n, calls)
	}
}
