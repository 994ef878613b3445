package sloassert_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/servermetrics"
	"github.com/tailguard/tailguard/sloassert"
)

// oneSlotFake serves one request at a time: TTFT 400ms, then 60 gaps of
// 10ms: each request holds the slot 1s.
func oneSlotFake() *fakeprovider.Fake {
	return fakeprovider.New(fakeprovider.Profile{
		TTFT:            fakeprovider.Fixed(400 * time.Millisecond),
		ITL:             fakeprovider.Fixed(10 * time.Millisecond),
		OutputTokens:    fakeprovider.Fixed(61),
		SlotsPerReplica: 1,
	})
}

// delayed adds a fixed delay before each request reaches the server: a
// slow network or a busy client, outside the server's clock.
type delayed struct {
	next http.RoundTripper
	d    time.Duration
}

func (t delayed) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(t.d)
	return t.next.RoundTrip(r)
}

// measureWithServer runs 20 requests, 4 at a time, against f through
// client, scraping f's /metrics (directly) every 3.3s (off the whole
// seconds at which the slot changes hands).
func measureWithServer(t *testing.T, f *fakeprovider.Fake, client *http.Client) *latencytest.Result {
	t.Helper()
	b := latencytest.Batch{Requests: 20, NoWarmup: true, Concurrency: 4,
		ServerMetrics: servermetrics.Source{URL: "http://fake/metrics", Client: f.Client(), Every: 3300 * time.Millisecond}}
	res, err := b.Run(context.Background(), latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(client)))
	require.NoError(t, err)
	require.Zero(t, res.ErrorRate())
	return res
}

// withoutServer is the same result without its server metrics.
func withoutServer(r *latencytest.Result) *latencytest.Result {
	c := *r
	c.Server = nil
	return &c
}

// TestAttributionQueueing: four clients share one slot, so each request
// waits about 3s for 1s of service: the failed TTFT p90 is the server's
// queue, bucket and all, and the verdict is the one the run gets without
// server metrics.
func TestAttributionQueueing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := oneSlotFake()
		defer f.Close()
		res := measureWithServer(t, f, f.Client())
		obj := sloassert.Q(sloassert.TTFT, 0.9, time.Second, sloassert.AllowSmallSample())
		rep := sloassert.Evaluate(res, obj)
		plain := sloassert.Evaluate(withoutServer(res), obj)
		require.False(t, rep.OK())
		out := rep.Outcomes[0]
		assert.Equal(t, "", plain.Outcomes[0].Server)
		out.Server = ""
		assert.Equal(t, plain.Outcomes[0], out, "server metrics never change a verdict")

		// Client TTFT: after the first four, each request of the closed
		// loop waits 3s, so the p90 is 3.4s; the server puts the queue's
		// p90 in vLLM's 2.5s-5s bucket (its low bound is over half of
		// 3.4s: queueing) and the prefill (400ms) in 300ms-500ms; its TTFT
		// bucket (2.5s-5s) leaves the rest between 0 and 3.4s-2.5s.
		assert.Equal(t,
			"client ttft p90 3400.0ms; server (vllm) queue p90 in 2.5s-5s, prefill p90 in 300ms-500ms, ttft p90 in 2.5s-5s over the same interval; the rest (client + network) 0.0ms-900.0ms: queueing",
			rep.Outcomes[0].Server)
		text := rep.String()
		assert.Contains(t, text, "    where the time went: client ttft p90 3400.0ms; server (vllm) queue p90")
		assert.Contains(t, text, "server metrics (vllm, 8 scrapes over 20.000s): the server finished 20 requests, this run sent 20 (warm-up included); peak waiting 3, running 1, KV cache 100%; series read: model_name=\"fake-model\" (the measured model)")
		assert.Contains(t, text, "server metrics limits: each server figure is known to its histogram bucket only; the server times on its own clock")
		md := sloassert.Markdown(rep)
		assert.Contains(t, md, "where the time went: client ttft p90 3400.0ms; server (vllm) queue p90 in 2.5s-5s")
		var page bytes.Buffer
		require.NoError(t, sloassert.WriteHTML(&page, res, rep))
		assert.Contains(t, page.String(), "where the time went: client ttft p90 3400.0ms; server (vllm) queue p90 in 2.5s-5s")
		assert.Contains(t, page.String(), "server metrics (vllm, 8 scrapes over 20.000s)")
	})
}

