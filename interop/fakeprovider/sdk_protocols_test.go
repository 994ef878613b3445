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

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tailguard/tailguard/fakeprovider"
)

// These tests drive /v1/chat/completions (tool calls), /v1/responses and
// /v1/messages with the official Go clients, unchanged: openai-go and
// anthropic-sdk-go parse what the fake sends as they parse the providers'
// answers, and their timings are exact in synctest's virtual time.

const (
	protoTTFT = 200 * time.Millisecond
	protoITL  = 10 * time.Millisecond
)

// protoProfile answers with 3 reasoning tokens, then 8 answer tokens (or,
// with tools, a tool call whose arguments are 6 tokens), one per event.
func protoProfile(tools bool) fakeprovider.Profile {
	p := fakeprovider.Profile{
		TTFT:            fakeprovider.Fixed(protoTTFT),
		ITL:             fakeprovider.Fixed(protoITL),
		ReasoningTokens: fakeprovider.Fixed(3),
		OutputTokens:    fakeprovider.Fixed(8),
	}
	if tools {
		p.ToolCalls = fakeprovider.ToolCalls{Probability: 1, ArgumentsTokens: fakeprovider.Fixed(6)}
	}
	return p
}

// at is the virtual time of the event carrying token i (from 0).
func at(i int) time.Duration { return protoTTFT + time.Duration(i)*protoITL }

func TestOpenAIChatToolCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(protoProfile(true))
		t.Cleanup(f.Close)
		c := newOpenAIClient("http://fake/v1", f.Client())
		params := chatParams(0, 0)
		params.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(
			openai.FunctionDefinitionParam{Name: "get_weather"})}

		start := time.Now()
		stream := c.Chat.Completions.NewStreaming(context.Background(), params, option.WithHeader("X-Request-ID", "tool-1"))
		var acc openai.ChatCompletionAccumulator
		firstName, lastArgs := time.Duration(-1), time.Duration(-1)
		var content string
		argChunks := 0
		for stream.Next() {
			ch := stream.Current()
			acc.AddChunk(ch)
			for _, choice := range ch.Choices {
				content += choice.Delta.Content
				for _, tc := range choice.Delta.ToolCalls {
					if tc.Function.Name != "" && firstName < 0 {
						firstName = time.Since(start)
					}
					if tc.Function.Arguments != "" {
						argChunks++
						lastArgs = time.Since(start)
					}
				}
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream: %v", err)
		}
		stream.Close()
		got := acc.ChatCompletion
		if len(got.Choices) != 1 || len(got.Choices[0].Message.ToolCalls) != 1 {
			t.Fatalf("accumulated %s, want one choice with one tool call", got.RawJSON())
		}
		call := got.Choices[0].Message.ToolCalls[0]
		var args map[string]any
		if call.Function.Name != "get_weather" || json.Unmarshal([]byte(call.Function.Arguments), &args) != nil || call.ID == "" {
			t.Errorf("tool call id %q name %q arguments %q; want get_weather with a JSON object", call.ID, call.Function.Name, call.Function.Arguments)
		}
		if got.Choices[0].FinishReason != "tool_calls" || content != "" || argChunks != 6 {
			t.Errorf("finish %q, content %q, %d argument chunks; want tool_calls, no text, 6", got.Choices[0].FinishReason, content, argChunks)
		}
		// The name comes with the first argument token, after 3 reasoning tokens.
		if firstName != at(3) || lastArgs != at(8) {
			t.Errorf("name at %v, last arguments at %v; want %v and %v", firstName, lastArgs, at(3), at(8))
		}
		// (fakeprovider's TestPredictToolCall holds Predictor to the same times.)
		if u := got.Usage; u.CompletionTokens != 9 || u.CompletionTokensDetails.ReasoningTokens != 3 {
			t.Errorf("usage completion %d reasoning %d, want 9 and 3", u.CompletionTokens, u.CompletionTokensDetails.ReasoningTokens)
		}

		// Not streamed: the same call, whole.
		whole, err := c.Chat.Completions.New(context.Background(), unstreamed(params), option.WithHeader("X-Request-ID", "tool-1"))
		if err != nil {
			t.Fatal(err)
		}
		if len(whole.Choices) != 1 || len(whole.Choices[0].Message.ToolCalls) != 1 || whole.Choices[0].FinishReason != "tool_calls" {
			t.Fatalf("answer %s, want one tool call and finish tool_calls", whole.RawJSON())
		}
		if w := whole.Choices[0].Message.ToolCalls[0].Function; w.Name != call.Function.Name || w.Arguments != call.Function.Arguments {
			t.Errorf("answer's call %s(%s); the stream's %s(%s)", w.Name, w.Arguments, call.Function.Name, call.Function.Arguments)
		}
		for _, sv := range f.Served() {
			if sv.ToolCalls != 1 || sv.FinishReason != "tool_calls" || sv.Protocol != "chat" {
				t.Errorf("served %+v, want 1 tool call, finish tool_calls, protocol chat", sv)
			}
		}
	})
}

