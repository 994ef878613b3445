package latencytest_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// countingProvider answers at once; from call number cancelAt on (0:
// never) it cancels the run before it returns, so no request slot frees
// up before the cancel: a goroutine descheduled between its count and its
// cancel cannot let the rest of the run slip through.
type countingProvider struct {
	calls    atomic.Int64
	cancelAt int64
	cancel   context.CancelFunc
}

func (c *countingProvider) Call(_ context.Context, req latencytest.Request) latencytest.Record {
	if n := c.calls.Add(1); c.cancelAt > 0 && n >= c.cancelAt {
		c.cancel()
	}
	return latencytest.Record{TTFT: time.Millisecond, FirstAnswer: time.Millisecond, Total: 2 * time.Millisecond, TokenEvents: 1}
}

func TestSequentialStages(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    latencytest.Batch
		want []int
	}{
		{"default cap", latencytest.Batch{Requests: 300}, []int{300, 600, 1200}},
		{"cap not a doubling", latencytest.Batch{Requests: 300, MaxRequests: 1000}, []int{300, 600, 1000}},
		{"no room", latencytest.Batch{Requests: 300, MaxRequests: 300}, []int{300}},
		{"defaults", latencytest.Batch{}, []int{75, 150, 300}},
	} {
		if got := tc.b.Stages(); !equalInts(got, tc.want) {
			t.Errorf("%s: stages %v, want %v", tc.name, got, tc.want)
		}
	}
	// Warm-up runs once, first; trace IDs continue across stages; Until
	// sees the records so far.
	var seen []int
	b := latencytest.Batch{Requests: 10, Warmup: 3, Load: latencytest.Load{Prompt: "x", Label: "s"}, Concurrency: 2,
		Until: func(r *latencytest.Result) bool { seen = append(seen, len(r.Records)); return true }}
	p := &countingProvider{}
	r, err := b.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Counts()
	if c.Sent != 43 || c.Discarded != 3 || c.Kept != 40 || c.Planned != 43 || p.calls.Load() != 43 || !equalInts(seen, []int{13, 23}) {
		t.Errorf("counts %+v, %d calls, Until saw %v", c, p.calls.Load(), seen)
	}
	for i, rec := range r.Records {
		if want := "s-" + pad4(i); rec.ID != want || rec.Warmup != (i < 3) {
			t.Fatalf("record %d: %s warmup %v", i, rec.ID, rec.Warmup)
		}
	}
	// A stage the context cuts short makes the result partial, counted.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p = &countingProvider{cancelAt: 15, cancel: cancel}
	b.Until = func(*latencytest.Result) bool { return true }
	r, _ = b.Run(ctx, p)
	if c := r.Counts(); !r.Partial || !strings.HasPrefix(r.PartialReason, "stage 2 of 3: ") || c.Sent != int(p.calls.Load()) || c.Planned != 23 {
		t.Errorf("partial %v %q, counts %+v, %d calls", r.Partial, r.PartialReason, c, p.calls.Load())
	}
	// Until and Repeat do not mix.
	b.Repeat = 2
	if _, err := b.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "cannot repeat") {
		t.Errorf("err %v", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func pad4(i int) string {
	s := "000" + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
	if i >= 100 {
		panic("pad4: two digits only")
	}
	return s[len(s)-4:]
}

func TestSweepKeepsItsPlan(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &countingProvider{cancelAt: 15, cancel: cancel}
	sr, err := latencytest.Sweep{Batch: latencytest.Batch{NoWarmup: true, Requests: 10, Load: latencytest.Load{Prompt: "x"}}, Levels: []int{1, 2, 4}}.Run(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	// c1 ran whole, c2 was cut at its fifth request, c4 never ran.
	if !equalInts(sr.Planned, []int{1, 2, 4}) || !equalInts(sr.Levels, []int{1, 2}) || !sr.Results[1].Partial {
		t.Errorf("planned %v, levels %v", sr.Planned, sr.Levels)
	}
}

func TestChainCallsKeepPartialAndUnobservedTokens(t *testing.T) {
	cr := &latencytest.ChainResult{
		Run: latencytest.Run{Partial: true, PartialReason: "deadline"},
		Chains: []latencytest.ChainRun{
			{ID: "chain00", Calls: []latencytest.Record{{ID: "chain00-call00", Total: time.Second}}},
		},
	}
	calls := cr.Calls()
	if !calls.Partial || calls.PartialReason != "deadline" {
		t.Errorf("calls of a partial chain run: partial %v %q", calls.Partial, calls.PartialReason)
	}
	// A call timed only as a whole (no token event, TTFT 0) has no TTFT.
	if s := calls.TTFT(); s.Failures() != 1 {
		t.Errorf("TTFT sample %v: an unobserved TTFT must be Failed", s)
	}
	if s := calls.Total(); s.Failures() != 0 || s[0] != time.Second {
		t.Errorf("total sample %v", s)
	}
}

func TestWarmupByDefault(t *testing.T) {
	p := &countingProvider{}
	r, err := latencytest.Batch{Requests: 5, Load: latencytest.Load{Prompt: "x"}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Counts(); c.Sent != 5+latencytest.DefaultWarmup || c.Discarded != 10 || c.Kept != 5 || !r.Records[9].Warmup || r.Records[10].Warmup {
		t.Errorf("default: counts %+v", c)
	}
	// Only the first warm-up request is a cold-start candidate: the others
	// follow it with no idle gap.
	if s := r.ColdStarts(); len(s) != 1 {
		t.Errorf("%d cold-start candidates, want the first request only", len(s))
	}
	r, _ = latencytest.Batch{Requests: 5, Load: latencytest.Load{Prompt: "x"}, NoWarmup: true}.Run(context.Background(), p)
	if c := r.Counts(); c.Sent != 5 || c.Discarded != 0 {
		t.Errorf("NoWarmup: counts %+v", c)
	}
	if _, err := (latencytest.Batch{Warmup: 3, NoWarmup: true}).Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "warmup 3 with NoWarmup") {
		t.Errorf("conflict: %v", err)
	}
}
