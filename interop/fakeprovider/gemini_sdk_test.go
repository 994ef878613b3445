package fakeprovider_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/genai"

	"github.com/tailguard/tailguard/fakeprovider"
)

// These tests drive the fake's Gemini API with Google's official Go SDK,
// google.golang.org/genai, unchanged: streamed (streamGenerateContent,
// alt=sse) and whole (generateContent), with thinking and function
// calling, its timings exact in synctest's virtual time.

// newGeminiClient is a genai client of the Gemini API at base through hc,
// without retries.
func newGeminiClient(t *testing.T, base string, hc *http.Client) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "test-key", Backend: genai.BackendGeminiAPI,
		HTTPClient: hc, HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: "v1beta"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// geminiConfig asks for thought summaries, at most maxOut tokens (0: no
// cap) and, with tools, offers two functions; id is the X-Request-ID.
func geminiConfig(id string, maxOut int32, tools bool) *genai.GenerateContentConfig {
	cfg := &genai.GenerateContentConfig{
		HTTPOptions:    &genai.HTTPOptions{Headers: http.Header{"X-Request-Id": {id}}},
		ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true},
	}
	if maxOut > 0 {
		cfg.MaxOutputTokens = maxOut
	}
	if tools {
		obj := &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"query": {Type: genai.TypeString}}}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
			{Name: "get_weather", Parameters: obj}, {Name: "get_time", Parameters: obj}}}}
	}
	return cfg
}

// geminiRun is what genai saw of one streamed answer: the text, the
// thoughts, the calls, each kind's first arrival, the last chunk's
// finish reason and usage.
type geminiRun struct {
	text, thoughts          string
	calls                   []*genai.FunctionCall
	callsAt                 []time.Duration
	firstThought, firstText time.Duration
	end                     time.Duration
	finish                  genai.FinishReason
	usage                   *genai.GenerateContentResponseUsageMetadata
	err                     error
}

func streamGemini(c *genai.Client, cfg *genai.GenerateContentConfig) geminiRun {
	start := time.Now()
	r := geminiRun{firstThought: -1, firstText: -1}
	for resp, err := range c.Models.GenerateContentStream(context.Background(), "fake-model", genai.Text("hello there"), cfg) {
		now := time.Since(start)
		if err != nil {
			r.err = err
			break
		}
		if resp.UsageMetadata != nil {
			r.usage = resp.UsageMetadata
		}
		for _, cand := range resp.Candidates {
			if cand.FinishReason != "" {
				r.finish = cand.FinishReason
			}
			if cand.Content == nil {
				continue
			}
			for _, p := range cand.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					r.calls, r.callsAt = append(r.calls, p.FunctionCall), append(r.callsAt, now)
				case p.Thought && p.Text != "":
					if r.firstThought < 0 {
						r.firstThought = now
					}
					r.thoughts += p.Text
				case p.Text != "":
					if r.firstText < 0 {
						r.firstText = now
					}
					r.text += p.Text
				}
			}
		}
		r.end = now
	}
	return r
}

// genai streams the fake's answer as Gemini's: 3 thought tokens from
// 200 ms, 8 answer tokens from 230 ms, the last chunk with STOP and the
// usage (candidates 8, thoughts 3) at 300 ms; generateContent gives the
// same text whole; maxOutputTokens 5 ends it MAX_TOKENS.
func TestGeminiSDKStreamAndWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(protoProfile(false))
		t.Cleanup(f.Close)
		c := newGeminiClient(t, "http://fake/", f.Client())

		r := streamGemini(c, geminiConfig("g-1", 0, false))
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.firstThought != at(0) || r.firstText != at(3) || r.end != at(10) || r.finish != genai.FinishReasonStop {
			t.Errorf("thought at %v, text at %v, end %v, finish %q; want %v, %v, %v, STOP", r.firstThought, r.firstText, r.end, r.finish, at(0), at(3), at(10))
		}
		if r.thoughts == "" || r.text == "" || r.usage == nil || r.usage.CandidatesTokenCount != 8 || r.usage.ThoughtsTokenCount != 3 || r.usage.PromptTokenCount != 2 {
			t.Errorf("thoughts %q text %q usage %+v", r.thoughts, r.text, r.usage)
		}

		whole, err := c.Models.GenerateContent(context.Background(), "fake-model", genai.Text("hello there"), geminiConfig("g-2", 0, false))
		if err != nil {
			t.Fatal(err)
		}
		if whole.Text() != r.text || whole.Candidates[0].FinishReason != genai.FinishReasonStop || whole.UsageMetadata.ThoughtsTokenCount != 3 {
			t.Errorf("whole text %q (stream %q), finish %q, usage %+v", whole.Text(), r.text, whole.Candidates[0].FinishReason, whole.UsageMetadata)
		}

		capped := streamGemini(c, geminiConfig("g-3", 5, false))
		if capped.err != nil || capped.finish != genai.FinishReasonMaxTokens || capped.usage.CandidatesTokenCount != 2 {
			t.Errorf("capped at 5: finish %q usage %+v err %v; want MAX_TOKENS after 3 thoughts and 2 answer tokens", capped.finish, capped.usage, capped.err)
		}
		for _, sv := range f.Served() {
			if sv.Protocol != fakeprovider.ProtocolGemini {
				t.Errorf("served %+v, want protocol gemini", sv)
			}
		}
	})
}

