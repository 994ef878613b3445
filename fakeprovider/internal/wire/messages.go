package wire

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// messagesEncoder writes Anthropic's Messages stream and answer.
type messagesEncoder struct {
	st     *State
	open   Kind
	opened int
	index  int // the open content block's index
	call   int // the open (or last) tool call, from 0
	tools  int // the answer token the tool calls start at; -1 before them
}

// newMessages is the encoder of Anthropic's Messages API.
func newMessages(st *State) Encoder {
	return &messagesEncoder{st: st, index: -1, tools: -1}
}

// fakeSignature is the signature of every thinking block.
const fakeSignature = "ZmFrZXByb3ZpZGVyIHRoaW5raW5nIHNpZ25hdHVyZQ=="

func (e *messagesEncoder) id() string { return "msg_fake_" + strconv.Itoa(e.st.Index) }

func (e *messagesEncoder) toolUseID() string { return ToolID("toolu", e.st.Index, e.call) }

// usage is the message's usage: Anthropic counts the cached prompt tokens
// apart from input_tokens.
func (e *messagesEncoder) usage(output int) obj {
	cached := e.st.CachedTokens
	return obj{"input_tokens", e.st.PromptTokens - cached, "cache_creation_input_tokens", 0,
		"cache_read_input_tokens", cached, "output_tokens", output}
}

func (e *messagesEncoder) message(content []any, stop any, usage obj) obj {
	if content == nil {
		content = []any{}
	}
	return obj{"id", e.id(), "type", "message", "role", "assistant", "model", e.st.Model, "content", content,
		"stop_reason", stop, "stop_sequence", nil, "usage", usage}
}

func stopReason(finish string) string {
	switch finish {
	case "length":
		return "max_tokens"
	case "tool_calls":
		return "tool_use"
	}
	return "end_turn"
}

func (e *messagesEncoder) Start(b []byte) []byte {
	b = sseEvent(b, "message_start", obj{"type", "message_start", "message", e.message(nil, nil, e.usage(1))})
	return sseEvent(b, "ping", obj{"type", "ping"})
}

func (e *messagesEncoder) closeBlock(b []byte) []byte {
	if e.open == KindNone {
		return b
	}
	if e.open == KindReasoning {
		b = sseEvent(b, "content_block_delta", obj{"type", "content_block_delta", "index", e.index,
			"delta", obj{"type", "signature_delta", "signature", fakeSignature}})
	}
	e.open = KindNone
	return sseEvent(b, "content_block_stop", obj{"type", "content_block_stop", "index", e.index})
}

func (e *messagesEncoder) Tokens(b []byte, from, k int, kind Kind) []byte {
	call, within, n := 0, 0, 0
	if kind == KindTool {
		call, within, n = toolCallAt(e.st, &e.tools, from)
	}
	if kind != e.open || kind == KindTool && call != e.call {
		b = e.closeBlock(b)
		e.call = call
		e.open, e.opened, e.index = kind, from, e.index+1
		var block obj
		switch kind {
		case KindReasoning:
			block = obj{"type", "thinking", "thinking", "", "signature", ""}
		case KindTool:
			block = obj{"type", "tool_use", "id", e.toolUseID(), "name", e.st.ToolName(e.call), "input", obj{}}
		default:
			block = obj{"type", "text", "text", ""}
		}
		b = sseEvent(b, "content_block_start", obj{"type", "content_block_start", "index", e.index, "content_block", block})
	}
	var delta obj
	switch kind {
	case KindReasoning:
		delta = obj{"type", "thinking_delta", "thinking", string(AppendText(nil, from, k, true))}
	case KindTool:
		delta = obj{"type", "input_json_delta", "partial_json", string(AppendArgs(nil, within, k, n))}
	default:
		delta = obj{"type", "text_delta", "text", string(AppendText(nil, from, k, false))}
	}
	return sseEvent(b, "content_block_delta", obj{"type", "content_block_delta", "index", e.index, "delta", delta})
}

func (e *messagesEncoder) End(b []byte, reasoning, content int, finish string) []byte {
	b = e.closeBlock(b)
	b = sseEvent(b, "message_delta", obj{"type", "message_delta",
		"delta", obj{"stop_reason", stopReason(finish), "stop_sequence", nil},
		"usage", obj{"output_tokens", reasoning + content}})
	return sseEvent(b, "message_stop", obj{"type", "message_stop"})
}

// errorEvent is Anthropic's mid-stream error: overloaded_error.
func (e *messagesEncoder) ErrorEvent(b []byte, _ string) []byte {
	return sseEvent(b, "error", obj{"type", "error", "error", obj{"type", "overloaded_error", "message", "Overloaded"}})
}

