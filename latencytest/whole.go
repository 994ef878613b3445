package latencytest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// WithoutStreaming makes OpenAI, Responses and Anthropic ask for the
// whole answer at once (stream false; OpenAI sends no stream_options, as
// with WithoutStreamOptions, and no provider asks for text/event-stream)
// and time it as Instrument times a non-streamed answer: Total is the
// body's end, the token clocks (TTFT, first answer, gaps) stay
// NotObserved, as a whole answer has no first token to time, and
// FirstToolCall and ToolArgsDone are the body's end when it holds a tool
// call. Text, refusals, tool calls, usage and the finish reason are read
// as from a stream and judged alike (a tool-call-only answer is a
// success; no text and no tool call, e.g. nothing but reasoning, is
// empty_answer); a body that is not the protocol's answer object (a chat
// completion, a response, a message) fails as bad_stream, naming what it
// is. Description.Kind says "(not streaming)".
func WithoutStreaming() LLMOption {
	return llmOption(func(o *LLMProvider) { o.noStream = true })
}

// wholeProtocol tells a non-streamed answer's protocol by its JSON:
// "object":"chat.completion", "object":"response" or "type":"message".
func wholeProtocol(b []byte) (*protocol, bool) {
	var head struct {
		Object string `json:"object"`
		Type   string `json:"type"`
	}
	if json.Unmarshal(b, &head) != nil {
		return nil, false
	}
	switch {
	case head.Object == "chat.completion":
		return chatAPI, true
	case head.Object == "response":
		return responsesAPI, true
	case head.Type == "message":
		return messagesAPI, true
	}
	return nil, false
}

// decodeWhole decodes a non-streamed answer of api (its body redacted)
// into rec: a chat completion by stream.completion, a Responses or
// Messages answer alike: the token clocks stay NotObserved, a tool call's
// clocks are now. It judges it: the error class and detail, or "" for a
// good answer.
func decodeWhole(api *protocol, body []byte, rec *Record, now time.Duration) (class, detail string) {
	s := &stream{rec: rec, now: now}
	if api == chatAPI {
		if class, detail, ok := s.completion(body); ok {
			return class, detail
		}
		what := "a JSON object with choices"
		switch other, _ := wholeProtocol(body); other {
		case responsesAPI:
			what = "it is a Responses API response object"
		case messagesAPI:
			what = "it is a Messages API message object"
		}
		return ClassBadStream, "the answer is not a chat completion (" + what + "): " + truncate(string(body), 120)
	}
	answer := false // text, a refusal or a tool call
	text := func(t string) {
		if t != "" {
			s.content.WriteString(t)
			answer = true
		}
	}
	tool := func(args string, n int) (bad string) {
		if rec.ToolCalls == 0 {
			rec.FirstToolCall, rec.ToolArgsDone = now, now
		}
		rec.ToolCalls++
		answer = true
		if !validArgs(args) {
			return fmt.Sprintf("tool call %d: its arguments are not JSON: %s", n, truncate(args, 80))
		}
		return ""
	}
	var failure string
	switch api {
	case responsesAPI:
		var r struct {
			rawResponse
			Output []struct {
				Type      string          `json:"type"`
				Content   json.RawMessage `json:"content"`
				Summary   json.RawMessage `json:"summary"`
				Arguments json.RawMessage `json:"arguments"`
				Input     json.RawMessage `json:"input"`
			} `json:"output"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return ClassBadStream, "the answer is not a response object: " + err.Error()
		}
		raw, _ := json.Marshal(r.rawResponse)
		if msg := (&responsesDecoder{}).response(s, raw); msg != "" || s.rec.FinishReason == "failed" {
			failure = "response failed: " + msg
		}
		for _, it := range r.Output {
			switch it.Type {
			case "message":
				var parts []struct {
					Type    string `json:"type"`
					Text    string `json:"text"`
					Refusal string `json:"refusal"`
				}
				_ = json.Unmarshal(it.Content, &parts)
				for _, p := range parts {
					text(p.Text)
					if p.Refusal != "" {
						s.refusal.WriteString(p.Refusal)
						answer = true
					}
				}
			case "function_call", "custom_tool_call":
				args := s.str("arguments", it.Arguments)
				if it.Type == "custom_tool_call" {
					args = ""
				}
				if bad := tool(args, rec.ToolCalls+1); bad != "" && failure == "" {
					failure = bad
				}
			}
		}
	case messagesAPI:
		var m struct {
			Model      json.RawMessage `json:"model"`
			StopReason json.RawMessage `json:"stop_reason"`
			Usage      json.RawMessage `json:"usage"`
			Content    []struct {
				Type     string          `json:"type"`
				Text     string          `json:"text"`
				Thinking string          `json:"thinking"`
				Data     string          `json:"data"`
				Input    json.RawMessage `json:"input"`
			} `json:"content"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			return ClassBadStream, "the answer is not a message object: " + err.Error()
		}
		if model := s.str("model", m.Model); model != "" {
			rec.Model = model
		}
		rec.FinishReason = s.str("stop_reason", m.StopReason)
		(&messagesDecoder{}).usage(s, m.Usage)
		for _, c := range m.Content {
			switch {
			case c.Type == "text":
				text(c.Text)
			case isToolBlock(c.Type):
				if bad := tool(string(c.Input), rec.ToolCalls+1); bad != "" && failure == "" {
					failure = bad
				}
			}
		}
	default:
		return ClassBadStream, "not an answer of a known protocol"
	}
	rec.Content = strings.Clone(s.content.String())
	switch {
	case failure != "":
		return ClassBadStream, failure
	case rec.FinishReason == "content_filter":
		return ClassContentFilter, "the provider's content filter stopped the answer (content_filter): a policy outcome, not latency"
	case s.refusal.Len() > 0:
		return ClassRefusal, "refused: " + truncate(s.refusal.String(), 200)
	case !answer:
		return ClassEmptyAnswer, fmt.Sprintf("no answer content or tool call (finish reason %q)", rec.FinishReason)
	}
	return "", ""
}

// wholeProtocolOf tells the protocol of a 2xx JSON answer: by the path
// of a POST (.../responses, .../messages, .../chat/completions), else by
// its JSON (see wholeProtocol); nil when neither tells.
func wholeProtocolOf(post bool, path string, body []byte) *protocol {
	if post {
		p := strings.TrimRight(path, "/")
		switch {
		case strings.HasSuffix(p, "/responses"):
			return responsesAPI
		case strings.HasSuffix(p, "/messages"):
			return messagesAPI
		case strings.HasSuffix(p, "/chat/completions"):
			return chatAPI
		}
	}
	api, _ := wholeProtocol(body)
	return api
}
