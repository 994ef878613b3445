package fakeprovider_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/tailguard/tailguard/fakeprovider"
)

// These tests drive the fake with the official Go client, openai-go, so that
// the SSE framing, the chunk and error JSON, usage and finish reasons are
// checked against what a real client parses, not against our own reader.

// openaiPrompt is 150 ASCII characters: 150/4 = 37 prompt tokens and two
// whole 64-character prefix-cache blocks, so a repeat of it reports
// min(2×16, 37) = 32 cached tokens.
var openaiPrompt = strings.Repeat("0123456789", 15)

const (
	openaiPromptTokens = 37
	openaiCachedTokens = 32
)

// newOpenAIClient returns an openai-go client for base (".../v1") over hc,
// with retries off so that each call is exactly one request.
func newOpenAIClient(base string, hc *http.Client) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithAPIKey("test-key"),
		option.WithMaxRetries(0),
	)
}

// chatParams asks for the test prompt; maxTokens > 0 sets max_tokens and
// maxCompletion > 0 sets max_completion_tokens.
func chatParams(maxTokens, maxCompletion int64) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:         "fake-model",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(openaiPrompt)},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if maxTokens > 0 {
		p.MaxTokens = openai.Int(maxTokens)
	}
	if maxCompletion > 0 {
		p.MaxCompletionTokens = openai.Int(maxCompletion)
	}
	return p
}

// unstreamed returns p without stream_options, which OpenAI allows only on
// streamed requests (the fake refuses it too).
func unstreamed(p openai.ChatCompletionNewParams) openai.ChatCompletionNewParams {
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	return p
}

// sdkStream is what openai-go saw of one streamed answer.
type sdkStream struct {
	content   string // delta.content, concatenated
	reasoning string // delta.reasoning_content (an extra field), concatenated
	// acc is the ChatCompletionAccumulator's result over every chunk.
	acc openai.ChatCompletion

	contentChunks   int // chunks with non-empty delta.content
	reasoningChunks int // chunks with non-empty delta.reasoning_content
	// lastReasoning and firstContent are chunk positions; -1 when none.
	lastReasoning, firstContent int
	// firstToken and lastToken are the client's clock since the call when
	// a token chunk came out of Next; -1 when none.
	firstToken, lastToken time.Duration

	finish       string
	finishChunks int // chunks carrying a finish_reason
	usage        openai.CompletionUsage
	usageChunks  int // chunks carrying a non-null usage
}

