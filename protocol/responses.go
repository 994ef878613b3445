package protocol

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// Responses is OpenAI's Responses API: POST {base}/responses, the
// messages as "input", the cap as "max_output_tokens"; the key as a
// bearer token. A stream ends well at response.completed or
// response.incomplete; response.failed and error events fail it. Every
// documented event type is known (see responsesQuiet); the calls of tools
// the provider runs (web_search_call, file_search_call, mcp_call…) are
// counted apart from the agent's function calls. The model stops on its
// own when the response is completed.
var Responses = &Protocol{
	Name: NameResponses, Title: "Responses", Kind: "openai-responses",
	Path:       func(string) string { return "/responses" },
	Body:       responsesBody,
	Env:        openAIEnv,
	NewDecoder: func() Decoder { return &responsesDecoder{} },
	Terminal:   "response.completed or response.incomplete",
	Whole:      responsesWhole,
	Answer:     "a Responses API response object",
	IsAnswer:   func(b []byte) bool { return objectIs(b, "object", "response") },
	MatchPath:  func(p string) bool { return pathEnds(p, "/responses") },
	MatchEvent: func(typ string, data []byte) bool {
		return strings.HasPrefix(eventTypeOf(typ, data), "response.")
	},
	EndOfSequence: func(r string) bool { return r == "completed" },
}

// responsesBody encodes a Responses request: the messages as input items
// (roles as given: "system" and "developer" are input roles too).
func responsesBody(r Request) ([]byte, error) {
	body := struct {
		Input           []Message `json:"input"`
		MaxOutputTokens int       `json:"max_output_tokens,omitempty"`
		Model           string    `json:"model"`
		Stream          bool      `json:"stream"`
		Temperature     *float64  `json:"temperature,omitempty"`
	}{Input: r.Messages, MaxOutputTokens: r.MaxTokens, Model: r.Model, Stream: r.Stream, Temperature: r.Temperature}
	if body.Input == nil {
		body.Input = []Message{}
	}
	return json.Marshal(body)
}

// responsesDecoder decodes a Responses API event stream.
type responsesDecoder struct {
	calls map[string]*responsesCall // function calls by output index and by item ID
	order []*responsesCall
}

// responsesCall is one function call of the answer.
type responsesCall struct {
	n    int // from 1, in order of arrival
	args strings.Builder
}

type rawResponsesEvent struct {
	Type        json.RawMessage `json:"type"`
	Delta       json.RawMessage `json:"delta"`
	OutputIndex json.RawMessage `json:"output_index"`
	ItemID      json.RawMessage `json:"item_id"`
	Item        json.RawMessage `json:"item"`
	Response    json.RawMessage `json:"response"`
	Arguments   json.RawMessage `json:"arguments"`
	Code        json.RawMessage `json:"code"`
	Message     json.RawMessage `json:"message"`
	Error       json.RawMessage `json:"error"`
}

type rawResponse struct {
	Model             json.RawMessage `json:"model"`
	Status            json.RawMessage `json:"status"`
	Usage             json.RawMessage `json:"usage"`
	Error             json.RawMessage `json:"error"`
	IncompleteDetails json.RawMessage `json:"incomplete_details"`
}

