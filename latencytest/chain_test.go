package latencytest_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// A chain cut short by the run's end is partial, not failed: the chain
// error rate (and summary.json's) counts the finished chains, box 2 says
// how many were cut, and a chain whose call the run's end canceled says
// so in Cut.
func TestChainCutShortIsNotAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(time.Second, 0, 1)
		prof.PrefixCache.Disabled = true
		_, p := fake(t, prof)
		// As TestChainDeadline: chain00 runs 10 calls, chain01 six.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cr, err := latencytest.Chain{Chains: 3, Length: 10, TotalTimeout: 5 * time.Second}.Run(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if !cr.Chains[1].CutShort() || cr.Chains[0].CutShort() || cr.ErrorRate() != 0 {
			t.Errorf("cut short %v %v; error rate %v (0 failed calls, one chain cut)", cr.Chains[0].CutShort(), cr.Chains[1].CutShort(), cr.ErrorRate())
		}
		if box := cr.Disclosure.Box(2).Answer; !strings.Contains(box, "(0 with a failed call, 1 cut short by the run's end (partial, not failed))") {
			t.Errorf("box 2: %s", box)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(time.Second, 0, 1))
		// Canceled 0.5 s in, during chain00's first call (1 s).
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		cr, err := latencytest.Chain{Chains: 1, Length: 10}.Run(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		ch := cr.Chains[0]
		if ch.Cut != "the run ended during call 0" || !ch.CutShort() || ch.Err != latencytest.ClassCanceled || !math.IsNaN(cr.ErrorRate()) {
			t.Errorf("chain %+v (cut %q), error rate %v, %d calls, last %+v", ch.Err, ch.Cut, cr.ErrorRate(), len(ch.Calls), ch.Calls[len(ch.Calls)-1].Err)
		}
	})
}