// streamOpenAI streams one answer through c and reads it to the end.
func streamOpenAI(t *testing.T, c openai.Client, params openai.ChatCompletionNewParams, id string) sdkStream {
	t.Helper()
	start := time.Now()
	stream := c.Chat.Completions.NewStreaming(context.Background(), params, option.WithHeader("X-Request-ID", id))
	defer stream.Close()
	s := sdkStream{lastReasoning: -1, firstContent: -1, firstToken: -1, lastToken: -1}
	var acc openai.ChatCompletionAccumulator
	for i := 0; stream.Next(); i++ {
		ch := stream.Current()
		at := time.Since(start)
		if !acc.AddChunk(ch) {
			t.Errorf("%s: accumulator rejected chunk %d: %s", id, i, ch.RawJSON())
		}
		if ch.JSON.Usage.Valid() {
			s.usage = ch.Usage
			s.usageChunks++
		}
		for _, choice := range ch.Choices {
			tok := false
			if d := choice.Delta.Content; d != "" {
				s.content += d
				s.contentChunks++
				if s.firstContent < 0 {
					s.firstContent = i
				}
				tok = true
			}
			if r := reasoningContent(t, choice.Delta.JSON.ExtraFields); r != "" {
				s.reasoning += r
				s.reasoningChunks++
				s.lastReasoning = i
				tok = true
			}
			if tok {
				if s.firstToken < 0 {
					s.firstToken = at
				}
				s.lastToken = at
			}
			if choice.FinishReason != "" {
				s.finish = choice.FinishReason
				s.finishChunks++
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("%s: stream error: %v", id, err)
	}
	s.acc = acc.ChatCompletion
	return s
}

// reasoningContent decodes the reasoning_content extra field of a delta or
// message. openai-go has no typed field for it, and marks untyped extra
// fields as not Valid, so the raw JSON is all there is.
func reasoningContent(t *testing.T, extra map[string]respjson.Field) string {
	t.Helper()
	f, ok := extra["reasoning_content"]
	if !ok || f.Raw() == respjson.Omitted || f.Raw() == respjson.Null {
		return ""
	}
	var s string
	if err := json.Unmarshal([]byte(f.Raw()), &s); err != nil {
		t.Errorf("reasoning_content %s is not a JSON string: %v", f.Raw(), err)
	}
	return s
}

// checkStream checks one streamed answer of reasoning then content tokens
// (one token per chunk) against the finish reason and usage it must report.
func checkStream(t *testing.T, id string, s sdkStream, reasoning, content int, finish string, cached int64) {
	t.Helper()
	if s.reasoningChunks != reasoning || s.contentChunks != content {
		t.Errorf("%s: %d reasoning and %d content chunks, want %d and %d", id, s.reasoningChunks, s.contentChunks, reasoning, content)
	}
	if (s.reasoning != "") != (reasoning > 0) || (s.content != "") != (content > 0) {
		t.Errorf("%s: reasoning %q, content %q; want reasoning non-empty %v, content non-empty %v",
			id, s.reasoning, s.content, reasoning > 0, content > 0)
	}
	if reasoning > 0 && content > 0 && s.lastReasoning > s.firstContent {
		t.Errorf("%s: reasoning chunk %d came after the first content chunk %d", id, s.lastReasoning, s.firstContent)
	}
	if s.finish != finish || s.finishChunks != 1 {
		t.Errorf("%s: finish_reason %q in %d chunks, want %q in 1", id, s.finish, s.finishChunks, finish)
	}
	completion := int64(reasoning + content)
	u := s.usage
	if s.usageChunks != 1 || u.PromptTokens != openaiPromptTokens || u.CompletionTokens != completion ||
		u.TotalTokens != openaiPromptTokens+completion || u.PromptTokensDetails.CachedTokens != cached ||
		u.CompletionTokensDetails.ReasoningTokens != int64(reasoning) {
		t.Errorf("%s: %d usage chunks, usage prompt %d completion %d total %d cached %d reasoning %d; "+
			"want 1 chunk, %d %d %d %d %d", id, s.usageChunks, u.PromptTokens, u.CompletionTokens, u.TotalTokens,
			u.PromptTokensDetails.CachedTokens, u.CompletionTokensDetails.ReasoningTokens,
			openaiPromptTokens, completion, openaiPromptTokens+completion, cached, reasoning)
	}
	// The accumulator must agree with the deltas: same text, finish, usage.
	if len(s.acc.Choices) != 1 {
		t.Fatalf("%s: accumulator has %d choices, want 1", id, len(s.acc.Choices))
	}
	if got := s.acc.Choices[0]; got.Message.Content != s.content || got.FinishReason != finish {
		t.Errorf("%s: accumulator content %q finish %q; deltas gave %q, want finish %q",
			id, got.Message.Content, got.FinishReason, s.content, finish)
	}
	if s.acc.Usage.CompletionTokens != completion || s.acc.Usage.PromptTokens != openaiPromptTokens {
		t.Errorf("%s: accumulator usage completion %d prompt %d, want %d and %d",
			id, s.acc.Usage.CompletionTokens, s.acc.Usage.PromptTokens, completion, openaiPromptTokens)
	}
}

// checkAnswer checks a non-streamed answer against a streamed one of the
// same request: the fake's text is deterministic, so they must match.
func checkAnswer(t *testing.T, id string, got *openai.ChatCompletion, s sdkStream, reasoning, content int, finish string, cached int64) {
	t.Helper()
	if len(got.Choices) != 1 {
		t.Fatalf("%s: %d choices, want 1: %s", id, len(got.Choices), got.RawJSON())
	}
	ch := got.Choices[0]
	if ch.Message.Content != s.content || ch.FinishReason != finish {
		t.Errorf("%s: content %q finish %q; the stream gave %q, want finish %q", id, ch.Message.Content, ch.FinishReason, s.content, finish)
	}
	if r := reasoningContent(t, ch.Message.JSON.ExtraFields); r != s.reasoning {
		t.Errorf("%s: reasoning_content %q; the stream gave %q", id, r, s.reasoning)
	}
	completion := int64(reasoning + content)
	u := got.Usage
	if u.PromptTokens != openaiPromptTokens || u.CompletionTokens != completion || u.TotalTokens != openaiPromptTokens+completion ||
		u.PromptTokensDetails.CachedTokens != cached || u.CompletionTokensDetails.ReasoningTokens != int64(reasoning) {
		t.Errorf("%s: usage prompt %d completion %d total %d cached %d reasoning %d; want %d %d %d %d %d",
			id, u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.PromptTokensDetails.CachedTokens,
			u.CompletionTokensDetails.ReasoningTokens, openaiPromptTokens, completion, openaiPromptTokens+completion, cached, reasoning)
	}
}

// reasoningProfile answers with 5 reasoning tokens, then 20 content tokens.
func reasoningProfile(ttft, itl time.Duration) fakeprovider.Profile {
	return fakeprovider.Profile{
		TTFT:            fakeprovider.Fixed(ttft),
		ITL:             fakeprovider.Fixed(itl),
		ReasoningTokens: fakeprovider.Fixed(5),
		OutputTokens:    fakeprovider.Fixed(20),
	}
}

func TestOpenAIStreamInMemory(t *testing.T) {
	const ttft, itl = 200 * time.Millisecond, 10 * time.Millisecond
	for _, tc := range []struct {
		name                     string
		why                      string
		maxTokens, maxCompletion int64
		reasoning, content       int // tokens streamed
		finish                   string
	}{
		{name: "uncapped", why: "5 reasoning + 20 content tokens, all sent",
			reasoning: 5, content: 20, finish: "stop"},
		{name: "max_completion_tokens 10", why: "reasoning counts against the cap: 10 - 5 = 5 content tokens",
			maxCompletion: 10, reasoning: 5, content: 5, finish: "length"},
		{name: "max_tokens 5", why: "the cap is spent on reasoning: no content at all",
			maxTokens: 5, reasoning: 5, content: 0, finish: "length"},
		{name: "max_tokens 3", why: "the cap cuts the reasoning itself short",
			maxTokens: 3, reasoning: 3, content: 0, finish: "length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := fakeprovider.New(reasoningProfile(ttft, itl))
				t.Cleanup(f.Close)
				c := newOpenAIClient("http://fake/v1", f.Client())
				params := chatParams(tc.maxTokens, tc.maxCompletion)
				n := time.Duration(tc.reasoning + tc.content)

				// A cold prefix cache: the first token at TTFT, then one per ITL.
				s := streamOpenAI(t, c, params, "stream-cold")
				checkStream(t, "stream-cold", s, tc.reasoning, tc.content, tc.finish, 0)
				// e.g. 25 tokens: first at 200 ms, last at 200 + 24×10 = 440 ms
				if wantFirst, wantLast := ttft, ttft+(n-1)*itl; s.firstToken != wantFirst || s.lastToken != wantLast {
					t.Errorf("stream-cold (%s): first token at %v, last at %v; want %v and %v",
						tc.why, s.firstToken, s.lastToken, wantFirst, wantLast)
				}

				// The same prompt, not streamed: the same text; its two
				// 64-character blocks are now cached.
				ref, err := c.Chat.Completions.New(context.Background(), unstreamed(params), option.WithHeader("X-Request-ID", "plain"))
				if err != nil {
					t.Fatalf("plain: %v", err)
				}
				checkAnswer(t, "plain", ref, s, tc.reasoning, tc.content, tc.finish, openaiCachedTokens)

				// Streamed again: a prefix-cache hit, TTFT 200 ms × 0.1 = 20 ms.
				s2 := streamOpenAI(t, c, params, "stream-warm")
				checkStream(t, "stream-warm", s2, tc.reasoning, tc.content, tc.finish, openaiCachedTokens)
				if s2.content != s.content || s2.reasoning != s.reasoning {
					t.Errorf("stream-warm: content %q reasoning %q; stream-cold gave %q and %q", s2.content, s2.reasoning, s.content, s.reasoning)
				}
				if wantFirst, wantLast := ttft/10, ttft/10+(n-1)*itl; s2.firstToken != wantFirst || s2.lastToken != wantLast {
					t.Errorf("stream-warm: first token at %v, last at %v; want %v and %v", s2.firstToken, s2.lastToken, wantFirst, wantLast)
				}
			})
		})
	}
}