// responseRun is what openai-go saw of one streamed response.
type responseRun struct {
	types                   []string
	text, summary, args     string
	firstText, firstSummary time.Duration
	firstArgs, lastArgs     time.Duration
	final                   responses.Response
	errEvent                string
}

func streamResponses(t *testing.T, c openai.Client, params responses.ResponseNewParams, id string) responseRun {
	t.Helper()
	start := time.Now()
	stream := c.Responses.NewStreaming(context.Background(), params, option.WithHeader("X-Request-ID", id))
	defer stream.Close()
	r := responseRun{firstText: -1, firstSummary: -1, firstArgs: -1}
	seq := int64(-1)
	for stream.Next() {
		ev := stream.Current()
		now := time.Since(start)
		if ev.SequenceNumber != seq+1 {
			t.Errorf("%s: %s has sequence_number %d after %d", id, ev.Type, ev.SequenceNumber, seq)
		}
		seq = ev.SequenceNumber
		r.types = append(r.types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			if r.firstText < 0 {
				r.firstText = now
			}
			r.text += ev.Delta
		case "response.reasoning_summary_text.delta":
			if r.firstSummary < 0 {
				r.firstSummary = now
			}
			r.summary += ev.Delta
		case "response.function_call_arguments.delta":
			if r.firstArgs < 0 {
				r.firstArgs = now
			}
			r.lastArgs = now
			r.args += ev.Delta
		case "response.function_call_arguments.done":
			if ev.Arguments != r.args {
				t.Errorf("%s: arguments.done %q, the deltas gave %q", id, ev.Arguments, r.args)
			}
		case "response.completed", "response.incomplete", "response.failed":
			r.final = ev.Response
		case "error":
			r.errEvent = ev.Code + ": " + ev.Message
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("%s: stream: %v", id, err)
	}
	return r
}

func responsesParams(maxOut int64) responses.ResponseNewParams {
	p := responses.ResponseNewParams{
		Model: "fake-model",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(openaiPrompt)},
	}
	if maxOut > 0 {
		p.MaxOutputTokens = openai.Int(maxOut)
	}
	return p
}