// responsesQuiet are the documented event types that carry nothing the
// record keeps (their content arrived as deltas, or is a hosted tool's
// progress or result): skipped without a note. The list is OpenAI's
// (openai-python's ResponseStreamEvent) with vLLM's reasoning_part events
// and the older reasoning events; any other type is noted as unknown.
var responsesQuiet = map[string]bool{
	"response.in_progress": true, "response.queued": true, "response.output_item.done": true,
	"response.content_part.added": true, "response.content_part.done": true,
	"response.output_text.done": true, "response.output_text.annotation.added": true,
	"response.refusal.done": true, "response.custom_tool_call_input.done": true,
	"response.reasoning_summary_part.added": true, "response.reasoning_summary_part.done": true,
	"response.reasoning_summary_text.done": true, "response.reasoning_text.done": true,
	"response.reasoning_part.added": true, "response.reasoning_part.done": true, // vLLM's
	"response.reasoning.done": true, "response.reasoning_summary.done": true,
	"response.audio.delta": true, "response.audio.done": true,
	"response.audio.transcript.delta": true, "response.audio.transcript.done": true,
	"response.web_search_call.in_progress": true, "response.web_search_call.searching": true, "response.web_search_call.completed": true,
	"response.file_search_call.in_progress": true, "response.file_search_call.searching": true, "response.file_search_call.completed": true,
	"response.code_interpreter_call.in_progress": true, "response.code_interpreter_call.interpreting": true,
	"response.code_interpreter_call.completed": true, "response.code_interpreter_call_code.done": true,
	"response.image_generation_call.in_progress": true, "response.image_generation_call.generating": true,
	"response.image_generation_call.partial_image": true, "response.image_generation_call.completed": true,
	"response.mcp_call.in_progress": true, "response.mcp_call.completed": true, "response.mcp_call.failed": true,
	"response.mcp_call_arguments.done": true, "response.mcp_list_tools.in_progress": true,
	"response.mcp_list_tools.completed": true, "response.mcp_list_tools.failed": true,
	"response.shell_call_command.added": true, "response.shell_call_command.done": true,
	"response.shell_call_output_content.delta": true, "response.shell_call_output_content.done": true,
}

// responsesHostedInput are the event types whose delta is the input of a
// hosted tool's call (code, MCP arguments): the model wrote it, so it is a
// token, but no answer.
var responsesHostedInput = map[string]bool{
	"response.code_interpreter_call_code.delta": true, "response.mcp_call_arguments.delta": true,
}

// Kinds of output items (see responsesItemKind).
const (
	itemOther  = iota // a message, reasoning, a tool's output…
	itemCall          // a call of a tool the agent runs
	itemHosted        // a call of a tool the provider runs
)

// responsesItemKind tells an output item's kind from its type: the agent
// runs function, custom, computer, local shell and apply-patch calls, a
// shell call in its local environment and a tool search it executes; the
// provider runs web and file searches, the code interpreter, image
// generation, MCP calls, a shell call in its container and a tool search
// on its servers.
func responsesItemKind(typ, execution, environment string) int {
	switch typ {
	case "function_call", "custom_tool_call", "computer_call", "local_shell_call", "apply_patch_call":
		return itemCall
	case "shell_call":
		if environment == "container_reference" {
			return itemHosted
		}
		return itemCall
	case "tool_search_call":
		if execution == "client" {
			return itemCall
		}
		return itemHosted
	case "web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call":
		return itemHosted
	}
	return itemOther
}

// rawItem is an output item's fields that tell its kind.
type rawItem struct {
	Type        json.RawMessage `json:"type"`
	ID          json.RawMessage `json:"id"`
	Execution   json.RawMessage `json:"execution"`
	Environment json.RawMessage `json:"environment"`
}

// kind is the item's type and kind (see responsesItemKind).
func (it *rawItem) kind(s Sink) (typ string, kind int) {
	var env struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(it.Environment, &env)
	var execution string
	_ = json.Unmarshal(it.Execution, &execution)
	typ = str(s, "item.type", it.Type)
	return typ, responsesItemKind(typ, execution, env.Type)
}

func (d *responsesDecoder) End(Sink) {}

