package sloassert_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"

	"github.com/tailguard/tailguard/internal/defaults"
)

// measureBatch runs b against a fake with this profile, in virtual time.
func measureBatch(t *testing.T, profile string, b latencytest.Batch) *latencytest.Result {
	t.Helper()
	return runOnFake(t, profile, b.Run)
}

// TestInjectedColdStartsAreFound: a fake that injects 3 s cold starts into
// 5 of 10 measured requests, back to back (no idle gap at all), fails
// MaxColdStart: the fake says which requests it cold-started, and each is
// a candidate whatever the idle gap.
func TestInjectedColdStartsAreFound(t *testing.T) {
	profile := "model: m\nseed: 3\nttft: 200ms\nitl: 10ms\noutput_tokens: 8\nscript:\n"
	for _, i := range []int{11, 13, 15, 17, 19} { // arrivals 10-19 are the measured requests
		profile += fmt.Sprintf("  - {request: %d, cold_start: 3s}\n", i)
	}
	r := measureBatch(t, profile, latencytest.Batch{Requests: 10, Load: latencytest.Load{Prompt: "hi", MaxTokens: 8}})
	for _, idle := range []sloassert.Option{nil, sloassert.AfterIdle(time.Hour)} {
		var opts []sloassert.Option
		if idle != nil {
			opts = append(opts, idle)
		}
		out := judge(r, sloassert.MaxColdStart(time.Second, opts...))
		if out.OK || !strings.Contains(out.Note, "5 over budget") || !strings.Contains(out.Note, "c1-0011 3200.0ms (fake injected cold_start=3s)") {
			t.Errorf("%s: %+v", out.Objective, out)
		}
	}
	if ids := coldStartIDs(r, defaults.IdleGap); len(ids) != 6 { // the first request (a warm-up) and 5 injected; the other warm-ups are no candidates
		t.Errorf("candidates %v", ids)
	}
}

// TestFirstLongPromptIsNotAColdStart: a warm server (no cold start at all)
// with 300 ms of prefill per 1k prompt tokens, so the default mix's
// long prompts (about 6,000 tokens) take about 2 s to a first token and
// short ones about 260 ms. Request 0 of the default mix is a long prompt.
// MaxColdStart(1s) compares it with the warm long prompts, and passes.
func TestFirstLongPromptIsNotAColdStart(t *testing.T) {
	r := measureBatch(t, "model: m\nseed: 3\nttft: {dist: lognormal, median: 200ms, p99: 300ms}\nprefill_per_1k_tokens: 300ms\nitl: 10ms\noutput_tokens: 8\n",
		latencytest.Batch{Requests: 200, Concurrency: 4, Load: latencytest.Load{MaxTokens: 8}})
	if first := r.Records[0]; first.PromptClass != "long" || first.TTFT < time.Second {
		t.Fatalf("request 0 is %s, TTFT %v: want a slow long prompt", first.PromptClass, first.TTFT)
	}
	out := judge(r, sloassert.MaxColdStart(time.Second))
	if !out.OK || !strings.Contains(out.Note, "like with like") || !strings.Contains(out.Note, "(long prompt, 15 warm)") {
		t.Errorf("a warm server failed:\n%s\n%s", out, out.Note)
	}
	for _, c := range r.ColdStartCandidates(defaults.IdleGap) {
		if c.Class == "long" && (c.ClassExcess < 1500*time.Millisecond || c.Compared > 600*time.Millisecond) {
			t.Errorf("%+v", c)
		}
		if c.Class == "short" && (c.Extrapolated || c.ClassExcess > 100*time.Millisecond) {
			t.Errorf("short is the fastest class: its excess is its own spread over its median: %+v", c)
		}
	}
	// A real 3 s cold start on that first long prompt is still caught.
	r.Records[0].TTFT += 3 * time.Second
	if out := judge(r, sloassert.MaxColdStart(time.Second)); out.OK {
		t.Errorf("a cold long prompt passed: %+v", out)
	}
}

