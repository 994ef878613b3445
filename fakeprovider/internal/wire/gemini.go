package wire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// geminiEncoder writes Google's Gemini streamGenerateContent stream (SSE
// data chunks, each a GenerateContentResponse, CRLF-framed as Google's
// servers send them; no closing event) and its whole answer.
type geminiEncoder struct {
	st *State
}

// newGemini is the encoder of Google's Gemini API.
func newGemini(st *State) Encoder { return &geminiEncoder{st: st} }

func (e *geminiEncoder) responseID() string { return "fake-gemini-" + strconv.Itoa(e.st.Index) }

// chunk appends one SSE event whose data is a GenerateContentResponse
// with candidate 0's parts, its finish reason ("" for none) and usage.
func (e *geminiEncoder) chunk(b []byte, parts []any, finish string, usage obj) []byte {
	cand := obj{"content", obj{"parts", parts, "role", "model"}}
	if finish != "" {
		cand = append(cand, "finishReason", finish)
	}
	cand = append(cand, "index", 0)
	data, _ := json.Marshal(obj{"candidates", []any{cand}, "usageMetadata", usage,
		"modelVersion", e.st.Model, "responseId", e.responseID()})
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\r\n\r\n"...)
}

// promptUsage is the usage every chunk but the last carries: the prompt's.
func (e *geminiEncoder) promptUsage() obj {
	return obj{"promptTokenCount", e.st.PromptTokens, "totalTokenCount", e.st.PromptTokens}
}

// usage is the answer's usageMetadata: candidates exclude the thoughts,
// which have their own count; zero counts are left out, as Google does.
func (e *geminiEncoder) usage(reasoning, content int) obj {
	u := obj{"promptTokenCount", e.st.PromptTokens, "candidatesTokenCount", content,
		"totalTokenCount", e.st.PromptTokens + reasoning + content}
	if e.st.CachedTokens > 0 {
		u = append(u, "cachedContentTokenCount", e.st.CachedTokens)
	}
	if reasoning > 0 {
		u = append(u, "thoughtsTokenCount", reasoning)
	}
	return u
}

// finishReason is Gemini's for the fake's finish: MAX_TOKENS at the cap,
// STOP otherwise (a function-call answer too).
func geminiFinish(finish string) string {
	if finish == "length" {
		return "MAX_TOKENS"
	}
	return "STOP"
}

// call is the functionCall part of call `call` of the answer.
func (e *geminiEncoder) call(call int) obj {
	n := e.st.ToolArgs[call]
	return obj{"functionCall", obj{"name", e.st.ToolName(call), "args", json.RawMessage(AppendArgs(nil, 0, n, n))}}
}

// Start writes nothing: a Gemini stream opens with its first token.
func (e *geminiEncoder) Start(b []byte) []byte { return b }

// Tokens writes a chunk with a thought or text part; tool tokens write a
// functionCall part (its name and args whole, as Gemini sends them) when
// the call's last argument token is generated, and nothing before.
func (e *geminiEncoder) Tokens(b []byte, from, k int, kind Kind) []byte {
	switch kind {
	case KindTool:
		var parts []any
		for i := from; i < from+k; i++ {
			call, within, n := ToolAt(e.st.ToolArgs, i-e.st.Reasoning)
			if within == n-1 {
				parts = append(parts, e.call(call))
			}
		}
		if parts == nil {
			return b
		}
		return e.chunk(b, parts, "", e.promptUsage())
	case KindReasoning:
		return e.chunk(b, []any{obj{"text", string(AppendText(nil, from, k, true)), "thought", true}}, "", e.promptUsage())
	}
	return e.chunk(b, []any{obj{"text", string(AppendText(nil, from, k, false))}}, "", e.promptUsage())
}

// End writes the last chunk: an empty text part, the finish reason and
// the whole usage.
func (e *geminiEncoder) End(b []byte, reasoning, content int, finish string) []byte {
	return e.chunk(b, []any{obj{"text", ""}}, geminiFinish(finish), e.usage(reasoning, content))
}

// ErrorEvent is Google's error object as a stream's chunk: INTERNAL.
func (e *geminiEncoder) ErrorEvent(b []byte, msg string) []byte {
	data := GeminiError(http.StatusInternalServerError, msg)
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\r\n\r\n"...)
}

