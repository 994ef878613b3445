package latencytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/protocol"

	"github.com/tailguard/tailguard/fakeprovider"
)

// Non-streamed answers in the shapes the providers document: the
// Responses object (https://platform.openai.com/docs/api-reference/responses/object),
// the Messages object (https://docs.anthropic.com/en/api/messages, "Response")
// and the chat completion object
// (https://platform.openai.com/docs/api-reference/chat/object). IDs are made up.
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

// jsonAnswer is an in-memory server that sends the head at once and the
// JSON body in two halves, at 300 ms and at 700 ms.
func jsonAnswer(status int, body string) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		_, _ = io.Copy(io.Discard, r.Body)
		pr, pw := io.Pipe()
		go func() {
			time.Sleep(300 * time.Millisecond)
			io.WriteString(pw, body[:len(body)/2])
			time.Sleep(400 * time.Millisecond)
			io.WriteString(pw, body[len(body)/2:])
			pw.Close()
		}()
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: pr, Request: r}, nil
	})}
}

// Non-streamed answers from the built-in providers (WithoutStreaming):
// Total and the tool call's clocks are the body's end, to the nanosecond;
// the token clocks stay NotObserved (no first token to time); the answer,
// tool calls and usage are read as from a stream. (The interop module's
// TestWholeAnswersThroughInstrument holds the official SDKs' calls
// through Instrument to the same figures.)
func TestWholeAnswers(t *testing.T) {
	const at = 700 * time.Millisecond
	for _, tc := range []struct {
		name          string
		api           *protocol.Protocol
		body          string
		content       string
		prompt, compl int
		cached        int
		model, finish string
	}{
		{"responses", protocol.Responses, wholeResponses, "Let me check.", 36, 87, 8, "o4-mini-2025-04-16", "completed"},
		{"messages", protocol.Messages, wholeMessages, "Let me check.", 3095, 503, 1000, "claude-sonnet-4-20250514", "tool_use"},
		{"chat", protocol.Chat, wholeChat, "Let me check.", 19, 10, 0, "gpt-4.1-2025-04-14", "tool_calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				req := Request{ID: "w-1", Messages: []Message{{Role: "user", Content: "hi"}}}
				rec := protoProvider(tc.api, jsonAnswer(200, tc.body), WithoutStreaming()).Call(context.Background(), req)
				if !rec.OK() || rec.TTFT != NotObserved || rec.FirstAnswer != NotObserved || rec.LastToken != NotObserved || rec.Total != at ||
					rec.TokenEvents != 0 || rec.Gaps.Len() != 0 || rec.Content != tc.content || rec.ToolCalls != 1 ||
					rec.FirstToolCall != at || rec.ToolArgsDone != at || rec.PromptTokens != tc.prompt || rec.CompletionTokens != tc.compl ||
					rec.CachedTokens != tc.cached || rec.Model != tc.model || rec.FinishReason != tc.finish {
					t.Errorf("built-in record: %+v", rec)
				}
			})
		})
	}
	for api, kind := range map[*protocol.Protocol]string{protocol.Chat: "openai-chat-completions (not streaming)",
		protocol.Responses: "openai-responses (not streaming)", protocol.Messages: "anthropic-messages (not streaming)"} {
		if d := protoProvider(api, jsonAnswer(200, wholeResponses), WithoutStreaming()).Describe(); d.Kind != kind {
			t.Errorf("description %+v, want kind %q", d, kind)
		}
	}
}

