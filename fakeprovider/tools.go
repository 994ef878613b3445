package fakeprovider

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

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

// parseToolChoice reads a request's tool_choice in the protocol's form:
// chat "none", "auto", "required" or {"type":"function","function":
// {"name":X}}; Responses the same strings or {"type":"function","name":X};
// Messages {"type":"auto"|"any"|"none"} or {"type":"tool","name":X}, each
// with "disable_parallel_tool_use": true for at most one call. Other
// values, and none at all, leave the choice to the profile.
func parseToolChoice(raw json.RawMessage, proto protocol) toolChoice {
	var s string
	if proto != protoMessages && json.Unmarshal(raw, &s) == nil {
		return toolChoice{none: s == "none", required: s == "required"}
	}
	var c struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		DisableParallelToolUse bool `json:"disable_parallel_tool_use"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return toolChoice{}
	}
	var tc toolChoice
	switch {
	case proto == protoMessages && c.Type == "none":
		tc = toolChoice{none: true}
	case proto == protoMessages && c.Type == "any":
		tc = toolChoice{required: true}
	case proto == protoMessages && c.Type == "tool", proto == protoResponses && c.Type == "function":
		tc = toolChoice{required: true, named: true, name: c.Name}
	case proto == protoChat && c.Type == "function":
		tc = toolChoice{required: true, named: true, name: c.Function.Name}
	}
	tc.single = proto == protoMessages && c.DisableParallelToolUse
	return tc
}

// requestTools reads a request's tools and tool_choice (see
// parseToolChoice): names is what a tool-call answer's calls cycle
// through (the request's tools in order, the forced one alone, or
// defaultToolName when it lists none). A choice that names a tool the
// request does not list, names none, or demands a call from a request
// without tools is a 400 naming what was wrong, as the real APIs answer.
func requestTools(proto protocol, tools, choice json.RawMessage) (names []string, c toolChoice, aerr *apiError) {
	names = toolNames(tools, proto == protoChat)
	c = parseToolChoice(choice, proto)
	param, prefix := "tool_choice", "Invalid value for 'tool_choice': "
	if proto == protoMessages {
		if c.named {
			param = "tool_choice.name"
		}
		prefix = param + ": " // Anthropic's style, as "max_tokens: Field required"
	}
	switch {
	case c.named && c.name == "":
		return nil, c, badRequest(param, "", "%sit forces a tool but names none.", prefix)
	case c.required && len(names) == 0:
		what := "a tool call"
		if c.named {
			what = "tool " + strconv.Quote(c.name)
		}
		return nil, c, badRequest(param, "", "%sit demands %s but the request lists no tools.", prefix, what)
	case c.named && !slices.Contains(names, c.name):
		return nil, c, badRequest(param, "", "%stool %q is not among the request's tools (%s).",
			prefix, c.name, strings.Join(names, ", "))
	case c.named:
		names = []string{c.name}
	case len(names) == 0:
		names = []string{defaultToolName}
	}
	return names, c, nil
}
