package wire

import (
	"encoding/json"
	"strconv"
)

// responsesEncoder writes OpenAI's Responses API stream and answer.
type responsesEncoder struct {
	st     *State
	id     string
	seq    int
	open   Kind
	opened int // tokens sent before the open item
	sent   int // tokens sent
	index  int // the open item's output_index
	call   int // the open (or last) tool call, from 0
	tools  int // the answer token the tool calls start at; -1 before them
	output []any
}

// newResponses is the encoder of OpenAI's Responses API.
func newResponses(st *State) Encoder {
	return &responsesEncoder{st: st, id: "resp_fake_" + strconv.Itoa(st.Index), index: -1, tools: -1}
}

func (e *responsesEncoder) event(b []byte, typ string, fields ...any) []byte {
	o := append(obj{"type", typ, "sequence_number", e.seq}, fields...)
	e.seq++
	return sseEvent(b, typ, o)
}

func (e *responsesEncoder) itemID(kind Kind, index int) string {
	prefix := map[Kind]string{KindReasoning: "rs", KindText: "msg", KindTool: "fc"}[kind]
	return prefix + "_fake_" + strconv.Itoa(e.st.Index) + "_" + strconv.Itoa(index)
}

func (e *responsesEncoder) callID() string { return ToolID("call", e.st.Index, e.call) }

// response is the response object with status, output and usage (nil
// while in progress).
func (e *responsesEncoder) response(status string, output []any, usage any, errObj any, incomplete any) obj {
	var maxOut any
	if e.st.MaxTokens > 0 {
		maxOut = e.st.MaxTokens
	}
	if output == nil {
		output = []any{}
	}
	return obj{"id", e.id, "object", "response", "created_at", e.st.Created.Unix(), "status", status,
		"error", errObj, "incomplete_details", incomplete, "instructions", nil, "max_output_tokens", maxOut,
		"model", e.st.Model, "output", output, "parallel_tool_calls", !e.st.OneCall, "previous_response_id", nil,
		"reasoning", obj{"effort", nil, "summary", nil}, "store", false, "temperature", 1.0,
		"text", obj{"format", obj{"type", "text"}}, "tool_choice", "auto", "tools", []any{}, "top_p", 1.0,
		"truncation", "disabled", "usage", usage, "user", nil, "metadata", obj{}}
}

func (e *responsesEncoder) usage(reasoning, content int) obj {
	r := e.st
	cached := e.st.CachedTokens
	return obj{"input_tokens", r.PromptTokens, "input_tokens_details", obj{"cached_tokens", cached},
		"output_tokens", reasoning + content, "output_tokens_details", obj{"reasoning_tokens", reasoning},
		"total_tokens", r.PromptTokens + reasoning + content}
}

// item is an output item of kind holding text (a tool call's arguments
// for KindTool).
func (e *responsesEncoder) item(kind Kind, index int, status, text string) obj {
	id := e.itemID(kind, index)
	switch kind {
	case KindReasoning:
		summary := []any{}
		if status == "completed" {
			summary = []any{obj{"type", "summary_text", "text", text}}
		}
		return obj{"id", id, "type", "reasoning", "summary", summary}
	case KindTool:
		return obj{"id", id, "type", "function_call", "status", status, "arguments", text,
			"call_id", e.callID(), "name", e.st.ToolName(e.call)}
	}
	content := []any{}
	if status == "completed" {
		content = []any{textPart(text)}
	}
	return obj{"id", id, "type", "message", "status", status, "role", "assistant", "content", content}
}

func textPart(text string) obj {
	return obj{"type", "output_text", "text", text, "annotations", []any{}, "logprobs", []any{}}
}

func (e *responsesEncoder) Start(b []byte) []byte {
	b = e.event(b, "response.created", "response", e.response("in_progress", nil, nil, nil, nil))
	return e.event(b, "response.in_progress", "response", e.response("in_progress", nil, nil, nil, nil))
}

// text renders the open item's tokens so far.
func (e *responsesEncoder) text() string {
	n := e.sent - e.opened
	switch e.open {
	case KindReasoning:
		return string(AppendText(nil, e.opened, n, true))
	case KindTool:
		return string(AppendArgs(nil, 0, n, e.st.ToolArgs[e.call]))
	}
	return string(AppendText(nil, e.opened, n, false))
}

// closeItem appends the done events of the open item.
func (e *responsesEncoder) closeItem(b []byte) []byte {
	if e.open == KindNone {
		return b
	}
	text, id, oi := e.text(), e.itemID(e.open, e.index), e.index
	switch e.open {
	case KindReasoning:
		b = e.event(b, "response.reasoning_summary_text.done", "item_id", id, "output_index", oi, "summary_index", 0, "text", text)
		b = e.event(b, "response.reasoning_summary_part.done", "item_id", id, "output_index", oi, "summary_index", 0,
			"part", obj{"type", "summary_text", "text", text})
	case KindTool:
		b = e.event(b, "response.function_call_arguments.done", "item_id", id, "output_index", oi,
			"name", e.st.ToolName(e.call), "arguments", text)
	default:
		b = e.event(b, "response.output_text.done", "item_id", id, "output_index", oi, "content_index", 0, "text", text, "logprobs", []any{})
		b = e.event(b, "response.content_part.done", "item_id", id, "output_index", oi, "content_index", 0, "part", textPart(text))
	}
	it := e.item(e.open, oi, "completed", text)
	e.output = append(e.output, it)
	e.open = KindNone
	return e.event(b, "response.output_item.done", "output_index", oi, "item", it)
}

