package sloassert_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/servermetrics"
	"github.com/tailguard/tailguard/sloassert"
)

// TestAttributionChains: a chain run scrapes the server too: four chains
// of five calls on one slot queue behind each other; the chain report's
// notes give the server's figures, and the calls' failed TTFT says it
// is queueing.
func TestAttributionChains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := oneSlotFake()
		defer f.Close()
		c := latencytest.Chain{Chains: 4, Length: 5, Concurrency: 4,
			ServerMetrics: servermetrics.Source{URL: "http://fake/metrics", Client: f.Client(), Every: -1}}
		cr, err := c.Run(context.Background(), latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client())))
		require.NoError(t, err)
		require.NotNil(t, cr.Server, "the chains scraped the server")
		d, ok := cr.Server.Stage(servermetrics.Queue)
		require.True(t, ok)
		assert.Equal(t, 20, d.N, "4 chains of 5 calls, each finished on the server")

		rep := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, time.Second, sloassert.AllowSmallSample()))
		require.False(t, rep.OK())
		// 20 calls on one slot, four chains at a time (1s a first call,
		// 640ms a later one, its prefix cached): 14.24s, scraped before
		// and after.
		assert.Contains(t, rep.String(), "server metrics (vllm, 2 scrapes over 14.240s): the server finished 20 requests, this run sent 20 (warm-up included); peak waiting 0, running 0, KV cache 0%; series read: model_name=\"fake-model\" (the measured model)")

		calls := sloassert.Evaluate(cr.Calls(), sloassert.Q(sloassert.TTFT, 0.9, time.Second, sloassert.AllowSmallSample()))
		require.False(t, calls.OK())
		assert.Contains(t, calls.Outcomes[0].Server, "server (vllm) queue p90 in 2.5s-5s")
		assert.Contains(t, calls.Outcomes[0].Server, ": queueing")
	})
}
