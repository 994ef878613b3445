package latencytest_test

import (
	"context"
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
	defer p.(interface{ CloseIdleConnections() }).CloseIdleConnections()
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
	defer p.(interface{ CloseIdleConnections() }).CloseIdleConnections()
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
