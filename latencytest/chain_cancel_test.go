package latencytest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// A call the client cancels on purpose cancels its chain, as a single
// request's cancel is its own class: the chain stops at that call (Cut
// says so when calls were left), its Err is "cancelled", its total is
// Failed (never done, as a cancelled request's Total), and it is in
// neither part of a chain error rate, latencytest's or sloassert's; the
// run is not partial (the cancel was planned) and its disclosure counts
// the cancelled chains apart from the failed ones.
func TestCancelledCallCancelsItsChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(100*ms, 10*ms, 8)
		prof.Faults.HTTP529 = 0.1 // drawn per trace ID: some chains fail
		_, p := fake(t, prof)
		const length = 4
		cr, err := latencytest.Chain{Chains: 40, Length: length, Concurrency: 4, Load: latencytest.Load{
			MaxTokens: 8, Cancel: latencytest.Cancel{AfterTokens: 2, Share: 0.1, Seed: 5}}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if cr.Partial {
			t.Errorf("a planned cancel made the run partial: %s", cr.PartialReason)
		}
		ok, failed, cancelled := 0, 0, 0
		for i, ch := range cr.Chains {
			first := -1 // the first call that did not succeed
			for k, rec := range ch.Calls {
				if !rec.OK() && first < 0 {
					first = k
				}
				if rec.Err == "cancelled" && k != len(ch.Calls)-1 {
					t.Errorf("%s: call %d cancelled, yet the chain went on to %d calls", ch.ID, k, len(ch.Calls))
				}
			}
			last := ch.Calls[len(ch.Calls)-1]
			switch {
			case first < 0:
				ok++
				if ch.Err != "" || len(ch.Calls) != length {
					t.Errorf("%s: every call succeeded, chain err %q, %d calls", ch.ID, ch.Err, len(ch.Calls))
				}
			case ch.Calls[first].Err == "cancelled":
				cancelled++
				wantCut := ""
				if len(ch.Calls) < length {
					wantCut = fmt.Sprintf("call %d cancelled by the client on purpose", len(ch.Calls)-1)
				}
				if ch.Err != "cancelled" || ch.Cut != wantCut || ch.CutShort() || cr.Totals()[i] != latencytest.Failed {
					t.Errorf("%s: cancelled at call %d: err %q cut %q (want %q), total %v", ch.ID, first, ch.Err, ch.Cut, wantCut, cr.Totals()[i])
				}
			default:
				failed++
				if ch.Err != ch.Calls[first].Err || (last.Err != "cancelled" && len(ch.Calls) != length) || cr.Totals()[i] != latencytest.Failed {
					t.Errorf("%s: failed at call %d (%s): err %q, %d calls, total %v", ch.ID, first, ch.Calls[first].Err, ch.Err, len(ch.Calls), cr.Totals()[i])
				}
			}
		}
		t.Logf("%d chains: %d ok, %d failed, %d cancelled", len(cr.Chains), ok, failed, cancelled)
		if ok == 0 || failed == 0 || cancelled == 0 {
			t.Fatalf("%d ok, %d failed, %d cancelled chains: the test needs each", ok, failed, cancelled)
		}
		if got, want := cr.ErrorRate(), float64(failed)/float64(ok+failed); got != want {
			t.Errorf("chain error rate %v, want %d of %d = %v (cancelled chains in neither part)", got, failed, ok+failed, want)
		}
		out := sloassert.Evaluate(cr, sloassert.MaxChainErrorRate(0.99)).Outcomes[0]
		if want := fmt.Sprintf("(%d of %d)", failed, ok+failed); !strings.Contains(out.Observed, want) ||
			!strings.Contains(out.Note, fmt.Sprintf("%d chain(s) cancelled by the client on purpose", cancelled)) {
			t.Errorf("sloassert: observed %q, note %q; want %s and the cancelled counted apart", out.Observed, out.Note, want)
		}
		box := cr.Disclosure.String()
		if !strings.Contains(box, fmt.Sprintf("(%d with a failed call, %d cancelled by the client on purpose", failed, cancelled)) {
			t.Errorf("disclosure does not count the cancelled chains apart:\n%s", box)
		}
		// A chain total quantile counts a cancelled chain as never done.
		if q := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, time.Hour)).Outcomes[0]; !q.OK && float64(ok)/float64(len(cr.Chains)) > 0.5 {
			t.Errorf("chain p50 within an hour failed with %d of %d chains done: %s", ok, len(cr.Chains), q)
		}
	})
}