// TestOpenAIRealServer runs the client over a loopback socket: real
// chunked encoding and flushing. No timing is judged here (real clock).
func TestOpenAIRealServer(t *testing.T) {
	f := fakeprovider.New(reasoningProfile(time.Millisecond, 0))
	t.Cleanup(f.Close)
	srv := fakeprovider.NewServer(f)
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := newOpenAIClient(srv.URL+"/v1", &http.Client{Transport: tr})

	s := streamOpenAI(t, c, chatParams(0, 0), "server-stream")
	checkStream(t, "server-stream", s, 5, 20, "stop", 0)

	ref, err := c.Chat.Completions.New(context.Background(), unstreamed(chatParams(0, 0)), option.WithHeader("X-Request-ID", "server-plain"))
	if err != nil {
		t.Fatalf("server-plain: %v", err)
	}
	checkAnswer(t, "server-plain", ref, s, 5, 20, "stop", openaiCachedTokens)

	s2 := streamOpenAI(t, c, chatParams(10, 0), "server-capped")
	checkStream(t, "server-capped", s2, 5, 5, "length", openaiCachedTokens)
}

func TestOpenAIErrorStatus(t *testing.T) {
	for _, tc := range []struct {
		name, why  string
		status     int
		typ, code  string
		retryAfter string // the Retry-After header; "" for none
	}{
		{name: "529", why: "overloaded, answered at arrival, no Retry-After",
			status: 529, typ: "overloaded_error"},
		{name: "429", why: "rate limited; Retry-After is faults.retry_after rounded up: 2.5 s → 3",
			status: 429, typ: "requests", code: "rate_limit_exceeded", retryAfter: "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := fakeprovider.New(fakeprovider.Profile{
					Faults: fakeprovider.Faults{RetryAfter: 2500 * time.Millisecond},
					Script: []fakeprovider.ScriptEntry{{Request: 0, Status: tc.status}, {Request: 1, Status: tc.status}},
				})
				t.Cleanup(f.Close)
				c := newOpenAIClient("http://fake/v1", f.Client())
				check := func(id string, err error) {
					t.Helper()
					var apiErr *openai.Error
					if !errors.As(err, &apiErr) {
						t.Fatalf("%s (%s): error %v (%T), want *openai.Error", id, tc.why, err, err)
					}
					if apiErr.StatusCode != tc.status || apiErr.Type != tc.typ || apiErr.Code != tc.code || apiErr.Message == "" {
						t.Errorf("%s (%s): status %d type %q code %q message %q; want %d %q %q and a message",
							id, tc.why, apiErr.StatusCode, apiErr.Type, apiErr.Code, apiErr.Message, tc.status, tc.typ, tc.code)
					}
					if got := apiErr.Response.Header.Get("Retry-After"); got != tc.retryAfter {
						t.Errorf("%s (%s): Retry-After %q, want %q", id, tc.why, got, tc.retryAfter)
					}
				}

				stream := c.Chat.Completions.NewStreaming(context.Background(), chatParams(0, 0), option.WithHeader("X-Request-ID", "stream"))
				if stream.Next() {
					t.Errorf("stream: got a chunk %s, want an error", stream.Current().RawJSON())
				}
				check("stream", stream.Err())
				_ = stream.Close()

				_, err := c.Chat.Completions.New(context.Background(), unstreamed(chatParams(0, 0)), option.WithHeader("X-Request-ID", "plain"))
				check("plain", err)

				// Retries are off: exactly the two requests reached the fake.
				served := f.Served()
				if len(served) != 2 {
					t.Fatalf("fake served %d requests, want 2 (no retries): %+v", len(served), served)
				}
				for _, sv := range served {
					if sv.Status != tc.status {
						t.Errorf("served %s: status %d, want %d", sv.ID, sv.Status, tc.status)
					}
				}
			})
		})
	}
}

