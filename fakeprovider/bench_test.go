package fakeprovider

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// The fake's own cost: how many requests per second it serves in memory
// when the profile asks for no latency at all, and what each streamed token
// costs in allocations. Every request is read to its end and must end with
// "data: [DONE]", so a broken stream cannot pass for a fast one.

// zeroLatency is a profile with no waits: TTFT 0, ITL 0, no prefix cache,
// tokens answer tokens (one per SSE event).
func zeroLatency(tokens int) Profile {
	return Profile{
		TTFT:         Fixed(time.Duration(0)),
		ITL:          Fixed(time.Duration(0)),
		OutputTokens: Fixed(tokens),
		PrefixCache:  PrefixCache{Disabled: true},
	}
}

var benchBody = []byte(`{"model":"fake-model","stream":true,"stream_options":{"include_usage":true},` +
	`"messages":[{"role":"user","content":"Say something about tails."}]}`)

const doneEvent = "data: [DONE]\n\n"

// tailWriter keeps the last bytes written, without allocating.
type tailWriter struct {
	tail [len(doneEvent)]byte
	n    int // bytes written in all
}

func (w *tailWriter) Write(p []byte) (int, error) {
	if len(p) >= len(w.tail) {
		copy(w.tail[:], p[len(p)-len(w.tail):])
	} else {
		copy(w.tail[:], w.tail[len(p):])
		copy(w.tail[len(w.tail)-len(p):], p)
	}
	w.n += len(p)
	return len(p), nil
}

// streamOnce sends one streamed request with trace ID id through c and
// reads the body to the end through buf. It returns an error unless the
// answer was a 200 stream ending with [DONE].
func streamOnce(c *http.Client, id string, buf []byte) error {
	req, err := http.NewRequest(http.MethodPost, "http://fake/v1/chat/completions", bytes.NewReader(benchBody))
	if err != nil {
		return err
	}
	req.Header.Set("X-Request-ID", id)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	var w tailWriter
	_, err = io.CopyBuffer(&w, resp.Body, buf)
	resp.Body.Close()
	switch {
	case err != nil:
		return fmt.Errorf("%s: reading the stream: %w", id, err)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s: status %d", id, resp.StatusCode)
	case w.n < len(doneEvent) || string(w.tail[:]) != doneEvent:
		return fmt.Errorf("%s: stream of %d bytes does not end with [DONE] (ends %q)", id, w.n, w.tail[:])
	}
	return nil
}

func BenchmarkInMemoryRequests(b *testing.B) {
	b.Run("sequential", func(b *testing.B) {
		f := mustNew(b, zeroLatency(16))
		c := f.Client()
		buf := make([]byte, 32<<10)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if err := streamOnce(c, "seq-"+strconv.Itoa(i), buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		checkServed(b, f, b.N, 16)
	})
	b.Run("parallel", func(b *testing.B) {
		// GOMAXPROCS clients; the default 8 slots hold them all, so nothing
		// queues and this measures the fake's own throughput.
		f := mustNew(b, zeroLatency(16))
		c := f.Client()
		var seq atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			buf := make([]byte, 32<<10)
			for pb.Next() {
				id := "par-" + strconv.FormatInt(seq.Add(1), 10)
				if err := streamOnce(c, id, buf); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		checkServed(b, f, b.N, 16)
	})
}

// checkServed fails b unless the fake served n requests of tokens tokens
// each, none canceled and none faulted.
func checkServed(b *testing.B, f *Fake, n, tokens int) {
	b.Helper()
	served := f.Served()
	if len(served) != n {
		b.Fatalf("fake served %d requests, want %d", len(served), n)
	}
	for _, s := range served {
		if s.Tokens != tokens || s.Canceled || s.Fault != "" || s.FinishReason != "stop" {
			b.Fatalf("request %s: %d tokens, canceled %v, fault %q, finish %q; want %d tokens, stop",
				s.ID, s.Tokens, s.Canceled, s.Fault, s.FinishReason, tokens)
		}
	}
}

// BenchmarkStreamAllocs reports what one streamed token costs: allocations
// and bytes per token of a 256-token answer (whole request included, client
// side too: everything the process allocated), and per extra token, from
// 16 to 256 tokens, which leaves out the fixed per-request cost.
func BenchmarkStreamAllocs(b *testing.B) {
	const small, large = 16, 256
	f16, f256 := mustNew(b, zeroLatency(small)), mustNew(b, zeroLatency(large))
	c16, c256 := f16.Client(), f256.Client()
	buf := make([]byte, 32<<10)
	// run streams n requests through c; it returns allocations and bytes
	// allocated per request, from runtime.MemStats (all goroutines).
	run := func(c *http.Client, prefix string, n int) (allocs, bytes float64) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range n {
			if err := streamOnce(c, prefix+strconv.Itoa(i), buf); err != nil {
				b.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		return float64(after.Mallocs-before.Mallocs) / float64(n), float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	}
	run(c16, "warm16-", 10)
	run(c256, "warm256-", 10)
	a16, b16 := run(c16, "small-", max(b.N, 100))

	b.ReportAllocs()
	b.ResetTimer()
	a256, b256 := run(c256, "large-", b.N)
	b.StopTimer()
	checkServed(b, f16, 10+max(b.N, 100), small)
	checkServed(b, f256, 10+b.N, large)

	b.ReportMetric(a256/large, "allocs/token")
	b.ReportMetric(b256/large, "B/token")
	// e.g. 600 allocs at 256 tokens, 120 at 16: (600-120)/240 = 2 per extra token
	b.ReportMetric((a256-a16)/(large-small), "allocs/extra-token")
	b.ReportMetric((b256-b16)/(large-small), "B/extra-token")
}
