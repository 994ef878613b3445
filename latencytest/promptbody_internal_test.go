package latencytest

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
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
