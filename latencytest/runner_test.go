package latencytest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/latencytest"
)

// fake starts a fake provider in the current bubble and returns it with an
// OpenAI provider that reaches it in memory.
func fake(t *testing.T, p fakeprovider.Profile) (*fakeprovider.Fake, latencytest.Provider) {
	t.Helper()
	f := fakeprovider.New(p)
	t.Cleanup(f.Close)
	return f, latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
}

func fixed(ttft, itl time.Duration, tokens int) fakeprovider.Profile {
	return fakeprovider.Profile{TTFT: fakeprovider.Fixed(ttft), ITL: fakeprovider.Fixed(itl), OutputTokens: fakeprovider.Fixed(tokens), SlotsPerReplica: 64}
}

func TestFixedTimingIsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(200*time.Millisecond, 10*time.Millisecond, 64))
		r, err := latencytest.Batch{NoWarmup: true, Requests: 20, Concurrency: 4, Load: latencytest.Load{MaxTokens: 64}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range r.Records {
			// first token at 200 ms; 63 more at 10 ms: 830 ms
			if !rec.OK() || rec.TTFT != 200*time.Millisecond || rec.FirstAnswer != 200*time.Millisecond ||
				rec.LastToken != 830*time.Millisecond || rec.Total != 830*time.Millisecond || rec.MaxGap != 10*time.Millisecond {
				t.Errorf("%s: %+v", rec.ID, rec)
			}
			if rec.Gaps.Len() != 63 || rec.CompletionTokens != 64 || rec.TokenEvents != 64 {
				t.Errorf("%s: %d gaps, %d completion tokens, %d events", rec.ID, rec.Gaps.Len(), rec.CompletionTokens, rec.TokenEvents)
			}
			// (64-1) tokens over 630 ms: 100 tokens/s
			if got := rec.DecodeRate(); got != 100 {
				t.Errorf("%s: decode rate %v, want 100", rec.ID, got)
			}
		}
		if q := r.TTFT().Quantile(0.99); q != 200*time.Millisecond {
			t.Errorf("TTFT p99 %v", q)
		}
		if q := r.Total().Quantile(0.5); q != 830*time.Millisecond {
			t.Errorf("total p50 %v", q)
		}
	})
}

func TestColdStartShowsInItsRecordOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(200*time.Millisecond, 10*time.Millisecond, 16)
		prof.Script = []fakeprovider.ScriptEntry{{Request: 0, ColdStart: 30 * time.Second}}
		_, p := fake(t, prof)
		r, err := latencytest.Batch{NoWarmup: true, Requests: 10, Load: latencytest.Load{MaxTokens: 16}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for i, rec := range r.Records {
			want := 200 * time.Millisecond
			if i == 0 {
				want += 30 * time.Second
			}
			if rec.TTFT != want {
				t.Errorf("%s: TTFT %v, want %v", rec.ID, rec.TTFT, want)
			}
		}
		// The cold start is a single slow request: p50 is clean, max is 30.2 s.
		s := r.TTFT()
		if s.Quantile(0.5) != 200*time.Millisecond || s.Max() != 30200*time.Millisecond {
			t.Errorf("p50 %v max %v", s.Quantile(0.5), s.Max())
		}
	})
}

func TestWarmupDiscardedBySubmissionOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Earlier requests are slower: at concurrency 20 they finish last.
		prof := fixed(100*time.Millisecond, 0, 4)
		for i := range 20 {
			prof.Script = append(prof.Script, fakeprovider.ScriptEntry{ID: fmt.Sprintf("c20-%04d", i), TTFT: time.Duration(20-i) * time.Second})
		}
		f, p := fake(t, prof)
		r, err := latencytest.Batch{Requests: 30, Warmup: 10, Concurrency: 20, Load: latencytest.Load{MaxTokens: 4}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		// The fake saw c20-0019 finish before c20-0000…
		served := f.Served()
		if len(served) != 40 {
			t.Fatalf("served %d", len(served))
		}
		for i, rec := range r.Records {
			if want := fmt.Sprintf("c20-%04d", i); rec.ID != want || rec.Warmup != (i < 10) {
				t.Errorf("record %d: ID %s warmup %v, want %s warmup %v", i, rec.ID, rec.Warmup, want, i < 10)
			}
		}
		c := r.Counts()
		if c.Planned != 40 || c.Sent != 40 || c.Discarded != 10 || c.Kept != 30 || c.Failed != 0 {
			t.Errorf("counts %+v", c)
		}
		// …but the warm-up is 0-9 by trace ID: the measured sample holds the
		// slow 10-19 (10 s down to 1 s) and the 100 ms 20-39.
		m := r.Measured()
		if len(m) != 30 || m[0].ID != "c20-0010" || m[0].TTFT != 10*time.Second {
			t.Errorf("first measured %s %v", m[0].ID, m[0].TTFT)
		}
		if got := r.TTFT().Max(); got != 10*time.Second {
			t.Errorf("measured TTFT max %v, want 10s (request 10)", got)
		}
	})
}

func TestNonceDefeatsTheCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, noNonce := range []bool{false, true} {
			f, p := fake(t, fixed(400*time.Millisecond, 0, 4))
			r, err := latencytest.Batch{NoWarmup: true, Requests: 20, Load: latencytest.Load{MaxTokens: 4, NoNonce: noNonce}}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			hits := 0
			for _, s := range f.Served() {
				if s.CacheHit {
					hits++
				}
			}
			if !noNonce && (hits != 0 || latencytest.CachedTokens(r) != 0) {
				t.Errorf("with the nonce: %d cache hits, %d cached tokens; want none", hits, latencytest.CachedTokens(r))
			}
			// Without it, every prompt of a class repeats: all but the
			// first of each class hit (20 requests, at most 3 classes).
			if noNonce && (hits < 17 || latencytest.CachedTokens(r) == 0) {
				t.Errorf("without the nonce: %d cache hits, %d cached tokens; want hits", hits, latencytest.CachedTokens(r))
			}
			box := r.Disclosure.Box(5).Answer
			if strings.Contains(box, "NO NONCE") != noNonce {
				t.Errorf("disclosure box 5 %q", box)
			}
		}
	})
}

func TestPromptMix(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, p := fake(t, fixed(0, 0, 1))
		r, err := latencytest.Batch{NoWarmup: true, Requests: 1000, Concurrency: 50}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		classes := map[string]int{}
		prompt := map[string]int{}
		for _, rec := range r.Records {
			classes[rec.PromptClass]++
			prompt[rec.PromptClass] = rec.PromptTokens
			want := map[string]int{"short": 100, "medium": 300, "long": 600}[rec.PromptClass]
			if rec.MaxTokens != want {
				t.Fatalf("%s: %s with cap %d", rec.ID, rec.PromptClass, rec.MaxTokens)
			}
		}
		// 1,000 draws of 70/20/10 with seed 7: within a few % of the weights.
		if classes["short"] < 660 || classes["short"] > 740 || classes["medium"] < 170 || classes["medium"] > 230 || classes["long"] < 75 || classes["long"] > 125 {
			t.Errorf("mix %v", classes)
		}
		// ~200/1000/6000 tokens: the fake counts characters/4, nonce included.
		for c, want := range map[string]int{"short": 200, "medium": 1000, "long": 6000} {
			if got := prompt[c]; got < want || got > want+defaults.NonceLen/4+1 {
				t.Errorf("%s prompt: %d tokens, want about %d", c, got, want)
			}
		}
		// The same seed gives the same class to the same trace ID.
		r2, _ := latencytest.Batch{NoWarmup: true, Requests: 1000, Concurrency: 50}.Run(context.Background(), p)
		for i := range r.Records {
			if r.Records[i].PromptClass != r2.Records[i].PromptClass {
				t.Fatalf("%s: class %s then %s", r.Records[i].ID, r.Records[i].PromptClass, r2.Records[i].PromptClass)
			}
		}
		_ = f
	})
}

func TestChainStallStaysInItsChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(100*time.Millisecond, 10*time.Millisecond, 64)
		prof.PrefixCache.Disabled = true // a chain's history would hit it: keep every call at 100 ms
		prof.Script = []fakeprovider.ScriptEntry{{ID: "chain02-call03", Stall: &fakeprovider.ScriptStall{AfterToken: 10, Duration: 20 * time.Minute}}}
		_, p := fake(t, prof)
		cr, err := latencytest.Chain{Chains: 5, Length: 10, Concurrency: 5, Load: latencytest.Load{HardCap: time.Hour}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		// A call: 100 ms + 63 × 10 ms = 730 ms; a chain of 10: 7.3 s.
		call := 730 * time.Millisecond
		for i, ch := range cr.Chains {
			want := 10 * call
			if i == 2 {
				want += 20 * time.Minute
			}
			if ch.Total != want || !ch.OK() || len(ch.Calls) != 10 {
				t.Errorf("%s: total %v ok %v calls %d, want %v", ch.ID, ch.Total, ch.OK(), len(ch.Calls), want)
			}
			for k, c := range ch.Calls {
				gap := 10 * time.Millisecond
				if i == 2 && k == 3 {
					gap = 20*time.Minute + 10*time.Millisecond
				}
				if c.MaxGap != gap || c.ID != fmt.Sprintf("chain%02d-call%02d", i, k) {
					t.Errorf("%s: max gap %v, want %v", c.ID, c.MaxGap, gap)
				}
			}
		}
		if got := cr.Totals().Max(); got != 10*call+20*time.Minute {
			t.Errorf("chain total max %v", got)
		}
		if got := cr.Totals().Quantile(0.5); got != 10*call {
			t.Errorf("chain total p50 %v", got)
		}
	})
}