func (e *messagesEncoder) Malformed() []byte {
	return []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"tr\n\n")
}

func (e *messagesEncoder) Answer(reasoning, content int, finish string) any {
	a := e.st.parts(reasoning, content)
	var blocks []any
	if reasoning > 0 {
		blocks = append(blocks, obj{"type", "thinking", "thinking", a.reasoning, "signature", fakeSignature})
	}
	switch {
	case content > 0 && e.st.ToolCall:
		for call, args := range a.args {
			input := json.RawMessage(args)
			if !json.Valid(input) { // cut short by max_tokens
				input = json.RawMessage("{}")
			}
			e.call = call
			blocks = append(blocks, obj{"type", "tool_use", "id", e.toolUseID(), "name", e.st.ToolName(e.call), "input", input})
		}
	case content > 0:
		blocks = append(blocks, obj{"type", "text", "text", a.text})
	}
	return e.message(blocks, stopReason(finish), e.usage(reasoning+content))
}

// anthropicErrorType is Anthropic's error type for an HTTP status.
func anthropicErrorType(status int) string {
	switch status {
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// MessagesError is Anthropic's error body for an HTTP status:
// {"type":"error","error":{"type":...,"message":...},"request_id":...}.
// A 529's message is always "Overloaded".
func MessagesError(status int, msg, requestID string) []byte {
	if status == 529 {
		msg = "Overloaded"
	}
	b, _ := json.Marshal(obj{"type", "error", "error", obj{"type", anthropicErrorType(status), "message", msg},
		"request_id", requestID})
	return b
}

// messagesRequest is the part of an Anthropic Messages request the fake
// reads.
type messagesRequest struct {
	Model     string `json:"model"`
	MaxTokens *int   `json:"max_tokens"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	System     json.RawMessage `json:"system"`
	Stream     bool            `json:"stream"`
	Tools      json.RawMessage `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
}

// parseMessages validates a POST /v1/messages body for a fake serving
// model, whose cap on output tokens is maxOut. Errors are to be sent in
// Anthropic's shape (MessagesError).
func parseMessages(body []byte, model string, maxOut int) (Request, *Error) {
	var p Request
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return p, badRequest("", "", "invalid JSON body: %v", err)
	}
	if req.Model == "" {
		return p, badRequest("model", "", "model: Field required")
	}
	if req.Model != model {
		return p, &Error{Status: http.StatusNotFound, Type: "not_found_error", Message: "model: " + req.Model}
	}
	if req.MaxTokens == nil {
		return p, badRequest("max_tokens", "", "max_tokens: Field required")
	}
	if *req.MaxTokens < 1 || *req.MaxTokens > maxOut {
		return p, badRequest("max_tokens", "", "max_tokens: %d is outside [1, %d]", *req.MaxTokens, maxOut)
	}
	if len(req.Messages) == 0 {
		return p, badRequest("messages", "", "messages: at least one message is required")
	}
	system, err := rawText(req.System)
	if err != nil {
		return p, badRequest("system", "", "system: %v", err)
	}
	var sb strings.Builder
	sb.WriteString(system)
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return p, badRequest("", "", "messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if len(m.Content) == 0 || string(m.Content) == "null" {
			return p, badRequest("", "", "messages.%d.content: Field required", i)
		}
		text, err := rawText(m.Content)
		if err != nil {
			return p, badRequest("", "", "messages.%d.content: %v", i, err)
		}
		sb.WriteString(text)
	}
	p.setPrompt(sb.String())
	p.MaxTokens = *req.MaxTokens
	p.Stream = req.Stream
	p.IncludeUsage = true
	// tool_choice.disable_parallel_tool_use asks for one call.
	if aerr := p.setTools(toolNames(req.Tools, false), messagesToolChoice(req.ToolChoice), nil, true); aerr != nil {
		return p, aerr
	}
	return p, nil
}

// messagesToolChoice reads an Anthropic tool_choice: {"type":"auto"|
// "any"|"none"} or {"type":"tool","name":X}, each with
// "disable_parallel_tool_use": true for at most one call. Other values,
// and none at all, leave the choice to the profile.
func messagesToolChoice(raw json.RawMessage) toolChoice {
	var c toolChoiceObject
	if json.Unmarshal(raw, &c) != nil {
		return toolChoice{}
	}
	var tc toolChoice
	switch c.Type {
	case "none":
		tc = toolChoice{none: true}
	case "any":
		tc = toolChoice{required: true}
	case "tool":
		tc = toolChoice{required: true, named: true, name: c.Name}
	}
	tc.single = c.DisableParallelToolUse
	return tc
}
