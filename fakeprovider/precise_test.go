package fakeprovider

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestPreciseClockNeverEarly: 200 waits registered out of order over the
// next 5 ms, many of them earlier than the one the timer is armed for,
// all wake, none before its deadline. (How late they wake is a benchmark's
// business: BenchmarkFirstTokenLateness in latencytest.)
func TestPreciseClockNeverEarly(t *testing.T) {
	c := newPreciseClock()
	if c == nil {
		t.Skip("no kernel timer here: the fake uses the runtime's timers")
	}
	defer c.close()
	r := rand.New(rand.NewPCG(1, 2))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var early []time.Duration
	for range 200 {
		at := time.Now().Add(time.Duration(r.Int64N(int64(5 * time.Millisecond))))
		ch := make(chan struct{}, 1)
		c.at(at, ch)
		wg.Go(func() {
			<-ch
			if d := time.Until(at); d > 0 {
				mu.Lock()
				early = append(early, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(early) > 0 {
		t.Errorf("%d of 200 waits woke before their deadline, by up to %v", len(early), early)
	}
}

// TestPreciseClockServesRealSockets: a stream served over a real socket is
// timed by the fake's clock (started by it, where the kernel timer
// exists), and the in-memory transport never starts one.
func TestPreciseClockServesRealSockets(t *testing.T) {
	p := Profile{TTFT: Fixed(time.Millisecond), ITL: Fixed(time.Millisecond), OutputTokens: Fixed(3)}
	mem := mustNew(t, p)
	if r := do(t, mem.Client(), "http://fake", reqOpts{}); r.status != http.StatusOK {
		t.Fatalf("in memory: status %d", r.status)
	}
	mem.mu.Lock()
	tried := mem.clockTried
	mem.mu.Unlock()
	if tried {
		t.Errorf("an in-memory request started the precise clock")
	}
	f := mustNew(t, p)
	srv := NewServer(f)
	defer srv.Close()
	if r := do(t, http.DefaultClient, srv.URL, reqOpts{}); r.status != http.StatusOK {
		t.Fatalf("over a socket: status %d", r.status)
	}
	f.mu.Lock()
	tried, clock := f.clockTried, f.clock
	f.mu.Unlock()
	if !tried {
		t.Fatalf("a request over a socket did not ask for the precise clock")
	}
	if c := newPreciseClock(); c != nil { // where it exists, it is the one used
		c.close()
		if clock == nil {
			t.Errorf("the kernel timer exists here but the fake has no clock")
		}
	}
	http.DefaultClient.CloseIdleConnections()
}