// TestAfterIdleFindsQuickUnloads: a real server (no injected notes) that
// unloads after 2 s idle: requests sent 5 s apart each meet a 3 s load.
// The default one-minute gap sees only the first request, and counts the
// other five unloads as warm requests: its 3.1 s is what they reach, so
// nothing tells it from them and it passes (the wrong gap hides the
// unloads; the row says what it compared). AfterIdle(2s) sees them all.
func TestAfterIdleFindsQuickUnloads(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &latencytest.Result{Run: latencytest.Run{Start: t0, Planned: 12}}
	for i := range 12 {
		ttft := 3*time.Second + 100*time.Millisecond
		if i%2 == 1 { // sent right after the one before: warm
			ttft = 100 * time.Millisecond
		}
		start := t0.Add(time.Duration(i/2) * 10 * time.Second)
		if i%2 == 1 {
			start = start.Add(3200 * time.Millisecond)
		}
		r.Records = append(r.Records, latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Start: start, TTFT: ttft, FirstAnswer: ttft,
			Total: ttft + 100*time.Millisecond, TokenEvents: 2})
	}
	if out := judge(r, sloassert.MaxColdStart(time.Second)); !out.OK || !strings.Contains(out.Note, "c1-0000 (its prompt class, 11 warm) 3100.0ms less") {
		t.Errorf("default gap: %+v", out) // the first request, against 11 "warm" ones
	}
	out := judge(r, sloassert.MaxColdStart(time.Second, sloassert.AfterIdle(2*time.Second)))
	if out.OK || !strings.Contains(out.Note, "6 over budget") || !strings.Contains(out.Note, "after 6.6s idle") ||
		out.Objective != "cold start ttft <= 1000.0ms (after 2s idle)" {
		t.Errorf("AfterIdle(2s): %+v", out)
	}
	for _, d := range []time.Duration{0, -time.Second} {
		if out := judge(r, sloassert.MaxColdStart(time.Hour, sloassert.AfterIdle(d))); out.OK || !strings.Contains(out.Note, "the idle gap is not positive") {
			t.Errorf("AfterIdle(%v): %+v", d, out)
		}
	}
}

// TestFirstLongPromptOfAShortRun: a run too short to hold a warm long
// prompt (10 requests, no warm-up: request 0 is the only long one)
// compares it through the prefill cost per prompt token that the warm
// short and medium prompts show.
func TestFirstLongPromptOfAShortRun(t *testing.T) {
	r := measureBatch(t, "model: m\nseed: 3\nttft: {dist: lognormal, median: 200ms, p99: 300ms}\nprefill_per_1k_tokens: 300ms\nitl: 10ms\noutput_tokens: 8\n",
		latencytest.Batch{Requests: 10, NoWarmup: true, Load: latencytest.Load{MaxTokens: 8}})
	long := 0
	for _, rec := range r.Records {
		if rec.PromptClass == "long" {
			long++
		}
	}
	if first := r.Records[0]; first.PromptClass != "long" || long != 1 || first.TTFT < time.Second {
		t.Fatalf("request 0 is %s (TTFT %v), %d long prompts: want one slow long prompt, first", first.PromptClass, first.TTFT, long)
	}
	c := r.ColdStartCandidates(defaults.IdleGap)[0]
	if !c.Extrapolated || c.ClassExcess < 1500*time.Millisecond || c.Compared > 600*time.Millisecond {
		t.Errorf("%+v", c)
	}
	if out := judge(r, sloassert.MaxColdStart(time.Second)); !out.OK {
		t.Errorf("a warm server failed:\n%s", out)
	}
	// Without prompt-token counts (a server that reports no usage) there
	// is no slope: the long prompt is judged as a short one, less only the
	// short class's own spread, and the row says it was extrapolated.
	for i := range r.Records {
		r.Records[i].PromptTokens = 0
	}
	if c := r.ColdStartCandidates(defaults.IdleGap)[0]; !c.Extrapolated || c.ClassExcess > 100*time.Millisecond || c.Compared != c.TTFT-c.ClassExcess {
		t.Errorf("no token counts: %+v", c)
	}
	out := judge(r, sloassert.MaxColdStart(time.Second))
	if out.OK || out.Verdict != sloassert.Inconclusive || !strings.Contains(out.Note, "extrapolated: long prompt has fewer than 3 warm requests, so c1-0000 is judged along") ||
		!strings.Contains(out.Note, "inconclusive: every candidate over budget was judged by extrapolation") {
		t.Errorf("an extrapolated verdict that does not say so:\n%s", out)
	}
}

