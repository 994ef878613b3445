package latencytest

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/chunkscan"
	"github.com/tailguard/tailguard/internal/sse"
)

// stream is the state of one chat-completions stream being decoded.
type stream struct {
	rec      *Record
	now      time.Duration // time of the read being parsed
	content  strings.Builder
	refusal  strings.Builder
	bad      string // why the stream is bad ("" when it is not)
	done     bool   // [DONE] seen
	stop     bool   // stop reading: [DONE] or an error
	others   bool   // a choice other than index 0 was seen
	notesCut bool
	last     chunkscan.Template // the last chunk scanned whole (see fastEvent)
	proto    eventDecoder       // nil: chat completions (protocol.go)
	// toolAt is the tool call each tool-call index is on (see toolDelta);
	// nil until the first tool-call delta.
	toolAt    map[int64]toolSlot
	toolNamed bool // the first tool call's name arrived (Record.FirstToolCall)
}

// toolSlot is the tool call a tool-call index is on: its number (from 1,
// in the order the calls began), its id and whether its name arrived.
type toolSlot struct {
	call  int
	id    string
	named bool
}

// toolDelta applies one element of a delta's tool_calls: its index, its
// id ("" when absent) and whether it carried a non-empty function name
// and arguments. It reports whether the element carried anything (an id,
// a name or arguments): then it is a token of the answer. A call is
// counted at its index's first element that carries anything; an
// element with a name and an id other than the one its index already
// has, on an index whose call was named, begins a new call there (some
// servers, Ollama's among them, send parallel calls all at index 0).
// The first call's name sets FirstToolCall, and each of its arguments
// deltas ToolArgsDone.
func (s *stream) toolDelta(index int64, id string, name, args bool) (token bool) {
	if id == "" && !name && !args {
		return false
	}
	rec := s.rec
	slot, ok := s.toolAt[index]
	if !ok || name && slot.named && id != "" && slot.id != "" && id != slot.id {
		rec.ToolCalls++
		slot = toolSlot{call: rec.ToolCalls}
	}
	if id != "" {
		slot.id = id
	}
	if name {
		slot.named = true
	}
	if s.toolAt == nil {
		s.toolAt = map[int64]toolSlot{}
	}
	s.toolAt[index] = slot
	if slot.call == 1 {
		if name && !s.toolNamed {
			rec.FirstToolCall, s.toolNamed = s.now, true
		}
		if args {
			rec.ToolArgsDone = s.now
		}
	}
	s.answerAt()
	return true
}

// maxNotes bounds Record.Notes.
const maxNotes = 10

// note adds a line to the record's notes, once.
func (s *stream) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if slices.Contains(s.rec.Notes, n) || s.notesCut {
		return
	}
	if len(s.rec.Notes) == maxNotes-1 {
		s.rec.Notes, s.notesCut = append(s.rec.Notes, "(further notes dropped)"), true
		return
	}
	s.rec.Notes = append(s.rec.Notes, n)
}

// finish stores the answer text (without the builder's spare capacity).
func (s *stream) finish() {
	s.rec.Content = strings.Clone(s.content.String())
	if s.others {
		s.note("choices other than index 0 ignored (n > 1): only the first choice is measured")
	}
}

