// Package live holds a real endpoint to the quickstart's SLO. It runs only
// when OPENAI_BASE_URL and OPENAI_MODEL are set (and OPENAI_API_KEY, empty
// for a local server); otherwise it skips and says why.
package live_test

import (
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// TestLiveChatLatencySLO sends real traffic, in real time: 200 requests at
// concurrency 4 take a few minutes, so give go test a -timeout to match;
// Measure stops starting requests before that deadline and says so.
func TestLiveChatLatencySLO(t *testing.T) {
	p, err := latencytest.OpenAIFromEnv() // the error names the unset variables, never the key
	if err != nil {
		t.Skip(err)
	}
	if testing.Short() {
		t.Skip("live traffic takes minutes; not with -short")
	}
	r := latencytest.Batch{
		Requests:    200,
		Concurrency: 4,
		Load: latencytest.Load{
			MaxTokens: 64,
			// A real endpoint can stall: bound every request.
			FirstTokenTimeout: 30 * time.Second,
			TotalTimeout:      60 * time.Second,
		},
	}.Measure(t, p)

	sloassert.Check(t, r,
		sloassert.Q(sloassert.TTFT, 0.50, 300*time.Millisecond),
		sloassert.Q(sloassert.TTFT, 0.99, time.Second),
		sloassert.Q(sloassert.Total, 0.95, 1500*time.Millisecond),
		sloassert.MaxCV(sloassert.TTFT, sloassert.CVTolerable.MaxPercent()),
		sloassert.MaxErrorRate(0.01),
		sloassert.NoCacheHits(),
	)
}
