package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	tgprotocol "github.com/tailguard/tailguard/protocol"
)

// protocol is the API a request speaks.
type protocol uint8

const (
	protoChat      protocol = iota // POST /v1/chat/completions
	protoResponses                 // POST /v1/responses (OpenAI's Responses API)
	protoMessages                  // POST /v1/messages (Anthropic's Messages API)
)

// Protocol names as they appear in Served.Protocol: package protocol's.
const (
	ProtocolChat      = tgprotocol.NameChat
	ProtocolResponses = tgprotocol.NameResponses
	ProtocolMessages  = tgprotocol.NameMessages
)

// name is the protocol's name.
func (p protocol) name() tgprotocol.Name {
	switch p {
	case protoResponses:
		return ProtocolResponses
	case protoMessages:
		return ProtocolMessages
	}
	return ProtocolChat
}

// promptText collects the text of a JSON value, as the fake counts prompt
// tokens: every string leaf but those of keys that carry no text (type,
// role, ids, status), object keys in sorted order so that the same prompt
// always gives the same text.
func promptText(sb *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		sb.WriteString(v)
	case []any:
		for _, e := range v {
			promptText(sb, e)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			switch k {
			case "type", "role", "id", "call_id", "status", "cache_control", "signature", "media_type", "detail":
				continue
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			promptText(sb, v[k])
		}
	}
}

// rawText is promptText of a raw JSON value; "" for null or nothing.
func rawText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	var sb strings.Builder
	promptText(&sb, v)
	return sb.String(), nil
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

// parseResponses reads and validates a POST /v1/responses body.
func parseResponses(r *http.Request, model string) (parsed, *apiError) {
	p := parsed{proto: protoResponses}
	body, aerr := readBody(r)
	if aerr != nil {
		return p, aerr
	}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return p, badRequest("", "invalid_json", "We could not parse the JSON body of your request: %v", err)
	}
	if req.Model == "" {
		return p, badRequest("model", "missing_required_parameter", "Missing required parameter: 'model'.")
	}
	if req.Model != model {
		return p, modelNotFound(req.Model)
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
		if *mt < 1 || *mt > maxOutputTokens {
			return p, badRequest("max_output_tokens", "", "max_output_tokens %d is outside [1, %d]", *mt, maxOutputTokens)
		}
		p.maxTokens = *mt
	}
	p.prompt = instructions + input
	p.promptTokens = max(1, len(p.prompt)/4)
	p.stream = req.Stream
	p.includeUsage = true
	if aerr := p.setTools(req.Tools, req.ToolChoice, req.ParallelToolCalls); aerr != nil {
		return p, aerr
	}
	return p, nil
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

// parseMessages reads and validates a POST /v1/messages body. Errors are
// sent in Anthropic's shape (see writeError).
func parseMessages(r *http.Request, model string) (parsed, *apiError) {
	p := parsed{proto: protoMessages}
	body, aerr := readBody(r)
	if aerr != nil {
		return p, aerr
	}
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return p, badRequest("", "", "invalid JSON body: %v", err)
	}
	if req.Model == "" {
		return p, badRequest("model", "", "model: Field required")
	}
	if req.Model != model {
		return p, &apiError{status: http.StatusNotFound, typ: "not_found_error", message: "model: " + req.Model}
	}
	if req.MaxTokens == nil {
		return p, badRequest("max_tokens", "", "max_tokens: Field required")
	}
	if *req.MaxTokens < 1 || *req.MaxTokens > maxOutputTokens {
		return p, badRequest("max_tokens", "", "max_tokens: %d is outside [1, %d]", *req.MaxTokens, maxOutputTokens)
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
	p.prompt = sb.String()
	p.promptTokens = max(1, len(p.prompt)/4)
	p.maxTokens = *req.MaxTokens
	p.stream = req.Stream
	p.includeUsage = true
	if aerr := p.setTools(req.Tools, req.ToolChoice, nil); aerr != nil { // Messages: tool_choice.disable_parallel_tool_use
		return p, aerr
	}
	return p, nil
}