// rawChunk is a chat.completion.chunk decoded field by field, so that one
// field of an unexpected type loses that field only. Usage is read where
// vendors put it: "usage", or Groq's "x_groq": {"usage": ...} ("usage"
// wins when a chunk has both); a usage on every chunk (as Gemini sends
// it) is read on every chunk, the last one winning.
type rawChunk struct {
	Model   json.RawMessage `json:"model"`
	Choices json.RawMessage `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Object  json.RawMessage `json:"object"`
	Message json.RawMessage `json:"message"`
	XGroq   json.RawMessage `json:"x_groq"`
}

type rawChoice struct {
	Index        json.RawMessage `json:"index"`
	Delta        json.RawMessage `json:"delta"`
	FinishReason json.RawMessage `json:"finish_reason"`
}

type rawDelta struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	Refusal          json.RawMessage `json:"refusal"`
	ToolCalls        json.RawMessage `json:"tool_calls"`
	FunctionCall     json.RawMessage `json:"function_call"` // the legacy single call, before tool_calls
}

// rawToolCall is one element of a delta's (or a message's) tool_calls.
type rawToolCall struct {
	Index    json.RawMessage `json:"index"`
	ID       json.RawMessage `json:"id"`
	Function json.RawMessage `json:"function"`
}

type rawFunction struct {
	Name      json.RawMessage `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type rawUsage struct {
	PromptTokens            json.RawMessage `json:"prompt_tokens"`
	CompletionTokens        json.RawMessage `json:"completion_tokens"`
	PromptTokensDetails     json.RawMessage `json:"prompt_tokens_details"`
	CompletionTokensDetails json.RawMessage `json:"completion_tokens_details"`
}

// absent reports whether a field was missing or null.
func absent(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// event decodes one SSE event and reports whether it carried a token of
// choice 0 (answer, reasoning or refusal).
func (s *stream) event(ev sse.Event) (token bool) {
	if ev.Type == "error" {
		s.bad, s.stop = "error event: "+eventError(ev.Data), true
		return false
	}
	if strings.TrimSpace(ev.Data) == "[DONE]" {
		s.done, s.stop = true, true
		return false
	}
	var ch rawChunk
	if err := json.Unmarshal([]byte(ev.Data), &ch); err != nil {
		if s.bad == "" {
			s.bad = "malformed event: " + err.Error()
		}
		return false
	}
	if !absent(ch.Error) {
		s.bad, s.stop = "error event: "+errorText(ch.Error), true
		return false
	}
	var object string
	if json.Unmarshal(ch.Object, &object) == nil && object == "error" {
		s.bad, s.stop = "error event: "+errorText(ch.Message), true
		return false
	}
	if !absent(ch.Model) {
		var m string
		if json.Unmarshal(ch.Model, &m) != nil {
			s.note("model ignored: not a string (%s)", truncate(string(ch.Model), 40))
		} else if m != "" {
			s.rec.Model = m
		}
	}
	if !absent(ch.XGroq) {
		var xg struct {
			Usage json.RawMessage `json:"usage"`
		}
		if json.Unmarshal(ch.XGroq, &xg) != nil {
			s.note("x_groq ignored: not an object (%s)", truncate(string(ch.XGroq), 40))
		} else {
			s.usage(xg.Usage)
		}
	}
	s.usage(ch.Usage)
	if absent(ch.Choices) {
		return false
	}
	var choices []json.RawMessage
	if json.Unmarshal(ch.Choices, &choices) != nil {
		s.note("choices ignored: not an array (%s)", truncate(string(ch.Choices), 40))
		return false
	}
	for _, raw := range choices {
		var c rawChoice
		if json.Unmarshal(raw, &c) != nil {
			s.note("a choice ignored: not an object (%s)", truncate(string(raw), 40))
			continue
		}
		if !absent(c.Index) {
			var i int
			if json.Unmarshal(c.Index, &i) != nil {
				s.note("choice index ignored: not an integer (%s); taken as 0", truncate(string(c.Index), 40))
			} else if i != 0 {
				s.others = true
				continue
			}
		}
		if !absent(c.FinishReason) {
			var fr string
			if json.Unmarshal(c.FinishReason, &fr) != nil {
				s.note("finish_reason ignored: not a string (%s)", truncate(string(c.FinishReason), 40))
			} else {
				s.rec.FinishReason = fr
			}
		}
		if absent(c.Delta) {
			continue
		}
		var d rawDelta
		if json.Unmarshal(c.Delta, &d) != nil {
			s.note("delta ignored: not an object (%s)", truncate(string(c.Delta), 40))
			continue
		}
		if text := s.text("delta.content", d.Content); text != "" {
			token = true
			s.content.WriteString(text)
			s.answerAt()
		}
		if s.text("delta.reasoning_content", d.ReasoningContent) != "" || s.text("delta.reasoning", d.Reasoning) != "" {
			token = true
		}
		if text := s.text("delta.refusal", d.Refusal); text != "" {
			token = true
			s.refusal.WriteString(text)
			s.answerAt()
		}
		if s.toolCalls(d.ToolCalls) {
			token = true
		}
		if s.functionCall(d.FunctionCall) {
			token = true
		}
	}
	return token
}

// toolCalls applies a delta's tool_calls (see toolDelta) and reports
// whether any element carried a token. An element or field of an
// unexpected type is ignored with a note; an index that is absent or
// not an integer is taken as 0.
func (s *stream) toolCalls(raw json.RawMessage) (token bool) {
	if absent(raw) {
		return false
	}
	var calls []json.RawMessage
	if json.Unmarshal(raw, &calls) != nil {
		s.note("delta.tool_calls ignored: not an array (%s)", truncate(string(raw), 40))
		return false
	}
	for _, rc := range calls {
		var c rawToolCall
		if json.Unmarshal(rc, &c) != nil {
			s.note("a tool call ignored: not an object (%s)", truncate(string(rc), 40))
			continue
		}
		var index int64
		if !absent(c.Index) && json.Unmarshal(c.Index, &index) != nil {
			s.note("tool call index ignored: not an integer (%s); taken as 0", truncate(string(c.Index), 40))
			index = 0
		}
		id := s.str("tool call id", c.ID)
		var name, args string
		if !absent(c.Function) {
			var f rawFunction
			if json.Unmarshal(c.Function, &f) != nil {
				s.note("tool call function ignored: not an object (%s)", truncate(string(c.Function), 40))
			} else {
				name = s.str("tool call function.name", f.Name)
				args = s.str("tool call function.arguments", f.Arguments)
			}
		}
		if s.toolDelta(index, id, name != "", args != "") {
			token = true
		}
	}
	return token
}

// legacyCall is the tool-call index under which a legacy function_call
// is kept: one no real tool_calls index takes.
const legacyCall = -1 << 63

// functionCall applies a delta's legacy function_call ({"name",
// "arguments"}, the single call OpenAI streamed before tool_calls, still
// sent by older API versions) as a tool call of its own; it reports
// whether it carried a name or arguments.
func (s *stream) functionCall(raw json.RawMessage) bool {
	var f rawFunction
	if !s.decodeObject("delta.function_call", raw, &f) {
		return false
	}
	name, args := s.str("function_call.name", f.Name), s.str("function_call.arguments", f.Arguments)
	return s.toolDelta(legacyCall, "", name != "", args != "")
}

// text decodes a delta's text: a string, or an array of typed parts
// ([{"type":"text","text":"..."}]) whose texts are joined. Anything else
// is ignored with a note.
func (s *stream) text(field string, raw json.RawMessage) string {
	if absent(raw) {
		return ""
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) == nil {
		var sb strings.Builder
		for _, p := range parts {
			var part struct {
				Text json.RawMessage `json:"text"`
			}
			var t string
			if json.Unmarshal(p, &part) == nil && json.Unmarshal(part.Text, &t) == nil {
				sb.WriteString(t)
			}
		}
		return sb.String()
	}
	s.note("%s ignored: neither a string nor an array of parts (%s)", field, truncate(string(raw), 40))
	return ""
}

// completion reads a non-streamed chat.completion body (a JSON answer,
// as Instrument sees it from a client that did not stream) into the
// record, as the stream's decoder reads chunks: the model, usage (also in
// x_groq), finish_reason and choice 0's message: its content (a string or
// text parts), refusal and tool_calls (each element a call; the first
// one's name and arguments arrived with the body, at now, which sets
// FirstToolCall and ToolArgsDone). The token clocks stay NotObserved: a
// whole answer in one body has no first token to time. It returns the
// verdict: content_filter, refusal, empty_answer (no content and no tool
// call), bad_stream for an error object; "" for a good answer. ok is false,
// and nothing changed, when body is not a chat completion (not a JSON
// object with choices, or one cut short): then it judges nothing.
func (s *stream) completion(body []byte) (class, detail string, ok bool) {
	var c struct {
		rawChunk
		Choices []json.RawMessage `json:"choices"`
	}
	if json.Unmarshal(body, &c) != nil {
		return "", "", false
	}
	if !absent(c.Error) {
		return ClassBadStream, "error object in a 2xx answer: " + errorText(c.Error), true
	}
	if c.Choices == nil {
		return "", "", false
	}
	if !absent(c.Model) {
		var m string
		if json.Unmarshal(c.Model, &m) == nil && m != "" {
			s.rec.Model = m
		}
	}
	if !absent(c.XGroq) {
		var xg struct {
			Usage json.RawMessage `json:"usage"`
		}
		if json.Unmarshal(c.XGroq, &xg) == nil {
			s.usage(xg.Usage)
		}
	}
	s.usage(c.Usage)
	var message, refusal string
	for _, raw := range c.Choices {
		var ch struct {
			Index        json.RawMessage `json:"index"`
			Message      json.RawMessage `json:"message"`
			FinishReason json.RawMessage `json:"finish_reason"`
		}
		var i int
		if json.Unmarshal(raw, &ch) != nil || !absent(ch.Index) && (json.Unmarshal(ch.Index, &i) != nil || i != 0) {
			s.others = true
			continue
		}
		if !absent(ch.FinishReason) {
			s.rec.FinishReason = s.str("finish_reason", ch.FinishReason)
		}
		var m struct {
			Content      json.RawMessage `json:"content"`
			Refusal      json.RawMessage `json:"refusal"`
			ToolCalls    []rawToolCall   `json:"tool_calls"`
			FunctionCall json.RawMessage `json:"function_call"`
		}
		if absent(ch.Message) || json.Unmarshal(ch.Message, &m) != nil {
			s.note("message ignored: not an object")
			continue
		}
		message += s.text("message.content", m.Content)
		refusal += s.text("message.refusal", m.Refusal)
		if !absent(m.FunctionCall) {
			m.ToolCalls = append(m.ToolCalls, rawToolCall{Function: m.FunctionCall})
		}
		for _, tc := range m.ToolCalls {
			var f rawFunction
			if !absent(tc.Function) && json.Unmarshal(tc.Function, &f) != nil {
				s.note("tool call function ignored: not an object (%s)", truncate(string(tc.Function), 40))
			}
			name, args := s.str("tool call function.name", f.Name), s.str("tool call function.arguments", f.Arguments)
			if s.str("tool call id", tc.ID) == "" && name == "" && args == "" {
				continue
			}
			s.rec.ToolCalls++
			if s.rec.ToolCalls == 1 {
				s.rec.FirstToolCall, s.rec.ToolArgsDone = s.now, s.now
			}
		}
	}
	s.content.WriteString(message)
	s.refusal.WriteString(refusal)
	s.finish()
	switch {
	case s.rec.FinishReason == "content_filter":
		return ClassContentFilter, "the provider's content filter stopped the answer (finish_reason content_filter): a policy outcome, not latency", true
	case refusal != "":
		return ClassRefusal, "refused: " + truncate(refusal, 200), true
	case message == "" && s.rec.ToolCalls == 0:
		return ClassEmptyAnswer, fmt.Sprintf("no answer content or tool call (finish_reason %q)", s.rec.FinishReason), true
	}
	return "", "", true
}

// maxCount bounds a usage count: anything above is not a token count.
const maxCount = chunkscan.MaxCount

// usage takes the token counts of a usage object; a count that is not a
// whole number in [0, 2^31) is ignored with a note.
func (s *stream) usage(raw json.RawMessage) {
	var u rawUsage
	if s.decodeObject("usage", raw, &u) {
		s.applyUsage(chatUsageKeys, u.PromptTokens, u.CompletionTokens, u.PromptTokensDetails, u.CompletionTokensDetails)
	}
}

// decodeObject decodes the object field into v (a pointer to its raw
// fields); false when it is absent or null, or not an object (noted:
// "<field> ignored: not an object").
func (s *stream) decodeObject(field string, raw json.RawMessage, v any) bool {
	if absent(raw) {
		return false
	}
	if json.Unmarshal(raw, v) != nil {
		s.note("%s ignored: not an object (%s)", field, truncate(string(raw), 40))
		return false
	}
	return true
}

// usageKeys name a protocol's usage fields: the prompt and answer counts
// and their details objects (cached and reasoning tokens inside).
type usageKeys struct{ in, out, inDetails, outDetails string }

// chatUsageKeys are chat completions' usage fields.
var chatUsageKeys = usageKeys{"prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"}

// applyUsage records a usage object's counts (each checked by count, a
// note for what is not a count): the prompt and answer tokens, the cached
// tokens in the input details and the reasoning tokens in the output
// details.
func (s *stream) applyUsage(k usageKeys, in, out, inDetails, outDetails json.RawMessage) {
	if n, ok := s.count("usage."+k.in, in); ok {
		s.rec.PromptTokens, s.rec.UsageReported = n, true
	}
	if n, ok := s.count("usage."+k.out, out); ok {
		s.rec.CompletionTokens, s.rec.UsageReported = n, true
	}
	var details struct {
		CachedTokens    json.RawMessage `json:"cached_tokens"`
		ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
	}
	if !absent(inDetails) {
		if json.Unmarshal(inDetails, &details) != nil {
			s.note("usage.%s ignored: not an object", k.inDetails)
		} else if n, ok := s.count("usage."+k.inDetails+".cached_tokens", details.CachedTokens); ok {
			s.rec.CachedTokens, s.rec.CachedReported = n, true
		}
	}
	details.CachedTokens, details.ReasoningTokens = nil, nil
	if !absent(outDetails) {
		if json.Unmarshal(outDetails, &details) != nil {
			s.note("usage.%s ignored: not an object", k.outDetails)
		} else if n, ok := s.count("usage."+k.outDetails+".reasoning_tokens", details.ReasoningTokens); ok {
			s.rec.ReasoningTokens = n
		}
	}
}

// count decodes a token count; ok is false when it is absent or not a
// count (noted).
func (s *stream) count(field string, raw json.RawMessage) (n int, ok bool) {
	if absent(raw) {
		return 0, false
	}
	v := string(raw)
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		if i >= 0 && i <= maxCount {
			return int(i), true
		}
	} else if f, err := strconv.ParseFloat(v, 64); err == nil && f == math.Trunc(f) && f >= 0 && f <= maxCount {
		return int(f), true
	}
	s.note("%s = %s ignored: not a token count", field, truncate(v, 40))
	return 0, false
}

// fastEvent applies a chunk the fast path could read; ok is false (and
// nothing changed) when data must go through event.
func (s *stream) fastEvent(data []byte) (token, ok bool) {
	var f chunkscan.Facts
	if !s.last.Match(data, &f) {
		if !chunkscan.Scan(data, &f) {
			return false, false
		}
		s.last.Keep(data, &f)
	}
	// Strings with escapes are decoded before anything changes.
	var model, finish, content, refusal []byte
	var modelS, finishS, contentS, refusalS string
	decode := func(sp chunkscan.Span, esc bool, b *[]byte, str *string) bool {
		if t, ok := chunkscan.Text(data, sp, esc); ok {
			*b = t
			return true
		}
		v, ok := chunkscan.Unquote(data, sp)
		*str = v
		return ok
	}
	if f.Used && !decode(f.Model, f.ModelEsc, &model, &modelS) ||
		f.HasFinish && !decode(f.Finish, f.FinishEsc, &finish, &finishS) ||
		f.HasContent && !decode(f.Content, f.ContentEsc, &content, &contentS) ||
		f.HasRefusal && !decode(f.Refusal, f.RefusalEsc, &refusal, &refusalS) {
		return false, false
	}
	var ids [chunkscan.MaxTools]string
	for k, tc := range f.Tools[:f.NTools] {
		if tc.HasID {
			var b []byte
			if !decode(tc.ID, tc.IDEsc, &b, &ids[k]) {
				return false, false
			}
			if b != nil {
				ids[k] = string(b)
			}
		}
	}
	rec := s.rec
	if f.Used {
		switch {
		case len(model) > 0 && string(model) != rec.Model:
			rec.Model = string(model)
		case model == nil && modelS != "":
			rec.Model = modelS
		}
	}
	if f.PromptTokens >= 0 {
		rec.PromptTokens, rec.UsageReported = int(f.PromptTokens), true
	}
	if f.Completion >= 0 {
		rec.CompletionTokens, rec.UsageReported = int(f.Completion), true
	}
	if f.Cached >= 0 {
		rec.CachedTokens, rec.CachedReported = int(f.Cached), true
	}
	if f.ReasoningTokens >= 0 {
		rec.ReasoningTokens = int(f.ReasoningTokens)
	}
	if f.Others {
		s.others = true
	}
	if f.HasFinish {
		if finish != nil {
			if string(finish) != rec.FinishReason {
				rec.FinishReason = string(finish)
			}
		} else {
			rec.FinishReason = finishS
		}
	}
	if len(content) > 0 || contentS != "" {
		token = true
		s.content.Write(content)
		s.content.WriteString(contentS)
		s.answerAt()
	}
	if f.Reasoning {
		token = true
	}
	if len(refusal) > 0 || refusalS != "" {
		token = true
		s.refusal.Write(refusal)
		s.refusal.WriteString(refusalS)
		s.answerAt()
	}
	for k, tc := range f.Tools[:f.NTools] {
		if s.toolDelta(tc.Index, ids[k], tc.Name, tc.Args) {
			token = true
		}
	}
	return token, true
}

// dispatch decodes one event with the stream's protocol.
func (s *stream) dispatch(ev sse.Event) bool {
	if s.proto != nil {
		return s.proto.event(s, ev)
	}
	return s.event(ev)
}

// endMark names what a good stream ends with: "[DONE]" for chat.
func (s *stream) endMark() string {
	if s.proto != nil {
		return s.proto.terminal()
	}
	return "[DONE]"
}

// answerAt marks the first answer (text, refusal or tool call) now.
func (s *stream) answerAt() {
	if s.rec.FirstAnswer < 0 {
		s.rec.FirstAnswer = s.now
	}
}

// toolCallStarted counts a tool call whose name arrived now: the first
// one sets FirstToolCall (ToolArgsDone waits for its arguments, as in
// chat completions).
func (s *stream) toolCallStarted() {
	s.rec.ToolCalls++
	if s.rec.ToolCalls == 1 {
		s.rec.FirstToolCall = s.now
	}
	s.answerAt()
}

// toolArgs times an arguments delta of tool call n (from 1 in order of
// arrival): the first call's last delta is its ToolArgsDone.
func (s *stream) toolArgs(n int) {
	if n == 1 {
		s.rec.ToolArgsDone = s.now
	}
	s.answerAt()
}

// fail marks the stream bad (the first reason wins) and stops it.
func (s *stream) fail(format string, args ...any) {
	if s.bad == "" {
		s.bad = fmt.Sprintf(format, args...)
	}
	s.stop = true
}

// str decodes a JSON string field; absent or not a string gives "" (the
// latter noted).
func (s *stream) str(field string, raw json.RawMessage) string {
	if absent(raw) {
		return ""
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		s.note("%s ignored: not a string (%s)", field, truncate(string(raw), 40))
		return ""
	}
	return v
}

// unknownEvent notes an event type the decoder does not know, once per
// type; the event is skipped.
func (s *stream) unknownEvent(typ string) {
	s.note("unknown event type %q skipped", truncate(typ, 60))
}

// responsesUsage takes a Responses usage object: input_tokens,
// output_tokens, input_tokens_details.cached_tokens and
// output_tokens_details.reasoning_tokens.
func (s *stream) responsesUsage(raw json.RawMessage) {
	var u struct {
		InputTokens         json.RawMessage `json:"input_tokens"`
		OutputTokens        json.RawMessage `json:"output_tokens"`
		InputTokensDetails  json.RawMessage `json:"input_tokens_details"`
		OutputTokensDetails json.RawMessage `json:"output_tokens_details"`
	}
	if !s.decodeObject("usage", raw, &u) {
		return
	}
	s.applyUsage(usageKeys{"input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details"},
		u.InputTokens, u.OutputTokens, u.InputTokensDetails, u.OutputTokensDetails)
}
