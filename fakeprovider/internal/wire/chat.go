package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// chatEncoder writes OpenAI's Chat Completions stream (data-only SSE
// chunks, then data: [DONE]) and its chat.completion answer.
type chatEncoder struct {
	st       *State
	prefix   []byte // `data: {"id":...,"choices":[`
	suffix   []byte // `}\n\n` or `,"usage":null}\n\n`
	started  bool   // a token chunk is written
	toolOpen int    // tool calls whose first chunk is written
}

// newChat is the encoder of OpenAI's Chat Completions API.
func newChat(st *State) Encoder {
	return &chatEncoder{st: st}
}

// Start writes nothing (a chat stream opens with its first token) but
// makes the chunks' common prefix and suffix.
func (e *chatEncoder) Start(b []byte) []byte {
	model, _ := json.Marshal(e.st.Model)
	e.prefix = []byte(`data: {"id":"chatcmpl-fake-` + strconv.Itoa(e.st.Index) +
		`","object":"chat.completion.chunk","created":` + strconv.FormatInt(e.st.Created.Unix(), 10) +
		`,"model":` + string(model) + `,"choices":[`)
	e.suffix = []byte("}\n\n")
	if e.st.IncludeUsage {
		e.suffix = []byte(`,"usage":null}` + "\n\n")
	}
	return b
}

// Tokens writes one chunk of tokens; the stream's first chunk is
// preceded by one that gives the role, as OpenAI streams it.
func (e *chatEncoder) Tokens(b []byte, from, k int, kind Kind) []byte {
	first := !e.started
	e.started = true
	if kind == KindTool {
		return e.appendToolCall(b, from-e.st.Reasoning, k, first)
	}
	if first {
		b = e.appendDelta(b, `"role":"assistant","content":""`, "")
	}
	return e.appendTokens(b, from, k, kind == KindReasoning)
}

// End writes the chunk with the finish reason, the usage chunk when the
// request asked for it, then [DONE].
func (e *chatEncoder) End(b []byte, reasoning, content int, finish string) []byte {
	if !e.started {
		b = e.appendDelta(b, `"role":"assistant","content":""`, "")
	}
	b = e.appendDelta(b, "", finish)
	if e.st.IncludeUsage {
		b = append(b, e.prefix...)
		b = append(b, `],"usage":`...)
		b = appendUsage(b, e.st.PromptTokens, reasoning+content, e.st.CachedTokens, reasoning)
		b = append(b, "}\n\n"...)
	}
	return append(b, "data: [DONE]\n\n"...)
}

// ErrorEvent is vLLM's in-band error when generation fails mid-stream:
// data: {"error":{"message":...,"type":"InternalServerError","param":null,"code":500}}
// then data: [DONE].
func (e *chatEncoder) ErrorEvent(b []byte, msg string) []byte {
	data, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": "InternalServerError", "param": nil, "code": http.StatusInternalServerError,
	}})
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\n\ndata: [DONE]\n\n"...)
}