// Non-streamed answers that are no good answer: classified, the same from
// the built-in provider and through Instrument, never a success without
// a token. A chat body that holds no chat completion fails the built-in
// provider, which asked for one; Instrument does not judge it (see
// TestInstrumentNonStreamedCompletion).
func TestWholeBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		api     *protocol.Protocol
		body    string
		class   string
		detail  string
		lenient bool // Instrument leaves it unjudged
	}{
		{"responses failed", protocol.Responses, `{"object":"response","status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}`,
			ClassBadStream, "response failed: server_error: boom", false},
		{"responses reasoning only", protocol.Responses, `{"object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"reasoning","summary":[{"type":"summary_text","text":"hmm"}]}]}`,
			ClassEmptyAnswer, "max_output_tokens", false},
		{"responses no output", protocol.Responses, `{"object":"response","status":"completed","output":[]}`, ClassEmptyAnswer, "no answer content", false},
		{"responses arguments not JSON", protocol.Responses, `{"object":"response","status":"completed","output":[{"type":"function_call","name":"f","arguments":"{\"a\":"}]}`,
			ClassBadStream, "not JSON", false},
		{"responses refusal", protocol.Responses, `{"object":"response","status":"completed","output":[{"type":"message","content":[{"type":"refusal","refusal":"I can't"}]}]}`,
			ClassRefusal, "I can't", false},
		{"messages thinking only", protocol.Messages, `{"type":"message","content":[{"type":"thinking","thinking":"hmm"}],"stop_reason":"max_tokens"}`,
			ClassEmptyAnswer, "max_tokens", false},
		{"messages empty", protocol.Messages, `{"type":"message","content":[],"stop_reason":"end_turn"}`, ClassEmptyAnswer, "no answer content", false},
		{"messages not JSON", protocol.Messages, `{"type":"message","content":[`, ClassBadStream, "not a message object", false},
		{"chat empty", protocol.Chat, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"length"}]}`,
			ClassEmptyAnswer, `finish_reason "length"`, false},
		{"chat reasoning only", protocol.Chat, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"reasoning_content":"hmm"},"finish_reason":"length"}]}`,
			ClassEmptyAnswer, "no answer content", false},
		{"chat refusal", protocol.Chat, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't"},"finish_reason":"stop"}]}`,
			ClassRefusal, "I can't", false},
		{"chat content filter", protocol.Chat, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Here"},"finish_reason":"content_filter"}]}`,
			ClassContentFilter, "content_filter", false},
		{"chat error object", protocol.Chat, `{"error":{"message":"overloaded","type":"server_error"}}`, ClassBadStream, "server_error: overloaded", false},
		{"chat not JSON", protocol.Chat, `{"id":"chatcmpl-1","choices":[{"message":`, ClassBadStream, `not a chat completion (a JSON object with choices): {"id":"chatcmpl-1"`, true},
		{"chat a response object", protocol.Chat, `{"object":"response","status":"completed","output":[]}`, ClassBadStream, "not a chat completion (it is a Responses API response object)", true},
		{"chat a message object", protocol.Chat, `{"type":"message","content":[]}`, ClassBadStream, "not a chat completion (it is a Messages API message object)", true},
		{"chat embeddings", protocol.Chat, `{"object":"list","data":[{"embedding":[0.1]}]}`, ClassBadStream, `not a chat completion (a JSON object with choices): {"object":"list"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				req := Request{ID: "w-1", Messages: []Message{{Role: "user", Content: "hi"}}}
				built := protoProvider(tc.api, jsonAnswer(200, tc.body), WithoutStreaming()).Call(context.Background(), req)
				hc := &http.Client{Transport: Instrument(jsonAnswer(200, tc.body).Transport)}
				inst := Func(func(ctx context.Context, _ Request) error { return rawRead(ctx, hc, "/v1"+tc.api.Path("")) }).Call(context.Background(), req)
				if tc.lenient && !inst.OK() {
					t.Errorf("Instrument judged %q %q, want no verdict", inst.Err, inst.Detail)
				}
				for i, rec := range []Record{built, inst} {
					if i == 1 && tc.lenient {
						continue
					}
					if rec.Err != tc.class || !strings.Contains(rec.Detail, tc.detail) || rec.TTFT != NotObserved || rec.Total != 700*time.Millisecond {
						t.Errorf("record %d (0: built-in, 1: Instrument): got %q %q, want %q ~%q: %+v", i, rec.Err, rec.Detail, tc.class, tc.detail, rec)
					}
				}
			})
		})
	}
}

// fakeChat is an OpenAI provider on the fake f, with opts, that keeps
// each request's body and Accept header.
func fakeChat(f *fakeprovider.Fake, bodies *[]map[string]any, accepts *[]string, opts ...Option) *LLMProvider {
	hc := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			m = map[string]any{"unparsed": string(b)}
		}
		*bodies, *accepts = append(*bodies, m), append(*accepts, r.Header.Get("Accept"))
		r.Body = io.NopCloser(bytes.NewReader(b))
		return f.Transport().RoundTrip(r)
	})}
	return OpenAI("http://fake/v1", append([]Option{WithHTTPClient(hc), WithAPIKey(key)}, opts...)...)
}

// Non-streamed chat completions from the fake: the request says stream
// false with no stream_options (with or without WithoutStreamOptions, in
// either order) and accepts JSON; the answer's Total is the fake's planned
// end (the streamed answer's end, to the nanosecond), the token clocks
// stay NotObserved, and text, usage, model and finish reason are read.
// The streamed control asks for a stream with usage and ends at the same
// instant.
func TestWholeChatFromFake(t *testing.T) {
	prof := fakeprovider.Profile{TTFT: fakeprovider.Fixed(200 * time.Millisecond), ITL: fakeprovider.Fixed(10 * time.Millisecond),
		OutputTokens: fakeprovider.Fixed(16), SlotsPerReplica: 4}
	const end = 350 * time.Millisecond // the first token at 200 ms, 15 more at 10 ms
	for _, tc := range []struct {
		name   string
		opts   []Option
		stream bool
	}{
		{"streamed", nil, true},
		{"WithoutStreaming", []Option{WithoutStreaming()}, false},
		{"WithoutStreamOptions first", []Option{WithoutStreamOptions(), WithoutStreaming()}, false},
		{"WithoutStreamOptions after", []Option{WithoutStreaming(), WithoutStreamOptions()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := fakeprovider.New(prof)
				defer f.Close()
				var bodies []map[string]any
				var accepts []string
				p := fakeChat(f, &bodies, &accepts, tc.opts...)
				rec := p.Call(context.Background(), Request{ID: "cw-1", MaxTokens: 64, Messages: []Message{{Role: "user", Content: "hi"}}})
				if !rec.OK() || rec.Total != end || rec.CompletionTokens != 16 || rec.PromptTokens == 0 || !rec.UsageReported ||
					rec.FinishReason != "stop" || rec.Model != "fake-model" || rec.Content == "" || rec.ToolCalls != 0 || len(rec.Notes) != 0 {
					t.Errorf("record %+v", rec)
				}
				whole := !tc.stream
				if whole != (rec.TTFT == NotObserved && rec.FirstAnswer == NotObserved && rec.LastToken == NotObserved &&
					rec.TokenEvents == 0 && rec.Gaps.Len() == 0) {
					t.Errorf("token clocks of a whole answer (%v): TTFT %v first answer %v last token %v, %d events, %d gaps",
						whole, rec.TTFT, rec.FirstAnswer, rec.LastToken, rec.TokenEvents, rec.Gaps.Len())
				}
				if len(bodies) != 1 {
					t.Fatalf("%d requests sent, want 1: %v", len(bodies), bodies)
				}
				_, so := bodies[0]["stream_options"]
				if bodies[0]["stream"] != tc.stream || so != tc.stream || bodies[0]["max_tokens"] != 64.0 {
					t.Errorf("request body %v: want stream %v, stream_options %v", bodies[0], tc.stream, tc.stream)
				}
				if want := map[bool]string{true: "text/event-stream", false: "application/json"}[tc.stream]; accepts[0] != want {
					t.Errorf("Accept %q, want %q", accepts[0], want)
				}
				sv := f.Served()
				if len(sv) != 1 || sv[0].Status != 200 || sv[0].Protocol != "chat" || sv[0].Tokens != 16 || sv[0].FinishReason != "stop" {
					t.Errorf("served %+v", sv)
				}
				if kind := map[bool]string{true: "openai-chat-completions (streaming)", false: "openai-chat-completions (not streaming)"}[tc.stream]; p.Describe().Kind != kind {
					t.Errorf("kind %q, want %q", p.Describe().Kind, kind)
				}
			})
		})
	}
}

// A tool-call-only answer (no text) from the fake, not streamed: a
// success, its tool call at the body's end, which is the streamed
// answer's end.
func TestWholeChatToolCallFromFake(t *testing.T) {
	prof := fakeprovider.Profile{TTFT: fakeprovider.Fixed(100 * time.Millisecond), ITL: fakeprovider.Fixed(10 * time.Millisecond),
		OutputTokens: fakeprovider.Fixed(8), ToolCalls: fakeprovider.ToolCalls{Probability: 1, ArgumentsTokens: fakeprovider.Fixed(5)}}
	var recs [2]Record
	for i, opts := range [][]Option{nil, {WithoutStreaming()}} {
		synctest.Test(t, func(t *testing.T) {
			f := fakeprovider.New(prof)
			defer f.Close()
			var bodies []map[string]any
			var accepts []string
			recs[i] = fakeChat(f, &bodies, &accepts, opts...).Call(context.Background(), Request{ID: "tool-1", Messages: []Message{{Role: "user", Content: "hi"}}})
			if sv := f.Served(); len(sv) != 1 || sv[0].ToolCalls != 1 || sv[0].FinishReason != "tool_calls" {
				t.Errorf("served %+v", sv)
			}
		})
	}
	streamed, whole := recs[0], recs[1]
	if !streamed.OK() || streamed.ToolCalls != 1 || streamed.Total <= 100*time.Millisecond {
		t.Fatalf("streamed control %+v", streamed)
	}
	if !whole.OK() || whole.Total != streamed.Total || whole.ToolCalls != 1 || whole.Content != "" ||
		whole.FirstToolCall != whole.Total || whole.ToolArgsDone != whole.Total || whole.FirstAnswer != NotObserved ||
		whole.FinishReason != "tool_calls" || whole.CompletionTokens != streamed.CompletionTokens {
		t.Errorf("whole %+v\nstreamed %+v", whole, streamed)
	}
}

// Failures of non-streamed chat completions from the fake: an error
// status, a cut body, an error answer and an empty one, each classified,
// each request sent once.
func TestWholeChatFailuresFromFake(t *testing.T) {
	prof := fakeprovider.Profile{TTFT: fakeprovider.Fixed(100 * time.Millisecond), ITL: fakeprovider.Fixed(10 * time.Millisecond),
		OutputTokens: fakeprovider.Fixed(8), Script: []fakeprovider.ScriptEntry{{ID: "s503", Status: 503},
			{ID: "malformed", Fault: "malformed"}, {ID: "error_event", Fault: "error_event"}, {ID: "empty", Fault: "empty"}}}
	for _, tc := range []struct{ id, class, detail string }{
		{"s503", "http_503", ""},
		{"malformed", ClassBadStream, `not a chat completion (a JSON object with choices): {"id":"chatcmpl-broken"`},
		{"error_event", "http_500", ""},
		{"empty", ClassEmptyAnswer, "no answer content or tool call"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := fakeprovider.New(prof)
				defer f.Close()
				var bodies []map[string]any
				var accepts []string
				rec := fakeChat(f, &bodies, &accepts, WithoutStreaming()).Call(context.Background(), Request{ID: tc.id, Messages: []Message{{Role: "user", Content: "hi"}}})
				if rec.Err != tc.class || !strings.Contains(rec.Detail, tc.detail) || rec.TTFT != NotObserved || rec.Total <= 0 {
					t.Errorf("got %q %q, want %q ~%q: %+v", rec.Err, rec.Detail, tc.class, tc.detail, rec)
				}
				if len(bodies) != 1 || len(f.Served()) != 1 {
					t.Errorf("%d requests sent, %d served, want 1", len(bodies), len(f.Served()))
				}
			})
		})
	}
}

// A server's 400 that names stream_options resends a streamed request
// without it; a whole request sent none, so it is not resent.
func TestWholeChatNoStreamOptionsResend(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		sent int
	}{{nil, 2}, {[]Option{WithoutStreaming()}, 1}} {
		sent := 0
		hc := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			sent++
			return &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
				Body: io.NopCloser(strings.NewReader(`{"error":{"message":"stream_options: extra inputs are not permitted"}}`))}, nil
		})}
		rec := OpenAI("http://fake/v1", append([]Option{WithHTTPClient(hc)}, tc.opts...)...).Call(context.Background(), Request{ID: "r-1"})
		if sent != tc.sent || rec.Err != "http_400" {
			t.Errorf("options %d: %d requests sent, want %d: %+v", len(tc.opts), sent, tc.sent, rec)
		}
	}
}

// Whatever a whole chat answer echoes of the key (model, content, an
// error or a body that is no answer) is redacted.
func TestWholeChatRedacts(t *testing.T) {
	good := strings.Replace(strings.Replace(wholeChat, `"gpt-4.1-2025-04-14"`, `"`+key+`"`, 1), "Let me check.", "your key is "+key, 1)
	for _, body := range []string{good, `{"error":{"message":"bad key ` + key + `"}}`, `{"id":"` + key + `","choices":[`} {
		synctest.Test(t, func(t *testing.T) {
			rec := protoProvider(protocol.Chat, jsonAnswer(200, body), WithoutStreaming()).Call(context.Background(), Request{ID: "k-1"})
			if s := fmt.Sprintf("%+v", rec); strings.Contains(s, key) || !strings.Contains(s, "[redacted]") {
				t.Errorf("record %s", s)
			}
		})
	}
}

// Whole answers over a real loopback socket, on the provider's own
// HTTP/1.1 client and on net/http, for each protocol: the fake serves
// them unstreamed and the record has the answer, a Total and no token
// clock. (The exact timings are in the synctest tests above.)
func TestWholeAnswersRealSocket(t *testing.T) {
	f := fakeprovider.New(fakeprovider.Profile{Model: "m-1", Seed: 1, TTFT: fakeprovider.Fixed(time.Millisecond),
		ITL: fakeprovider.Fixed(time.Duration(0)), OutputTokens: fakeprovider.Fixed(6)})
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()
	for _, proto := range []struct {
		name string
		new  func(opts ...Option) *LLMProvider
	}{
		{"chat", func(opts ...Option) *LLMProvider { return OpenAI(srv.URL+"/v1", opts...) }},
		{"responses", func(opts ...Option) *LLMProvider { return Responses(srv.URL+"/v1", opts...) }},
		{"messages", func(opts ...Option) *LLMProvider { return Anthropic(srv.URL, opts...) }},
	} {
		for _, client := range []struct {
			name string
			opts []Option
		}{{"own client", nil}, {"net/http", []Option{WithNetHTTP()}}} {
			p := proto.new(append([]Option{WithModel("m-1"), WithoutStreaming()}, client.opts...)...)
			id := "whole-" + proto.name + "-" + strings.ReplaceAll(client.name, " ", "-")
			rec := p.Call(context.Background(), Request{ID: id, Messages: []Message{{Role: "user", Content: "hi"}}})
			p.CloseIdleConnections()
			if !rec.OK() || rec.Content == "" || rec.TTFT != NotObserved || rec.Total <= 0 || rec.Status != 200 {
				t.Errorf("%s, %s: record %+v", proto.name, client.name, rec)
			}
		}
	}
	if n := len(f.Served()); n != 6 {
		t.Errorf("the fake served %d requests, want 6", n)
	}
}
