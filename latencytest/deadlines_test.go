package latencytest_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/latencytest"
)

// A request past its limit inside a run (ended by the run's deadline
// watcher) fails exactly as the same request called on its own (ended by
// a timer of its own): same class, detail and clocks, to the nanosecond.
// Each runner, with the hard cap alone and with all three limits.
func TestDeadlinesInARunAreExact(t *testing.T) {
	type limits struct{ first, total, hardCap time.Duration }
	for _, lim := range []limits{{0, 0, 2 * time.Second}, {time.Second, 3 * time.Second, 0}} {
		for _, kind := range []string{"batch", "openloop", "chain"} {
			t.Run(kind+"/"+lim.hardCap.String()+"/"+lim.total.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					id := func(k int) string { return "x-" + []string{"0002", "0005", "0007"}[k] }
					if kind == "chain" {
						id = func(k int) string { return []string{"x00-call01", "x01-call00", "x02-call01"}[k] }
					}
					prof := fixed(100*ms, 10*ms, 10) // 190 ms a request
					prof.PrefixCache.Disabled = true
					prof.Script = []fakeprovider.ScriptEntry{
						// Silent after its second token for longer than any limit.
						{ID: id(0), Stall: &fakeprovider.ScriptStall{AfterToken: 2, Duration: 10 * time.Second}},
						// No first token before any limit.
						{ID: id(1), TTFT: 5 * time.Second},
						// 1.89 s: under every limit, so it must end well.
						{ID: id(2), Stall: &fakeprovider.ScriptStall{AfterToken: 1, Duration: 1700 * ms}},
					}
					_, p := fake(t, prof)
					load := latencytest.Load{MaxTokens: 10, Label: "x", Prompt: "hi", FirstTokenTimeout: lim.first, TotalTimeout: lim.total, HardCap: lim.hardCap}
					var recs []latencytest.Record
					switch kind {
					case "batch":
						r, err := latencytest.Batch{Requests: 10, NoWarmup: true, Concurrency: 3, Load: load}.Run(context.Background(), p)
						if err != nil {
							t.Fatal(err)
						}
						recs = r.Records
					case "openloop":
						r, err := latencytest.OpenLoop{Rate: 20, Arrivals: "constant", Requests: 10, Load: load}.Run(context.Background(), p)
						if err != nil {
							t.Fatal(err)
						}
						recs = r.Records
					case "chain":
						r, err := latencytest.Chain{Chains: 3, Length: 2, Concurrency: 3, Load: load}.Run(context.Background(), p)
						if err != nil {
							t.Fatal(err)
						}
						for _, ch := range r.Chains {
							recs = append(recs, ch.Calls...)
						}
					}
					noWatcher(t)
					byID := map[string]latencytest.Record{}
					for _, rec := range recs {
						byID[rec.ID] = rec
					}
					limit := min(cmpOr(lim.total, time.Hour), cmpOr(lim.hardCap, defaults.HardCap))
					want := []struct {
						class string
						total time.Duration
					}{
						{latencytest.ClassTotalTimeout, limit},
						{latencytest.ClassTotalTimeout, limit},
						{"", 1890 * ms},
					}
					if lim.first > 0 {
						want[1] = struct {
							class string
							total time.Duration
						}{latencytest.ClassFirstTokenTimeout, lim.first}
					}
					for k, w := range want {
						got, ok := byID[id(k)]
						if !ok {
							t.Fatalf("no record %s among %d", id(k), len(recs))
						}
						if got.Err != w.class || got.Total != w.total {
							t.Errorf("%s: %s after %v, want %q after %v (%s)", id(k), got.Err, got.Total, w.class, w.total, got.Detail)
						}
						// The same request on its own: a timer of its own.
						req := latencytest.Request{ID: id(k), Messages: []latencytest.Message{{Role: "user", Content: "hi"}}, MaxTokens: 10,
							FirstTokenTimeout: lim.first, TotalTimeout: lim.total, HardCap: lim.hardCap}
						alone := p.Call(context.Background(), req)
						if got.Err != alone.Err || got.Detail != alone.Detail || got.Total != alone.Total || got.TTFT != alone.TTFT ||
							got.LastToken != alone.LastToken || got.MaxGap != alone.MaxGap || got.TokenEvents != alone.TokenEvents || got.Status != alone.Status {
							t.Errorf("%s in the run:\n %+v\nalone:\n %+v", id(k), got, alone)
						}
					}
					failed := 0
					for _, rec := range recs {
						if !rec.OK() {
							failed++
						}
					}
					if failed != 2 {
						t.Errorf("%d failed records, want 2", failed)
					}
				})
			})
		}
	}
}