// TestAttributionOutsideServer: a 2s delay before each request reaches
// the server (network, client) is outside every server stage: the rest
// dominates.
func TestAttributionOutsideServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(fakeprovider.Profile{TTFT: fakeprovider.Fixed(100 * time.Millisecond), OutputTokens: fakeprovider.Fixed(5)})
		defer f.Close()
		slow := &http.Client{Transport: delayed{next: f.Transport(), d: 2 * time.Second}}
		res := measureWithServer(t, f, slow)
		rep := sloassert.Evaluate(res, sloassert.Q(sloassert.TTFT, 0.9, time.Second, sloassert.AllowSmallSample()))
		require.False(t, rep.OK())
		line := rep.Outcomes[0].Server
		// Server TTFT 100ms, in vLLM's 80ms-100ms bucket: the rest is
		// 2100ms less that bucket.
		assert.Equal(t, "client ttft p90 2100.0ms; server (vllm) queue p90 in 0s-300ms, prefill p90 in 0s-300ms, ttft p90 in 80ms-100ms over the same interval; the rest (client + network) 2000.0ms-2020.0ms: outside the server (client + network)", line)

		// First answer: reasoning decoded after the server's TTFT would be
		// in the difference, so the rest is not called outside the server.
		rep = sloassert.Evaluate(res, sloassert.Q(sloassert.FirstAnswer, 0.9, time.Second, sloassert.AllowSmallSample()))
		require.False(t, rep.OK())
		assert.Equal(t, "client first_answer p90 2100.0ms; server (vllm) queue p90 in 0s-300ms, prefill p90 in 0s-300ms, ttft p90 in 80ms-100ms over the same interval; the rest is not split out (reasoning before the first answer is the server's decoding): no part known to be half of it (at this bucket resolution)", rep.Outcomes[0].Server)
		assert.True(t, strings.HasSuffix(line, ": outside the server (client + network)"), line)
	})
}

// TestAttributionLimits: passing objectives carry no attribution; other
// clients on the server are named; failed scrapes are notes, not a
// changed verdict.
func TestAttributionLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := oneSlotFake()
		defer f.Close()
		// Another client sends 5 requests to the same server meanwhile.
		other := make(chan struct{})
		go func() {
			defer close(other)
			_, _ = latencytest.Batch{Requests: 5, NoWarmup: true, Load: latencytest.Load{Label: "other"}}.Run(context.Background(),
				latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client())))
		}()
		res := measureWithServer(t, f, f.Client())
		<-other
		rep := sloassert.Evaluate(res, sloassert.Q(sloassert.Total, 0.5, time.Hour, sloassert.AllowSmallSample()),
			sloassert.Q(sloassert.Total, 0.9, 2*time.Second, sloassert.AllowSmallSample()))
		assert.True(t, rep.Outcomes[0].OK)
		assert.Empty(t, rep.Outcomes[0].Server, "a passing objective has no attribution")
		require.False(t, rep.Outcomes[1].OK)
		assert.Contains(t, rep.Outcomes[1].Server, "server (vllm) queue p90")
		assert.Contains(t, rep.Outcomes[1].Server, "decode p90")
		assert.Contains(t, rep.Outcomes[1].Server, "e2e p90")
		assert.Contains(t, rep.String(), "this run sent 20 (warm-up included): other clients' requests are in the server's figures")

		bad := measureWithServerURL(t, f, "http://fake/not-metrics")
		rep = sloassert.Evaluate(bad, sloassert.Q(sloassert.TTFT, 0.9, time.Second, sloassert.AllowSmallSample()))
		require.False(t, rep.OK())
		assert.Empty(t, rep.Outcomes[0].Server)
		assert.Contains(t, rep.String(), "server metrics: before the run: servermetrics: scrape http://fake/not-metrics: HTTP 404 (the verdict does not depend on them)")
	})
}

