package latencytest_test

import (
	"context"
	"errors"
	"fmt"
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
		cr, err := latencytest.Chain{Chains: 3, Length: 10, Load: latencytest.Load{TotalTimeout: 5 * time.Second}}.Run(ctx, p)
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

// A tool step runs after each call but the last; its wall time counts in
// the chain's Total and ToolTime, the calls' in ModelTime, exactly in
// virtual time. A tool error ends the chain, failed with tool_error.
func TestChainToolSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(time.Second, 0, 1)
		prof.PrefixCache.Disabled = true
		_, p := fake(t, prof)
		var steps []string
		tool := func(ctx context.Context, chain, call int) error {
			steps = append(steps, fmt.Sprintf("%d/%d", chain, call))
			time.Sleep(time.Duration(call+1) * 100 * time.Millisecond)
			return nil
		}
		cr, err := latencytest.Chain{Chains: 2, Length: 4, Tool: tool}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		// 4 calls of 1 s; tools after calls 0,1,2: 100+200+300 ms.
		for _, ch := range cr.Chains {
			if !ch.OK() || ch.ModelTime != 4*time.Second || ch.ToolTime != 600*time.Millisecond ||
				ch.ToolSteps != 3 || ch.Total != 4600*time.Millisecond {
				t.Errorf("chain %s: err %q, model %v, tool %v (%d steps), total %v; want 4s + 600ms = 4.6s",
					ch.ID, ch.Err, ch.ModelTime, ch.ToolTime, ch.ToolSteps, ch.Total)
			}
		}
		if box := cr.Disclosure.Box(10).Answer; !strings.Contains(box, "a tool step (Chain.Tool) after each call but the last") {
			t.Errorf("box 10 does not disclose the tool steps: %s", box)
		}
		if got := strings.Join(steps, " "); got != "0/0 0/1 0/2 1/0 1/1 1/2" {
			t.Errorf("tool steps %s", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(time.Second, 0, 1)
		prof.PrefixCache.Disabled = true
		_, p := fake(t, prof)
		tool := func(ctx context.Context, chain, call int) error {
			time.Sleep(50 * time.Millisecond)
			if call == 1 {
				return errors.New("grep: no such file")
			}
			return nil
		}
		cr, err := latencytest.Chain{Chains: 1, Length: 5, Tool: tool}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		ch := cr.Chains[0]
		if ch.OK() || ch.Err != latencytest.ClassToolError || ch.ToolErr != "tool step after call 1: grep: no such file" ||
			len(ch.Calls) != 2 || ch.CutShort() || ch.ToolTime != 100*time.Millisecond || ch.Total != 2100*time.Millisecond {
			t.Errorf("chain: err %q (%s), %d calls, cut short %v, tool %v, total %v", ch.Err, ch.ToolErr, len(ch.Calls), ch.CutShort(), ch.ToolTime, ch.Total)
		}
		if cr.ErrorRate() != 1 {
			t.Errorf("error rate %v, want 1", cr.ErrorRate())
		}
	})
}
