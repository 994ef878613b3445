package latencytest_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// connWatch is a loopback SSE server that counts its open connections
// (accepted, not yet closed or hijacked) and signals every change.
type connWatch struct {
	srv     *httptest.Server
	mu      sync.Mutex
	open    int
	changed chan struct{} // one pending signal: the count may have moved
}

func newConnWatch(t *testing.T) *connWatch {
	w := &connWatch{changed: make(chan struct{}, 1)}
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(rw, `data: {"choices":[{"delta":{"content":"a"}}]}`+"\n\n"+
			`data: {"choices":[{"delta":{"content":"b"}}]}`+"\n\ndata: [DONE]\n\n")
	}))
	w.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		w.mu.Lock()
		switch s {
		case http.StateNew:
			w.open++
		case http.StateClosed, http.StateHijacked:
			w.open--
		}
		w.mu.Unlock()
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	w.srv.Start()
	t.Cleanup(w.srv.Close)
	return w
}

func (w *connWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.open
}

// settle waits, at most 5 s, until the server's open connections are
// want (closes reach the server asynchronously), and returns the count.
func (w *connWatch) settle(want int) int {
	bound := time.NewTimer(5 * time.Second)
	defer bound.Stop()
	for {
		if n := w.count(); n == want {
			return n
		}
		select {
		case <-w.changed:
		case <-bound.C:
			return w.count()
		}
	}
}

// openFDs is the process's open file descriptors (Linux), -1 elsewhere.
func openFDs(t *testing.T) int {
	if runtime.GOOS != "linux" {
		return -1
	}
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// Runs close the idle connections they opened when they end: after a
// sweep (levels 2, 4, 8), an open loop and a chain, the server sees no
// connection open and the process is back to its file descriptors from
// before, on the provider's own HTTP/1.1 client and on net/http. Each
// level's pool used to keep its connections until the provider was closed
// (a sweep left 2+4+8 open here).
func TestRunsCloseTheirIdleConnections(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []latencytest.Option
	}{{"own client", nil}, {"net/http", []latencytest.Option{latencytest.WithNetHTTP()}}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newConnWatch(t)
			p := latencytest.OpenAI(w.srv.URL+"/v1", tc.opts...)
			defer p.CloseIdleConnections()
			base := openFDs(t)
			// check waits, at most 5 s, for the server to see no
			// connection and the process's descriptors to be back to the
			// baseline. The server's side is closed before its ConnState
			// says so, but a dial net/http started for the run's last
			// requests may finish after the run closed the idle
			// connections: its descriptor is open before the server
			// accepts it (a ConnState change to come), and net/http closes
			// it when it turns idle (a second change). A descriptor left
			// open with no change to come is a leak.
			check := func(what string) {
				t.Helper()
				bound := time.NewTimer(5 * time.Second)
				defer bound.Stop()
				for {
					n, fds := w.settle(0), openFDs(t)
					if n == 0 && fds <= base {
						return
					}
					select {
					case <-w.changed:
						continue
					case <-bound.C:
					}
					if n != 0 {
						t.Errorf("%s: %d connections still open at the server", what, n)
					}
					if fds > base {
						t.Errorf("%s: %d open files, %d before", what, fds, base)
					}
					return
				}
			}
			ctx := context.Background()
			b := latencytest.Batch{Requests: 12, NoWarmup: true, Load: latencytest.Load{NoNonce: true}}
			sr, err := latencytest.Sweep{Batch: b, Levels: []int{2, 4, 8}}.Run(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range sr.Results {
				if c := r.Counts(); c.Kept != 12 {
					t.Fatalf("level %d: counts %+v", sr.Levels[i], c)
				}
			}
			check("sweep")
			r, err := latencytest.OpenLoop{Rate: 5000, Arrivals: "constant", Requests: 30, MaxInFlight: 5, Load: latencytest.Load{NoNonce: true}}.Run(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if c := r.Counts(); c.Kept != 30 {
				t.Fatalf("open loop: counts %+v", c)
			}
			check("open loop")
			cr, err := latencytest.Chain{Chains: 4, Length: 2, Concurrency: 3, Load: latencytest.Load{NoNonce: true}}.Run(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(cr.Chains) != 4 || cr.Partial {
				t.Fatalf("chain: %d chains, partial %v", len(cr.Chains), cr.Partial)
			}
			check("chain")
		})
	}
}
