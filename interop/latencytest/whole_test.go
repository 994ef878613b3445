package latencytest_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tailguard/tailguard/latencytest"
)

// Non-streamed answers in the shapes the providers document: the
// Responses object (https://platform.openai.com/docs/api-reference/responses/object),
// the Messages object (https://docs.anthropic.com/en/api/messages, "Response")
// and the chat completion object
// (https://platform.openai.com/docs/api-reference/chat/object). IDs are
// made up. latencytest's TestWholeAnswers holds the built-in providers'
// records of the same bodies to the same figures.
const (
	wholeResponses = `{"id":"resp_1","object":"response","created_at":1741476542,"status":"completed","error":null,"incomplete_details":null,` +
		`"model":"o4-mini-2025-04-16","output":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Weather first."}]},` +
		`{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Let me check.","annotations":[]}]},` +
		`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"location\":\"Paris\"}","status":"completed"}],` +
		`"usage":{"input_tokens":36,"input_tokens_details":{"cached_tokens":8},"output_tokens":87,"output_tokens_details":{"reasoning_tokens":64},"total_tokens":123}}`
	wholeMessages = `{"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant","model":"claude-sonnet-4-20250514",` +
		`"content":[{"type":"thinking","thinking":"Weather first.","signature":"EqQB"},{"type":"text","text":"Let me check."},` +
		`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"location":"Paris"}}],"stop_reason":"tool_use","stop_sequence":null,` +
		`"usage":{"input_tokens":2095,"cache_creation_input_tokens":0,"cache_read_input_tokens":1000,"output_tokens":503}}`
	wholeChat = `{"id":"chatcmpl-1","object":"chat.completion","created":1741569952,"model":"gpt-4.1-2025-04-14",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"Let me check.","tool_calls":[{"id":"call_1","type":"function",` +
		`"function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],` +
		`"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0}}}`
)

// sdkWhole makes one non-streaming call with the official SDK of api
// (chat for any other).
func sdkWhole(ctx context.Context, api protocol, hc *http.Client) error {
	var err error
	switch api {
	case responsesAPI:
		c := openai.NewClient(option.WithBaseURL("http://fake/v1/"), option.WithHTTPClient(hc), option.WithAPIKey(key), option.WithMaxRetries(0))
		_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "m-1", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	case messagesAPI:
		c := anthropic.NewClient(aoption.WithBaseURL("http://fake/"), aoption.WithHTTPClient(hc), aoption.WithAPIKey(key), aoption.WithMaxRetries(0))
		_, err = c.Messages.New(ctx, anthropic.MessageNewParams{Model: "m-1", MaxTokens: 100,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	default:
		c := openai.NewClient(option.WithBaseURL("http://fake/v1/"), option.WithHTTPClient(hc), option.WithAPIKey(key), option.WithMaxRetries(0))
		_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m-1",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	}
	return err
}

// The official SDKs' non-streaming calls through Instrument: Total and
// the tool call's clocks are the body's end, to the nanosecond; the token
// clocks stay NotObserved (no first token to time); the answer, tool
// calls and usage are read as from a stream.
func TestWholeAnswersThroughInstrument(t *testing.T) {
	const at = 700 * time.Millisecond
	for _, tc := range []struct {
		name          string
		api           protocol
		body          string
		content       string
		prompt, compl int
		cached        int
		model, finish string
	}{
		{"responses", responsesAPI, wholeResponses, "Let me check.", 36, 87, 8, "o4-mini-2025-04-16", "completed"},
		{"messages", messagesAPI, wholeMessages, "Let me check.", 3095, 503, 1000, "claude-sonnet-4-20250514", "tool_use"},
		{"chat", "chat", wholeChat, "Let me check.", 19, 10, 0, "gpt-4.1-2025-04-14", "tool_calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				req := latencytest.Request{ID: "w-1", Messages: []latencytest.Message{{Role: "user", Content: "hi"}}}
				hc := &http.Client{Transport: latencytest.Instrument(jsonAnswer(200, tc.body).Transport)}
				rec := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error { return sdkWhole(ctx, tc.api, hc) }).Call(context.Background(), req)
				if !rec.OK() || rec.TTFT != latencytest.NotObserved || rec.FirstAnswer != latencytest.NotObserved || rec.LastToken != latencytest.NotObserved || rec.Total != at ||
					rec.TokenEvents != 0 || rec.Gaps.Len() != 0 || rec.Content != tc.content || rec.ToolCalls != 1 ||
					rec.FirstToolCall != at || rec.ToolArgsDone != at || rec.PromptTokens != tc.prompt || rec.CompletionTokens != tc.compl ||
					rec.CachedTokens != tc.cached || rec.Model != tc.model || rec.FinishReason != tc.finish {
					t.Errorf("record through Instrument: %+v", rec)
				}
			})
		})
	}
}
