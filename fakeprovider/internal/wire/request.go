package wire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Request is a validated request: what the fake reads of it, whatever
// its protocol.
type Request struct {
	// ToolNames is what a tool-call answer's calls cycle through.
	ToolNames []string
	// NoTools: tool_choice forbids tool calls; MustCall: it demands one.
	NoTools, MustCall bool
	// OneCall: at most one tool call (parallel_tool_calls false,
	// disable_parallel_tool_use).
	OneCall bool
	// Stream: the answer streams; IncludeUsage: a chat stream ends with
	// a usage chunk.
	Stream, IncludeUsage bool
	// MaxTokens is the cap on output tokens; 0 for none.
	MaxTokens int
	// Prompt is the prompt's text; PromptTokens its length in tokens
	// (a token per 4 bytes, at least 1).
	Prompt       string
	PromptTokens int
}

// Error is an error answer: the HTTP status and the fields of OpenAI's
// error body (Anthropic's takes the status and message).
type Error struct {
	Status                     int
	Message, Type, Param, Code string
}

func (e *Error) Error() string { return e.Message }

// badRequest is a 400 naming what was wrong.
func badRequest(param, code, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...),
		Type: "invalid_request_error", Param: param, Code: code}
}

// ModelNotFound is OpenAI's answer for a model it does not serve: 404, so
// SDKs raise their not-found error.
func ModelNotFound(model string) *Error {
	return &Error{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found",
		Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model)}
}

// setPrompt sets the prompt and its length in tokens.
func (r *Request) setPrompt(prompt string) {
	r.Prompt = prompt
	r.PromptTokens = max(1, len(prompt)/4)
}

// ToolName is the function call `call` (from 0) of a tool-call answer
// names: the request's tools in turn, call i the tool i mod their number.
func (r *Request) ToolName(call int) string {
	if len(r.ToolNames) == 0 {
		return defaultToolName
	}
	return r.ToolNames[call%len(r.ToolNames)]
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

// defaultToolName is the function a tool-call answer calls when the
// request lists no tools.
const defaultToolName = "fake_tool"

// toolNames is the names of the tools in raw (a JSON array), in order,
// leaving out those without one (hosted tools such as Responses'
// web_search). nested reads chat's {"function":{"name":...}}; else the
// name is at the top (Responses, Messages).
func toolNames(raw json.RawMessage, nested bool) []string {
	var tools []struct {
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &tools) != nil {
		return nil
	}
	var names []string
	for _, t := range tools {
		name := t.Name
		if nested {
			name = t.Function.Name
		}
		if name != "" {
			names = append(names, name)
		}
	}
	return names
}

// toolChoice is what a request's tool_choice asks of the answer.
type toolChoice struct {
	none     bool   // no tool call: "none" ({"type":"none"} for Messages)
	required bool   // a tool call: "required" ({"type":"any"}), or named
	named    bool   // the choice forces one function: name
	name     string // the function every call names when named
	single   bool   // Messages' disable_parallel_tool_use: at most one call
}

// toolChoiceObject is a tool_choice object in any protocol's form.
type toolChoiceObject struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
	DisableParallelToolUse bool `json:"disable_parallel_tool_use"`
}

// openAIToolChoice reads an OpenAI tool_choice: "none", "auto",
// "required", or a forced function, {"type":"function","function":
// {"name":X}} when nested (chat), {"type":"function","name":X}
// otherwise (Responses). Other values, and none at all, leave the choice
// to the profile.
func openAIToolChoice(raw json.RawMessage, nested bool) toolChoice {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return toolChoice{none: s == "none", required: s == "required"}
	}
	var c toolChoiceObject
	if json.Unmarshal(raw, &c) != nil || c.Type != "function" {
		return toolChoice{}
	}
	name := c.Name
	if nested {
		name = c.Function.Name
	}
	return toolChoice{required: true, named: true, name: name}
}

// setTools fills r's tool fields from the request's tools (names), its
// tool_choice c and parallel_tool_calls (nil when absent). names is what
// a tool-call answer's calls cycle through (the request's tools in order,
// the forced one alone, or defaultToolName when it lists none). A choice
// that names a tool the request does not list, names none, or demands a
// call from a request without tools is a 400 naming what was wrong, as
// the real APIs answer, in Anthropic's style when anthropic is set.
func (r *Request) setTools(names []string, c toolChoice, parallel *bool, anthropic bool) *Error {
	param, prefix := "tool_choice", "Invalid value for 'tool_choice': "
	if anthropic {
		if c.named {
			param = "tool_choice.name"
		}
		prefix = param + ": " // Anthropic's style, as "max_tokens: Field required"
	}
	var aerr *Error
	switch {
	case c.named && c.name == "":
		names, aerr = nil, badRequest(param, "", "%sit forces a tool but names none.", prefix)
	case c.required && len(names) == 0:
		what := "a tool call"
		if c.named {
			what = "tool " + strconv.Quote(c.name)
		}
		names, aerr = nil, badRequest(param, "", "%sit demands %s but the request lists no tools.", prefix, what)
	case c.named && !slices.Contains(names, c.name):
		names, aerr = nil, badRequest(param, "", "%stool %q is not among the request's tools (%s).",
			prefix, c.name, strings.Join(names, ", "))
	case c.named:
		names = []string{c.name}
	case len(names) == 0:
		names = []string{defaultToolName}
	}
	r.ToolNames, r.NoTools, r.MustCall = names, c.none, c.required
	r.OneCall = c.single || parallel != nil && !*parallel
	return aerr
}
