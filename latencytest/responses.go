package latencytest

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tailguard/tailguard/internal/sse"
)

// Responses returns a Provider that streams from OpenAI's Responses API:
// baseURL is the API root ("https://host/v1"); requests go to baseURL +
// "/responses" with stream true, the messages as "input" and the token cap
// as "max_output_tokens". It takes the options of OpenAI (the key as a
// bearer token, the model, headers, the HTTP client) and measures as
// OpenAI does: TTFT is the first token of any kind (answer text,
// reasoning or reasoning summary text, a refusal, a function call), the
// first answer is the first text, refusal or function call (a
// function-call-only answer is a success), every gap between token events
// counts, and usage comes from the final response (cached tokens from
// input_tokens_details, reasoning tokens from output_tokens_details).
//
// A stream ends well at response.completed or response.incomplete (its
// incomplete_details.reason, e.g. "max_output_tokens", becomes the
// finish reason; a completed response's is "completed"), and without
// either it is truncated. response.failed and error events fail the
// request as bad_stream, naming the server's error; so do function-call
// arguments that are not JSON. Event types it does not know are skipped
// with a note. It panics if baseURL is not an http(s) URL.
func Responses(baseURL string, opts ...LLMOption) *LLMProvider {
	return newOpenAI(baseURL, responsesAPI, func(o *LLMProvider) {
		for _, opt := range opts {
			opt.applyLLM(o)
		}
	})
}

