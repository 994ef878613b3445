package agent_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

const ms = time.Millisecond

// convFake is a fixed-latency fake: TTFT 100 ms plus 1 ms per uncached
// prompt token and 0.5 ms per cached one (prefix cache at prefill scope,
// factor 0.5), then 8 tokens 10 ms apart.
func convFake(t *testing.T) (*fakeprovider.Fake, latencytest.Provider) {
	t.Helper()
	f := fakeprovider.New(fakeprovider.Profile{
		TTFT: fakeprovider.Fixed(100 * ms), ITL: fakeprovider.Fixed(10 * ms), OutputTokens: fakeprovider.Fixed(8),
		PrefillPer1kTokens: fakeprovider.Fixed(time.Second), SlotsPerReplica: 64,
		PrefixCache: fakeprovider.PrefixCache{TTFTFactor: 0.5, Scope: fakeprovider.CacheScopePrefill},
	})
	t.Cleanup(f.Close)
	return f, latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
}

// Each turn resends the history: its prompt is every earlier message and
// answer plus the new message, exactly; the fake serves the previous
// turn's whole prompt (its whole 64-character blocks) from its prefix
// cache, and the TTFT is the base plus the prefill of what was not
// cached. Think times sit between turns and in the session's total only.
func TestConversationGrowsItsPromptAndHitsTheCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := convFake(t)
		c := agent.Conversation{Sessions: 3, Turns: 4, Concurrency: 2, MaxTokens: 8, Seed: 1,
			ThinkTime: agent.ThinkTime{Median: 2 * time.Second}}
		r, err := c.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Sessions.Chains) != 3 {
			t.Fatalf("%d sessions", len(r.Sessions.Chains))
		}
		for s, run := range r.Sessions.Chains {
			if !run.OK() || len(run.Calls) != 4 {
				t.Fatalf("session %d: err %q, %d turns", s, run.Err, len(run.Calls))
			}
			history := 0 // characters sent before this turn's new message
			prev := 0    // the previous turn's prompt, in characters
			sum := time.Duration(0)
			for k, rec := range run.Calls {
				turn := k + 1
				msg := 200 * 4 // the opening message: 200 tokens
				if turn > 1 {
					msg = 50 * 4
				}
				prompt := history + msg
				wantCached := 0
				if turn > 1 {
					wantCached = prev / 64 * 16 // whole blocks of 16 tokens
				}
				wantTTFT := 100*ms + time.Duration(prompt/4)*ms - time.Duration(wantCached)*ms/2
				if rec.Session != s || rec.Turn != turn || rec.PromptTokens != prompt/4 || rec.CachedTokens != wantCached || !rec.CachedReported ||
					rec.TTFT != wantTTFT || rec.Total != wantTTFT+70*ms || math.Abs(rec.DecodeRate()-100) > 1e-9 { // 7 gaps in 70 ms
					t.Errorf("%s: session %d turn %d: prompt %d cached %d ttft %v total %v decode %v; want prompt %d cached %d ttft %v",
						rec.ID, rec.Session, rec.Turn, rec.PromptTokens, rec.CachedTokens, rec.TTFT, rec.Total, rec.DecodeRate(), prompt/4, wantCached, wantTTFT)
				}
				if rec.ID != fmt.Sprintf("%s-turn%02d", run.ID, turn) {
					t.Errorf("trace ID %s", rec.ID)
				}
				prev = prompt
				history = prompt + len(rec.Content)
				sum += rec.Total
			}
			// Three think times of 2 s between four turns.
			if want := sum + 3*2*time.Second; run.Total != want || len(r.Think[s]) != 3 {
				t.Errorf("session %d: total %v, want %v; think %v", s, run.Total, want, r.Think[s])
			}
		}
		// Turn 4 of each session, judged on its own.
		t4 := r.Turn(4)
		if t4.Len() != 3 {
			t.Fatalf("turn 4: %d records", t4.Len())
		}
		for _, rec := range t4.Records {
			if rec.Turn != 4 {
				t.Errorf("turn 4 holds %s (turn %d)", rec.ID, rec.Turn)
			}
		}
		if n := r.Turns().Len(); n != 12 {
			t.Errorf("%d turns in all", n)
		}
	})
}

