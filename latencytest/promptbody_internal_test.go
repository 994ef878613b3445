package latencytest

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// oldPromptText and oldPrefix are the prompt and nonce as they were built
// per request before bodies were prebuilt: the bytes on the wire must not
// change.
func oldPromptText(chars int) string {
	var sb strings.Builder
	sb.WriteString("Summarise the following notes in two sentences. ")
	for sb.Len() < chars {
		sb.WriteString(filler)
	}
	return sb.String()[:max(chars, 0)]
}

func oldPrefix(n nonceSource, traceID string) string {
	if n.run == "" {
		return ""
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(traceID))
	return fmt.Sprintf("[nonce %s-%016x] ", n.run, h.Sum64())
}

// Every body a Batch's request gets from a prebuilt template is the body
// encoded in full from the old prompt and nonce, for the three protocols,
// many mixes, seeds and requests, with and without nonce, max_tokens,
// temperature and stream_options; and the templates are used.
func TestPrebuiltBodiesAreTheFullEncoding(t *testing.T) {
	temp := 0.7
	providers := map[string]*LLMProvider{
		"chat":      OpenAI("http://h/v1", WithModel("m<&>")),
		"messages":  Anthropic("http://h/v1", WithModel("claude")),
		"responses": Responses("http://h/v1", WithModel("gpt")),
	}
	mixes := []Mix{DefaultMix,
		{Seed: 3, Classes: []PromptClass{{Name: "a", Weight: 0.5, PromptTokens: 1, MaxTokens: 0}, {Name: "b", Weight: 0.5, PromptTokens: 77, MaxTokens: 5}}},
		{Seed: 11, Classes: []PromptClass{{Name: "x", Weight: 1, PromptTokens: 3333, MaxTokens: 2}}},
	}
	built := 0
	for name, o := range providers {
		for mi, mix := range mixes {
			for _, noNonce := range []bool{false, true} {
				for _, maxTokens := range []int{0, 64} {
					for _, tp := range []*float64{nil, &temp} {
						b := Batch{Mix: mix, Load: Load{NoNonce: noNonce, MaxTokens: maxTokens, Temperature: tp, Label: "c4"}}
						nonce := newNonceSource(noNonce)
						for i := range 60 {
							id := b.traceID(i%3, i)
							req, class := b.request(id, i, nonce)
							c := mix.class(i)
							if class != c.Name {
								t.Fatalf("request %d: class %q, want %q", i, class, c.Name)
							}
							old := req
							old.prompt = nil
							old.Messages = []Message{{Role: "user", Content: oldPrefix(nonce, id) + oldPromptText(c.PromptTokens*4)}}
							for _, so := range []bool{true, false} {
								want, err := o.payload(old, so)
								if err != nil {
									t.Fatal(err)
								}
								got, err := o.requestBody(req, so)
								if err != nil {
									t.Fatal(err)
								}
								if !bytes.Equal(got, want) {
									t.Fatalf("%s mix %d nonce %v request %d: body\n%.300s\nwant\n%.300s", name, mi, !noNonce, i, got, want)
								}
							}
						}
					}
				}
			}
		}
		for _, tmpl := range o.bodies.m {
			if tmpl.body != nil {
				built++
			}
		}
	}
	if built == 0 {
		t.Fatal("no body was prebuilt: every request was encoded in full")
	}
}