func TestChainHistoryGrows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(0, 0, 16))
		cr, err := latencytest.Chain{Chains: 1, Length: 5}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		calls := cr.Chains[0].Calls
		for k := 1; k < len(calls); k++ {
			if calls[k].PromptTokens <= calls[k-1].PromptTokens {
				t.Errorf("call %d: %d prompt tokens, not more than call %d's %d: the answer did not join the history",
					k, calls[k].PromptTokens, k-1, calls[k-1].PromptTokens)
			}
		}
		// The history after call 0 is a repeated prefix: the fake caches it.
		if calls[4].CachedTokens == 0 {
			t.Errorf("call 4 reports no cached tokens")
		}
	})
}

func TestErrorClassesNothingLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(100*time.Millisecond, 10*time.Millisecond, 20)
		prof.ReasoningTokens = fakeprovider.Fixed(0)
		prof.Script = []fakeprovider.ScriptEntry{
			{ID: "c4-0002", Status: 529},
			{ID: "c4-0003", Status: 429},
			{ID: "c4-0004", Fault: fakeprovider.FaultEmpty},
			{ID: "c4-0005", Fault: fakeprovider.FaultDisconnect, AfterToken: 5},
			{ID: "c4-0006", Fault: fakeprovider.FaultMalformed, AfterToken: 5},
			{ID: "c4-0007", TTFT: 10 * time.Second},                                               // first-token timeout (2 s)
			{ID: "c4-0008", Stall: &fakeprovider.ScriptStall{AfterToken: 3, Duration: time.Hour}}, // total timeout (30 s)
			{ID: "c4-0009", Status: 503},
			{ID: "c4-0010", Status: 500},
		}
		_, p := fake(t, prof)
		r, err := latencytest.Batch{Requests: 20, Warmup: 2, Concurrency: 4, Load: latencytest.Load{MaxTokens: 20, FirstTokenTimeout: 2 * time.Second, TotalTimeout: 30 * time.Second}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"http_529": 1, "http_429": 1, "empty_stream": 1, "truncated": 1, "bad_stream": 1,
			"first_token_timeout": 1, "total_timeout": 1, "http_503": 1, "http_500": 1}
		got := r.Errors()
		if len(got) != len(want) {
			t.Errorf("errors %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("class %s: %d, want %d (all: %v)", k, got[k], v, got)
			}
		}
		c := r.Counts()
		if c.Sent != c.Kept+c.Discarded+c.Failed || c.Sent != 22 || c.Failed != 9 || c.Discarded != 2 || c.Kept != 11 {
			t.Errorf("counts %+v: sent must be kept + discarded + failed", c)
		}
		if er := r.ErrorRate(); er != 9.0/20 {
			t.Errorf("error rate %v, want 0.45", er)
		}
		byID := map[string]latencytest.Record{}
		for _, rec := range r.Records {
			byID[rec.ID] = rec
		}
		// Timeouts fire exactly on the fake clock.
		if rec := byID["c4-0007"]; rec.Total != 2*time.Second {
			t.Errorf("first-token timeout after %v", rec.Total)
		}
		if rec := byID["c4-0008"]; rec.Total != 30*time.Second || rec.MaxGap != 30*time.Second-rec.LastToken {
			t.Errorf("total timeout after %v, max gap %v (last token %v)", rec.Total, rec.MaxGap, rec.LastToken)
		}
		// The fake says what it injected; the record keeps it for reports.
		for id, want := range map[string]string{"c4-0002": "http_529", "c4-0008": "stall", "c4-0005": "disconnect", "c4-0011": ""} {
			if got := byID[id].Injected; got != want {
				t.Errorf("%s: injected %q, want %q", id, got, want)
			}
		}
		if rec := byID["c4-0003"]; rec.Status != 429 || !strings.Contains(rec.Detail, "Rate limit") {
			t.Errorf("429 detail %q", rec.Detail)
		}
		// Failed requests count as Failed in every latency sample: 9 of 20.
		if n := r.TTFT().Failures(); n != 9 {
			t.Errorf("TTFT sample has %d failures, want 9", n)
		}
		if q := r.TTFT().Quantile(0.5); q != 100*time.Millisecond {
			t.Errorf("TTFT p50 %v", q)
		}
		if q := r.TTFT().Quantile(0.99); q != latencytest.Failed {
			t.Errorf("TTFT p99 %v, want Failed (45%% failed)", q)
		}
	})
}

func TestEmptyAnswerIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(100*time.Millisecond, 10*time.Millisecond, 20)
		prof.ReasoningTokens = fakeprovider.Fixed(100) // uses the whole cap
		_, p := fake(t, prof)
		r, err := latencytest.Batch{NoWarmup: true, Requests: 5, Load: latencytest.Load{MaxTokens: 64}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range r.Records {
			if rec.Err != latencytest.ClassEmptyAnswer || rec.TTFT != 100*time.Millisecond || rec.FirstAnswer != latencytest.NotObserved || rec.FinishReason != "length" {
				t.Errorf("%s: %+v", rec.ID, rec)
			}
		}
		if r.ErrorRate() != 1 || r.FirstAnswer().Finite().Len() != 0 {
			t.Errorf("error rate %v", r.ErrorRate())
		}
	})
}

func TestDeadlineStopsStartingRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Each request takes 1 s; the per-request limit is 10 s; the
		// deadline is 30 s away: requests start while 10 s remain, i.e.
		// for the first 20 s, one a second.
		_, p := fake(t, fixed(time.Second, 0, 1))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := latencytest.Batch{NoWarmup: true, Requests: 100, Load: latencytest.Load{TotalTimeout: 10 * time.Second, MaxTokens: 1}}.Run(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		c := r.Counts()
		if !r.Partial || c.Sent != 21 || c.Planned != 100 || c.Failed != 0 {
			t.Errorf("partial %v, counts %+v, reason %q", r.Partial, c, r.PartialReason)
		}
		if !strings.Contains(r.PartialReason, "sent 21 of 100") || !strings.Contains(r.Disclosure.Box(2).Answer, "PARTIAL") {
			t.Errorf("reason %q; box 2 %q", r.PartialReason, r.Disclosure.Box(2).Answer)
		}
	})
}

func TestCancelIsRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(time.Hour, 0, 1))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Minute, cancel)
		r, err := latencytest.Batch{NoWarmup: true, Requests: 10, Concurrency: 2, Load: latencytest.Load{MaxTokens: 1, HardCap: 2 * time.Hour}}.Run(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Counts(); c.Sent != 2 || c.Failed != 2 || r.Errors()[latencytest.ClassCanceled] != 2 || !r.Partial {
			t.Errorf("counts %+v errors %v partial %v", c, r.Errors(), r.Partial)
		}
	})
}

func TestRepeatReportsTheGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(0, 0, 1)
		prof.TTFT = fakeprovider.LogNormal(300*time.Millisecond, 2*time.Second)
		_, p := fake(t, prof)
		r, err := latencytest.Batch{NoWarmup: true, Requests: 75, Repeat: 2, Load: latencytest.Load{MaxTokens: 1}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Records) != 150 || r.Records[75].ID != "c1-r1-0000" || r.Records[75].Run != 1 {
			t.Fatalf("%d records; record 75 %s run %d", len(r.Records), r.Records[75].ID, r.Records[75].Run)
		}
		if len(r.RepeatGaps) != 8 {
			t.Fatalf("repeat gaps %+v", r.RepeatGaps)
		}
		for _, g := range r.RepeatGaps {
			lo, hi := slices.Min(g.Runs), slices.Max(g.Runs)
			if len(g.Runs) != 2 || g.Gap != float64(hi-lo)/float64(lo) {
				t.Errorf("%s p%g: runs %v gap %v", g.Metric, g.Q*100, g.Runs, g.Gap)
			}
		}
		if g := r.RepeatGaps[3]; g.Metric != "ttft" || g.Q != 0.99 || g.Gap == 0 {
			t.Errorf("TTFT p99 gap %+v: two runs of a lognormal differ", g)
		}
		if b := r.Disclosure.Box(15); b.Missing || !strings.Contains(b.Answer, "TTFT p99") {
			t.Errorf("box 15 %+v", b)
		}
	})
}

