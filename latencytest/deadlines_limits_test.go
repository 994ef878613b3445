package latencytest_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// The limits at their boundary, on synctest's exact clock: a stream of
// 290 ms (first token at 200 ms, 9 more every 10 ms) under each limit
// set at its clock, 1 ns below it and 1 ns above it. A limit equal to
// the clock is reached (the timer and the stream's end fall on the same
// instant, and the rule decides, whichever ran first); 1 ns more lets
// the request succeed; 1 ns less ends it by its timer. The same for a
// Func call of exactly 290 ms.
func TestLimitsAtTheirBoundary(t *testing.T) {
	const total, ttft = 290 * ms, 200 * ms
	for _, c := range []struct {
		name         string
		first, limit time.Duration
		class        string
		total        time.Duration
	}{
		{"Total == TotalTimeout", 0, total, latencytest.ClassTotalTimeout, total},
		{"Total == TotalTimeout-1ns", 0, total + 1, "", total},
		{"Total == TotalTimeout+1ns", 0, total - 1, latencytest.ClassTotalTimeout, total - 1},
		{"TTFT == FirstTokenTimeout", ttft, 0, latencytest.ClassFirstTokenTimeout, -1},
		{"TTFT == FirstTokenTimeout-1ns", ttft + 1, 0, "", total},
		{"TTFT == FirstTokenTimeout+1ns", ttft - 1, 0, latencytest.ClassFirstTokenTimeout, ttft - 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, p := fake(t, fixed(ttft, 10*ms, 10))
				load := latencytest.Load{MaxTokens: 10, Prompt: "hi", FirstTokenTimeout: c.first, TotalTimeout: c.limit}
				for _, runs := range []int{1, 4} { // alone, and 4 at once on the run's watcher
					r, err := latencytest.Batch{Requests: runs, NoWarmup: true, Concurrency: runs, Load: load}.Run(context.Background(), p)
					if err != nil {
						t.Fatal(err)
					}
					for _, rec := range r.Records {
						if rec.Err != c.class || (c.total >= 0 && rec.Total != c.total) {
							t.Errorf("%d at once: %s: %q after %v (%s), want %q after %v", runs, rec.ID, rec.Err, rec.Total, rec.Detail, c.class, c.total)
						}
					}
				}
			})
		})
	}
	t.Run("Func", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error {
				select {
				case <-time.After(total):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			for limit, want := range map[time.Duration]string{total: latencytest.ClassTotalTimeout, total + 1: "", total - 1: latencytest.ClassTotalTimeout} {
				rec := p.Call(context.Background(), latencytest.Request{ID: "f", TotalTimeout: limit})
				if rec.Err != want || rec.Total != min(total, limit) {
					t.Errorf("limit %v: %q after %v, want %q", limit, rec.Err, rec.Total, want)
				}
			}
		})
	})
}

// A starved scheduler: GOMAXPROCS=1 and 16 goroutines that never block,
// against the fake over a loopback socket. Each request's stream takes
// 500 ms (first token at 100 ms, 10 more every 40 ms) and its
// TotalTimeout is 400 ms. The deadline timer may fire on time or late
// (the starved run reads its events late too), but no such request is
// ever a success: the rule holds whatever the timer does, so the
// assertion is exact. Both clients: the provider's own HTTP/1.1 client
// and net/http. Bounded: 3 requests at once per client, each ended by
// its timer, at the latest, or its 500 ms stream. Then your own client
// through Instrument in a Func call: the call and each of its attempts.
func TestStarvedSchedulerNeverPassesALateRequest(t *testing.T) {
	f := fakeprovider.New(fixed(100*ms, 40*ms, 11))
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				if n%1024 == 0 {
					select {
					case <-stop:
						return
					default:
					}
				}
			}
		}()
	}
	defer wg.Wait()
	defer close(stop)

	const limit = 400 * ms
	for _, client := range []struct {
		name string
		opts []latencytest.Option
	}{{"own HTTP/1.1 client", nil}, {"net/http", []latencytest.Option{latencytest.WithNetHTTP()}}} {
		p := latencytest.OpenAI(srv.URL+"/v1", client.opts...)
		r, err := latencytest.Batch{Requests: 3, NoWarmup: true, Concurrency: 3,
			Load: latencytest.Load{MaxTokens: 11, Prompt: "hi", TotalTimeout: limit}}.Run(context.Background(), p)
		p.CloseIdleConnections()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range r.Records {
			if rec.Err != latencytest.ClassTotalTimeout || rec.Total < limit {
				t.Errorf("%s: %s: %q after %v (%s): a request past its %v limit", client.name, rec.ID, rec.Err, rec.Total, rec.Detail, limit)
			}
			t.Log(client.name, rec.ID, rec.Err, rec.Total, rec.Detail)
		}
	}

	// Your own client (net/http) through Instrument, in a Func call: the
	// call and every attempt it made are held to the limit.
	hc := &http.Client{Transport: latencytest.Instrument(nil)}
	defer hc.CloseIdleConnections()
	p := latencytest.Func(func(ctx context.Context, req latencytest.Request) error {
		body := `{"model":"fake-model","stream":true,"max_tokens":11,"messages":[{"role":"user","content":"hi"}]}`
		hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
		if err != nil {
			return err
		}
		resp, err := hc.Do(hreq)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	})
	r, err := latencytest.Batch{Requests: 3, NoWarmup: true, Concurrency: 3,
		Load: latencytest.Load{MaxTokens: 11, Prompt: "hi", TotalTimeout: limit}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range r.Records {
		if rec.Err != latencytest.ClassTotalTimeout || rec.Total < limit || len(rec.Attempts) == 0 {
			t.Errorf("Instrument: %s: %q after %v (%s), %d attempts: a request past its %v limit", rec.ID, rec.Err, rec.Total, rec.Detail, len(rec.Attempts), limit)
		}
		for i, a := range rec.Attempts {
			if a.Err == "" {
				t.Errorf("Instrument: %s attempt %d: a success after %v (from %v), past its %v limit", rec.ID, i+1, a.Total, a.Start, limit)
			}
		}
		t.Log("Instrument", rec.ID, rec.Err, rec.Total, rec.Detail)
	}
}
