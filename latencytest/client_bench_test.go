package latencytest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// zeroLatency is a fake with no waits at all: the client's and the fake's
// own costs are all there is.
func zeroLatency(tokens int) fakeprovider.Profile {
	return fakeprovider.Profile{
		TTFT:            fakeprovider.Fixed(time.Duration(0)),
		ITL:             fakeprovider.Fixed(time.Duration(0)),
		OutputTokens:    fakeprovider.Fixed(tokens),
		SlotsPerReplica: 64,
		PrefixCache:     fakeprovider.PrefixCache{Disabled: true},
	}
}

// BenchmarkClientInMemory: requests per second through latencytest's own
// client (a Batch and the OpenAI provider) against the in-memory fake with
// no latency, 16-token answers, 8 in flight, in real time: every token
// event is timed and decoded. The fake's cost is included (same process).
// It reports requests per second and the wall time per token event (on
// the two cores the client and the fake share), without an API key
// (nokey) and with one (key: every event is searched for it, redaction,
// as a user's run with a key is). The sub-benchmark synctest runs the
// same batch, key set, inside a synctest bubble, as the package's timing
// tests do (the bubble's clock stands still: no wait is real).
func BenchmarkClientInMemory(b *testing.B) {
	b.Run("nokey", func(b *testing.B) { inMemory(b, false) })
	b.Run("key", func(b *testing.B) { inMemory(b, false, latencytest.WithAPIKey(inMemoryKey)) })
	b.Run("synctest", func(b *testing.B) { inMemory(b, true, latencytest.WithAPIKey(inMemoryKey)) })
}

// inMemoryKey is the key of the runs with one (benchAPIKey's value: that
// constant builds on unix only).
const inMemoryKey = "sk-bench-7f3a9c21e4b86d05a1c3e9f7b2d4608e"

func inMemory(b *testing.B, bubble bool, opts ...latencytest.Option) {
	const n = 2000
	runs := 0
	batch := func(tb testing.TB) {
		f := fakeprovider.New(zeroLatency(16))
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", append([]latencytest.Option{latencytest.WithHTTPClient(f.Client())}, opts...)...)
		r, err := latencytest.Batch{NoWarmup: true, Requests: n, Concurrency: 8, Load: latencytest.Load{MaxTokens: 16, Prompt: "Say sixteen words.", Label: "m" + strings.Repeat("x", runs%3)}}.Run(context.Background(), p)
		if err != nil {
			tb.Fatal(err)
		}
		for _, rec := range r.Records {
			if !rec.OK() || rec.TokenEvents != 16 {
				tb.Fatalf("%s: %s %s (%d token events)", rec.ID, rec.Err, rec.Detail, rec.TokenEvents)
			}
		}
		if c := r.Counts(); c.Sent != n || c.Kept != n {
			tb.Fatalf("counts %+v", c)
		}
		runs++
	}
	for b.Loop() {
		if !bubble {
			batch(b)
			continue
		}
		ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{
			Name: "InMemory",
			F:    func(t *testing.T) { synctest.Test(t, func(t *testing.T) { batch(t) }) },
		}})
		if !ok {
			b.Fatal("the batch in the bubble failed")
		}
	}
	b.ReportMetric(float64(n*runs)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*runs*16), "ns/event")
}

// Over loopback a run opens at most one connection per request in flight
// (the default transport is bounded to the run's concurrency and keeps
// its connections idle between requests; a call reads the body to its end
// after [DONE]), and the disclosure counts them. With a 20 ms TTFT the
// warm-up round is all in flight at once, so it opens them all.
func TestLoopbackConnectionsAtMostConcurrency(t *testing.T) {
	prof := zeroLatency(8)
	prof.TTFT = fakeprovider.Fixed(20 * time.Millisecond)
	f := fakeprovider.New(prof)
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()
	const conc = 6
	p := latencytest.OpenAI(srv.URL + "/v1")
	defer p.CloseIdleConnections()
	r, err := latencytest.Batch{Warmup: conc, Requests: 30, Concurrency: conc, Load: latencytest.Load{MaxTokens: 8, Prompt: "Say eight words."}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	opened, measured := 0, 0
	for _, rec := range r.Records {
		if !rec.OK() {
			t.Fatalf("%s: %s %s", rec.ID, rec.Err, rec.Detail)
		}
		if rec.Connect > 0 {
			t.Logf("%s opened a connection (started at %v, connect %v)", rec.ID, rec.Start.Sub(r.Start), rec.Connect)
			opened++
			if !rec.Warmup {
				measured++
			}
		}
	}
	if opened < 1 || opened > conc {
		t.Errorf("%d connections opened; want 1 to %d (the concurrency)", opened, conc)
	}
	want := fmt.Sprintf("%d new connection(s), %d of them during measured requests", opened, measured)
	if box := r.Disclosure.Box(7).Answer; !strings.Contains(box, want) {
		t.Errorf("box 7 does not say %q: %s", want, box)
	}
}