func (e *chatEncoder) Malformed() []byte {
	return []byte("data: {\"id\":\"chatcmpl-broken\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"tr\n\n")
}

// Answer is the chat.completion object.
func (e *chatEncoder) Answer(reasoning, content int, finish string) any {
	total := reasoning + content
	var text, thought []byte
	if reasoning > 0 {
		thought = AppendText(nil, 0, reasoning, true)
	}
	text = AppendText(nil, reasoning, content, false)
	msg := map[string]any{"role": "assistant", "content": string(text)}
	if e.st.ToolCall && content > 0 {
		msg["content"] = nil
		var calls []map[string]any
		for i, args := range ToolTexts(e.st.ToolArgs, content) {
			calls = append(calls, map[string]any{"id": ToolID("call", e.st.Index, i), "type": "function",
				"function": map[string]any{"name": e.st.ToolName(i), "arguments": args}})
		}
		msg["tool_calls"] = calls
	}
	if reasoning > 0 {
		msg["reasoning_content"] = string(thought)
	}
	usage := json.RawMessage(appendUsage(nil, e.st.PromptTokens, total, e.st.CachedTokens, reasoning))
	return map[string]any{
		"id":      "chatcmpl-fake-" + strconv.Itoa(e.st.Index),
		"object":  "chat.completion",
		"created": e.st.Created.Unix(),
		"model":   e.st.Model,
		"choices": []map[string]any{{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage":   usage,
	}
}

// appendDelta appends a whole chunk whose delta holds fields (raw JSON) and
// whose finish_reason is finish ("" for null).
func (e *chatEncoder) appendDelta(b []byte, fields, finish string) []byte {
	b = append(b, e.prefix...)
	b = append(b, `{"index":0,"delta":{`...)
	b = append(b, fields...)
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = append(b, finish...)
		b = append(b, '"')
	}
	b = append(b, "}]"...)
	return append(b, e.suffix...)
}

// appendTokens appends one chunk carrying tokens [from, from+k).
func (e *chatEncoder) appendTokens(b []byte, from, k int, reasoning bool) []byte {
	b = append(b, e.prefix...)
	if reasoning {
		b = append(b, `{"index":0,"delta":{"reasoning_content":"`...)
	} else {
		b = append(b, `{"index":0,"delta":{"content":"`...)
	}
	b = AppendText(b, from, k, reasoning)
	b = append(b, `"},"logprobs":null,"finish_reason":null}]`...)
	return append(b, e.suffix...)
}

// appendToolCall appends the chunks of a tool call's argument tokens
// [from, from+k) (from counted after the reasoning): before the first,
// the chunk that names the function (with the role when it is the
// stream's first chunk), as OpenAI streams it.
func (e *chatEncoder) appendToolCall(b []byte, from, k int, first bool) []byte {
	call, within, n := ToolAt(e.st.ToolArgs, from)
	index := strconv.Itoa(call)
	if e.toolOpen <= call {
		e.toolOpen = call + 1
		name, _ := json.Marshal(e.st.ToolName(call))
		head := `"tool_calls":[{"index":` + index + `,"id":"` + ToolID("call", e.st.Index, call) +
			`","type":"function","function":{"name":` + string(name) + `,"arguments":""}}]`
		if first {
			head = `"role":"assistant","content":null,` + head
		}
		b = e.appendDelta(b, head, "")
	}
	b = append(b, e.prefix...)
	b = append(b, `{"index":0,"delta":{"tool_calls":[{"index":`+index+`,"function":{"arguments":"`...)
	b = appendEscaped(b, AppendArgs(nil, within, k, n))
	b = append(b, `"}}]},"logprobs":null,"finish_reason":null}]`...)
	return append(b, e.suffix...)
}

// appendUsage appends the usage object.
func appendUsage(b []byte, prompt, completion, cached, reasoning int) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt+completion), 10)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(cached), 10)
	b = append(b, `},"completion_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(reasoning), 10)
	return append(b, "}}"...)
}

// chatRequest is the part of an OpenAI chat-completions request the fake
// reads.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
	// Fields the fake cannot honour are rejected rather than ignored.
	N           *int  `json:"n"`
	Logprobs    *bool `json:"logprobs"`
	TopLogprobs *int  `json:"top_logprobs"`
	// Tools names the functions a tool-call answer calls (see
	// requestTools).
	Tools json.RawMessage `json:"tools"`
	// ToolChoice forbids, demands or forces tool calls (parseToolChoice).
	ToolChoice json.RawMessage `json:"tool_choice"`
	// ParallelToolCalls false asks for at most one tool call.
	ParallelToolCalls *bool `json:"parallel_tool_calls"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// parseChat validates a POST /v1/chat/completions body for a fake serving
// model, whose cap on output tokens is maxOut. Errors are ready to send.
func parseChat(body []byte, model string, maxOut int) (Request, *Error) {
	var p Request
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return p, badRequest("", "invalid_json", "We could not parse the JSON body of your request: %v", err)
	}
	if req.Model == "" {
		return p, badRequest("model", "", "you must provide a model parameter")
	}
	if req.Model != model {
		return p, ModelNotFound(req.Model)
	}
	if len(req.Messages) == 0 {
		return p, badRequest("messages", "", "[] is too short - 'messages'")
	}
	if req.StreamOptions != nil && !req.Stream {
		return p, badRequest("stream_options", "", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}
	if req.N != nil && *req.N != 1 {
		return p, badRequest("n", "", "n is %d: this fake provider generates exactly one choice (n must be 1 or absent)", *req.N)
	}
	if req.Logprobs != nil && *req.Logprobs {
		return p, badRequest("logprobs", "", "logprobs are not generated by this fake provider (send logprobs false or leave it out)")
	}
	if req.TopLogprobs != nil && *req.TopLogprobs != 0 {
		return p, badRequest("top_logprobs", "", "top_logprobs %d: logprobs are not generated by this fake provider", *req.TopLogprobs)
	}
	var sb strings.Builder
	for i, m := range req.Messages {
		text, err := messageText(m.Content)
		if err != nil {
			return p, badRequest(fmt.Sprintf("messages[%d].content", i), "", "invalid content: %v", err)
		}
		if m.Role == "" {
			return p, badRequest(fmt.Sprintf("messages[%d].role", i), "", "missing role")
		}
		sb.WriteString(text)
	}
	p.setPrompt(sb.String())
	for _, mt := range []struct {
		name string
		v    *int
	}{{"max_tokens", req.MaxTokens}, {"max_completion_tokens", req.MaxCompletionTokens}} {
		if mt.v == nil {
			continue
		}
		if *mt.v < 1 || *mt.v > maxOut {
			return p, badRequest(mt.name, "", "%s %d is outside [1, %d]", mt.name, *mt.v, maxOut)
		}
		if p.MaxTokens == 0 || *mt.v < p.MaxTokens {
			p.MaxTokens = *mt.v
		}
	}
	p.Stream = req.Stream
	p.IncludeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	if aerr := p.setTools(toolNames(req.Tools, true), openAIToolChoice(req.ToolChoice, true), req.ParallelToolCalls, false); aerr != nil {
		return p, aerr
	}
	return p, nil
}

// messageText returns a message's text: a string, an array of parts with
// text, or null.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("content must be a string or an array of parts")
	}
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	return sb.String(), nil
}