func (e *geminiEncoder) Malformed() []byte {
	return []byte("data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"tr\r\n\r\n")
}

// Answer is the whole GenerateContentResponse: a thought part, then the
// text or the function calls completed within content tokens.
func (e *geminiEncoder) Answer(reasoning, content int, finish string) any {
	a := e.st.parts(reasoning, content)
	parts := []any{}
	if reasoning > 0 {
		parts = append(parts, obj{"text", a.reasoning, "thought", true})
	}
	switch {
	case content > 0 && e.st.ToolCall:
		for call, args := range a.args {
			if json.Valid([]byte(args)) { // not cut short by the cap
				parts = append(parts, e.call(call))
			}
		}
	case content > 0:
		parts = append(parts, obj{"text", a.text})
	}
	cand := obj{"content", obj{"parts", parts, "role", "model"}, "finishReason", geminiFinish(finish), "index", 0}
	return obj{"candidates", []any{cand}, "usageMetadata", e.usage(reasoning, content),
		"modelVersion", e.st.Model, "responseId", e.responseID()}
}

// geminiStatus is Google's status name for an HTTP status.
func geminiStatus(status int) string {
	switch status {
	case 400, 413:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 405:
		return "UNIMPLEMENTED"
	case 408, 504:
		return "DEADLINE_EXCEEDED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503, 529:
		return "UNAVAILABLE"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

// GeminiError is Google's error body for an HTTP status:
// {"error":{"code":...,"message":...,"status":...}}.
func GeminiError(status int, msg string) []byte {
	b, _ := json.Marshal(obj{"error", obj{"code", status, "message", msg, "status", geminiStatus(status)}})
	return b
}

// geminiRequest is the part of a generateContent request the fake reads.
type geminiRequest struct {
	Contents []struct {
		Role  string          `json:"role"`
		Parts json.RawMessage `json:"parts"`
	} `json:"contents"`
	SystemInstruction json.RawMessage `json:"systemInstruction"`
	GenerationConfig  struct {
		MaxOutputTokens *int `json:"maxOutputTokens"`
	} `json:"generationConfig"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	ToolConfig struct {
		FunctionCallingConfig struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
}

// geminiBad is Google's 400 naming what was wrong.
func geminiBad(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "INVALID_ARGUMENT", Message: fmt.Sprintf(format, args...)}
}

// parseGemini validates a generateContent body, whose cap on output
// tokens is maxOut (the model and the mode are in the URL: see
// geminiURL). Errors are to be sent in Google's shape (GeminiError).
func parseGemini(body []byte, _ string, maxOut int) (Request, *Error) {
	var p Request
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return p, geminiBad("Invalid JSON payload received. %v", err)
	}
	if len(req.Contents) == 0 {
		return p, geminiBad("* GenerateContentRequest.contents: contents is not specified")
	}
	if m := req.GenerationConfig.MaxOutputTokens; m != nil && (*m < 1 || *m > maxOut) {
		return p, geminiBad("* GenerateContentRequest.generation_config.max_output_tokens: %d is outside [1, %d]", *m, maxOut)
	}
	system, err := rawText(req.SystemInstruction)
	if err != nil {
		return p, geminiBad("* GenerateContentRequest.system_instruction: %v", err)
	}
	var sb strings.Builder
	sb.WriteString(system)
	for i, c := range req.Contents {
		if c.Role != "" && c.Role != "user" && c.Role != "model" && c.Role != "function" {
			return p, geminiBad("* GenerateContentRequest.contents[%d].role: Please use a valid role: user, model.", i)
		}
		text, err := rawText(c.Parts)
		if err != nil || len(c.Parts) == 0 || string(c.Parts) == "null" {
			return p, geminiBad("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.", i)
		}
		sb.WriteString(text)
	}
	p.setPrompt(sb.String())
	if m := req.GenerationConfig.MaxOutputTokens; m != nil {
		p.MaxTokens = *m
	}
	p.IncludeUsage = true
	var names []string
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			if f.Name != "" {
				names = append(names, f.Name)
			}
		}
	}
	// functionCallingConfig: NONE forbids calls; ANY demands one (of the
	// one allowed function when it names one).
	var tc toolChoice
	fc := req.ToolConfig.FunctionCallingConfig
	switch fc.Mode {
	case "NONE":
		tc.none = true
	case "ANY":
		tc.required = true
		if len(fc.AllowedFunctionNames) == 1 {
			tc.named, tc.name = true, fc.AllowedFunctionNames[0]
		}
	}
	if aerr := p.setTools(names, tc, nil, false); aerr != nil {
		aerr.Type = "INVALID_ARGUMENT"
		return p, aerr
	}
	return p, nil
}

// geminiURL completes a Gemini request from its URL:
// .../models/{model}:streamGenerateContent?alt=sse streams,
// :generateContent does not; the model must be the fake's. A stream
// without alt=sse (a JSON array) is refused with a 400 that says so.
func geminiURL(u *url.URL, r *Request, model string) *Error {
	i := strings.LastIndex(u.Path, "/models/")
	if i < 0 {
		return &Error{Status: http.StatusNotFound, Type: "NOT_FOUND", Message: "the path names no model: " + u.Path}
	}
	path, method, _ := strings.Cut(u.Path[i+len("/models/"):], ":")
	if path != model {
		return &Error{Status: http.StatusNotFound, Type: "NOT_FOUND",
			Message: "models/" + path + " is not found for API version v1beta, or is not supported for generateContent."}
	}
	r.Stream = method == "streamGenerateContent"
	if r.Stream && u.Query().Get("alt") != "sse" {
		return geminiBad("fakeprovider: streamGenerateContent is served as server-sent events only: add ?alt=sse (a JSON array stream is not served)")
	}
	return nil
}
