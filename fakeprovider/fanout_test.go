package fakeprovider_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// A task's fan-out competes for the fake's slots as any requests do: a
// plan call, then three sub-agent calls at once on one replica of two
// slots. All three resend the plan's history, which the prefix cache
// serves (the default scope: a tenth of the TTFT). Same-instant arrivals
// are admitted by trace ID: the first runs at load level 1 (TTFT 100 ms,
// 10 ms cached), the second at level 2 (300 ms, 30 ms cached), the third
// queues until the first ends (10 + 9×10 = 100 ms after the fan-out) and
// runs at level 2 (100 + 30 ms).
func TestFanOutQueuesOnLoadLevels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(fakeprovider.Profile{Model: "m", TTFT: fakeprovider.Fixed(100 * time.Millisecond),
			ITL: fakeprovider.Fixed(10 * time.Millisecond), OutputTokens: fakeprovider.Fixed(10), SlotsPerReplica: 2,
			Load: []fakeprovider.LoadLevel{{InFlight: 2, TTFT: fakeprovider.Fixed(300 * time.Millisecond)}}})
		t.Cleanup(f.Close)
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("m"))
		history := []latencytest.Message{{Role: "user", Content: strings.Repeat("Plan the migration in three parts. ", 20)}}
		plan := p.Call(context.Background(), latencytest.Request{ID: "t0-plan", Messages: history, MaxTokens: 10})
		if !plan.OK() || plan.TTFT != 100*time.Millisecond {
			t.Fatalf("plan: %s ttft %v", plan.Err, plan.TTFT)
		}
		history = append(history, latencytest.Message{Role: "assistant", Content: plan.Content})
		recs := make([]latencytest.Record, 3)
		var wg sync.WaitGroup
		for i, b := range []string{"a", "b", "c"} {
			wg.Go(func() {
				msgs := append(append([]latencytest.Message(nil), history...), latencytest.Message{Role: "user", Content: "Do part " + b + "."})
				recs[i] = p.Call(context.Background(), latencytest.Request{ID: "t0-sub-" + b, Messages: msgs, MaxTokens: 10})
			})
		}
		wg.Wait()
		synctest.Wait()
		served := map[string]fakeprovider.Served{}
		for _, sv := range f.Served() {
			served[sv.ID] = sv
		}
		for i, want := range []struct {
			ttft, queued time.Duration
			inflight     int
		}{{10 * time.Millisecond, 0, 1}, {30 * time.Millisecond, 0, 2}, {130 * time.Millisecond, 100 * time.Millisecond, 2}} {
			rec := recs[i]
			sv := served[rec.ID]
			if !rec.OK() || rec.TTFT != want.ttft || sv.Queued != want.queued || sv.InFlight != want.inflight || rec.CachedTokens == 0 {
				t.Errorf("%s: ttft %v queued %v in flight %d cached %d; want %v, %v, %d and a cache hit",
					rec.ID, rec.TTFT, sv.Queued, sv.InFlight, rec.CachedTokens, want.ttft, want.queued, want.inflight)
			}
		}
	})
}