// A request whose message is not its template's text behind a plain
// nonce (a wrapper changed it, or a replay cut it short) is encoded in
// full; a prompt that JSON escapes is prebuilt escaped.
func TestPrebuiltBodiesFallBack(t *testing.T) {
	o := OpenAI("http://h/v1")
	odd := &promptTemplate{text: "He said \"hi\" <b> & \u00e9\n\ttab \u2028 end"}
	nonce := newNonceSource(false)
	for i, content := range []string{
		nonce.prefix("a") + odd.text,                        // templated, escaped text
		nonce.prefix("b") + odd.text,                        // the template's copy
		nonce.prefix("c") + odd.text[:10],                   // cut short
		"x" + nonce.prefix("d")[1:] + odd.text,              // nonce changed, same length
		"[nonce \"quoted\"-0123456789abcdef01] " + odd.text, // a nonce that escapes
		odd.text, // no nonce
	} {
		req := Request{ID: "r", MaxTokens: 9, prompt: odd, Messages: []Message{{Role: "user", Content: content}}}
		plain := req
		plain.prompt = nil
		want, _ := o.payload(plain, true)
		got, err := o.requestBody(req, true)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("case %d: body %s (%v), want %s", i, got, err, want)
		}
		two := req
		two.Messages = append([]Message{{Role: "system", Content: "s"}}, req.Messages...)
		plain.Messages = two.Messages
		want, _ = o.payload(plain, true)
		if got, _ := o.requestBody(two, true); !bytes.Equal(got, want) {
			t.Errorf("case %d with a system message: body %s, want %s", i, got, want)
		}
	}
}

// BenchmarkMixBody: the client's work to build one request body of the
// default mix (the request, its message and its body), as before bodies
// were prebuilt ("full": nonce and prompt joined, then the whole message
// JSON-escaped) and now ("prebuilt": a copy of the class's body with the
// nonce written into place), in ns per request.
func BenchmarkMixBody(b *testing.B) {
	o := OpenAI("http://h/v1")
	batch := Batch{Mix: DefaultMix, Load: Load{MaxTokens: 64, Label: "c1"}}
	nonce := newNonceSource(false)
	b.Run("full", func(b *testing.B) {
		n := 0
		before, _ := cpuTime()
		for i := 0; b.Loop(); i++ {
			id := batch.traceID(0, i)
			req, _ := batch.request(id, i, nonce)
			req.prompt = nil
			req.Messages[0].Content = oldPrefix(nonce, id) + promptText(batch.Mix.class(i).PromptTokens*4)
			body, _ := o.payload(req, true)
			n += len(body)
		}
		after, _ := cpuTime()
		b.ReportMetric(float64(after-before)/float64(b.N), "cpu-ns/req")
		b.ReportMetric(float64(n)/float64(b.N), "bytes/req")
	})
	b.Run("prebuilt", func(b *testing.B) {
		n := 0
		before, _ := cpuTime()
		for i := 0; b.Loop(); i++ {
			req, _ := batch.request(batch.traceID(0, i), i, nonce)
			body, _ := o.requestBody(req, true)
			n += len(body)
		}
		after, _ := cpuTime()
		b.ReportMetric(float64(after-before)/float64(b.N), "cpu-ns/req")
		b.ReportMetric(float64(n)/float64(b.N), "bytes/req")
	})
}

// bodyChecker is a provider that checks, for every request, that the
// body the LLMProvider o would send (prebuilt or not) is its full
// encoding, with and without stream_options; it answers at once.
type bodyChecker struct {
	t        *testing.T
	o        *LLMProvider
	mu       sync.Mutex
	calls    int
	prebuilt int // requests that carried a template
}

func (c *bodyChecker) Call(_ context.Context, req Request) Record {
	plain := req
	plain.prompt = nil
	for _, so := range []bool{true, false} {
		want, err := c.o.payload(plain, so)
		if err != nil {
			c.t.Error(err)
		}
		got, err := c.o.requestBody(req, so)
		if err != nil || !bytes.Equal(got, want) {
			c.t.Errorf("%s: body (%v)\n%.300s\nwant\n%.300s", req.ID, err, got, want)
		}
	}
	c.mu.Lock()
	c.calls++
	if req.prompt != nil {
		c.prebuilt++
	}
	c.mu.Unlock()
	return Record{ID: req.ID, Content: "step for " + req.ID + ": \"quoted\" <&> \u00e9"}
}

// builtFrom counts o's prebuilt bodies of template t.
func builtFrom(o *LLMProvider, t *promptTemplate) int {
	n := 0
	for k, b := range o.bodies.m {
		if k.prompt == t && b.body != nil {
			n++
		}
	}
	return n
}

