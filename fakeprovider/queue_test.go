package fakeprovider_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// TestChainQueueingSplit: with Fake.QueueTime as Chain.Queueing, each
// chain's QueueTime is the sum of what the fake served its calls with
// (Served.Queued), part of its model time, and the chain report shows it
// as the "chain queued" row beside model and tool time; without it the
// report has no such row. One slot and three chains at once: each call
// of 130 ms (100 ms TTFT, 3 ITLs of 10 ms) waits for the two others.
func TestChainQueueingSplit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(fakeprovider.Profile{TTFT: fakeprovider.Fixed(100 * time.Millisecond),
			ITL: fakeprovider.Fixed(10 * time.Millisecond), OutputTokens: fakeprovider.Fixed(4), SlotsPerReplica: 1,
			ToolLatency: fakeprovider.Fixed(20 * time.Millisecond)})
		t.Cleanup(f.Close)
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
		c := latencytest.Chain{Chains: 3, Length: 4, Concurrency: 3, Tool: f.Tool, Queueing: f.QueueTime,
			Load: latencytest.Load{Shard: latencytest.Shard{Count: 1}}}
		cr, err := c.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]time.Duration{}
		for _, sv := range f.Served() {
			byID[sv.ID] += sv.Queued
		}
		queued := time.Duration(0)
		for _, ch := range cr.Chains {
			want := time.Duration(0)
			for _, rec := range ch.Calls {
				want += byID[rec.ID]
			}
			if !ch.OK() || ch.QueueTime != want || ch.QueueTime > ch.ModelTime {
				t.Errorf("chain %s: err %q, queue time %v, want the served %v, within model time %v", ch.ID, ch.Err, ch.QueueTime, want, ch.ModelTime)
			}
			queued += ch.QueueTime
		}
		if queued == 0 {
			t.Fatal("no call queued behind one slot and three chains")
		}
		text := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, time.Minute).With(sloassert.AllowSmallSample())).String()
		for _, row := range []string{"  chain model ", "  chain tools ", "  chain queued "} {
			if !strings.Contains(text, row) {
				t.Errorf("the chain report lacks %q:\n%s", row, text)
			}
		}
		c.Queueing = nil
		cr, err = c.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if text := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, time.Minute).With(sloassert.AllowSmallSample())).String(); strings.Contains(text, "chain queued") {
			t.Errorf("a report without Chain.Queueing has a queueing row:\n%s", text)
		}
		t.Logf("queued %v over 3 chains:\n%s", queued, text)
	})
}

// TestQueueTimeAttempts: QueueTime sums the attempts of a trace ID, as
// latencytest.Instrument names retries ("<id>-a2"), and nothing else.
func TestQueueTimeAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(fakeprovider.Profile{TTFT: fakeprovider.Fixed(time.Second), OutputTokens: fakeprovider.Fixed(1),
			SlotsPerReplica: 1})
		t.Cleanup(f.Close)
		c := f.Client()
		ids := []string{"x", "x-a2", "x-a3", "x-ab", "xy", "y"}
		done := make(chan struct{})
		for i, id := range ids {
			go func() {
				defer func() { done <- struct{}{} }()
				time.Sleep(time.Duration(i) * time.Millisecond) // arrive in this order, each queued behind the ones before
				req, _ := http.NewRequest(http.MethodPost, "http://fake/v1/chat/completions",
					strings.NewReader(`{"model":"fake-model","messages":[{"role":"user","content":"hi"}]}`))
				req.Header.Set("X-Request-ID", id)
				if resp, err := c.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
		}
		for range ids {
			<-done
		}
		// Request i waits for i one-second requests, less its i ms late arrival.
		wait := func(i int) time.Duration { return time.Duration(i)*time.Second - time.Duration(i)*time.Millisecond }
		if got, want := f.QueueTime("x"), wait(0)+wait(1)+wait(2); got != want {
			t.Errorf("QueueTime(x) = %v, want x, x-a2 and x-a3: %v", got, want)
		}
		if got := f.QueueTime("y"); got != wait(5) {
			t.Errorf("QueueTime(y) = %v, want %v", got, wait(5))
		}
		if got := f.QueueTime("nope"); got != 0 {
			t.Errorf("QueueTime of an ID never served = %v", got)
		}
	})
}