func (d *responsesDecoder) Event(s Sink, evType string, data []byte) (token bool) {
	if strings.TrimSpace(string(data)) == "[DONE]" { // not the protocol's, but some servers send it
		s.Note("the stream ended with [DONE] instead of response.completed")
		s.Done()
		return false
	}
	var e rawResponsesEvent
	typ, ok := decodeEvent(s, evType, data, &e, &e.Type)
	if !ok {
		return false
	}
	switch typ {
	case "response.created":
		responseObject(s, e.Response)
	case "response.output_item.added":
		var item rawItem
		if absent(e.Item) || json.Unmarshal(e.Item, &item) != nil {
			s.Note("response.output_item.added without an item object skipped")
			return false
		}
		switch _, kind := item.kind(s); kind {
		case itemHosted:
			s.HostedTool()
			return true // the model wrote the call, but it is no answer
		case itemCall:
			n := s.ToolCall()
			s.ToolName(n)
			c := &responsesCall{n: n}
			d.order = append(d.order, c)
			if d.calls == nil {
				d.calls = map[string]*responsesCall{}
			}
			if k := indexKey(e.OutputIndex); k != "" {
				d.calls[k] = c
			}
			if id := str(s, "item.id", item.ID); id != "" {
				d.calls["id:"+id] = c
			}
			return true
		}
	case "response.output_text.delta":
		if text := str(s, typ+" delta", e.Delta); text != "" {
			s.Answer(text)
			return true
		}
	case "response.refusal.delta":
		if text := str(s, typ+" delta", e.Delta); text != "" {
			s.Refusal(text)
			return true
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta",
		"response.reasoning.delta", "response.reasoning_summary.delta":
		return reasoningDelta(s, typ, e.Delta) != ""
	case "response.shell_call_command.delta":
		// A shell call's command (no JSON): the agent's call's
		// arguments, or a hosted shell's input.
		if str(s, typ+" delta", e.Delta) != "" {
			if c := d.call(e); c != nil {
				s.ToolArgs(c.n)
			}
			return true
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		c := d.call(e)
		if c == nil {
			fail(s, "%s for an item never added (output_index %s)", typ, truncate(string(e.OutputIndex), 20))
			return false
		}
		if text := str(s, typ+" delta", e.Delta); text != "" {
			c.args.WriteString(text)
			s.ToolArgs(c.n)
			return true
		}
	case "response.function_call_arguments.done":
		if c := d.call(e); c != nil && !absent(e.Arguments) {
			c.args.Reset()
			c.args.WriteString(str(s, typ+" arguments", e.Arguments))
		}
	case "response.completed", "response.incomplete":
		responseObject(s, e.Response)
		for _, c := range d.order {
			if !validArgs(c.args.String()) {
				fail(s, "function call %d: its arguments are not JSON: %s", c.n, truncate(c.args.String(), 80))
				return false
			}
		}
		s.Done()
	case "response.failed":
		msg, _ := responseObject(s, e.Response)
		if msg == "" {
			msg = "no error given"
		}
		fail(s, "response.failed: %s", msg)
	case "error":
		fail(s, "error event: %s", responsesErrorText(e))
	default:
		if responsesHostedInput[typ] {
			return str(s, typ+" delta", e.Delta) != ""
		}
		if !responsesQuiet[typ] {
			note(s, "unknown event type %q skipped", truncate(typ, 60))
		}
	}
	return false
}

// reasoningDelta is a reasoning event's text: its delta, a string, or an
// object with the text in "text" or "content" (as an older vLLM sends
// response.reasoning.delta).
func reasoningDelta(s Sink, typ string, raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '{' {
		var o struct {
			Text    json.RawMessage `json:"text"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &o) == nil {
			if t := str(s, typ+" delta.text", o.Text); t != "" {
				return t
			}
			return str(s, typ+" delta.content", o.Content)
		}
	}
	return str(s, typ+" delta", raw)
}

// call finds the function call an arguments event belongs to.
func (d *responsesDecoder) call(e rawResponsesEvent) *responsesCall {
	if k := indexKey(e.OutputIndex); k != "" && d.calls[k] != nil {
		return d.calls[k]
	}
	var id string
	if json.Unmarshal(e.ItemID, &id) == nil && id != "" {
		return d.calls["id:"+id]
	}
	return nil
}

// indexKey is an output_index as a map key ("" when absent or not an
// integer).
func indexKey(raw json.RawMessage) string {
	if i, err := strconv.Atoi(string(raw)); err == nil {
		return strconv.Itoa(i)
	}
	return ""
}

// responseObject takes the model, usage and finish reason of a response
// object and returns its error text ("" without one) and its status.
func responseObject(s Sink, raw json.RawMessage) (errText, status string) {
	var r rawResponse
	if !decodeObject(s, "response", raw, &r) {
		return "", ""
	}
	if m := str(s, "response.model", r.Model); m != "" {
		s.Model(m)
	}
	status = str(s, "response.status", r.Status)
	if !absent(r.IncompleteDetails) {
		var det struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(r.IncompleteDetails, &det) == nil && det.Reason != "" {
			status = det.Reason
		}
	}
	if status != "" && status != "in_progress" && status != "queued" {
		s.Finish(status)
	}
	responsesUsage(s, r.Usage)
	if !absent(r.Error) {
		return errorCodeText(r.Error), status
	}
	return "", status
}

// responsesUsage takes a Responses usage object: input_tokens,
// output_tokens, input_tokens_details.cached_tokens and
// output_tokens_details.reasoning_tokens.
func responsesUsage(s Sink, raw json.RawMessage) {
	var u struct {
		InputTokens         json.RawMessage `json:"input_tokens"`
		OutputTokens        json.RawMessage `json:"output_tokens"`
		InputTokensDetails  json.RawMessage `json:"input_tokens_details"`
		OutputTokensDetails json.RawMessage `json:"output_tokens_details"`
	}
	if !decodeObject(s, "usage", raw, &u) {
		return
	}
	applyUsage(s, usageKeys{"input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details"},
		u.InputTokens, u.OutputTokens, u.InputTokensDetails, u.OutputTokensDetails)
}

// responsesErrorText renders a Responses error event: {"type":"error",
// "code":..., "message":...}, or an "error" object inside it.
func responsesErrorText(e rawResponsesEvent) string {
	if !absent(e.Error) {
		return errorCodeText(e.Error)
	}
	var code, msg string
	_ = json.Unmarshal(e.Code, &code)
	_ = json.Unmarshal(e.Message, &msg)
	switch {
	case code != "" && msg != "":
		return truncate(code+": "+msg, 200)
	case msg != "":
		return truncate(msg, 200)
	case code != "":
		return truncate(code, 200)
	}
	return "no message given"
}

// responsesWhole decodes a whole response object: its message texts and
// refusals, its tool calls and hosted tools' calls; a failed response
// fails.
func responsesWhole(s Sink, body []byte) error {
	var r struct {
		rawResponse
		Output []struct {
			rawItem
			Content   json.RawMessage `json:"content"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"output"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return errors.New("the answer is not a response object: " + err.Error())
	}
	raw, _ := json.Marshal(r.rawResponse)
	var failure string
	if msg, status := responseObject(s, raw); msg != "" || status == "failed" {
		failure = "response failed: " + msg
	}
	for _, it := range r.Output {
		switch typ, kind := it.kind(s); {
		case kind == itemHosted:
			s.HostedTool()
		case kind == itemCall:
			args := ""
			if typ == "function_call" { // the others' input is no JSON arguments string
				args = str(s, "arguments", it.Arguments)
			}
			if bad := wholeTool(s, args); bad != "" && failure == "" {
				failure = bad
			}
		case typ == "message":
			var parts []struct {
				Text    string `json:"text"`
				Refusal string `json:"refusal"`
			}
			_ = json.Unmarshal(it.Content, &parts)
			for _, p := range parts {
				if p.Text != "" {
					s.Answer(p.Text)
				}
				if p.Refusal != "" {
					s.Refusal(p.Refusal)
				}
			}
		}
	}
	if failure != "" {
		return errors.New(failure)
	}
	return nil
}

// wholeTool counts a tool call of a whole answer (its name and arguments
// arrived with the body) and says why its arguments are bad ("" when
// they are JSON).
func wholeTool(s Sink, args string) (bad string) {
	n := s.ToolCall()
	s.ToolName(n)
	s.ToolArgs(n)
	if !validArgs(args) {
		return "tool call " + strconv.Itoa(n) + ": its arguments are not JSON: " + truncate(args, 80)
	}
	return ""
}