// A chain's first calls (its opening prompt behind the chain's nonce) and
// a replayed trace's repeated prompt sizes are sent from prebuilt bodies,
// byte for byte the full encoding (and the requests the same as before
// bodies were prebuilt), for the three protocols, with and without
// nonce, cap and temperature, an opening prompt that JSON escapes, a
// fixed prompt or a mix; a chain's later calls and a size asked once are
// encoded in full.
func TestPrebuiltChainAndReplayBodies(t *testing.T) {
	temp := 0.3
	protocols := func() map[string]*LLMProvider {
		return map[string]*LLMProvider{
			"chat":      OpenAI("http://h/v1", WithModel("m<&>")),
			"messages":  Anthropic("http://h/v1", WithModel("claude")),
			"responses": Responses("http://h/v1", WithModel("gpt")),
		}
	}
	t.Run("chains", func(t *testing.T) {
		for name, o := range protocols() {
			for ci, c := range []Chain{
				{Chains: 5, Length: 3, Concurrency: 2},
				{Chains: 4, Length: 2, Load: Load{Prompt: "He said \"plan\" <b> & \u00e9\n\tthen \u2028 stop", MaxTokens: 7, Temperature: &temp}},
				{Chains: 3, Length: 2, Load: Load{NoNonce: true}},
			} {
				check := &bodyChecker{t: t, o: o}
				cr, err := c.Run(context.Background(), check)
				if err != nil {
					t.Fatal(err)
				}
				n, _ := c.normalized()
				if check.calls != n.Chains*n.Length || check.prebuilt != n.Chains || len(cr.Chains) != n.Chains {
					t.Errorf("%s chain %d: %d calls, %d from a template (want %d, %d)", name, ci, check.calls, check.prebuilt, n.Chains*n.Length, n.Chains)
				}
				for _, ch := range cr.Chains { // the opening prompt as before: nonce, then the prompt
					if first := ch.Calls[0]; !first.OK() {
						t.Errorf("%s: %s failed", name, first.ID)
					}
				}
				if builtFrom(o, templateFor(n.Prompt)) == 0 {
					t.Errorf("%s chain %d: the opening prompt's body was not prebuilt", name, ci)
				}
			}
		}
	})
	t.Run("replay", func(t *testing.T) {
		// Sizes 5, 300 and 6000 repeat (templated), 1 and 77 are asked
		// once, 0 is the loop's own prompt; some arrivals cap the answer.
		sizes := []int{0, 5, 5, 300, 1, 300, 300, 0, 6000, 77, 6000, 5}
		caps := []int{0, 0, 9, 0, 0, 40, 0, 3, 0, 0, 600, 0}
		var replay []Arrival
		for i, n := range sizes {
			replay = append(replay, Arrival{At: time.Duration(i) * time.Millisecond, PromptTokens: n, MaxTokens: caps[i]})
		}
		longest := 6000
		for name, o := range protocols() {
			for li, loop := range []OpenLoop{
				{Replay: replay},
				{Replay: replay, Load: Load{MaxTokens: 64, Temperature: &temp}},
				{Replay: replay, Load: Load{Prompt: "fixed <prompt>", NoNonce: true}},
				{Replay: replay, Mix: Mix{Seed: 5, Classes: []PromptClass{{Name: "a", Weight: 1, PromptTokens: 33, MaxTokens: 11}}}},
			} {
				n, err := loop.normalized()
				if err != nil {
					t.Fatal(err)
				}
				b := n.batch()
				rp := newReplayPrompts(n.Replay)
				nonce := newNonceSource(n.NoNonce)
				check := &bodyChecker{t: t, o: o}
				for i, a := range n.Replay {
					id := fmt.Sprintf("%s-%04d", n.Label, i)
					req, class := rp.request(b, id, i, nonce)
					// The request as the open loop built it before replayed bodies were prebuilt.
					old, oldClass := b.request(id, i, nonce)
					if a.PromptTokens > 0 {
						old.Messages[0].Content = oldPrefix(nonce, id) + oldPromptText(longest * 4)[:a.PromptTokens*4]
						oldClass = "replay"
					}
					if a.MaxTokens > 0 {
						old.MaxTokens = a.MaxTokens
					}
					plain := req
					plain.prompt, old.prompt = nil, nil
					if class != oldClass || !reflect.DeepEqual(plain, old) {
						t.Fatalf("%s loop %d request %d: %+v class %q\nwant %+v class %q", name, li, i, plain, class, old, oldClass)
					}
					templated := req.prompt != nil && a.PromptTokens > 0
					asked := 0
					for _, n := range sizes {
						if n == a.PromptTokens {
							asked++
						}
					}
					if repeated := a.PromptTokens > 0 && asked > 1; templated != repeated {
						t.Errorf("%s loop %d request %d (%d prompt tokens): templated %v", name, li, i, a.PromptTokens, templated)
					}
					check.Call(context.Background(), req)
				}
				for _, tokens := range []int{5, 300, 6000} {
					if builtFrom(o, rp.templates[tokens]) == 0 {
						t.Errorf("%s loop %d: no body prebuilt for %d prompt tokens", name, li, tokens)
					}
				}
			}
		}
	})
}

