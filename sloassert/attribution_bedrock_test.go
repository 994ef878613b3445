package sloassert_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// measureBedrock runs 20 Bedrock ConverseStream requests, 4 at a time,
// against f through client, with no metrics endpoint: the fake's
// metadata.metrics.latencyMs is the only server figure.
func measureBedrock(t *testing.T, f *fakeprovider.Fake, client *http.Client) *latencytest.Result {
	t.Helper()
	b := latencytest.Batch{Requests: 20, NoWarmup: true, Concurrency: 4}
	res, err := b.Run(context.Background(), latencytest.Bedrock("http://fake", "fake-model", latencytest.WithHTTPClient(client)))
	require.NoError(t, err)
	require.Zero(t, res.ErrorRate())
	require.Nil(t, res.Server, "no metrics endpoint was scraped")
	return res
}

// TestAttributionServerLatency: Bedrock reports its own latency per
// response; the attribution splits each request's total with it, with no
// metrics endpoint. A 2s delay before each request reaches the server is
// outside it, request by request; four clients queued on one slot are
// inside it (the fake's latency runs from the request's arrival).
func TestAttributionServerLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Each answer: TTFT 100ms, then 4 gaps of 10ms: 140ms on the
		// server; the client waits 2s more before the server sees it.
		f := fakeprovider.New(fakeprovider.Profile{Model: "fake-model", TTFT: fakeprovider.Fixed(100 * time.Millisecond),
			ITL: fakeprovider.Fixed(10 * time.Millisecond), OutputTokens: fakeprovider.Fixed(5)})
		defer f.Close()
		res := measureBedrock(t, f, &http.Client{Transport: delayed{next: f.Transport(), d: 2 * time.Second}})
		obj := sloassert.Q(sloassert.Total, 0.9, time.Second, sloassert.AllowSmallSample())
		rep := sloassert.Evaluate(res, obj)
		require.False(t, rep.OK())
		assert.Equal(t, "client total p90 2140.0ms; server latency per response (20 of 20 requests) p90 140.0ms; the rest (client + network) per request p50 2000.0ms, p90 2000.0ms, max 2000.0ms; in the 20 requests at or over the client's p90, the server's part is 7% of the total (median): outside the server (client + network)",
			rep.Outcomes[0].Server)
		plain := sloassert.Evaluate(withoutServerLatency(res), obj)
		assert.Empty(t, plain.Outcomes[0].Server, "without the server's latency there is nothing to split")
		out := rep.Outcomes[0]
		out.Server = ""
		assert.Equal(t, plain.Outcomes[0], out, "the server's latency never changes a verdict")
		assert.Contains(t, rep.String(), "server latency per response (the server's own, as Bedrock's metrics.latencyMs): 20 of 20 measured requests carry it")

		// TTFT is not split: the server's latency spans the whole answer.
		rep = sloassert.Evaluate(res, sloassert.Q(sloassert.TTFT, 0.9, time.Second, sloassert.AllowSmallSample()))
		assert.Equal(t, "client ttft p90 2100.0ms; server latency per response (20 of 20 requests) p90 140.0ms; it spans the whole answer, not split at the first token: the rest of each whole request (client + network) p50 2000.0ms, p90 2000.0ms, max 2000.0ms",
			rep.Outcomes[0].Server)
	})
	synctest.Test(t, func(t *testing.T) {
		f := oneSlotFake() // 1s a request, one at a time
		defer f.Close()
		res := measureBedrock(t, f, f.Client())
		rep := sloassert.Evaluate(res, sloassert.Q(sloassert.Total, 0.9, 2*time.Second, sloassert.AllowSmallSample()))
		require.False(t, rep.OK())
		// Closed loop of 4 on one slot: after the first four, each
		// request waits 3s and runs 1s, all of it on the server.
		assert.Equal(t, "client total p90 4000.0ms; server latency per response (20 of 20 requests) p90 4000.0ms; the rest (client + network) per request p50 0.0ms, p90 0.0ms, max 0.0ms; in the 17 requests at or over the client's p90, the server's part is 100% of the total (median): inside the server (its own latency)",
			rep.Outcomes[0].Server)
	})
}

// withoutServerLatency is r with every record's server latency removed.
func withoutServerLatency(r *latencytest.Result) *latencytest.Result {
	c := *r
	c.Records = append([]latencytest.Record(nil), r.Records...)
	for i := range c.Records {
		c.Records[i].ServerLatency = 0
	}
	return &c
}