func TestOpenAIResponses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(protoProfile(false))
		t.Cleanup(f.Close)
		c := newOpenAIClient("http://fake/v1", f.Client())

		r := streamResponses(t, c, responsesParams(0), "resp-1")
		want := []string{"response.created", "response.in_progress",
			"response.output_item.added", "response.reasoning_summary_part.added",
			"response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta",
			"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
			"response.output_item.added", "response.content_part.added"}
		for range 8 {
			want = append(want, "response.output_text.delta")
		}
		want = append(want, "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed")
		if strings.Join(r.types, " ") != strings.Join(want, " ") {
			t.Errorf("events\n%v\nwant\n%v", r.types, want)
		}
		if r.firstSummary != at(0) || r.firstText != at(3) {
			t.Errorf("first summary at %v, first text at %v; want %v and %v", r.firstSummary, r.firstText, at(0), at(3))
		}
		fin := r.final
		if fin.Status != "completed" || fin.OutputText() != r.text || r.text == "" || r.summary == "" {
			t.Errorf("final status %q text %q; deltas gave text %q summary %q", fin.Status, fin.OutputText(), r.text, r.summary)
		}
		if len(fin.Output) != 2 || fin.Output[0].Type != "reasoning" || len(fin.Output[0].Summary) != 1 || fin.Output[0].Summary[0].Text != r.summary {
			t.Errorf("final output %s, want a reasoning item with the summary, then the message", fin.RawJSON())
		}
		u := fin.Usage
		if u.InputTokens != openaiPromptTokens || u.OutputTokens != 11 || u.OutputTokensDetails.ReasoningTokens != 3 ||
			u.TotalTokens != openaiPromptTokens+11 || u.InputTokensDetails.CachedTokens != 0 {
			t.Errorf("usage %s, want input %d output 11 reasoning 3, nothing cached", u.RawJSON(), openaiPromptTokens)
		}

		// Not streamed, the same prompt again: the same text, and the
		// prompt's two blocks hit the prefix cache.
		whole, err := c.Responses.New(context.Background(), responsesParams(0), option.WithHeader("X-Request-ID", "resp-1"))
		if err != nil {
			t.Fatal(err)
		}
		if whole.Status != "completed" || whole.OutputText() != r.text || whole.Usage.InputTokensDetails.CachedTokens != openaiCachedTokens ||
			whole.Usage.OutputTokensDetails.ReasoningTokens != 3 {
			t.Errorf("answer %s, want the stream's text, %d cached tokens, 3 reasoning", whole.RawJSON(), openaiCachedTokens)
		}
		if whole.ID == fin.ID {
			t.Errorf("both attempts have response ID %q: each must have its own", whole.ID)
		}

		// max_output_tokens cuts the answer: response.incomplete.
		cut := streamResponses(t, c, responsesParams(5), "resp-cut")
		if last := cut.types[len(cut.types)-1]; last != "response.incomplete" || cut.final.Status != "incomplete" ||
			cut.final.IncompleteDetails.Reason != "max_output_tokens" || cut.final.Usage.OutputTokens != 5 {
			t.Errorf("cut: last event %s, final %s; want response.incomplete for max_output_tokens with 5 tokens", last, cut.final.RawJSON())
		}
	})
}

func TestOpenAIResponsesToolCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(protoProfile(true))
		t.Cleanup(f.Close)
		c := newOpenAIClient("http://fake/v1", f.Client())
		params := responsesParams(0)
		params.Tools = []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "search", Parameters: map[string]any{}}}}
		r := streamResponses(t, c, params, "resp-tool")
		var args map[string]any
		if json.Unmarshal([]byte(r.args), &args) != nil {
			t.Errorf("arguments %q are not a JSON object", r.args)
		}
		if r.firstArgs != at(3) || r.lastArgs != at(8) || r.text != "" {
			t.Errorf("arguments from %v to %v, text %q; want %v to %v and no text", r.firstArgs, r.lastArgs, r.text, at(3), at(8))
		}
		out := r.final.Output
		if len(out) != 2 || out[1].Type != "function_call" || out[1].Name != "search" || out[1].Arguments.OfString != r.args || out[1].CallID == "" {
			t.Errorf("final output %s, want reasoning then the function call search(%s)", r.final.RawJSON(), r.args)
		}
		whole, err := c.Responses.New(context.Background(), params, option.WithHeader("X-Request-ID", "resp-tool"))
		if err != nil {
			t.Fatal(err)
		}
		if len(whole.Output) != 2 || whole.Output[1].Type != "function_call" || whole.Output[1].Arguments.OfString != r.args {
			t.Errorf("answer %s, want the stream's function call", whole.RawJSON())
		}
	})
}

func TestOpenAIResponsesErrorEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := protoProfile(false)
		p.Script = []fakeprovider.ScriptEntry{{ID: "resp-err", Fault: fakeprovider.FaultErrorEvent, AfterToken: 4}}
		f := fakeprovider.New(p)
		t.Cleanup(f.Close)
		c := newOpenAIClient("http://fake/v1", f.Client())
		r := streamResponses(t, c, responsesParams(0), "resp-err")
		n := len(r.types)
		if n < 2 || r.types[n-2] != "error" || r.types[n-1] != "response.failed" || r.final.Status != "failed" ||
			r.final.Error.Code != "server_error" || !strings.Contains(r.errEvent, "after 4 tokens") {
			t.Errorf("events %v, final %s, error %q; want error then response.failed after 4 tokens", r.types, r.final.RawJSON(), r.errEvent)
		}
		_, err := c.Responses.New(context.Background(), responsesParams(0), option.WithHeader("X-Request-ID", "resp-err"))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
			t.Errorf("not streamed: %v, want HTTP 500", err)
		}
	})
}

func newAnthropicClient(base string, hc *http.Client, retries int) anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithHTTPClient(hc),
		aoption.WithAPIKey("test-key"), aoption.WithMaxRetries(retries))
}

func messageParams(maxTokens int64, tools bool) anthropic.MessageNewParams {
	p := anthropic.MessageNewParams{
		Model:     "fake-model",
		MaxTokens: maxTokens,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(openaiPrompt))},
	}
	if tools {
		p.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "lookup",
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{}}}}}
	}
	return p
}

// messageRun is what anthropic-sdk-go saw of one streamed message.
type messageRun struct {
	msg                     anthropic.Message
	types                   []string
	firstThinking, firstOut time.Duration
	lastOut                 time.Duration
	err                     error
}

func streamMessages(t *testing.T, c anthropic.Client, params anthropic.MessageNewParams, id string) messageRun {
	t.Helper()
	start := time.Now()
	stream := c.Messages.NewStreaming(context.Background(), params, aoption.WithHeader("X-Request-ID", id))
	defer stream.Close()
	r := messageRun{firstThinking: -1, firstOut: -1}
	for stream.Next() {
		ev := stream.Current()
		now := time.Since(start)
		if err := r.msg.Accumulate(ev); err != nil {
			t.Errorf("%s: accumulate %s: %v", id, ev.Type, err)
		}
		r.types = append(r.types, ev.Type)
		if ev.Type != "content_block_delta" {
			continue
		}
		switch ev.Delta.Type {
		case "thinking_delta":
			if r.firstThinking < 0 {
				r.firstThinking = now
			}
		case "text_delta", "input_json_delta":
			if r.firstOut < 0 {
				r.firstOut = now
			}
			r.lastOut = now
		}
	}
	r.err = stream.Err()
	return r
}

