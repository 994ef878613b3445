package servermetrics_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/servermetrics"
)

// oneSlot serves one request at a time: TTFT 400ms, then 60 gaps of
// 10ms (61 tokens): 1s per request, so the k-th of four requests sent at
// once waits k seconds for the slot.
func oneSlot() fakeprovider.Profile {
	return fakeprovider.Profile{
		TTFT:            fakeprovider.Fixed(400 * time.Millisecond),
		ITL:             fakeprovider.Fixed(10 * time.Millisecond),
		OutputTokens:    fakeprovider.Fixed(61),
		SlotsPerReplica: 1,
	}
}

// TestFakeMetricsExactBuckets: four requests at once on one slot queue
// exactly 0, 1, 2 and 3 s; the fake's /metrics puts each in its vLLM
// bucket (le is inclusive: 1s counts in le="1", 2s in le="2"), and the
// counts agree with the fake's own records, bucket by bucket.
func TestFakeMetricsExactBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(oneSlot())
		defer f.Close()
		ctx := context.Background()
		src := servermetrics.Source{URL: "http://fake/metrics", Names: servermetrics.VLLM, Client: f.Client()}
		before, err := src.Scrape(ctx)
		require.NoError(t, err)
		res, err := latencytest.Batch{Requests: 4, NoWarmup: true, Concurrency: 4}.Run(ctx,
			latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client())))
		require.NoError(t, err)
		require.Zero(t, res.ErrorRate())
		after, err := src.Scrape(ctx)
		require.NoError(t, err)
		iv, err := servermetrics.Delta(before, after)
		require.NoError(t, err)
		require.Empty(t, iv.Problems)

		// vLLM's latency buckets: 0.3 0.5 0.8 1 1.5 2 2.5 5 10 ...
		bucket := func(d servermetrics.Distribution, le float64) int {
			for i, b := range d.Bounds {
				if b == le {
					return d.Counts[i]
				}
			}
			t.Fatalf("%s has no bucket le=%v", d.Metric, le)
			return 0
		}
		q, ok := iv.Stage(servermetrics.Queue)
		require.True(t, ok)
		assert.Equal(t, 4, q.N)
		assert.Equal(t, 6*time.Second, q.Sum) // 0+1+2+3
		assert.Equal(t, 1, bucket(q, 0.3))    // 0s
		assert.Equal(t, 1, bucket(q, 1))      // 1s
		assert.Equal(t, 1, bucket(q, 2))      // 2s
		assert.Equal(t, 1, bucket(q, 5))      // 3s
		// Prefill 400ms (le 0.5), decode 600ms (le 0.8), inference 1s.
		for st, le := range map[servermetrics.Stage]float64{servermetrics.Prefill: 0.5, servermetrics.Decode: 0.8, servermetrics.Inference: 1} {
			d, ok := iv.Stage(st)
			require.True(t, ok, st)
			assert.Equal(t, 4, bucket(d, le), st)
		}
		// TTFT = queue + 400ms: 0.4 (le 0.5), 1.4 and 2.4 (le 2.5), 3.4 (le 5).
		ttft, _ := iv.Stage(servermetrics.TTFT)
		// (vLLM's TTFT buckets: ... 0.25 0.5 0.75 1 2.5 5 ...)
		assert.Equal(t, 1, bucket(ttft, 0.5))
		assert.Equal(t, 2, bucket(ttft, 2.5))
		assert.Equal(t, 1, bucket(ttft, 5))
		assert.Equal(t, 4, ttft.N)

		// The fake's own records, put in the same buckets.
		want := make([]int, len(q.Bounds)+1)
		for _, sv := range f.Served() {
			w := sv.Queued + sv.ColdStart
			k := len(q.Bounds)
			for i, b := range q.Bounds {
				if w <= time.Duration(b*float64(time.Second)) {
					k = i
					break
				}
			}
			want[k]++
		}
		assert.Equal(t, want, q.Counts)

		// The client's slowest TTFT (3.4s) and the server's queue p99
		// bucket (2.5s-5s: rank 3.96 of 4) hold the same request.
		e := q.Quantile(0.99)
		assert.Equal(t, 2500*time.Millisecond, e.Lo)
		assert.Equal(t, 5*time.Second, e.Hi)
		assert.Equal(t, 3400*time.Millisecond, slices.Max(res.TTFT()))

		// Nothing waits or runs once the batch is done.
		assert.Equal(t, map[servermetrics.Gauge]float64{servermetrics.Waiting: 0, servermetrics.Running: 0, servermetrics.KVCache: 0}, after.Gauges)
	})
}