// The later turns are slower (more history) but cache-served: the 4th
// turn's TTFT p95 objective reads exactly the 4th turns, and a session
// objective reads sessions (think times included).
func TestConversationObjectivesPerTurnAndSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := convFake(t)
		r, err := agent.Conversation{Sessions: 20, Turns: 4, Concurrency: 4, MaxTokens: 8,
			ThinkTime: agent.ThinkTime{Median: time.Second, P99: 5 * time.Second}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		t1, t4 := r.Turn(1).TTFT().Quantile(0.95), r.Turn(4).TTFT().Quantile(0.95)
		if !(t4 > t1) {
			t.Errorf("turn 1 p95 %v, turn 4 p95 %v: the history should cost", t1, t4)
		}
		// Budgets either side of turn 4's p95: one passes, one fails.
		pass := sloassert.Evaluate(r.Turn(4), sloassert.Q(sloassert.TTFT, 0.95, t4, sloassert.AllowSmallSample()))
		fail := sloassert.Evaluate(r.Turn(4), sloassert.Q(sloassert.TTFT, 0.95, t4-ms, sloassert.AllowSmallSample()))
		if !pass.OK() || fail.OK() {
			t.Errorf("turn 4 at its p95 %v: pass %v; 1 ms under: pass %v\n%s", t4, pass.OK(), fail.OK(), fail)
		}
		st := r.Sessions.Totals().Quantile(0.5)
		sess := sloassert.Evaluate(r.Sessions, sloassert.ChainQ(0.5, st, sloassert.AllowSmallSample()))
		if !sess.OK() {
			t.Errorf("sessions at their median %v fail:\n%s", st, sess)
		}
		// Think times are drawn per session and turn: lognormal, median 1 s.
		var think []time.Duration
		for _, th := range r.Think {
			think = append(think, th...)
		}
		if len(think) != 60 || latencytest.Sample(think).Quantile(0.5) < 500*ms || latencytest.Sample(think).Quantile(0.5) > 2*time.Second {
			t.Errorf("think times %v", think)
		}
	})
}

// Same seed, same think times and records at any concurrency.
func TestConversationIsDeterministic(t *testing.T) {
	totals := map[int][]time.Duration{}
	for _, conc := range []int{1, 3} {
		synctest.Test(t, func(t *testing.T) {
			_, p := convFake(t)
			r, err := agent.Conversation{Sessions: 6, Turns: 3, Concurrency: conc, MaxTokens: 8, Seed: 4,
				ThinkTime: agent.ThinkTime{Median: time.Second, P99: 4 * time.Second}}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range r.Sessions.Chains {
				totals[conc] = append(totals[conc], s.Total)
			}
		})
	}
	for i := range totals[1] {
		if totals[1][i] != totals[3][i] {
			t.Fatalf("session totals at concurrency 1 %v, at 3 %v", totals[1], totals[3])
		}
	}
}

// A cancelled turn is no failure: the session goes on with the partial
// answer, and is cancelled: its total is no whole session's (Failed in
// the totals, in neither part of the session error rate).
func TestConversationCancelledTurnsGoOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := convFake(t)
		r, err := agent.Conversation{Sessions: 2, Turns: 3, MaxTokens: 8,
			Cancel: latencytest.Cancel{AfterTokens: 2}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.Sessions.Chains {
			if s.Err != "cancelled" || len(s.Calls) != 3 || s.Cut != "" {
				t.Errorf("%s: err %q, %d turns", s.ID, s.Err, len(s.Calls))
			}
			for _, rec := range s.Calls {
				if rec.Err != "cancelled" || rec.TokenEvents != 2 {
					t.Errorf("%s: %s after %d events", rec.ID, rec.Err, rec.TokenEvents)
				}
			}
		}
		if c := r.Turns().Counts(); c.Cancelled != 6 || c.Failed != 0 {
			t.Errorf("counts %+v", c)
		}
		if rate, tot := r.Sessions.ErrorRate(), r.Sessions.Totals(); !math.IsNaN(rate) || tot[0] != latencytest.Failed || tot[1] != latencytest.Failed || r.Sessions.Partial {
			t.Errorf("session error rate %v (want NaN: none judged), totals %v, partial %v", rate, tot, r.Sessions.Partial)
		}
	})
}

// Bad configurations are refused, naming the field.
func TestConversationRefusesBadInput(t *testing.T) {
	for _, c := range []agent.Conversation{
		{Turns: -1}, {Sessions: -2}, {ThinkTime: agent.ThinkTime{Median: time.Second, P99: ms}},
		{Label: "a b"}, {Cancel: latencytest.Cancel{Share: 2, After: time.Second}},
	} {
		if _, err := c.Run(context.Background(), nil); err == nil || !strings.HasPrefix(err.Error(), "agent: conversation:") {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