// TestWarmupIsACandidateOnlyAfterIdle: a warm-up request's slow prefill
// (a medium prompt's 1,031 ms on a real engine) is no cold start: under
// AfterIdle(2s) and a 1 s budget, the warm-up requests sent back to back
// are no candidates, only the first request is. The same request sent
// after 5 s idle is one, and fails (judged, as one of the run's two
// candidates, against its class's bound at 0.95^(1/2)).
func TestWarmupIsACandidateOnlyAfterIdle(t *testing.T) {
	build := func(gap time.Duration) *latencytest.Result {
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		r := &latencytest.Result{Run: latencytest.Run{Start: t0, Planned: 40}}
		at := t0
		for i := range 40 {
			ttft := 200*time.Millisecond + time.Duration(i%7)*time.Millisecond
			if i == 3 {
				ttft, at = 1031*time.Millisecond, at.Add(gap)
			}
			r.Records = append(r.Records, latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Start: at, TTFT: ttft, FirstAnswer: ttft,
				Total: ttft + 50*time.Millisecond, TokenEvents: 4, Warmup: i < 10})
			at = at.Add(ttft + 60*time.Millisecond)
		}
		return r
	}
	cs := sloassert.MaxColdStart(time.Second, sloassert.AfterIdle(2*time.Second))
	r := build(0)
	if ids := coldStartIDs(r, 2*time.Second); fmt.Sprint(ids) != "[c1-0000]" {
		t.Errorf("back to back: candidates %v, want the first request only", ids)
	}
	if out := judge(r, cs); !out.OK {
		t.Errorf("a warm-up's slow prefill judged a cold start:\n%s", out)
	}
	r = build(5 * time.Second)
	out := judge(r, cs)
	if out.OK || !strings.Contains(out.Note, "1 over budget: c1-0003 1026.8ms (warm-up, after 5.01s idle)") {
		t.Errorf("a warm-up after 5 s idle: %s", out)
	}
}

// TestExtrapolatedClassIsFlagged: a run whose one long prompt is its
// first request, on an engine whose prefill grows faster than a straight
// line (short 200 tokens 200 ms, medium 1,000 tokens 800 ms, long 6,000
// tokens 8 s, no cold start). The line through the warm short and medium
// prompts puts a long prompt near 4.6 s, so the long one reads 3.5 s
// over: the row says the long class was extrapolated, and the verdict is
// inconclusive (still not a pass), not a plain fail.
func TestExtrapolatedClassIsFlagged(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &latencytest.Result{Run: latencytest.Run{Start: t0, Planned: 40}}
	at := t0
	for i := range 40 {
		class, tokens, ttft := "short", 200, 200*time.Millisecond+time.Duration(i%5)*time.Millisecond
		switch {
		case i == 0:
			class, tokens, ttft = "long", 6000, 8*time.Second
		case i%4 == 1:
			class, tokens, ttft = "medium", 1000, 800*time.Millisecond+time.Duration(i%3)*time.Millisecond
		}
		r.Records = append(r.Records, latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Start: at, TTFT: ttft, FirstAnswer: ttft,
			Total: ttft + 50*time.Millisecond, TokenEvents: 4, PromptClass: class, PromptTokens: tokens})
		at = at.Add(ttft + 60*time.Millisecond)
	}
	c := r.ColdStartCandidates(defaults.IdleGap)
	if len(c) != 1 || !c[0].Extrapolated || c[0].Warm != 0 || c[0].Compared < 3*time.Second {
		t.Fatalf("candidates %+v", c)
	}
	out := judge(r, sloassert.MaxColdStart(time.Second))
	if out.OK || out.Verdict != sloassert.Inconclusive ||
		!strings.Contains(out.Note, "extrapolated: long prompt has fewer than 3 warm requests, so c1-0000 is judged along the warm classes' prefill per prompt token") {
		t.Errorf("an extrapolated long prompt judged without saying so:\n%s", out)
	}
	// A class with its own warm requests is judged on them, and a cold
	// start there is a plain fail.
	r.Records[0].PromptClass, r.Records[0].PromptTokens = "short", 200
	if out := judge(r, sloassert.MaxColdStart(time.Second)); out.OK || out.Verdict != sloassert.Fail || strings.Contains(out.Note, "extrapolated") {
		t.Errorf("a short prompt 7.8 s over its class:\n%s", out)
	}
}

// coldStartIDs returns the trace IDs of r's cold-start candidates with
// the gap idle, in Records order.
func coldStartIDs(r *latencytest.Result, idle time.Duration) []string {
	var ids []string
	for _, c := range r.ColdStartCandidates(idle) {
		ids = append(ids, c.ID)
	}
	return ids
}
