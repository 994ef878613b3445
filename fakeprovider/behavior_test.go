package fakeprovider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func servedByID(f *Fake) map[string]Served {
	m := map[string]Served{}
	for _, s := range f.Served() {
		m[s.ID] = s
	}
	return m
}

func TestColdStartAfterIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{
			TTFT:         Fixed(200 * time.Millisecond),
			ITL:          Fixed(time.Duration(0)),
			OutputTokens: Fixed(1),
			ColdStart:    ColdStart{AfterIdle: 5 * time.Minute, Duration: Fixed(30 * time.Second)},
		})
		c := f.Client()
		// Warm at New: the first request pays nothing.
		if r := do(t, c, "http://fake", reqOpts{id: "a"}); r.firstTok != 200*time.Millisecond {
			t.Fatalf("warm request: first token at %v, want 200ms", r.firstTok)
		}
		// 4 min idle: still warm.
		time.Sleep(4 * time.Minute)
		if r := do(t, c, "http://fake", reqOpts{id: "b"}); r.firstTok != 200*time.Millisecond {
			t.Fatalf("after 4m idle: first token at %v, want 200ms", r.firstTok)
		}
		// 6 min idle: scaled to zero. "c" starts the load; "d" arrives 10 s
		// into it and waits for the same load: 30s-10s+200ms.
		time.Sleep(6 * time.Minute)
		var rc, rd streamResult
		var wg sync.WaitGroup
		wg.Go(func() { rc = do(t, c, "http://fake", reqOpts{id: "c"}) })
		wg.Go(func() {
			time.Sleep(10 * time.Second)
			rd = do(t, c, "http://fake", reqOpts{id: "d"})
		})
		wg.Wait()
		if rc.firstTok != 30*time.Second+200*time.Millisecond {
			t.Errorf("cold request: first token at %v, want 30.2s", rc.firstTok)
		}
		if rd.firstTok != 20*time.Second+200*time.Millisecond {
			t.Errorf("request during the load: first token at %v, want 20.2s", rd.firstTok)
		}
		s := servedByID(f)
		if s["a"].ColdStart != 0 || s["b"].ColdStart != 0 || s["c"].ColdStart != 30*time.Second || s["d"].ColdStart != 20*time.Second {
			t.Errorf("cold starts a=%v b=%v c=%v d=%v, want 0 0 30s 20s", s["a"].ColdStart, s["b"].ColdStart, s["c"].ColdStart, s["d"].ColdStart)
		}
		// Right after: warm again.
		if r := do(t, c, "http://fake", reqOpts{id: "e"}); r.firstTok != 200*time.Millisecond {
			t.Errorf("after the load: first token at %v, want 200ms", r.firstTok)
		}
	})
}

func TestColdStartInitialAndScripted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{
			TTFT: Fixed(100 * time.Millisecond), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(1),
			ColdStart: ColdStart{Initial: true, Duration: Fixed(45 * time.Second)},
			Script:    []ScriptEntry{{Request: 2, ColdStart: 12 * time.Second}, {ID: "by-id", TTFT: 3 * time.Second}},
		})
		c := f.Client()
		want := []time.Duration{45*time.Second + 100*time.Millisecond, 100 * time.Millisecond, 12*time.Second + 100*time.Millisecond}
		for i, w := range want {
			if r := do(t, c, "http://fake", reqOpts{id: "r" + string(rune('0'+i))}); r.firstTok != w {
				t.Errorf("request %d: first token at %v, want %v", i, r.firstTok, w)
			}
		}
		if r := do(t, c, "http://fake", reqOpts{id: "by-id"}); r.firstTok != 3*time.Second {
			t.Errorf("scripted TTFT: first token at %v, want 3s", r.firstTok)
		}
	})
}