// The same through Func: a call that ignores nothing but ctx ends at its
// limit inside a run as on its own.
func TestDeadlinesInARunFunc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sawWatcher := false
		p := latencytest.Func(func(ctx context.Context, req latencytest.Request) error {
			if req.ID == "c2-0003" {
				sawWatcher = sawWatcher || watcherInBubble()
				<-ctx.Done()
				return ctx.Err()
			}
			time.Sleep(50 * ms)
			return nil
		})
		r, err := latencytest.Batch{Requests: 6, NoWarmup: true, Concurrency: 2, Load: latencytest.Load{HardCap: 700 * ms}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		noWatcher(t)
		if !sawWatcher {
			t.Error("no deadline watcher in the bubble during the run")
		}
		alone := p.Call(context.Background(), latencytest.Request{ID: "c2-0003", HardCap: 700 * ms})
		for _, rec := range r.Records {
			switch {
			case rec.ID == "c2-0003" && (rec.Err != alone.Err || rec.Detail != alone.Detail || rec.Total != alone.Total || rec.Total != 700*ms):
				t.Errorf("in the run %s %q after %v; alone %s %q after %v", rec.Err, rec.Detail, rec.Total, alone.Err, alone.Detail, alone.Total)
			case rec.ID != "c2-0003" && (!rec.OK() || rec.Total != 50*ms):
				t.Errorf("%s: %s after %v", rec.ID, rec.Err, rec.Total)
			}
		}
	})
}

// A long open loop ends with no goroutine of its watcher left, inside a
// bubble (where synctest.Test would also fail on one left blocked), and
// the watcher ran inside the caller's bubble.
func TestDeadlineWatcherLeavesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(10*ms, 10*ms, 2))
		seen := false
		go func() { // looks while the run goes on
			time.Sleep(time.Second)
			seen = watcherInBubble()
		}()
		r, err := latencytest.OpenLoop{Rate: 100, Requests: 500, Load: latencytest.Load{MaxTokens: 2}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Counts(); c.Kept != 500 || c.Failed != 0 {
			t.Fatalf("counts %+v", c)
		}
		synctest.Wait()
		if !seen {
			t.Error("no deadline watcher in the bubble during the run")
		}
		noWatcher(t)
	})
}

// watcherInBubble reports whether a deadline watcher's goroutine runs in
// a synctest bubble now.
func watcherInBubble() bool {
	for _, g := range goroutines() {
		if strings.Contains(g, "deadline.(*watcher)") && strings.Contains(strings.SplitN(g, "\n", 2)[0], "synctest bubble") {
			return true
		}
	}
	return false
}

// noWatcher fails when a deadline watcher's goroutine is still there.
func noWatcher(t *testing.T) {
	t.Helper()
	for _, g := range goroutines() {
		if strings.Contains(g, "deadline.(*watcher)") {
			t.Errorf("a deadline watcher outlived its run:\n%s", g)
		}
	}
}

func goroutines() []string {
	buf := make([]byte, 1<<20)
	return strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")
}

func cmpOr(d, or time.Duration) time.Duration {
	if d == 0 {
		return or
	}
	return d
}

// On the real clock too: overlapping calls that ignore everything but
// ctx each end at their limit or later (never before), as total_timeout,
// and the others succeed; the run returns with no watcher left.
func TestDeadlinesInARunRealClock(t *testing.T) {
	const limit = 30 * ms
	p := latencytest.Func(func(ctx context.Context, req latencytest.Request) error {
		if strings.HasSuffix(req.ID, "1") || strings.HasSuffix(req.ID, "4") {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	r, err := latencytest.Batch{Requests: 6, NoWarmup: true, Concurrency: 3, Load: latencytest.Load{TotalTimeout: limit}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	noWatcher(t)
	failed := 0
	for _, rec := range r.Records {
		if !rec.OK() {
			failed++
			if rec.Err != latencytest.ClassTotalTimeout || rec.Total < limit {
				t.Errorf("%s: %s after %v, want total_timeout after %v or later", rec.ID, rec.Err, rec.Total, limit)
			}
		}
	}
	if failed != 2 {
		t.Errorf("%d failed, want 2 (c3-0001, c3-0004)", failed)
	}
}
