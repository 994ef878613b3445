// Package quickstart is the test to copy first: a latency SLO on a
// simulated endpoint, checked in virtual time.
package quickstart_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// TestChatLatencySLO holds a chat endpoint to its latency SLO. The endpoint
// is the fake provider's mistral-3-14b preset (a model measured on a real
// serverless endpoint: TTFT p50 ~180 ms, p99 ~600 ms).
func TestChatLatencySLO(t *testing.T) {
	// Inside the bubble the clock is virtual: the run takes about 30 s of
	// virtual time and a fraction of a second of real time, and every
	// figure is the same on every run.
	synctest.Test(t, func(t *testing.T) {
		prof, err := fakeprovider.Preset("mistral-3-14b")
		if err != nil {
			t.Fatal(err)
		}
		fake := fakeprovider.New(prof)
		t.Cleanup(fake.Close) // ends the fake's goroutines before the bubble ends

		// The provider streams chat completions over the fake's in-memory
		// client; against a real endpoint, drop WithHTTPClient and give its
		// URL and WithAPIKey.
		provider := latencytest.OpenAI("http://fake/v1",
			latencytest.WithHTTPClient(fake.Client()),
			latencytest.WithModel(prof.Model))

		// 200 measured requests, 4 at a time, after 10 warm-up requests
		// (the default: discarded from steady state, judged on their own
		// by MaxColdStart), a unique nonce on every prompt so no cache
		// flatters the numbers.
		// Measure logs the distribution and how it was measured (go test
		// -v) and writes the raw records (go test -artifacts).
		r := latencytest.Batch{Requests: 200, Concurrency: 4}.Measure(t, provider)

		// The SLO. Every objective is judged; a failure prints one screen
		// with the whole distribution, the slowest trace IDs and the seed.
		sloassert.Check(t, r,
			sloassert.Q(sloassert.TTFT, 0.50, 300*time.Millisecond),
			sloassert.Q(sloassert.TTFT, 0.99, time.Second), // p99 needs n >= 100
			sloassert.Q(sloassert.Total, 0.95, 1500*time.Millisecond),
			sloassert.MaxCV(sloassert.TTFT, sloassert.CVTolerable.MaxPercent()), // CV <= 100%: no cold starts
			sloassert.MaxErrorRate(0.01),
			sloassert.NoCacheHits(), // proof the nonce defeated the prefix cache
		)
	})
}