func TestQueueingGrowsTheTail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 1 replica × 2 slots; each request holds its slot 100 ms.
		f := mustNew(t, Profile{TTFT: Fixed(100 * time.Millisecond), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(1), Replicas: 1, SlotsPerReplica: 2})
		rs := batch(t, f, 6, 6, "q", reqOpts{})
		// Admitted two at a time, FIFO by trace ID: 100, 100, 200, 200, 300, 300 ms.
		want := []time.Duration{100, 100, 200, 200, 300, 300}
		for i, r := range rs {
			if r.firstTok != want[i]*time.Millisecond {
				t.Errorf("q-%04d: first token at %v, want %v", i, r.firstTok, want[i]*time.Millisecond)
			}
		}
		for i, s := range f.Served() {
			if w := (want[i] - 100) * time.Millisecond; s.Queued != w || s.Index != i {
				t.Errorf("served %d (%s): queued %v index %d, want %v", i, s.ID, s.Queued, s.Index, w)
			}
		}
	})
}

func TestSlowdownPerInflight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(100 * time.Millisecond), ITL: Fixed(10 * time.Millisecond), OutputTokens: Fixed(2), SlowdownPerInflight: 0.5})
		rs := batch(t, f, 3, 3, "s", reqOpts{})
		// Admitted in trace-ID order with 0, 1, 2 others in flight: ×1, ×1.5, ×2.
		for i, w := range []time.Duration{100, 150, 200} {
			if rs[i].firstTok != w*time.Millisecond || rs[i].lastTok-rs[i].firstTok != w/10*time.Millisecond {
				t.Errorf("s-%04d: first %v gap %v, want %v and %v", i, rs[i].firstTok, rs[i].lastTok-rs[i].firstTok, w*time.Millisecond, w/10*time.Millisecond)
			}
		}
	})
}

func TestStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(200 * time.Millisecond), ITL: Fixed(10 * time.Millisecond), OutputTokens: Fixed(20),
			Stall: Stall{Probability: 1, AfterToken: 10, Duration: Fixed(20 * time.Minute)}})
		r := do(t, f.Client(), "http://fake", reqOpts{id: "stalled"})
		if r.tokens != 20 || !r.sawDone {
			t.Fatalf("tokens %d done %v", r.tokens, r.sawDone)
		}
		var times []time.Duration
		for _, c := range r.chunks {
			if len(c.parsed.Choices) > 0 && c.parsed.Choices[0].Delta.Content != nil && *c.parsed.Choices[0].Delta.Content != "" {
				times = append(times, c.at)
			}
		}
		// Token 10 (the 11th) comes 20 min + 10 ms after token 9.
		if gap := times[10] - times[9]; gap != 20*time.Minute+10*time.Millisecond {
			t.Errorf("gap after token 10: %v, want 20m0.01s", gap)
		}
		if r.lastTok != 200*time.Millisecond+19*10*time.Millisecond+20*time.Minute {
			t.Errorf("last token at %v", r.lastTok)
		}
		if s := f.Served()[0]; s.Fault != FaultStall || s.Stall != 20*time.Minute {
			t.Errorf("served fault %q stall %v", s.Fault, s.Stall)
		}
	})
}

func TestStatusFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults Faults
		status int
		typ    string
	}{
		{"529 overloaded", Faults{HTTP529: 1}, 529, "overloaded_error"},
		{"429 with Retry-After", Faults{HTTP429: 1, RetryAfter: 3 * time.Second}, 429, "requests"},
		{"500", Faults{HTTP500: 1}, 500, "server_error"},
		{"503", Faults{HTTP503: 1}, 503, "server_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := mustNew(t, Profile{Faults: tc.faults})
				r := do(t, f.Client(), "http://fake", reqOpts{id: "x"})
				if r.status != tc.status || !strings.Contains(r.body, `"type":"`+tc.typ+`"`) {
					t.Errorf("status %d body %s, want %d with type %s", r.status, r.body, tc.status, tc.typ)
				}
				if tc.status == 429 && r.header.Get("Retry-After") != "3" {
					t.Errorf("Retry-After %q, want 3", r.header.Get("Retry-After"))
				}
				if s := f.Served()[0]; s.Status != tc.status || s.Fault != "http_"+strconv.Itoa(tc.status) {
					t.Errorf("served %+v", s)
				}
			})
		})
	}
}

func TestStreamFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(50 * time.Millisecond), ITL: Fixed(10 * time.Millisecond), OutputTokens: Fixed(10),
			Script: []ScriptEntry{
				{ID: "empty", Fault: FaultEmpty},
				{ID: "disc", Fault: FaultDisconnect, AfterToken: 4},
				{ID: "malf", Fault: FaultMalformed, AfterToken: 2},
				{ID: "status", Status: 418},
			}})
		c := f.Client()

		r := do(t, c, "http://fake", reqOpts{id: "empty"})
		if r.status != 200 || r.tokens != 0 || !r.sawDone || r.readErr != nil {
			t.Errorf("empty: status %d tokens %d done %v err %v", r.status, r.tokens, r.sawDone, r.readErr)
		}

		r = do(t, c, "http://fake", reqOpts{id: "disc"})
		if r.tokens != 4 || r.sawDone || !errors.Is(r.readErr, io.ErrUnexpectedEOF) {
			t.Errorf("disconnect: tokens %d done %v err %v, want 4 tokens, no [DONE], unexpected EOF", r.tokens, r.sawDone, r.readErr)
		}

		r = do(t, c, "http://fake", reqOpts{id: "malf"})
		bad := 0
		for i, ch := range r.chunks {
			if ch.badJSON {
				bad++
				if toks := countTokens(r.chunks[:i]); toks != 2 {
					t.Errorf("malformed chunk after %d tokens, want 2", toks)
				}
			}
		}
		if bad != 1 || r.tokens != 10 || !r.sawDone {
			t.Errorf("malformed: %d bad chunks, %d tokens, done %v; want 1, 10, true", bad, r.tokens, r.sawDone)
		}

		r = do(t, c, "http://fake", reqOpts{id: "status"})
		if r.status != 418 {
			t.Errorf("scripted status: %d", r.status)
		}
		s := servedByID(f)
		for id, want := range map[string]string{"empty": FaultEmpty, "disc": FaultDisconnect, "malf": FaultMalformed, "status": "http_418"} {
			if s[id].Fault != want {
				t.Errorf("served %s: fault %q, want %q", id, s[id].Fault, want)
			}
		}
	})
}

func countTokens(cs []chunk) int {
	n := 0
	for _, c := range cs {
		for _, ch := range c.parsed.Choices {
			if ch.Delta.Content != nil && *ch.Delta.Content != "" {
				n++
			}
		}
	}
	return n
}

func TestFaultProbabilities(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(time.Duration(0)), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(4), Seed: 1,
			Faults: Faults{HTTP529: 0.1, HTTP429: 0.1, HTTP500: 0.1, HTTP503: 0.1, Empty: 0.1, Disconnect: 0.1, Malformed: 0.1}})
		batch(t, f, 2000, 50, "p", reqOpts{})
		counts := map[string]int{}
		for _, s := range f.Served() {
			counts[s.Fault]++
		}
		// 2,000 requests, p = 0.1 each: 200 expected, sd ≈ 13.4; ±60 is 4.5 sd
		// (and the seed is fixed, so this cannot flake).
		for _, name := range []string{FaultHTTP529, FaultHTTP429, FaultHTTP500, FaultHTTP503, FaultEmpty, FaultDisconnect, FaultMalformed} {
			if n := counts[name]; n < 140 || n > 260 {
				t.Errorf("fault %s: %d of 2000, want about 200", name, n)
			}
		}
		if n := counts[""]; n < 520 || n > 680 {
			t.Errorf("no fault: %d of 2000, want about 600", n)
		}
	})
}

func TestPrefixCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(400 * time.Millisecond), PrefillPer1kTokens: Fixed(20 * time.Millisecond), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(1)})
		c := f.Client()
		long := strings.Repeat("Tell me about the tail of the latency distribution. ", 80) // 52 chars × 80 = 4,160 chars: 1,040 tokens
		// The same prompt twice: a miss, then a hit at ×0.1.
		r1 := do(t, c, "http://fake", reqOpts{id: "same-1", prompt: long, usage: true})
		r2 := do(t, c, "http://fake", reqOpts{id: "same-2", prompt: long, usage: true})
		miss := 400*time.Millisecond + 20*time.Millisecond*1040/1000 // 420.8 ms
		if r1.firstTok != miss || r2.firstTok != miss/10 {
			t.Errorf("repeated prompt: %v then %v, want %v then %v", r1.firstTok, r2.firstTok, miss, miss/10)
		}
		if _, _, cached, _ := r1.usage(); cached != 0 {
			t.Errorf("first request reports %d cached tokens", cached)
		}
		if _, _, cached, _ := r2.usage(); cached != 1040 { // 65 whole 64-char blocks of 16 tokens
			t.Errorf("second request reports %d cached tokens, want 1040", cached)
		}
		// A unique leading nonce defeats it.
		for i := range 5 {
			nonce := "nonce-" + string(rune('a'+i)) + strings.Repeat("x", 60) + " "
			r := do(t, c, "http://fake", reqOpts{id: "n" + nonce[6:7], prompt: nonce + long, usage: true})
			if _, _, cached, _ := r.usage(); cached != 0 || r.firstTok < miss {
				t.Errorf("nonce %d: cached %d first %v, want a miss", i, cached, r.firstTok)
			}
		}
		hits := 0
		for _, s := range f.Served() {
			if s.CacheHit {
				hits++
			}
		}
		if hits != 1 {
			t.Errorf("%d cache hits, want 1 (same-2)", hits)
		}
		// Disabled: never a hit.
		g := mustNew(t, Profile{PrefixCache: PrefixCache{Disabled: true}, ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(1)})
		do(t, g.Client(), "http://fake", reqOpts{id: "d1", prompt: long})
		do(t, g.Client(), "http://fake", reqOpts{id: "d2", prompt: long})
		if s := servedByID(g); s["d2"].CacheHit {
			t.Errorf("cache disabled but d2 hit")
		}
	})
}

func TestReasoning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(time.Second), ITL: Fixed(10 * time.Millisecond), ReasoningTokens: Fixed(100), OutputTokens: Fixed(20)})
		c := f.Client()
		// Reasoning uses the whole cap: no answer, finish length.
		r := do(t, c, "http://fake", reqOpts{id: "capped", maxTokens: 64, usage: true})
		if r.content != "" || r.thinking == "" || r.finish != "length" || r.tokens != 64 {
			t.Errorf("capped: content %q finish %q tokens %d", r.content, r.finish, r.tokens)
		}
		if _, comp, _, _ := r.usage(); comp != 64 {
			t.Errorf("capped: completion tokens %d, want 64", comp)
		}
		// Room for both: reasoning first, then the answer.
		r = do(t, c, "http://fake", reqOpts{id: "room", maxTokens: 1000})
		if r.content == "" || r.finish != "stop" || r.tokens != 120 {
			t.Errorf("room: content %q finish %q tokens %d", r.content, r.finish, r.tokens)
		}
		firstAnswer := time.Duration(-1)
		for _, ch := range r.chunks {
			if d := ch.parsed.Choices; len(d) > 0 && d[0].Delta.Content != nil && *d[0].Delta.Content != "" {
				firstAnswer = ch.at
				break
			}
		}
		// First token at 1 s; the answer after 100 reasoning tokens: 1 s + 100×10 ms.
		if r.firstTok != time.Second || firstAnswer != 2*time.Second {
			t.Errorf("first token %v first answer %v, want 1s and 2s", r.firstTok, firstAnswer)
		}
		// Cap between: part of the answer, finish length.
		r = do(t, c, "http://fake", reqOpts{id: "part", maxTokens: 110})
		if r.finish != "length" || r.tokens != 110 || r.content == "" {
			t.Errorf("part: finish %q tokens %d", r.finish, r.tokens)
		}
	})
}

func TestTokensPerChunk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(100 * time.Millisecond), ITL: Fixed(10 * time.Millisecond), OutputTokens: Fixed(64), TokensPerChunk: Fixed(2)})
		r := do(t, f.Client(), "http://fake", reqOpts{id: "k2", usage: true})
		// 32 events of 2 tokens; each after two ITLs: last at 100 + 31×20 ms.
		if r.tokens != 32 || r.firstTok != 100*time.Millisecond || r.lastTok != 720*time.Millisecond {
			t.Errorf("events %d first %v last %v", r.tokens, r.firstTok, r.lastTok)
		}
		if _, comp, _, _ := r.usage(); comp != 64 {
			t.Errorf("completion tokens %d", comp)
		}
	})
}

func TestCancelMidStreamEndsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(100 * time.Millisecond), ITL: Fixed(10 * time.Millisecond), OutputTokens: Fixed(50), SlotsPerReplica: 1,
			Script: []ScriptEntry{{ID: "timed-out", Stall: &ScriptStall{AfterToken: 5, Duration: 20 * time.Minute}}}})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://fake/v1/chat/completions", strings.NewReader(chatBody(reqOpts{})))
		req.Header.Set("X-Request-ID", "timed-out")
		resp, err := f.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			t.Errorf("read error %v, want the deadline", err)
		}
		start := time.Now()
		synctest.Wait() // every goroutine of the fake is now blocked or gone
		s := servedByID(f)["timed-out"]
		if !s.Canceled || s.Tokens != 5 {
			t.Errorf("served %+v, want canceled after 5 tokens", s)
		}
		// The slot came back at once: the next request (1 slot) is not queued.
		r := do(t, f.Client(), "http://fake", reqOpts{id: "next", maxTokens: 3})
		if r.firstTok != 100*time.Millisecond || time.Since(start) != 100*time.Millisecond+20*time.Millisecond {
			t.Errorf("next request: first token %v, done after %v", r.firstTok, time.Since(start))
		}
		// Closing the body mid-stream also ends the handler.
		req, _ = http.NewRequest("POST", "http://fake/v1/chat/completions", strings.NewReader(chatBody(reqOpts{})))
		req.Header.Set("X-Request-ID", "closed")
		resp, err = f.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1)
		_, _ = resp.Body.Read(buf) // blocks until the first event
		resp.Body.Close()
		synctest.Wait()
		if s := servedByID(f)["closed"]; !s.Canceled {
			t.Errorf("closed body: served %+v, want canceled", s)
		}
	})
}

func TestCloseEndsOpenStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(Profile{TTFT: Fixed(time.Hour)})
		done := make(chan streamResult)
		go func() { done <- do(t, f.Client(), "http://fake", reqOpts{id: "open"}) }()
		time.Sleep(time.Minute)
		f.Close()
		r := <-done
		if r.tokens != 0 || r.sawDone {
			t.Errorf("stream went on after Close: %+v", r)
		}
		if _, err := f.Client().Get("http://fake/healthz"); err == nil {
			t.Errorf("request after Close succeeded")
		}
	})
}

func TestNonStreaming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(200 * time.Millisecond), ITL: Fixed(10 * time.Millisecond), OutputTokens: Fixed(64), ReasoningTokens: Fixed(3)})
		start := time.Now()
		r := do(t, f.Client(), "http://fake", reqOpts{id: "ns", noStream: true})
		// The whole answer arrives when the last token is done: 200 + 66×10 ms.
		if el := time.Since(start); el != 860*time.Millisecond {
			t.Errorf("answered after %v, want 860ms", el)
		}
		for _, want := range []string{`"object":"chat.completion"`, `"finish_reason":"stop"`, `"completion_tokens":67`, `"reasoning_content":" Let me think"`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("body lacks %s: %s", want, r.body)
			}
		}
	})
}

func TestITLPerRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Per request: every gap of a request is the same draw; requests differ.
		f := mustNew(t, Profile{TTFT: Fixed(100 * time.Millisecond), ITL: Uniform(10*time.Millisecond, 90*time.Millisecond), ITLPerRequest: true, OutputTokens: Fixed(20)})
		itls := map[time.Duration]bool{}
		for _, r := range batch(t, f, 10, 1, "per-req", reqOpts{}) {
			gaps := tokenGaps(r)
			for _, g := range gaps {
				if g != gaps[0] {
					t.Fatalf("per-request ITL: gaps %v differ within a request", gaps)
				}
			}
			itls[gaps[0]] = true
		}
		if len(itls) < 5 {
			t.Errorf("per-request ITL: only %d distinct ITLs over 10 requests", len(itls))
		}
		// Per token: gaps vary within a request.
		g := mustNew(t, Profile{TTFT: Fixed(100 * time.Millisecond), ITL: Uniform(10*time.Millisecond, 90*time.Millisecond), OutputTokens: Fixed(20)})
		gaps := tokenGaps(do(t, g.Client(), "http://fake", reqOpts{id: "per-token"}))
		distinct := map[time.Duration]bool{}
		for _, d := range gaps {
			distinct[d] = true
		}
		if len(distinct) < 10 {
			t.Errorf("per-token ITL: %d distinct gaps of %d", len(distinct), len(gaps))
		}
	})
}

