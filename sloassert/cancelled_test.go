package sloassert_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// cancelResult is 95 successes, 5 http_529 and 50 requests the client
// cancelled on purpose, the server reporting for 10 of them (two kept
// generating).
func cancelResult() *latencytest.Result {
	var recs []latencytest.Record
	for i := range 150 {
		rec := latencytest.Record{ID: "c-" + string(rune('a'+i/26)) + string(rune('a'+i%26)), TTFT: 100 * time.Millisecond,
			FirstAnswer: 100 * time.Millisecond, LastToken: 200 * time.Millisecond, Total: 200 * time.Millisecond, TokenEvents: 10, Status: 200}
		switch {
		case i < 5:
			rec.Err = "http_529"
		case i >= 100:
			rec.Err, rec.CancelAt, rec.CancelClose, rec.Total = "cancelled", 150*time.Millisecond, time.Millisecond, 151*time.Millisecond
			if i < 110 {
				rec.ServerCloseReported = true
				if i < 102 {
					rec.ServerAfterClose = 40 + i
				}
			}
		}
		recs = append(recs, rec)
	}
	return &latencytest.Result{Records: recs, Run: latencytest.Run{Planned: 150}}
}

// A cancelled request is neither a failure nor a success: 5 failures of
// 100 judged (not of 150, and not 55 of 150), so a 5% limit passes and a
// 4.9% one fails.
func TestCancelledIsInNeitherPartOfErrorRates(t *testing.T) {
	r := cancelResult()
	if c := r.Counts(); c.Kept != 95 || c.Failed != 5 || c.Cancelled != 50 {
		t.Fatalf("counts %+v", c)
	}
	for _, tc := range []struct {
		max  float64
		pass bool
	}{{0.05, true}, {0.049, false}} {
		rep := sloassert.Evaluate(r, sloassert.MaxErrorRate(tc.max))
		if rep.OK() != tc.pass || rep.Outcomes[0].Observed != "5% (5 of 100)" {
			t.Errorf("max %v: pass %v (want %v), observed %q", tc.max, rep.OK(), tc.pass, rep.Outcomes[0].Observed)
		}
	}
	if rep := sloassert.Evaluate(r, sloassert.MaxErrorRate(0.5, "cancelled")); rep.OK() || !strings.Contains(rep.String(), "neither a failure nor a success") {
		t.Errorf("an error rate of cancels passed or did not say why:\n%s", rep)
	}
	if err := latencytest.CheckClass("cancelled"); err != nil {
		t.Error(err)
	}
}

// The report counts the cancels, times the closes, and names the
// requests the server kept generating for.
func TestReportShowsCancels(t *testing.T) {
	out := sloassert.Evaluate(cancelResult(), sloassert.Q(sloassert.TTFT, 0.5, time.Second)).String()
	for _, want := range []string{
		"50 cancelled by the client (in neither)",
		"cancelled 50", "cancel to close p50 1ms, max 1ms",
		"server stopped within one event: 8 of 10 reported",
		"KEPT GENERATING after the client's close: 2", "c-dx (141 tokens after the close)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
