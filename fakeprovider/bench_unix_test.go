//go:build unix

package fakeprovider

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkLoopbackTokens reports the CPU the process spends per streamed
// token over loopback at zero latency: the fake's server and a plain
// net/http client that copies each body to its end, 256-token answers
// against 16-token ones, so the fixed cost per request drops out
// ("cpu-ns/extra-token"); and requests per second at 16 tokens, 8 clients.
func BenchmarkLoopbackTokens(b *testing.B) {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	run := func(tokens, n, clients int) (perReq time.Duration, rate float64) {
		f := mustNew(b, zeroLatency(tokens))
		srv := NewServer(f)
		defer srv.Close()
		c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
		defer c.CloseIdleConnections()
		url := srv.URL + "/v1/chat/completions"
		var seq atomic.Int64
		var wg sync.WaitGroup
		start, before := time.Now(), cpu()
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 32<<10)
				for i := seq.Add(1); i <= int64(n); i = seq.Add(1) {
					req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(benchBody))
					req.Header.Set("X-Request-ID", "lb-"+strconv.FormatInt(i, 10))
					resp, err := c.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					var w tailWriter
					_, err = io.CopyBuffer(&w, resp.Body, buf)
					resp.Body.Close()
					if err != nil || string(w.tail[:]) != doneEvent {
						b.Errorf("request %d: %v, ends %q", i, err, w.tail[:])
						return
					}
				}
			}()
		}
		wg.Wait()
		return (cpu() - before) / time.Duration(n), float64(n) / time.Since(start).Seconds()
	}
	var small, large time.Duration
	var rate float64
	for b.Loop() {
		small, rate = run(16, 2000, 8)
		large, _ = run(256, 500, 8)
	}
	b.ReportMetric(float64(large-small)/240, "cpu-ns/extra-token")
	b.ReportMetric(rate, "req/s-16-tokens")
}