func (e *responsesEncoder) Tokens(b []byte, from, k int, kind Kind) []byte {
	call, within, n := 0, 0, 0
	if kind == KindTool {
		call, within, n = toolCallAt(e.st, &e.tools, from)
	}
	if kind != e.open || kind == KindTool && call != e.call {
		b = e.closeItem(b)
		e.call = call
		e.open, e.opened, e.index = kind, from, e.index+1
		id, oi := e.itemID(kind, e.index), e.index
		b = e.event(b, "response.output_item.added", "output_index", oi, "item", e.item(kind, oi, "in_progress", ""))
		switch kind {
		case KindReasoning:
			b = e.event(b, "response.reasoning_summary_part.added", "item_id", id, "output_index", oi, "summary_index", 0,
				"part", obj{"type", "summary_text", "text", ""})
		case KindText:
			b = e.event(b, "response.content_part.added", "item_id", id, "output_index", oi, "content_index", 0, "part", textPart(""))
		}
	}
	id, oi := e.itemID(kind, e.index), e.index
	e.sent = from + k
	switch kind {
	case KindReasoning:
		return e.event(b, "response.reasoning_summary_text.delta", "item_id", id, "output_index", oi, "summary_index", 0,
			"delta", string(AppendText(nil, from, k, true)))
	case KindTool:
		return e.event(b, "response.function_call_arguments.delta", "item_id", id, "output_index", oi,
			"delta", string(AppendArgs(nil, within, k, n)))
	}
	return e.event(b, "response.output_text.delta", "item_id", id, "output_index", oi, "content_index", 0,
		"delta", string(AppendText(nil, from, k, false)), "logprobs", []any{})
}

func (e *responsesEncoder) End(b []byte, reasoning, content int, finish string) []byte {
	b = e.closeItem(b)
	if finish == "length" {
		return e.event(b, "response.incomplete", "response", e.response("incomplete", e.output, e.usage(reasoning, content),
			nil, obj{"reason", "max_output_tokens"}))
	}
	return e.event(b, "response.completed", "response", e.response("completed", e.output, e.usage(reasoning, content), nil, nil))
}

// errorEvent is an error event then response.failed: the generation
// failed mid-stream.
func (e *responsesEncoder) ErrorEvent(b []byte, msg string) []byte {
	b = e.event(b, "error", "code", "server_error", "message", msg, "param", nil)
	return e.event(b, "response.failed", "response", e.response("failed", e.output, nil,
		obj{"code", "server_error", "message", msg}, nil))
}

func (e *responsesEncoder) Malformed() []byte {
	return []byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"tr\n\n")
}

func (e *responsesEncoder) Answer(reasoning, content int, finish string) any {
	a := e.st.parts(reasoning, content)
	var output []any
	index := 0
	if reasoning > 0 {
		output = append(output, e.item(KindReasoning, index, "completed", a.reasoning))
		index++
	}
	switch {
	case content > 0 && e.st.ToolCall:
		for call, args := range a.args {
			e.call = call
			output = append(output, e.item(KindTool, index+call, "completed", args))
		}
	case content > 0:
		output = append(output, e.item(KindText, index, "completed", a.text))
	}
	if finish == "length" {
		return e.response("incomplete", output, e.usage(reasoning, content), nil, obj{"reason", "max_output_tokens"})
	}
	return e.response("completed", output, e.usage(reasoning, content), nil, nil)
}

// responsesRequest is the part of a Responses API request the fake reads.
type responsesRequest struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    json.RawMessage `json:"instructions"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
	Tools           json.RawMessage `json:"tools"`
	ToolChoice      json.RawMessage `json:"tool_choice"`
	// ParallelToolCalls false asks for at most one tool call.
	ParallelToolCalls *bool `json:"parallel_tool_calls"`
}

// parseResponses validates a POST /v1/responses body for a fake serving
// model, whose cap on output tokens is maxOut. Errors are ready to send.
func parseResponses(body []byte, model string, maxOut int) (Request, *Error) {
	var p Request
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return p, badRequest("", "invalid_json", "We could not parse the JSON body of your request: %v", err)
	}
	if req.Model == "" {
		return p, badRequest("model", "missing_required_parameter", "Missing required parameter: 'model'.")
	}
	if req.Model != model {
		return p, ModelNotFound(req.Model)
	}
	if len(req.Input) == 0 || string(req.Input) == "null" {
		return p, badRequest("input", "missing_required_parameter", "Missing required parameter: 'input'.")
	}
	instructions, err := rawText(req.Instructions)
	if err != nil {
		return p, badRequest("instructions", "", "invalid instructions: %v", err)
	}
	input, err := rawText(req.Input)
	if err != nil {
		return p, badRequest("input", "", "invalid input: %v", err)
	}
	if mt := req.MaxOutputTokens; mt != nil {
		if *mt < 1 || *mt > maxOut {
			return p, badRequest("max_output_tokens", "", "max_output_tokens %d is outside [1, %d]", *mt, maxOut)
		}
		p.MaxTokens = *mt
	}
	p.setPrompt(instructions + input)
	p.Stream = req.Stream
	p.IncludeUsage = true
	if aerr := p.setTools(toolNames(req.Tools, false), openAIToolChoice(req.ToolChoice, false), req.ParallelToolCalls, false); aerr != nil {
		return p, aerr
	}
	return p, nil
}