// Every request of an open loop that replays a trace goes through
// replayPrompts: Run sends the same bodies (here to a checker).
func TestReplayRunSendsPrebuiltBodies(t *testing.T) {
	var replay []Arrival
	for i := range 20 {
		replay = append(replay, Arrival{At: time.Duration(i) * time.Millisecond, PromptTokens: 10 + 90*(i%2)})
	}
	check := &bodyChecker{t: t, o: OpenAI("http://h/v1")}
	synctest.Test(t, func(t *testing.T) {
		if _, err := (OpenLoop{Replay: replay}).Run(context.Background(), check); err != nil {
			t.Fatal(err)
		}
	})
	if check.calls != 20 || check.prebuilt != 20 {
		t.Errorf("%d calls, %d from a template", check.calls, check.prebuilt)
	}
}

// A provider keeps at most maxBodyTemplates prebuilt bodies of at most
// maxBodyBytes in all; past that, bodies are still the full encoding.
// Shared templates: one per text, none for a text over
// maxTemplateChars or once the table is full.
func TestPrebuiltBodiesBounded(t *testing.T) {
	o := OpenAI("http://h/v1")
	big := &promptTemplate{text: strings.Repeat("x", 1<<20)}
	nonce := newNonceSource(false)
	for i := range 20 { // 20 shapes of ~1 MiB: 15 fit in 16 MiB
		req := Request{ID: "r", MaxTokens: i + 1, prompt: big, Messages: []Message{{Role: "user", Content: nonce.prefix(fmt.Sprint(i)) + big.text}}}
		plain := req
		plain.prompt = nil
		want, _ := o.payload(plain, true)
		for range 2 {
			if got, err := o.requestBody(req, true); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("shape %d: not the full encoding (%v)", i, err)
			}
		}
	}
	if n, b := len(o.bodies.m), o.bodies.bytes; n != 15 || b > maxBodyBytes {
		t.Errorf("%d prebuilt bodies of %d bytes, want 15 of at most %d", n, b, maxBodyBytes)
	}
	small := OpenAI("http://h/v1")
	tmpl := promptFor(40)
	for i := range maxBodyTemplates + 10 {
		req := Request{ID: "r", MaxTokens: i + 1, prompt: tmpl, Messages: []Message{{Role: "user", Content: tmpl.text}}}
		plain := req
		plain.prompt = nil
		want, _ := small.payload(plain, false)
		if got, _ := small.requestBody(req, false); !bytes.Equal(got, want) {
			t.Fatalf("shape %d: not the full encoding", i)
		}
	}
	if len(small.bodies.m) != maxBodyTemplates {
		t.Errorf("%d prebuilt bodies, want %d", len(small.bodies.m), maxBodyTemplates)
	}

	if a, b := templateFor("same text"), templateFor(strings.Clone("same text")); a == nil || a != b {
		t.Errorf("one text, two templates: %p %p", a, b)
	}
	if templateFor(strings.Repeat("y", maxTemplateChars+1)) != nil {
		t.Error("a template for a text over maxTemplateChars")
	}
	promptMu.Lock()
	saved := sharedTemplates
	sharedTemplates = map[string]*promptTemplate{}
	promptMu.Unlock()
	defer func() {
		promptMu.Lock()
		sharedTemplates = saved
		promptMu.Unlock()
	}()
	for i := range maxSharedTemplates {
		if templateFor(fmt.Sprint(i)) == nil {
			t.Fatalf("table full at %d", i)
		}
	}
	if templateFor("one more") != nil || templateFor("7") == nil {
		t.Error("a full table: new texts get no template, known ones keep theirs")
	}
}