// responsesPayload encodes a Responses request: the messages as input
// items (roles as given: "system" and "developer" are input roles too).
func responsesPayload(o *LLMProvider, req Request) ([]byte, error) {
	type item struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	body := struct {
		Input           []item   `json:"input"`
		MaxOutputTokens int      `json:"max_output_tokens,omitempty"`
		Model           string   `json:"model"`
		Stream          bool     `json:"stream"`
		Temperature     *float64 `json:"temperature,omitempty"`
	}{Input: []item{}, MaxOutputTokens: req.MaxTokens, Model: o.model, Stream: !o.noStream, Temperature: req.Temperature}
	for _, m := range req.Messages {
		body.Input = append(body.Input, item(m))
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
	done bool // its arguments.done gave the whole arguments
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

// responsesQuiet are the event types that carry nothing the record keeps
// (their content arrived as deltas): skipped without a note.
var responsesQuiet = map[string]bool{
	"response.in_progress": true, "response.queued": true,
	"response.content_part.added": true, "response.content_part.done": true,
	"response.output_text.done": true, "response.refusal.done": true, "response.output_item.done": true,
	"response.output_text.annotation.added": true,
	"response.reasoning_summary_part.added": true, "response.reasoning_summary_part.done": true,
	"response.reasoning_summary_text.done": true, "response.reasoning_text.done": true,
	"response.reasoning.done": true, "response.reasoning_summary.done": true,
}

// responsesToolEvents are prefixes of the built-in tools' progress events
// (web search, file search, code interpreter…): skipped without a note.
var responsesToolEvents = []string{
	"response.web_search_call.", "response.file_search_call.", "response.code_interpreter_call",
	"response.image_generation_call.", "response.mcp_", "response.computer_call",
	"response.custom_tool_call_input.done",
}

func (d *responsesDecoder) terminal() string { return "response.completed or response.incomplete" }

func (d *responsesDecoder) event(s *stream, ev sse.Event) (token bool) {
	if strings.TrimSpace(ev.Data) == "[DONE]" { // not the protocol's, but some servers send it
		s.note("the stream ended with [DONE] instead of response.completed")
		s.done, s.stop = true, true
		return false
	}
	var e rawResponsesEvent
	typ, ok := decodeEvent(s, ev, &e, &e.Type)
	if !ok {
		return false
	}
	switch typ {
	case "response.created":
		d.response(s, e.Response)
	case "response.output_item.added":
		var item struct {
			Type json.RawMessage `json:"type"`
			ID   json.RawMessage `json:"id"`
		}
		if absent(e.Item) || json.Unmarshal(e.Item, &item) != nil {
			s.note("response.output_item.added without an item object skipped")
			return false
		}
		switch s.str("item.type", item.Type) {
		case "function_call", "custom_tool_call":
			c := &responsesCall{n: len(d.order) + 1}
			d.order = append(d.order, c)
			if d.calls == nil {
				d.calls = map[string]*responsesCall{}
			}
			if k := indexKey(e.OutputIndex); k != "" {
				d.calls[k] = c
			}
			if id := s.str("item.id", item.ID); id != "" {
				d.calls["id:"+id] = c
			}
			s.toolCallStarted()
			return true
		}
	case "response.output_text.delta":
		if text := s.str(typ+" delta", e.Delta); text != "" {
			s.content.WriteString(text)
			s.answerAt()
			return true
		}
	case "response.refusal.delta":
		if text := s.str(typ+" delta", e.Delta); text != "" {
			s.refusal.WriteString(text)
			s.answerAt()
			return true
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta",
		"response.reasoning.delta", "response.reasoning_summary.delta":
		return s.str(typ+" delta", e.Delta) != ""
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		c := d.call(e)
		if c == nil {
			s.fail("%s for an item never added (output_index %s)", typ, truncate(string(e.OutputIndex), 20))
			return false
		}
		if text := s.str(typ+" delta", e.Delta); text != "" {
			c.args.WriteString(text)
			s.toolArgs(c.n)
			return true
		}
	case "response.function_call_arguments.done":
		if c := d.call(e); c != nil && !absent(e.Arguments) {
			c.args.Reset()
			c.args.WriteString(s.str(typ+" arguments", e.Arguments))
			c.done = true
		}
	case "response.completed", "response.incomplete":
		d.response(s, e.Response)
		for _, c := range d.order {
			if !validArgs(c.args.String()) {
				s.fail("function call %d: its arguments are not JSON: %s", c.n, truncate(c.args.String(), 80))
				return false
			}
		}
		s.done, s.stop = true, true
	case "response.failed":
		msg := d.response(s, e.Response)
		if msg == "" {
			msg = "no error given"
		}
		s.fail("response.failed: %s", msg)
	case "error":
		s.fail("error event: %s", responsesErrorText(e))
	default:
		if !responsesQuiet[typ] && !hasAnyPrefix(typ, responsesToolEvents) {
			s.unknownEvent(typ)
		}
	}
	return false
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

// response takes the model, usage and finish reason of a response object
// and returns its error text ("" without one).
func (d *responsesDecoder) response(s *stream, raw json.RawMessage) (errText string) {
	var r rawResponse
	if !s.decodeObject("response", raw, &r) {
		return ""
	}
	if m := s.str("response.model", r.Model); m != "" {
		s.rec.Model = m
	}
	status := s.str("response.status", r.Status)
	if !absent(r.IncompleteDetails) {
		var det struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(r.IncompleteDetails, &det) == nil && det.Reason != "" {
			status = det.Reason
		}
	}
	if status != "" && status != "in_progress" && status != "queued" {
		s.rec.FinishReason = status
	}
	s.responsesUsage(r.Usage)
	if !absent(r.Error) {
		return errorCodeText(r.Error)
	}
	return ""
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

// errorCodeText renders an error object with a code or type and a
// message: "server_error: The model failed".
func errorCodeText(raw json.RawMessage) string {
	var e struct {
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return errorText(raw)
	}
	kind := e.Type
	var code string
	if json.Unmarshal(e.Code, &code) == nil && code != "" {
		kind = code
	}
	switch {
	case kind != "" && e.Message != "":
		return truncate(kind+": "+e.Message, 200)
	case e.Message != "":
		return truncate(e.Message, 200)
	}
	return errorText(raw)
}

// hasAnyPrefix reports whether s starts with one of prefixes.
func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