// TestFakeMetricsGaugesMidRun: scraped while four requests hold one
// slot, the fake reports one running and three waiting, and the KV-cache
// stand-in (busy slots over slots) full.
func TestFakeMetricsGaugesMidRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(oneSlot())
		defer f.Close()
		ctx := context.Background()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = latencytest.Batch{Requests: 4, NoWarmup: true, Concurrency: 4}.Run(ctx, p)
		}()
		time.Sleep(500 * time.Millisecond) // virtual: the first request is decoding
		s, err := servermetrics.Source{URL: "http://fake/metrics", Client: f.Client()}.Scrape(ctx)
		require.NoError(t, err)
		assert.Equal(t, servermetrics.VLLM, s.Server, "auto-detected")
		assert.Equal(t, 3.0, s.Gauges[servermetrics.Waiting])
		assert.Equal(t, 1.0, s.Gauges[servermetrics.Running])
		assert.Equal(t, 1.0, s.Gauges[servermetrics.KVCache])
		<-done
	})
}

// TestFakeMetricsOverSocket: fakellm's server answers GET /metrics over
// a loopback socket, and what it reports agrees with the fake's own
// records: one observation per request, each queue time in the bucket
// its Served record puts it (both come from the same instants, so this
// holds in real time too).
func TestFakeMetricsOverSocket(t *testing.T) {
	p := oneSlot()
	p.TTFT = fakeprovider.Fixed(20 * time.Millisecond)
	p.ITL = fakeprovider.Fixed(time.Millisecond)
	p.OutputTokens = fakeprovider.Fixed(5)
	f := fakeprovider.New(p)
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()
	ctx := context.Background()
	src := servermetrics.Source{URL: srv.URL + "/metrics", Names: servermetrics.Auto}
	w := src.Watch(ctx)
	res, err := latencytest.Batch{Requests: 6, NoWarmup: true, Concurrency: 3}.Run(ctx, latencytest.OpenAI(srv.URL+"/v1"))
	require.NoError(t, err)
	require.Zero(t, res.ErrorRate())
	iv := w.Stop()
	require.Empty(t, iv.Problems)
	assert.Equal(t, servermetrics.VLLM, iv.Server)
	served := f.Served()
	require.Len(t, served, 6)
	for _, st := range []servermetrics.Stage{servermetrics.Queue, servermetrics.Prefill, servermetrics.Decode, servermetrics.Inference, servermetrics.TTFT, servermetrics.E2E} {
		d, ok := iv.Stage(st)
		require.True(t, ok, st)
		assert.Equal(t, 6, d.N, st)
	}
	q, _ := iv.Stage(servermetrics.Queue)
	var sum time.Duration
	for _, sv := range served {
		sum += sv.Queued + sv.ColdStart
	}
	assert.InDelta(t, sum.Seconds(), q.Sum.Seconds(), 2e-9, "the queue sum is the fake's records' sum (to the ns)")
	ttft, _ := iv.Stage(servermetrics.TTFT)
	var ttftSum time.Duration
	for _, sv := range served {
		ttftSum += sv.TTFT
	}
	assert.InDelta(t, ttftSum.Seconds(), ttft.Sum.Seconds(), 1e-6, "within the text's float rounding")
}