// writeError writes e in the protocol's error shape: Anthropic's for
// Messages, OpenAI's otherwise.
func writeError(w http.ResponseWriter, proto protocol, e *apiError) {
	if proto == protoMessages {
		writeAnthropicError(w, e)
		return
	}
	writeAPIError(w, e)
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

// writeAnthropicError writes Anthropic's error body
// {"type":"error","error":{"type":...,"message":...},"request_id":...}.
func writeAnthropicError(w http.ResponseWriter, e *apiError) {
	msg := e.message
	if e.status == 529 {
		msg = "Overloaded"
	}
	b, _ := json.Marshal(obj{"type", "error", "error", obj{"type", anthropicErrorType(e.status), "message", msg},
		"request_id", w.Header().Get(headerAnthropicRequestID)})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}

// headerAnthropicRequestID is the header Anthropic names each attempt by.
const headerAnthropicRequestID = "Request-Id"

// setAnthropicRateLimitHeaders sets Anthropic's anthropic-ratelimit-*
// headers for the fake's fixed quota (the same as OpenAI's: see the
// package doc, # Headers); resets are RFC 3339 instants. retry > 0 marks a
// 429: no request is left until retry has passed, and retry-after says so
// in whole seconds.
func setAnthropicRateLimitHeaders(h http.Header, req parsed, retry time.Duration) {
	now := time.Now().UTC()
	tokens := req.promptTokens + req.maxTokens
	remaining, reset := rateLimitRequests-1, time.Minute/rateLimitRequests
	if retry > 0 {
		remaining, reset = 0, retry
		h.Set("Retry-After", strconv.Itoa(max(1, int((retry+time.Second-1)/time.Second))))
	}
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	h.Set("Anthropic-Ratelimit-Requests-Limit", strconv.Itoa(rateLimitRequests))
	h.Set("Anthropic-Ratelimit-Requests-Remaining", strconv.Itoa(remaining))
	h.Set("Anthropic-Ratelimit-Requests-Reset", at(reset))
	tokenReset := at(time.Duration(min(tokens, rateLimitTokens)) * time.Minute / rateLimitTokens)
	for _, kind := range []struct {
		name string
		used int
	}{{"Tokens", tokens}, {"Input-Tokens", req.promptTokens}, {"Output-Tokens", req.maxTokens}} {
		h.Set("Anthropic-Ratelimit-"+kind.name+"-Limit", strconv.Itoa(rateLimitTokens))
		h.Set("Anthropic-Ratelimit-"+kind.name+"-Remaining", strconv.Itoa(max(0, rateLimitTokens-kind.used)))
		h.Set("Anthropic-Ratelimit-"+kind.name+"-Reset", tokenReset)
	}
}

// obj is a JSON object whose keys keep their order: alternating keys
// (strings) and values.
type obj []any

// MarshalJSON writes the object in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(o); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(o[i].(string))
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(o[i+1])
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// tokenKind is what a token is: reasoning, answer text or a tool call's
// arguments.
type tokenKind uint8

const (
	kindNone tokenKind = iota
	kindReasoning
	kindText
	kindTool
)

// appendArgs appends the raw text of a tool call's argument tokens [from,
// from+k) out of n planned: {"query":" then words then "} ({} for one
// token), so the whole is a JSON object.
func appendArgs(b []byte, from, k, n int) []byte {
	for i := from; i < from+k; i++ {
		switch {
		case n == 1:
			b = append(b, "{}"...)
		case i == 0:
			b = append(b, `{"query":"`...)
		case i == n-1:
			b = append(b, `"}`...)
		default:
			b = append(b, contentWords[i%len(contentWords)]...)
		}
	}
	return b
}

// appendEscaped appends s escaped for the inside of a JSON string (the
// fake's words hold no control characters).
func appendEscaped(b, s []byte) []byte {
	for _, c := range s {
		if c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return b
}

// answerParts is the text of an answer: reasoning tokens, then text or
// tool calls' arguments (content tokens), one string per call begun.
type answerParts struct {
	reasoning, text string
	args            []string
}

// encoder writes a Responses or Messages stream: start at admission, one
// tokens per event, then end, or errorEvent or malformed on a fault.
type encoder interface {
	start(b []byte) []byte
	tokens(b []byte, from, k int, kind tokenKind) []byte
	end(b []byte, reasoning, content int, finish string) []byte
	errorEvent(b []byte, msg string) []byte
	malformed() []byte
	answer(reasoning, content int, finish string) any
}

// sseEvent appends one named event whose data is v's JSON.
func sseEvent(b []byte, name string, v any) []byte {
	data, _ := json.Marshal(v)
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// responsesEncoder writes OpenAI's Responses API stream and answer.
type responsesEncoder struct {
	s      *session
	id     string
	seq    int
	open   tokenKind
	opened int // tokens sent before the open item
	sent   int // tokens sent
	index  int // the open item's output_index
	call   int // the open (or last) tool call, from 0
	tools  int // the answer token the tool calls start at; -1 before them
	output []any
}

func newResponsesEncoder(s *session) *responsesEncoder {
	return &responsesEncoder{s: s, id: "resp_fake_" + strconv.Itoa(s.sv.Index), index: -1, tools: -1}
}

func (e *responsesEncoder) event(b []byte, typ string, fields ...any) []byte {
	o := append(obj{"type", typ, "sequence_number", e.seq}, fields...)
	e.seq++
	return sseEvent(b, typ, o)
}

func (e *responsesEncoder) itemID(kind tokenKind, index int) string {
	prefix := map[tokenKind]string{kindReasoning: "rs", kindText: "msg", kindTool: "fc"}[kind]
	return prefix + "_fake_" + strconv.Itoa(e.s.sv.Index) + "_" + strconv.Itoa(index)
}

func (e *responsesEncoder) callID() string { return toolID("call", e.s.sv.Index, e.call) }

// toolCallAt is the tool call that stream token i (reasoning included)
// belongs to, and its place in it; tool tokens follow every reasoning
// token, so the first one seen marks where the calls start.
func toolCallAt(pl *plan, start *int, i int) (call, within, n int) {
	if *start < 0 {
		*start = i
	}
	return pl.toolAt(i - *start)
}

// response is the response object with status, output and usage (nil
// while in progress).
func (e *responsesEncoder) response(status string, output []any, usage any, errObj any, incomplete any) obj {
	var maxOut any
	if e.s.req.maxTokens > 0 {
		maxOut = e.s.req.maxTokens
	}
	if output == nil {
		output = []any{}
	}
	return obj{"id", e.id, "object", "response", "created_at", e.s.sv.Arrival.Unix(), "status", status,
		"error", errObj, "incomplete_details", incomplete, "instructions", nil, "max_output_tokens", maxOut,
		"model", e.s.f.p.Model, "output", output, "parallel_tool_calls", !e.s.req.oneCall, "previous_response_id", nil,
		"reasoning", obj{"effort", nil, "summary", nil}, "store", false, "temperature", 1.0,
		"text", obj{"format", obj{"type", "text"}}, "tool_choice", "auto", "tools", []any{}, "top_p", 1.0,
		"truncation", "disabled", "usage", usage, "user", nil, "metadata", obj{}}
}

func (e *responsesEncoder) usage(reasoning, content int) obj {
	r := e.s.req
	cached := e.s.sv.CachedTokens
	return obj{"input_tokens", r.promptTokens, "input_tokens_details", obj{"cached_tokens", cached},
		"output_tokens", reasoning + content, "output_tokens_details", obj{"reasoning_tokens", reasoning},
		"total_tokens", r.promptTokens + reasoning + content}
}

// item is an output item of kind holding text (a tool call's arguments
// for kindTool).
func (e *responsesEncoder) item(kind tokenKind, index int, status, text string) obj {
	id := e.itemID(kind, index)
	switch kind {
	case kindReasoning:
		summary := []any{}
		if status == "completed" {
			summary = []any{obj{"type", "summary_text", "text", text}}
		}
		return obj{"id", id, "type", "reasoning", "summary", summary}
	case kindTool:
		return obj{"id", id, "type", "function_call", "status", status, "arguments", text,
			"call_id", e.callID(), "name", e.s.req.toolName(e.call)}
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

func (e *responsesEncoder) start(b []byte) []byte {
	b = e.event(b, "response.created", "response", e.response("in_progress", nil, nil, nil, nil))
	return e.event(b, "response.in_progress", "response", e.response("in_progress", nil, nil, nil, nil))
}

// text renders the open item's tokens so far.
func (e *responsesEncoder) text() string {
	n := e.sent - e.opened
	switch e.open {
	case kindReasoning:
		return string(appendText(nil, e.opened, n, true))
	case kindTool:
		return string(appendArgs(nil, 0, n, e.s.pl.toolArgs[e.call]))
	}
	return string(appendText(nil, e.opened, n, false))
}

// closeItem appends the done events of the open item.
func (e *responsesEncoder) closeItem(b []byte) []byte {
	if e.open == kindNone {
		return b
	}
	text, id, oi := e.text(), e.itemID(e.open, e.index), e.index
	switch e.open {
	case kindReasoning:
		b = e.event(b, "response.reasoning_summary_text.done", "item_id", id, "output_index", oi, "summary_index", 0, "text", text)
		b = e.event(b, "response.reasoning_summary_part.done", "item_id", id, "output_index", oi, "summary_index", 0,
			"part", obj{"type", "summary_text", "text", text})
	case kindTool:
		b = e.event(b, "response.function_call_arguments.done", "item_id", id, "output_index", oi,
			"name", e.s.req.toolName(e.call), "arguments", text)
	default:
		b = e.event(b, "response.output_text.done", "item_id", id, "output_index", oi, "content_index", 0, "text", text, "logprobs", []any{})
		b = e.event(b, "response.content_part.done", "item_id", id, "output_index", oi, "content_index", 0, "part", textPart(text))
	}
	it := e.item(e.open, oi, "completed", text)
	e.output = append(e.output, it)
	e.open = kindNone
	return e.event(b, "response.output_item.done", "output_index", oi, "item", it)
}

func (e *responsesEncoder) tokens(b []byte, from, k int, kind tokenKind) []byte {
	call, within, n := 0, 0, 0
	if kind == kindTool {
		call, within, n = toolCallAt(e.s.pl, &e.tools, from)
	}
	if kind != e.open || kind == kindTool && call != e.call {
		b = e.closeItem(b)
		e.call = call
		e.open, e.opened, e.index = kind, from, e.index+1
		id, oi := e.itemID(kind, e.index), e.index
		b = e.event(b, "response.output_item.added", "output_index", oi, "item", e.item(kind, oi, "in_progress", ""))
		switch kind {
		case kindReasoning:
			b = e.event(b, "response.reasoning_summary_part.added", "item_id", id, "output_index", oi, "summary_index", 0,
				"part", obj{"type", "summary_text", "text", ""})
		case kindText:
			b = e.event(b, "response.content_part.added", "item_id", id, "output_index", oi, "content_index", 0, "part", textPart(""))
		}
	}
	id, oi := e.itemID(kind, e.index), e.index
	e.sent = from + k
	switch kind {
	case kindReasoning:
		return e.event(b, "response.reasoning_summary_text.delta", "item_id", id, "output_index", oi, "summary_index", 0,
			"delta", string(appendText(nil, from, k, true)))
	case kindTool:
		return e.event(b, "response.function_call_arguments.delta", "item_id", id, "output_index", oi,
			"delta", string(appendArgs(nil, within, k, n)))
	}
	return e.event(b, "response.output_text.delta", "item_id", id, "output_index", oi, "content_index", 0,
		"delta", string(appendText(nil, from, k, false)), "logprobs", []any{})
}

func (e *responsesEncoder) end(b []byte, reasoning, content int, finish string) []byte {
	b = e.closeItem(b)
	if finish == "length" {
		return e.event(b, "response.incomplete", "response", e.response("incomplete", e.output, e.usage(reasoning, content),
			nil, obj{"reason", "max_output_tokens"}))
	}
	return e.event(b, "response.completed", "response", e.response("completed", e.output, e.usage(reasoning, content), nil, nil))
}

// errorEvent is an error event then response.failed: the generation
// failed mid-stream.
func (e *responsesEncoder) errorEvent(b []byte, msg string) []byte {
	b = e.event(b, "error", "code", "server_error", "message", msg, "param", nil)
	return e.event(b, "response.failed", "response", e.response("failed", e.output, nil,
		obj{"code", "server_error", "message", msg}, nil))
}

func (e *responsesEncoder) malformed() []byte {
	return []byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"tr\n\n")
}

func (e *responsesEncoder) answer(reasoning, content int, finish string) any {
	a := e.s.parts(reasoning, content)
	var output []any
	index := 0
	if reasoning > 0 {
		output = append(output, e.item(kindReasoning, index, "completed", a.reasoning))
		index++
	}
	switch {
	case content > 0 && e.s.pl.toolCall:
		for call, args := range a.args {
			e.call = call
			output = append(output, e.item(kindTool, index+call, "completed", args))
		}
	case content > 0:
		output = append(output, e.item(kindText, index, "completed", a.text))
	}
	if finish == "length" {
		return e.response("incomplete", output, e.usage(reasoning, content), nil, obj{"reason", "max_output_tokens"})
	}
	return e.response("completed", output, e.usage(reasoning, content), nil, nil)
}

// messagesEncoder writes Anthropic's Messages stream and answer.
type messagesEncoder struct {
	s      *session
	open   tokenKind
	opened int
	index  int // the open content block's index
	call   int // the open (or last) tool call, from 0
	tools  int // the answer token the tool calls start at; -1 before them
}

func newMessagesEncoder(s *session) *messagesEncoder {
	return &messagesEncoder{s: s, index: -1, tools: -1}
}

// fakeSignature is the signature of every thinking block.
const fakeSignature = "ZmFrZXByb3ZpZGVyIHRoaW5raW5nIHNpZ25hdHVyZQ=="

func (e *messagesEncoder) id() string { return "msg_fake_" + strconv.Itoa(e.s.sv.Index) }

func (e *messagesEncoder) toolID() string { return toolID("toolu", e.s.sv.Index, e.call) }

// usage is the message's usage: Anthropic counts the cached prompt tokens
// apart from input_tokens.
func (e *messagesEncoder) usage(output int) obj {
	cached := e.s.sv.CachedTokens
	return obj{"input_tokens", e.s.req.promptTokens - cached, "cache_creation_input_tokens", 0,
		"cache_read_input_tokens", cached, "output_tokens", output}
}

func (e *messagesEncoder) message(content []any, stop any, usage obj) obj {
	if content == nil {
		content = []any{}
	}
	return obj{"id", e.id(), "type", "message", "role", "assistant", "model", e.s.f.p.Model, "content", content,
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

func (e *messagesEncoder) start(b []byte) []byte {
	b = sseEvent(b, "message_start", obj{"type", "message_start", "message", e.message(nil, nil, e.usage(1))})
	return sseEvent(b, "ping", obj{"type", "ping"})
}

func (e *messagesEncoder) closeBlock(b []byte) []byte {
	if e.open == kindNone {
		return b
	}
	if e.open == kindReasoning {
		b = sseEvent(b, "content_block_delta", obj{"type", "content_block_delta", "index", e.index,
			"delta", obj{"type", "signature_delta", "signature", fakeSignature}})
	}
	e.open = kindNone
	return sseEvent(b, "content_block_stop", obj{"type", "content_block_stop", "index", e.index})
}

func (e *messagesEncoder) tokens(b []byte, from, k int, kind tokenKind) []byte {
	call, within, n := 0, 0, 0
	if kind == kindTool {
		call, within, n = toolCallAt(e.s.pl, &e.tools, from)
	}
	if kind != e.open || kind == kindTool && call != e.call {
		b = e.closeBlock(b)
		e.call = call
		e.open, e.opened, e.index = kind, from, e.index+1
		var block obj
		switch kind {
		case kindReasoning:
			block = obj{"type", "thinking", "thinking", "", "signature", ""}
		case kindTool:
			block = obj{"type", "tool_use", "id", e.toolID(), "name", e.s.req.toolName(e.call), "input", obj{}}
		default:
			block = obj{"type", "text", "text", ""}
		}
		b = sseEvent(b, "content_block_start", obj{"type", "content_block_start", "index", e.index, "content_block", block})
	}
	var delta obj
	switch kind {
	case kindReasoning:
		delta = obj{"type", "thinking_delta", "thinking", string(appendText(nil, from, k, true))}
	case kindTool:
		delta = obj{"type", "input_json_delta", "partial_json", string(appendArgs(nil, within, k, n))}
	default:
		delta = obj{"type", "text_delta", "text", string(appendText(nil, from, k, false))}
	}
	return sseEvent(b, "content_block_delta", obj{"type", "content_block_delta", "index", e.index, "delta", delta})
}

func (e *messagesEncoder) end(b []byte, reasoning, content int, finish string) []byte {
	b = e.closeBlock(b)
	b = sseEvent(b, "message_delta", obj{"type", "message_delta",
		"delta", obj{"stop_reason", stopReason(finish), "stop_sequence", nil},
		"usage", obj{"output_tokens", reasoning + content}})
	return sseEvent(b, "message_stop", obj{"type", "message_stop"})
}

// errorEvent is Anthropic's mid-stream error: overloaded_error.
func (e *messagesEncoder) errorEvent(b []byte, _ string) []byte {
	return sseEvent(b, "error", obj{"type", "error", "error", obj{"type", "overloaded_error", "message", "Overloaded"}})
}

func (e *messagesEncoder) malformed() []byte {
	return []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"tr\n\n")
}

func (e *messagesEncoder) answer(reasoning, content int, finish string) any {
	a := e.s.parts(reasoning, content)
	var blocks []any
	if reasoning > 0 {
		blocks = append(blocks, obj{"type", "thinking", "thinking", a.reasoning, "signature", fakeSignature})
	}
	switch {
	case content > 0 && e.s.pl.toolCall:
		for call, args := range a.args {
			input := json.RawMessage(args)
			if !json.Valid(input) { // cut short by max_tokens
				input = json.RawMessage("{}")
			}
			e.call = call
			blocks = append(blocks, obj{"type", "tool_use", "id", e.toolID(), "name", e.s.req.toolName(e.call), "input", input})
		}
	case content > 0:
		blocks = append(blocks, obj{"type", "text", "text", a.text})
	}
	return e.message(blocks, stopReason(finish), e.usage(reasoning+content))
}

// errorMessage is the injected error_event's message after sent tokens.
func errorMessage(sent int) string {
	return fmt.Sprintf("fakeprovider: injected error_event: generation failed after %d tokens", sent)
}