// tokenGaps returns the times between consecutive token events.
func tokenGaps(r streamResult) []time.Duration {
	var at []time.Duration
	for _, c := range r.chunks {
		if len(c.parsed.Choices) > 0 && c.parsed.Choices[0].Delta.Content != nil && *c.parsed.Choices[0].Delta.Content != "" {
			at = append(at, c.at)
		}
	}
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, at[i]-at[i-1])
	}
	return gaps
}

func TestPrefixCacheScopePrefill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(400 * time.Millisecond), PrefillPer1kTokens: Fixed(100 * time.Millisecond), ITL: Fixed(time.Duration(0)),
			OutputTokens: Fixed(1), PrefixCache: PrefixCache{Scope: CacheScopePrefill, TTFTFactor: 0.1}})
		c := f.Client()
		long := strings.Repeat("Tell me about the tail of the latency distribution. ", 80) // 4,160 chars: 1,040 tokens
		r1 := do(t, c, "http://fake", reqOpts{id: "p-1", prompt: long, usage: true})
		r2 := do(t, c, "http://fake", reqOpts{id: "p-2", prompt: long, usage: true})
		// Miss: 400 + 100 × 1.04 = 504 ms. Hit: all 1,040 tokens cached, so
		// their prefill costs 10%: 400 + 100 × 1.04 × 0.1 = 410.4 ms; the
		// base 400 ms stays (scope ttft would give 50.4 ms).
		if r1.firstTok != 504*time.Millisecond || r2.firstTok != 410400*time.Microsecond {
			t.Errorf("first tokens %v then %v, want 504ms then 410.4ms", r1.firstTok, r2.firstTok)
		}
		if _, _, cached, _ := r2.usage(); cached != 1040 {
			t.Errorf("cached tokens %d", cached)
		}
	})
	if _, err := ParseProfile([]byte("prefix_cache: {scope: all}\n")); err == nil || !strings.Contains(err.Error(), `prefix_cache.scope: unknown scope "all"`) {
		t.Errorf("error %v", err)
	}
	p, err := ParseProfile([]byte("prefix_cache: {scope: prefill, ttft_factor: 0.2}\n"))
	if err != nil || p.PrefixCache.Scope != CacheScopePrefill || p.PrefixCache.TTFTFactor != 0.2 {
		t.Errorf("parsed %+v, %v", p.PrefixCache, err)
	}
}

// Close ends a request whose client never reads nor closes the body.
func TestCloseWithAnUnreadBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(Profile{TTFT: Fixed(time.Duration(0)), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(1000)})
		resp, err := f.Client().Post("http://fake/v1/chat/completions", "application/json", strings.NewReader(chatBody(reqOpts{})))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		f.Close() // returns: the handler blocked on the pipe is released
		if _, err := io.ReadAll(resp.Body); !errors.Is(err, errFakeClosed) {
			t.Errorf("read after Close: %v", err)
		}
		resp.Body.Close()
	})
}

// Durations too large for int64 nanoseconds saturate: a huge TTFT is never
// an instant one; and a request without max_tokens is still bounded.
func TestHugeValuesSaturate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(time.Duration(0)), PrefillPer1kTokens: Fixed(2000000 * time.Hour), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(1)})
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://fake/v1/chat/completions", strings.NewReader(chatBody(reqOpts{prompt: strings.Repeat("x", 8000)})))
		resp, err := f.Client().Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a TTFT of 4,000,000 h answered within an hour: %v", err)
		}
		g := mustNew(t, Profile{TTFT: Fixed(time.Duration(0)), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(1 << 40), TokensPerChunk: Fixed(1 << 16)})
		r := do(t, g.Client(), "http://fake", reqOpts{id: "no-cap", usage: true})
		if _, comp, _, _ := r.usage(); comp != maxOutputTokens || r.finish != "length" {
			t.Errorf("uncapped request: %d tokens, finish %q; want %d and length", comp, r.finish, maxOutputTokens)
		}
	})
}