// What openai-go sees of the fake's refusals: a 404 for a model it does
// not serve, with OpenAI's code, and the in-band error event as an error.
func TestOpenAIModelNotFoundAndErrorEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(fakeprovider.Profile{
			Script: []fakeprovider.ScriptEntry{{ID: "event", Fault: fakeprovider.FaultErrorEvent, AfterToken: 2}},
		})
		t.Cleanup(f.Close)
		c := newOpenAIClient("http://fake/v1", f.Client())

		p := unstreamed(chatParams(0, 0))
		p.Model = "gpt-4o"
		_, err := c.Chat.Completions.New(context.Background(), p)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" ||
			apiErr.Message != "The model `gpt-4o` does not exist or you do not have access to it." {
			t.Errorf("unknown model: %v, want a 404 *openai.Error with code model_not_found and OpenAI's message", err)
		}

		stream := c.Chat.Completions.NewStreaming(context.Background(), chatParams(0, 0), option.WithHeader("X-Request-ID", "event"))
		chunks := 0
		for stream.Next() {
			chunks++
		}
		_ = stream.Close()
		// openai-go raises a data: {"error":...} event as an error.
		if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "error_event") {
			t.Errorf("error event: stream error %v after %d chunks, want the injected error", err, chunks)
		}
		if chunks != 3 {
			t.Errorf("error event: %d chunks before the error, want 3 (the role chunk, then 2 tokens)", chunks)
		}
	})
}