// benchBodies runs build b.N times and reports process CPU and bytes
// per request.
func benchBodies(b *testing.B, build func(i int) []byte) {
	n := 0
	before, _ := cpuTime()
	for i := 0; b.Loop(); i++ {
		n += len(build(i))
	}
	after, _ := cpuTime()
	b.ReportMetric(float64(after-before)/float64(b.N), "cpu-ns/req")
	b.ReportMetric(float64(n)/float64(b.N), "bytes/req")
}

// BenchmarkChainBody: the client's work to build the body of a chain's
// first call (the request and its body; the template looked up per
// chain, as runChain does), encoded in full ("full", as before) and from
// the prebuilt body ("prebuilt"), for the default opening prompt (~170
// bytes) and a long one (~24,000 bytes, the default mix's long class).
// A chain's later calls are encoded in full either way.
func BenchmarkChainBody(b *testing.B) {
	o := OpenAI("http://h/v1")
	nonce := newNonceSource(false)
	for _, p := range []struct{ name, prompt string }{{"default", defaultChainPrompt}, {"long", promptText(24000)}} {
		c, _ := Chain{Load: Load{Prompt: p.prompt}}.normalized()
		first := func(i int, prebuilt bool) []byte {
			id := fmt.Sprintf("%s%02d", c.Label, i)
			req := c.request(id+"-call00", []Message{{Role: "user", Content: nonce.prefix(id) + c.Prompt}})
			if prebuilt {
				req.prompt = templateFor(c.Prompt)
			}
			body, _ := o.requestBody(req, true)
			return body
		}
		b.Run(p.name+"/full", func(b *testing.B) { benchBodies(b, func(i int) []byte { return first(i, false) }) })
		b.Run(p.name+"/prebuilt", func(b *testing.B) { benchBodies(b, func(i int) []byte { return first(i, true) }) })
	}
}

// BenchmarkReplayBody: the client's work to build a replayed arrival's
// request and body, for a trace of the default mix's sizes (70% 200,
// 20% 1,000, 10% 6,000 prompt tokens, each repeated), as the open loop
// built it before (the Batch's request, its message replaced, encoded in
// full: "full") and now (replayPrompts, from the prebuilt body:
// "prebuilt").
func BenchmarkReplayBody(b *testing.B) {
	o := OpenAI("http://h/v1")
	var replay []Arrival
	for i := range 1000 {
		replay = append(replay, Arrival{At: time.Duration(i) * time.Millisecond, PromptTokens: DefaultMix.class(i).PromptTokens})
	}
	loop, _ := OpenLoop{Replay: replay, Load: Load{MaxTokens: 64}}.normalized()
	batch := loop.batch()
	nonce := newNonceSource(false)
	text := promptText(6000 * 4)
	b.Run("full", func(b *testing.B) {
		benchBodies(b, func(i int) []byte {
			i %= len(replay)
			id := fmt.Sprintf("%s-%04d", loop.Label, i)
			req, _ := batch.request(id, i, nonce)
			req.Messages[0].Content = nonce.prefix(id) + text[:replay[i].PromptTokens*4]
			body, _ := o.requestBody(req, true)
			return body
		})
	})
	b.Run("prebuilt", func(b *testing.B) {
		rp := newReplayPrompts(loop.Replay)
		benchBodies(b, func(i int) []byte {
			i %= len(replay)
			req, _ := rp.request(batch, fmt.Sprintf("%s-%04d", loop.Label, i), i, nonce)
			body, _ := o.requestBody(req, true)
			return body
		})
	})
}