func TestAnthropicMessages(t *testing.T) {
	for _, tools := range []bool{false, true} {
		name := map[bool]string{false: "text", true: "tool_use"}[tools]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := fakeprovider.New(protoProfile(tools))
				t.Cleanup(f.Close)
				c := newAnthropicClient("http://fake", f.Client(), 0)
				r := streamMessages(t, c, messageParams(1024, tools), "msg-1")
				if r.err != nil {
					t.Fatalf("stream: %v", r.err)
				}
				m := r.msg
				if len(m.Content) != 2 || m.Content[0].Type != "thinking" || m.Content[0].Thinking == "" || m.Content[0].Signature == "" {
					t.Fatalf("message %s, want a signed thinking block then the answer", m.RawJSON())
				}
				out, last := 8, at(10)
				if tools {
					out, last = 6, at(8)
					b := m.Content[1]
					var input map[string]any
					if b.Type != "tool_use" || b.Name != "lookup" || b.ID == "" || json.Unmarshal(b.Input, &input) != nil || m.StopReason != "tool_use" {
						t.Errorf("message %s, want a tool_use block for lookup with a JSON input and stop_reason tool_use", m.RawJSON())
					}
				} else if m.Content[1].Type != "text" || m.Content[1].Text == "" || m.StopReason != "end_turn" {
					t.Errorf("message %s, want a text block and stop_reason end_turn", m.RawJSON())
				}
				if r.firstThinking != at(0) || r.firstOut != at(3) || r.lastOut != last {
					t.Errorf("thinking at %v, answer from %v to %v; want %v, %v to %v", r.firstThinking, r.firstOut, r.lastOut, at(0), at(3), last)
				}
				if u := m.Usage; u.InputTokens != openaiPromptTokens || u.CacheReadInputTokens != 0 || u.OutputTokens != int64(3+out) {
					t.Errorf("usage %s, want input %d, nothing cached, output %d", u.RawJSON(), openaiPromptTokens, 3+out)
				}
				if r.types[0] != "message_start" || r.types[len(r.types)-1] != "message_stop" {
					t.Errorf("events %v, want message_start ... message_stop", r.types)
				}

				// Not streamed, the same prompt: the same content; Anthropic
				// counts the cached tokens apart from input_tokens.
				whole, err := c.Messages.New(context.Background(), messageParams(1024, tools), aoption.WithHeader("X-Request-ID", "msg-1"))
				if err != nil {
					t.Fatal(err)
				}
				if len(whole.Content) != 2 || whole.Content[0].Thinking != m.Content[0].Thinking || whole.Content[1].Text != m.Content[1].Text ||
					string(whole.Content[1].Input) != string(m.Content[1].Input) || whole.StopReason != m.StopReason {
					t.Errorf("answer %s; the stream gave %s", whole.RawJSON(), m.RawJSON())
				}
				if u := whole.Usage; u.CacheReadInputTokens != openaiCachedTokens || u.InputTokens != openaiPromptTokens-openaiCachedTokens {
					t.Errorf("usage %s, want %d cached and %d uncached input tokens", u.RawJSON(), openaiCachedTokens, openaiPromptTokens-openaiCachedTokens)
				}
				if whole.ID == m.ID {
					t.Errorf("both attempts have message ID %q", whole.ID)
				}

				// max_tokens cuts it: stop_reason max_tokens.
				cut, err := c.Messages.New(context.Background(), messageParams(5, tools), aoption.WithHeader("X-Request-ID", "msg-cut"))
				if err != nil || cut.StopReason != "max_tokens" || cut.Usage.OutputTokens != 5 {
					t.Errorf("cut: %v, %v; want stop_reason max_tokens with 5 tokens", err, cut)
				}
			})
		})
	}
}

// TestAnthropic529Retry: a 529 scripted for the first attempt of a trace
// ID only is retried by the SDK (which resends the same headers) and the
// retry succeeds, streamed or not; a 529 on every attempt exhausts the
// retries and reaches the caller as overloaded_error.
func TestAnthropic529Retry(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "new", true: "streaming"}[stream], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := protoProfile(false)
				p.Script = []fakeprovider.ScriptEntry{
					{ID: "once", Status: 529, Attempts: 1},
					{ID: "always", Status: 529},
				}
				f := fakeprovider.New(p)
				t.Cleanup(f.Close)
				c := newAnthropicClient("http://fake", f.Client(), 2)
				call := func(id string) (anthropic.Message, error) {
					if stream {
						r := streamMessages(t, c, messageParams(64, false), id)
						return r.msg, r.err
					}
					m, err := c.Messages.New(context.Background(), messageParams(64, false), aoption.WithHeader("X-Request-ID", id))
					if m == nil {
						return anthropic.Message{}, err
					}
					return *m, err
				}
				m, err := call("once")
				if err != nil || m.StopReason != "end_turn" || len(m.Content) != 2 {
					t.Fatalf("once: %v, %s; want the retry to succeed", err, m.RawJSON())
				}
				_, err = call("always")
				var apiErr *anthropic.Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || !strings.Contains(apiErr.RawJSON(), "overloaded_error") {
					t.Fatalf("always: %v, want a 529 overloaded_error", err)
				}
				var once, always []fakeprovider.Served
				for _, sv := range f.Served() {
					switch sv.ID {
					case "once":
						once = append(once, sv)
					case "always":
						always = append(always, sv)
					}
				}
				if len(once) != 2 || once[0].Status != 529 || once[0].Fault != "http_529" || once[1].Status != 200 || once[1].Fault != "" {
					t.Errorf("once served %+v, want a 529 then a 200", once)
				}
				if len(always) != 3 {
					t.Errorf("always served %d attempts, want 3 (2 retries)", len(always))
				}
				for _, sv := range append(once, always...) {
					if sv.Protocol != "messages" {
						t.Errorf("served protocol %q, want messages", sv.Protocol)
					}
				}
			})
		})
	}
}

