package latencytest_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// A request cancelled after n token events is cut at the nth event's
// instant, exactly, and the fake saw the close and stopped: it generated
// no token after it. The cancelled requests are a seeded share (the same
// IDs at every concurrency), neither kept nor failed.
func TestCancelAfterTokensIsExact(t *testing.T) {
	ids := map[int][]string{}
	for _, conc := range []int{1, 5} {
		synctest.Test(t, func(t *testing.T) {
			f, p := fake(t, fixed(100*ms, 10*ms, 20)) // tokens at 100, 110, ... 290 ms
			r, err := latencytest.Batch{Requests: 40, NoWarmup: true, Concurrency: conc, Load: latencytest.Load{
				Label: "x", Prompt: "hi", MaxTokens: 20, Cancel: latencytest.Cancel{AfterTokens: 3, Share: 0.25, Seed: 9}}}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			synctest.Wait() // the fake's handlers of the last closes record them
			served := map[string]fakeprovider.Served{}
			for _, sv := range f.Served() {
				served[sv.ID] = sv
			}
			kept := 0
			for _, rec := range r.Records {
				sv := served[rec.ID]
				if rec.OK() {
					kept++
					if sv.ClientClosed || rec.Total != 290*ms {
						t.Errorf("%s: kept, total %v (want 290ms), fake saw a close %v", rec.ID, rec.Total, sv.ClientClosed)
					}
					continue
				}
				ids[conc] = append(ids[conc], rec.ID)
				// Third token at 120 ms: the cancel then, and the in-memory
				// close takes no time.
				if rec.Err != "cancelled" || rec.TokenEvents != 3 || rec.CancelAt != 120*ms || rec.CancelClose != 0 || rec.TTFT != 100*ms || rec.Total != 120*ms {
					t.Errorf("%s: %s after %d events, cancel at %v, close %v, ttft %v, total %v", rec.ID, rec.Err, rec.TokenEvents, rec.CancelAt, rec.CancelClose, rec.TTFT, rec.Total)
				}
				if !sv.ClientClosed || sv.AfterClose != 0 || sv.Tokens != 3 {
					t.Errorf("%s: the fake saw the close %v, generated %d tokens, %d after the close (want 3, 0)", rec.ID, sv.ClientClosed, sv.Tokens, sv.AfterClose)
				}
			}
			c := r.Counts()
			if c.Cancelled != len(ids[conc]) || c.Kept != kept || c.Failed != 0 || c.Cancelled+c.Kept != 40 {
				t.Errorf("counts %+v, %d cancelled", c, len(ids[conc]))
			}
			if c.Cancelled < 4 || c.Cancelled > 16 { // 25% of 40: 10 expected
				t.Errorf("%d of 40 cancelled at share 0.25", c.Cancelled)
			}
			if er := r.ErrorRate(); er != 0 || len(r.Errors()) != 0 {
				t.Errorf("error rate %v, errors %v: a cancel is no failure", er, r.Errors())
			}
			// Every TTFT was seen before the cancel: 100 ms throughout; a
			// cancelled Total never ended: Failed, so the max is Failed.
			if q := r.TTFT().Quantile(1); q != 100*ms {
				t.Errorf("TTFT max %v", q)
			}
			if q := r.Total().Quantile(1); q != latencytest.Failed {
				t.Errorf("Total max %v, want Failed", q)
			}
			// The cancelled requests' gaps count; none adds a Failed.
			if q := r.ITL().Quantile(1); q != 10*ms {
				t.Errorf("ITL max %v", q)
			}
		})
	}
	if len(ids[1]) != len(ids[5]) {
		t.Fatalf("cancelled at concurrency 1: %v; at 5: %v", ids[1], ids[5])
	}
	for i := range ids[1] {
		if ids[1][i] != ids[5][i] {
			t.Fatalf("cancelled at concurrency 1: %v; at 5: %v", ids[1], ids[5])
		}
	}
}

// A request cancelled after a time ends at that instant; one cancelled
// before its first token has a TTFT the cancel cut short: Failed in the
// TTFT sample, never a flattering value.
func TestCancelAfterTimeCensorsWhatItCut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		after  time.Duration
		events int
		ttft   time.Duration // in the sample
	}{
		{"after the first token", 155 * ms, 6, 100 * ms}, // tokens at 100..150 ms
		{"before the first token", 50 * ms, 0, latencytest.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, p := fake(t, fixed(100*ms, 10*ms, 20))
				r, err := latencytest.Batch{Requests: 3, NoWarmup: true, Load: latencytest.Load{
					Label: "x", Prompt: "hi", MaxTokens: 20, Cancel: latencytest.Cancel{After: tc.after}}}.Run(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				for _, rec := range r.Records {
					if rec.Err != "cancelled" || rec.CancelAt != tc.after || rec.TokenEvents != tc.events || rec.Total != tc.after {
						t.Errorf("%s: %s at %v after %d events, total %v", rec.ID, rec.Err, rec.CancelAt, rec.TokenEvents, rec.Total)
					}
				}
				if q := r.TTFT().Quantile(0.5); q != tc.ttft {
					t.Errorf("TTFT p50 %v, want %v", q, tc.ttft)
				}
				if c := r.Counts(); c.Cancelled != 3 {
					t.Errorf("counts %+v", c)
				}
				synctest.Wait()
				for _, sv := range f.Served() {
					if !sv.ClientClosed || sv.AfterClose != 0 || sv.Tokens != tc.events {
						t.Errorf("%s: fake closed %v, %d tokens, %d after close", sv.ID, sv.ClientClosed, sv.Tokens, sv.AfterClose)
					}
				}
			})
		})
	}
}

// A bad cancel is refused with an error that names it.
func TestCancelRefusesBadInput(t *testing.T) {
	for _, c := range []latencytest.Cancel{{After: -1}, {AfterTokens: -2}, {After: time.Second, Share: 1.5}, {Share: 0.5}} {
		_, err := latencytest.Batch{Load: latencytest.Load{Cancel: c}}.Run(context.Background(), latencytest.Func(func(context.Context, latencytest.Request) error { return nil }))
		if err == nil {
			t.Errorf("%+v: no error", c)
			continue
		}
		t.Log(err)
	}
}

// Compact records keep the cancel's clocks, the server's word on the
// close, and a conversation's session and turn.
func TestCompactKeepsCancelsAndTurns(t *testing.T) {
	recs := []latencytest.Record{
		{ID: "a-0000", Err: "cancelled", TTFT: 100 * ms, Total: 121 * ms, CancelAt: 120 * ms, CancelClose: ms, ServerAfterClose: 3, ServerCloseReported: true, Session: 2, Turn: 7},
		{ID: "a-0001", Err: "cancelled", TTFT: 100 * ms, CancelAt: 120 * ms, ServerCloseReported: true},
		{ID: "a-0002", TTFT: 100 * ms, Total: 200 * ms},
	}
	r := &latencytest.Result{Records: recs, Run: latencytest.Run{Planned: 3, Start: time.Unix(0, 0)}}
	latencytest.Compact(r)
	for i, want := range recs {
		got := r.Record(i)
		if got.Err != want.Err || got.CancelAt != want.CancelAt || got.CancelClose != want.CancelClose || got.ServerAfterClose != want.ServerAfterClose ||
			got.ServerCloseReported != want.ServerCloseReported || got.Session != want.Session || got.Turn != want.Turn {
			t.Errorf("record %d: %+v, want %+v", i, got, want)
		}
	}
	if c := r.Counts(); c.Cancelled != 2 || c.Kept != 1 {
		t.Errorf("counts %+v", c)
	}
}
