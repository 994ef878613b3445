package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fakeprovider/internal/wire"
)

// protocol is the API a request speaks.
type protocol uint8

const (
	protoChat      protocol = iota // POST /v1/chat/completions
	protoResponses                 // POST /v1/responses (OpenAI's Responses API)
	protoMessages                  // POST /v1/messages (Anthropic's Messages API)
)

// Protocol names as they appear in Served.Protocol.
const (
	ProtocolChat      = "chat"
	ProtocolResponses = "responses"
	ProtocolMessages  = "messages"
)

func (p protocol) String() string {
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

// writeAnthropicError writes Anthropic's error body (see wire.MessagesError).
func writeAnthropicError(w http.ResponseWriter, e *apiError) {
	b := wire.MessagesError(e.status, e.message, w.Header().Get(headerAnthropicRequestID))
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

// encoders builds each protocol's wire writer (see package wire).
var encoders = [...]func(*wire.State) wire.Encoder{
	protoChat:      wire.NewChat,
	protoResponses: wire.NewResponses,
	protoMessages:  wire.NewMessages,
}

// errorMessage is the injected error_event's message after sent tokens.
func errorMessage(sent int) string {
	return fmt.Sprintf("fakeprovider: injected error_event: generation failed after %d tokens", sent)
}