func TestSweep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(100*time.Millisecond, 0, 1)
		prof.Replicas, prof.SlotsPerReplica = 1, 4
		_, p := fake(t, prof)
		sr, err := latencytest.Sweep{Batch: latencytest.Batch{NoWarmup: true, Requests: 40, Load: latencytest.Load{MaxTokens: 1}}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sr.Levels, []int{1, 8, 50}) || len(sr.Results) != 3 {
			t.Fatalf("levels %v", sr.Levels)
		}
		// 4 slots: at concurrency 1 no queue; at 8 and 50 the tail grows.
		p99 := func(i int) time.Duration { return sr.Results[i].TTFT().Quantile(0.99) }
		if p99(0) != 100*time.Millisecond || p99(1) <= p99(0) || p99(2) <= p99(1) {
			t.Errorf("p99 by level %v %v %v", p99(0), p99(1), p99(2))
		}
		if sr.Results[2].Records[0].ID != "c50-0000" {
			t.Errorf("trace ID %s", sr.Results[2].Records[0].ID)
		}
		if b := sr.Results[0].Disclosure.Box(8); b.Missing || !strings.Contains(b.Answer, "[1 8 50]") {
			t.Errorf("box 8 %+v", b)
		}
	})
}

func TestBadConfiguration(t *testing.T) {
	p := latencytest.OpenAI("http://127.0.0.1:1/v1")
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"negative requests", func() error { _, err := latencytest.Batch{Requests: -1}.Run(context.Background(), p); return err }, "requests -1 < 0"},
		{"negative warm-up and timeout together", func() error {
			_, err := latencytest.Batch{Warmup: -2, Load: latencytest.Load{TotalTimeout: -time.Second}}.Run(context.Background(), p)
			return err
		}, "warmup -2 < 0"},
		{"mix weights", func() error {
			_, err := latencytest.Batch{Mix: latencytest.Mix{Classes: []latencytest.PromptClass{{Name: "a", Weight: 0.5, PromptTokens: 10}}}}.Run(context.Background(), p)
			return err
		}, "mix weights sum to 0.5"},
		{"temperature", func() error {
			tmp := 3.0
			_, err := latencytest.Batch{Load: latencytest.Load{Temperature: &tmp}}.Run(context.Background(), p)
			return err
		}, "temperature 3 outside [0,2]"},
		{"sweep level", func() error {
			_, err := latencytest.Sweep{Levels: []int{1, 0}}.Run(context.Background(), p)
			return err
		}, "level 0 < 1"},
		{"chain length", func() error { _, err := latencytest.Chain{Length: -1}.Run(context.Background(), p); return err }, "calls -1 < 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "latencytest: ") {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// A deadline that leaves room for a few calls but not whole chains: the
// chains run what fits, the cut chain counts as never finished, and the
// result says so.
func TestChainDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(time.Second, 0, 1)
		prof.PrefixCache.Disabled = true // every call 1 s, history or not
		_, p := fake(t, prof)
		// Calls take 1 s; the per-call limit is 5 s; 20 s of deadline: calls
		// start while 5 s remain, so 16 calls run (t = 0..15 s).
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cr, err := latencytest.Chain{Chains: 3, Length: 10, Load: latencytest.Load{TotalTimeout: 5 * time.Second}}.Run(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(cr.Chains) != 2 || len(cr.Chains[0].Calls) != 10 || len(cr.Chains[1].Calls) != 6 {
			t.Fatalf("%d chains; calls %d and %d", len(cr.Chains), len(cr.Chains[0].Calls), len(cr.Chains[len(cr.Chains)-1].Calls))
		}
		if !cr.Chains[0].OK() || cr.Chains[1].Err != latencytest.ClassCanceled || cr.Chains[1].Cut == "" {
			t.Errorf("chain 0 %+v; chain 1 err %q cut %q", cr.Chains[0].Err, cr.Chains[1].Err, cr.Chains[1].Cut)
		}
		if tot := cr.Totals(); tot[0] != 10*time.Second || tot[1] != latencytest.Failed {
			t.Errorf("totals %v", tot)
		}
		if !cr.Partial || !strings.Contains(cr.PartialReason, "chain01 stopped after 6 of 10 calls") {
			t.Errorf("partial %v %q", cr.Partial, cr.PartialReason)
		}
	})
}