// Parallel function calls reach genai as Gemini sends them: each whole
// (name and args) when its last argument token is generated, in the
// order of the request's tools; generateContent holds the same calls.
func TestGeminiSDKFunctionCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := protoProfile(true)
		p.ToolCalls.Parallel = fakeprovider.Fixed(2)
		f := fakeprovider.New(p)
		t.Cleanup(f.Close)
		c := newGeminiClient(t, "http://fake/", f.Client())

		r := streamGemini(c, geminiConfig("t-1", 0, true))
		if r.err != nil {
			t.Fatal(r.err)
		}
		// 3 thought tokens from 200 ms, then 6 argument tokens per call:
		// call 0 whole at token 8 (270 ms), call 1 at token 14 (330 ms).
		if len(r.calls) != 2 || r.calls[0].Name != "get_weather" || r.calls[1].Name != "get_time" ||
			r.callsAt[0] != at(8) || r.callsAt[1] != at(14) || r.text != "" || r.finish != genai.FinishReasonStop {
			t.Fatalf("calls %+v at %v, text %q, finish %q", r.calls, r.callsAt, r.text, r.finish)
		}
		if _, ok := r.calls[0].Args["query"].(string); !ok {
			t.Errorf("call 0's args %v, want a query string", r.calls[0].Args)
		}
		whole, err := c.Models.GenerateContent(context.Background(), "fake-model", genai.Text("hello there"), geminiConfig("t-2", 0, true))
		if err != nil {
			t.Fatal(err)
		}
		calls := whole.FunctionCalls()
		if len(calls) != 2 || calls[0].Name != "get_weather" || calls[1].Name != "get_time" || calls[1].Args["query"] != r.calls[1].Args["query"] {
			t.Errorf("whole calls %+v, stream's %+v", calls, r.calls)
		}
		for _, sv := range f.Served() {
			if sv.ToolCalls != 2 || sv.FinishReason != "tool_calls" {
				t.Errorf("served %+v, want 2 tool calls", sv)
			}
		}
	})
}

// The fake's errors reach genai as Google's do: a 429 up front is an
// APIError with code 429 and status RESOURCE_EXHAUSTED; an error chunk
// mid-stream ends the iteration with an APIError INTERNAL after the
// chunks before it; a wrong model is NOT_FOUND.
func TestGeminiSDKErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(fakeprovider.Profile{TTFT: fakeprovider.Fixed(protoTTFT), ITL: fakeprovider.Fixed(protoITL), OutputTokens: fakeprovider.Fixed(8),
			Script: []fakeprovider.ScriptEntry{{ID: "r429", Status: 429}, {ID: "mid", Fault: fakeprovider.FaultErrorEvent, AfterToken: 3}}})
		t.Cleanup(f.Close)
		c := newGeminiClient(t, "http://fake/", f.Client())
		var apiErr genai.APIError
		r := streamGemini(c, geminiConfig("r429", 0, false))
		if !errors.As(r.err, &apiErr) || apiErr.Code != 429 || apiErr.Status != "RESOURCE_EXHAUSTED" {
			t.Errorf("429: %v", r.err)
		}
		r = streamGemini(c, geminiConfig("mid", 0, false))
		if !errors.As(r.err, &apiErr) || apiErr.Code != 500 || apiErr.Status != "INTERNAL" || r.text == "" {
			t.Errorf("mid-stream: err %v after text %q", r.err, r.text)
		}
		_, err := c.Models.GenerateContent(context.Background(), "other-model", genai.Text("hi"), nil)
		if !errors.As(err, &apiErr) || apiErr.Code != 404 || apiErr.Status != "NOT_FOUND" {
			t.Errorf("wrong model: %v", err)
		}
	})
}