func measureWithServerURL(t *testing.T, f *fakeprovider.Fake, url string) *latencytest.Result {
	t.Helper()
	b := latencytest.Batch{Requests: 20, NoWarmup: true, Concurrency: 4,
		ServerMetrics: servermetrics.Source{URL: url, Client: f.Client(), Every: -1}}
	res, err := b.Run(context.Background(), latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client())))
	require.NoError(t, err)
	return res
}

// TestServerQueue: the server-queue objective reads the queue bucket:
// four clients on one slot put the p90 in 2.5s-5s (20 requests, 16 of
// them waiting 3s).
func TestServerQueue(t *testing.T) {
	var res, bad *latencytest.Result
	synctest.Test(t, func(t *testing.T) {
		f := oneSlotFake()
		defer f.Close()
		res = measureWithServer(t, f, f.Client())
		bad = measureWithServerURL(t, f, "http://fake/not-metrics")
	})
	small := sloassert.AllowSmallSample()
	for _, tc := range []struct {
		name    string
		obj     sloassert.Objective
		ok      bool
		verdict sloassert.Verdict
		note    string
	}{
		{"bucket over budget", sloassert.ServerQueue(0.9, 2*time.Second, small), false, sloassert.Fail, "bucket 2.5s-5s, n = 20 on the server"},
		{"bucket within budget", sloassert.ServerQueue(0.9, 5*time.Second, small), true, sloassert.Pass, "bucket 2.5s-5s"},
		// 3s is inside 2.5s-5s: the interpolated 4705.9ms gates.
		{"budget inside the bucket", sloassert.ServerQueue(0.9, 3*time.Second, small), false, sloassert.Inconclusive, "the budget lies inside the bucket"},
		{"refute passes it", sloassert.ServerQueue(0.9, 3*time.Second, small, sloassert.Refute(0.95)), true, sloassert.Inconclusive, "inside the bucket"},
		{"demonstrate fails it", sloassert.ServerQueue(0.9, 4900*time.Millisecond, small, sloassert.Demonstrate(0.95)), false, sloassert.Inconclusive, "inside the bucket"},
		{"too few on the server", sloassert.ServerQueue(0.99, time.Hour), false, sloassert.Fail, "p99 needs n >= 100 (have 20 on the server)"},
		{"bad quantile", sloassert.ServerQueue(1, time.Hour), false, sloassert.Fail, "quantile 1 is not in (0,1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := sloassert.Evaluate(res, tc.obj).Outcomes[0]
			assert.Equal(t, tc.ok, out.OK, out.String())
			assert.Equal(t, tc.verdict, out.Verdict, out.String())
			assert.Contains(t, out.Note, tc.note)
		})
	}
	out := sloassert.Evaluate(withoutServer(res), sloassert.ServerQueue(0.9, time.Hour, small)).Outcomes[0]
	assert.False(t, out.OK)
	assert.Contains(t, out.Note, "no server metrics: the run named no metrics endpoint")
	out = sloassert.Evaluate(bad, sloassert.ServerQueue(0.9, time.Hour, small)).Outcomes[0]
	assert.False(t, out.OK, "a failed scrape is no evidence")
	assert.Contains(t, out.Note, "hold no queue histogram: before the run: servermetrics: scrape http://fake/not-metrics: HTTP 404")
}

// TestHTMLServerGauges: the HTML page of a run that scraped its server
// shows the server's gauges over time; a run without server metrics
// shows none.
func TestHTMLServerGauges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := oneSlotFake()
		defer f.Close()
		res := measureWithServer(t, f, f.Client())
		rep := sloassert.Evaluate(res, sloassert.Q(sloassert.TTFT, 0.9, time.Second, sloassert.AllowSmallSample()))
		var page bytes.Buffer
		require.NoError(t, sloassert.WriteHTML(&page, res, rep))
		html := page.String()
		for _, w := range []string{"server requests over time", "server KV cache over time", "vllm, 8 scrapes; between them not observed", ">waiting<", ">running<"} {
			assert.Contains(t, html, w)
		}
		page.Reset()
		require.NoError(t, sloassert.WriteHTML(&page, withoutServer(res), rep))
		assert.NotContains(t, page.String(), "server requests over time")
	})
}