func TestAnthropicMidStreamError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := protoProfile(false)
		p.Script = []fakeprovider.ScriptEntry{{ID: "boom", Fault: fakeprovider.FaultErrorEvent, AfterToken: 5}}
		f := fakeprovider.New(p)
		t.Cleanup(f.Close)
		c := newAnthropicClient("http://fake", f.Client(), 0)
		r := streamMessages(t, c, messageParams(64, false), "boom")
		var apiErr *anthropic.Error
		if !errors.As(r.err, &apiErr) || !strings.Contains(apiErr.RawJSON(), "overloaded_error") {
			t.Fatalf("stream error %v, want an overloaded_error event", r.err)
		}
		if r.lastOut != at(4) || r.msg.StopReason != "" {
			t.Errorf("last answer delta at %v, stop reason %q; want %v and none", r.lastOut, r.msg.StopReason, at(4))
		}
		_, err := c.Messages.New(context.Background(), messageParams(64, false), aoption.WithHeader("X-Request-ID", "boom"))
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 {
			t.Errorf("not streamed: %v, want 529", err)
		}
	})
}

// TestSDKsOverLoopback: the same SDKs against NewServer on a real socket
// (the precise clock's path): a streamed response, a streamed message with
// a tool call, and a 529 retried to success. No timing is asserted.
func TestSDKsOverLoopback(t *testing.T) {
	p := protoProfile(false)
	p.TTFT, p.ITL = fakeprovider.Fixed(time.Millisecond), fakeprovider.Fixed(100*time.Microsecond)
	p.ToolCalls = fakeprovider.ToolCalls{Probability: 1, ArgumentsTokens: fakeprovider.Fixed(4)}
	p.Script = []fakeprovider.ScriptEntry{{ID: "loop-529", Status: 529, Attempts: 1}}
	f := fakeprovider.New(p)
	t.Cleanup(f.Close)
	srv := fakeprovider.NewServer(f)
	t.Cleanup(srv.Close)
	hc := &http.Client{Timeout: 30 * time.Second}

	oc := newOpenAIClient(srv.URL+"/v1", hc)
	r := streamResponses(t, oc, responsesParams(0), "loop-resp")
	if r.final.Status != "completed" || len(r.final.Output) != 2 || r.final.Output[1].Type != "function_call" {
		t.Errorf("response %s, want reasoning then a function call", r.final.RawJSON())
	}

	ac := anthropic.NewClient(aoption.WithBaseURL(srv.URL), aoption.WithHTTPClient(hc), aoption.WithAPIKey("test-key"),
		aoption.WithMaxRetries(1))
	m := streamMessages(t, ac, messageParams(64, true), "loop-msg")
	if m.err != nil || m.msg.StopReason != "tool_use" || len(m.msg.Content) != 2 || m.msg.Content[1].Name != "lookup" {
		t.Errorf("message %s, err %v; want a lookup tool_use", m.msg.RawJSON(), m.err)
	}
	got, err := ac.Messages.New(context.Background(), messageParams(64, false), aoption.WithHeader("X-Request-ID", "loop-529"))
	if err != nil || got.StopReason != "tool_use" {
		t.Errorf("529 then retry: %v, %v; want the retry to succeed", err, got)
	}
	n := 0
	for _, sv := range f.Served() {
		if sv.ID == "loop-529" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("loop-529 served %d times, want 2 (a 529, then the retry)", n)
	}
	hc.CloseIdleConnections()
}
