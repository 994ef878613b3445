package fakeprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// maxBodyBytes is the largest request body accepted; larger bodies get 413.
const maxBodyBytes = 8 << 20

// maxRequestIDBytes is the longest X-Request-ID accepted; a longer one gets
// 400.
const maxRequestIDBytes = 256

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

// apiError is an error answer in OpenAI's format.
type apiError struct {
	status  int
	message string
	typ     string
	param   string
	code    string
}

func (e *apiError) Error() string { return e.message }

func badRequest(param, code, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...),
		typ: "invalid_request_error", param: param, code: code}
}

// writeAPIError writes OpenAI's error JSON body with the status.
func writeAPIError(w http.ResponseWriter, e *apiError) {
	body := struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}{}
	body.Error.Message = e.message
	body.Error.Type = e.typ
	if e.param != "" {
		body.Error.Param = &e.param
	}
	if e.code != "" {
		body.Error.Code = &e.code
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(e.status)
	_, _ = w.Write(append(b, '\n'))
}

// faultError is the error answer for an injected status fault.
func faultError(status int) *apiError {
	switch status {
	case 529:
		return &apiError{status: 529, message: "Overloaded", typ: "overloaded_error"}
	case 429:
		return &apiError{status: 429, message: "Rate limit reached for requests", typ: "requests", code: "rate_limit_exceeded"}
	case 503:
		return &apiError{status: 503, message: "The server is temporarily unavailable", typ: "server_error"}
	case 500:
		return &apiError{status: 500, message: "The server had an error while processing your request", typ: "server_error"}
	}
	if status < 500 {
		return &apiError{status: status, message: http.StatusText(status), typ: "invalid_request_error"}
	}
	return &apiError{status: status, message: http.StatusText(status), typ: "server_error"}
}

// parsed is a validated request.
type parsed struct {
	proto        protocol
	toolNames    []string // the functions a tool-call answer's calls cycle through
	noTools      bool     // tool_choice forbids tool calls
	mustCall     bool     // tool_choice demands a tool call
	oneCall      bool     // at most one tool call (parallel_tool_calls false, disable_parallel_tool_use)
	stream       bool
	includeUsage bool
	maxTokens    int // 0: no cap
	prompt       string
	promptTokens int
}

// modelNotFound is OpenAI's answer for a model it does not serve: 404, so
// SDKs raise their not-found error.
func modelNotFound(model string) *apiError {
	return &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "model_not_found",
		message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model)}
}

// parseRequest reads and validates the body. Errors are ready to send. On a
// real connection (Server) the body must arrive within the server's body
// timeout: a read past it fails with os.ErrDeadlineExceeded, answered 408.
func parseRequest(r *http.Request, model string) (parsed, *apiError) {
	var p parsed
	body, aerr := readBody(r)
	if aerr != nil {
		return p, aerr
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return p, badRequest("", "invalid_json", "We could not parse the JSON body of your request: %v", err)
	}
	if req.Model == "" {
		return p, badRequest("model", "", "you must provide a model parameter")
	}
	if req.Model != model {
		return p, modelNotFound(req.Model)
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
	p.prompt = sb.String()
	p.promptTokens = max(1, len(p.prompt)/4)
	for _, mt := range []struct {
		name string
		v    *int
	}{{"max_tokens", req.MaxTokens}, {"max_completion_tokens", req.MaxCompletionTokens}} {
		if mt.v == nil {
			continue
		}
		if *mt.v < 1 || *mt.v > maxOutputTokens {
			return p, badRequest(mt.name, "", "%s %d is outside [1, %d]", mt.name, *mt.v, maxOutputTokens)
		}
		if p.maxTokens == 0 || *mt.v < p.maxTokens {
			p.maxTokens = *mt.v
		}
	}
	p.stream = req.Stream
	p.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	if aerr := p.setTools(req.Tools, req.ToolChoice, req.ParallelToolCalls); aerr != nil {
		return p, aerr
	}
	return p, nil
}

// setTools fills p's tool fields from the request's tools, tool_choice
// (see requestTools) and parallel_tool_calls (chat and Responses; nil when
// absent); the error is ready to send.
func (p *parsed) setTools(tools, choice json.RawMessage, parallel *bool) *apiError {
	names, c, aerr := requestTools(p.proto, tools, choice)
	p.toolNames, p.noTools, p.mustCall = names, c.none, c.required
	p.oneCall = c.single || parallel != nil && !*parallel
	return aerr
}

// toolName is the function call `call` (from 0) of a tool-call answer
// names: the request's tools in turn, call i the tool i mod their number.
func (p *parsed) toolName(call int) string {
	if len(p.toolNames) == 0 {
		return defaultToolName
	}
	return p.toolNames[call%len(p.toolNames)]
}

// readBody reads the request body (at most maxBodyBytes). Errors are ready
// to send.
func readBody(r *http.Request) ([]byte, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge,
				message: fmt.Sprintf("request body exceeds %d bytes", maxBodyBytes), typ: "invalid_request_error"}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, &apiError{status: http.StatusRequestTimeout, typ: "invalid_request_error",
				message: "the request body did not arrive in time"}
		}
		return nil, badRequest("", "", "could not read the request body: %v", err)
	}
	return body, nil
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
