package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tailguard/tailguard/internal/chathook"
	"github.com/tailguard/tailguard/internal/chunkscan"
)

// Chat is OpenAI's chat completions, as most servers speak it: POST
// {base}/chat/completions, the key as a bearer token, usage asked for
// with stream_options.include_usage; a stream ends at "data: [DONE]".
// Reasoning is whatever a vendor's extension marks as such, never the
// answer: reasoning_content (DeepSeek, vLLM), reasoning (vLLM, Ollama,
// OpenRouter), thinking, content parts of type thinking (Mistral), and
// content flagged extra_content.google.thought (Gemini's thought
// summaries, whose closing "</thought>" opens the first answer delta and
// is cut from it).
// Its decoder reads the common chunk without reflection (see
// internal/chunkscan) and anything else with encoding/json, to the same
// record.
var Chat = &Protocol{
	Name: NameChat, Title: "OpenAI", Kind: "openai-chat-completions",
	Path:          func(string) string { return "/chat/completions" },
	Body:          chatBody,
	Env:           openAIEnv,
	UsageKey:      "stream_options",
	NewDecoder:    func() Decoder { return &chatDecoder{} },
	Terminal:      "[DONE]",
	Answer:        "a chat completion",
	IsAnswer:      chatIsAnswer,
	MatchPath:     func(p string) bool { return pathEnds(p, "/chat/completions", "/completions") },
	EndOfSequence: func(r string) bool { return r == "stop" },
}

// openAIEnv are OpenAI's SDKs' variables, which Chat and Responses read.
var openAIEnv = Env{BaseURL: "OPENAI_BASE_URL", APIKey: "OPENAI_API_KEY", Model: "OPENAI_MODEL"}

// Chat's Whole names the other protocols' answers (see chatWhole), which
// the table holds: set here, as a field that refers to the table cannot
// be initialised in the var that the table refers to.
func init() { Chat.Whole = chatWhole }

// chatBody encodes the request body as json.Marshal encodes the map
// {"max_tokens", "messages", "model", "stream", "stream_options",
// "temperature"} (keys sorted, max_tokens and temperature only when set,
// stream_options only with Usage and Stream), without reflection.
func chatBody(r Request) ([]byte, error) {
	n := 96 + len(r.Model)
	for _, m := range r.Messages {
		n += 32 + len(m.Role) + len(m.Content)
	}
	b := make([]byte, 0, n+n/8)
	b = append(b, '{')
	if r.MaxTokens > 0 {
		b = append(b, `"max_tokens":`...)
		b = strconv.AppendInt(b, int64(r.MaxTokens), 10)
		b = append(b, ',')
	}
	b = append(b, `"messages":`...)
	if r.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range r.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"role":`...)
			b = appendJSONString(b, m.Role)
			b = append(b, `,"content":`...)
			b = appendJSONString(b, m.Content)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"model":`...)
	b = appendJSONString(b, r.Model)
	b = strconv.AppendBool(append(b, `,"stream":`...), r.Stream)
	if r.Stream && r.Usage {
		b = append(b, `,"stream_options":{"include_usage":true}`...)
	}
	if r.Temperature != nil {
		t, err := json.Marshal(*r.Temperature)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"temperature":`...)
		b = append(b, t...)
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as encoding/json writes it: printable ASCII
// other than " \ < > & as it is, anything else through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7F || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// chatDecoder decodes a chat-completions stream.
type chatDecoder struct {
	others bool               // a choice other than index 0 was seen
	last   chunkscan.Template // the last chunk scanned whole (see fast)
	// toolAt is the tool call each tool-call index is on (see toolDelta);
	// nil until the first tool-call delta.
	toolAt map[int64]toolSlot
	// thought is set by content flagged as a thought (Gemini's), until
	// the next unflagged content, whose leading "</thought>" is cut.
	thought bool
}

// toolSlot is the tool call a tool-call index is on: its number (from 1,
// in the order the calls began), its id and whether its name arrived.
type toolSlot struct {
	call  int
	id    string
	named bool
}

func init() {
	chathook.New = func() (func(any, []byte) (bool, bool), func(any, []byte) bool, func(any)) {
		d := &chatDecoder{}
		return func(s any, data []byte) (bool, bool) { return d.fast(s.(Sink), data) },
			func(s any, data []byte) bool { return d.slow(s.(Sink), data) },
			func(s any) { d.End(s.(Sink)) }
	}
}

func (d *chatDecoder) Event(s Sink, typ string, data []byte) (token bool) {
	if typ == "error" {
		s.Fail("error event: " + eventError(string(data)))
		return false
	}
	if isDone(data) {
		s.Done()
		return false
	}
	if token, ok := d.fast(s, data); ok {
		if chathook.Check != nil {
			chathook.Check(data)
		}
		return token
	}
	return d.slow(s, data)
}

// End notes choices other than index 0.
func (d *chatDecoder) End(s Sink) {
	if d.others {
		s.Note("choices other than index 0 ignored (n > 1): only the first choice is measured")
	}
}

// isDone reports whether data is "[DONE]", spaces around it allowed.
func isDone(data []byte) bool { return string(bytes.TrimSpace(data)) == "[DONE]" }

// toolDelta applies one element of a delta's tool_calls: its index, its
// id ("" when absent) and whether it carried a non-empty function name
// and arguments. It reports whether the element carried anything (an id,
// a name or arguments): then it is a token of the answer. A call is
// counted at its index's first element that carries anything; an
// element with a name and an id other than the one its index already
// has, on an index whose call was named, begins a new call there (some
// servers, Ollama's among them, send parallel calls all at index 0).
func (d *chatDecoder) toolDelta(s Sink, index int64, id string, name, args bool) (token bool) {
	if id == "" && !name && !args {
		return false
	}
	slot, ok := d.toolAt[index]
	if !ok || name && slot.named && id != "" && slot.id != "" && id != slot.id {
		slot = toolSlot{call: s.ToolCall()}
	}
	if id != "" && id != slot.id {
		slot.id = strings.Clone(id)
	}
	if name {
		slot.named = true
		s.ToolName(slot.call)
	}
	if args {
		s.ToolArgs(slot.call)
	}
	if d.toolAt == nil {
		d.toolAt = map[int64]toolSlot{}
	}
	d.toolAt[index] = slot
	return true
}

// rawChunk is a chat.completion.chunk decoded field by field, so that one
// field of an unexpected type loses that field only. Usage is read where
// vendors put it: "usage", or Groq's "x_groq": {"usage": ...} ("usage"
// wins when a chunk has both); a usage on every chunk (as Gemini's
// OpenAI-compatible API sends it) is read on every chunk, the last one
// winning.
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
	Thinking         json.RawMessage `json:"thinking"`
	ExtraContent     json.RawMessage `json:"extra_content"` // Gemini's: {"google": {"thought": true}}
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

// slow decodes one chunk with encoding/json and reports whether it
// carried a token of choice 0 (answer, reasoning, refusal or tool call).
func (d *chatDecoder) slow(s Sink, data []byte) (token bool) {
	var ch rawChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		s.Bad("malformed event: " + err.Error())
		return false
	}
	if !absent(ch.Error) {
		s.Fail("error event: " + errorText(ch.Error))
		return false
	}
	var object string
	if json.Unmarshal(ch.Object, &object) == nil && object == "error" {
		s.Fail("error event: " + errorText(ch.Message))
		return false
	}
	if !absent(ch.Model) {
		var m string
		if json.Unmarshal(ch.Model, &m) != nil {
			note(s, "model ignored: not a string (%s)", truncate(string(ch.Model), 40))
		} else if m != "" {
			s.Model(m)
		}
	}
	if !absent(ch.XGroq) {
		var xg struct {
			Usage json.RawMessage `json:"usage"`
		}
		if json.Unmarshal(ch.XGroq, &xg) != nil {
			note(s, "x_groq ignored: not an object (%s)", truncate(string(ch.XGroq), 40))
		} else {
			chatUsage(s, xg.Usage)
		}
	}
	chatUsage(s, ch.Usage)
	if absent(ch.Choices) {
		return false
	}
	var choices []json.RawMessage
	if json.Unmarshal(ch.Choices, &choices) != nil {
		note(s, "choices ignored: not an array (%s)", truncate(string(ch.Choices), 40))
		return false
	}
	for _, raw := range choices {
		var c rawChoice
		if json.Unmarshal(raw, &c) != nil {
			note(s, "a choice ignored: not an object (%s)", truncate(string(raw), 40))
			continue
		}
		if !absent(c.Index) {
			var i int
			if json.Unmarshal(c.Index, &i) != nil {
				note(s, "choice index ignored: not an integer (%s); taken as 0", truncate(string(c.Index), 40))
			} else if i != 0 {
				d.others = true
				continue
			}
		}
		if !absent(c.FinishReason) {
			var fr string
			if json.Unmarshal(c.FinishReason, &fr) != nil {
				note(s, "finish_reason ignored: not a string (%s)", truncate(string(c.FinishReason), 40))
			} else {
				s.Finish(fr)
			}
		}
		if absent(c.Delta) {
			continue
		}
		var dl rawDelta
		if json.Unmarshal(c.Delta, &dl) != nil {
			note(s, "delta ignored: not an object (%s)", truncate(string(c.Delta), 40))
			continue
		}
		text, thought := chatText(s, "delta.content", dl.Content)
		if isThought(dl.ExtraContent) {
			text, thought, d.thought = "", thought || text != "", true
		}
		if text = d.afterThought(text); text != "" {
			token = true
			s.Answer(text)
		}
		if thought || isReasoning(s, "delta.reasoning_content", dl.ReasoningContent) ||
			isReasoning(s, "delta.reasoning", dl.Reasoning) || isReasoning(s, "delta.thinking", dl.Thinking) {
			token = true
		}
		if text, _ := chatText(s, "delta.refusal", dl.Refusal); text != "" {
			token = true
			s.Refusal(text)
		}
		if d.toolCalls(s, dl.ToolCalls) {
			token = true
		}
		if d.functionCall(s, dl.FunctionCall) {
			token = true
		}
	}
	return token
}

// toolCalls applies a delta's tool_calls (see toolDelta) and reports
// whether any element carried a token. An element or field of an
// unexpected type is ignored with a note; an index that is absent or
// not an integer is taken as 0.
func (d *chatDecoder) toolCalls(s Sink, raw json.RawMessage) (token bool) {
	if absent(raw) {
		return false
	}
	var calls []json.RawMessage
	if json.Unmarshal(raw, &calls) != nil {
		note(s, "delta.tool_calls ignored: not an array (%s)", truncate(string(raw), 40))
		return false
	}
	for _, rc := range calls {
		var c rawToolCall
		if json.Unmarshal(rc, &c) != nil {
			note(s, "a tool call ignored: not an object (%s)", truncate(string(rc), 40))
			continue
		}
		var index int64
		if !absent(c.Index) && json.Unmarshal(c.Index, &index) != nil {
			note(s, "tool call index ignored: not an integer (%s); taken as 0", truncate(string(c.Index), 40))
			index = 0
		}
		id := str(s, "tool call id", c.ID)
		var name, args string
		if !absent(c.Function) {
			var f rawFunction
			if json.Unmarshal(c.Function, &f) != nil {
				note(s, "tool call function ignored: not an object (%s)", truncate(string(c.Function), 40))
			} else {
				name = str(s, "tool call function.name", f.Name)
				args = str(s, "tool call function.arguments", f.Arguments)
			}
		}
		if d.toolDelta(s, index, id, name != "", args != "") {
			token = true
		}
	}
	return token
}

// legacyCall is the tool-call index under which a legacy function_call
// is kept: one no real tool_calls index takes.
const legacyCall = -1 << 63

// functionCall applies a delta's legacy function_call ({"name",
// "arguments"}, the single call OpenAI streamed before tool_calls) as a
// tool call of its own; it reports whether it carried a name or
// arguments.
func (d *chatDecoder) functionCall(s Sink, raw json.RawMessage) bool {
	var f rawFunction
	if !decodeObject(s, "delta.function_call", raw, &f) {
		return false
	}
	name, args := str(s, "function_call.name", f.Name), str(s, "function_call.arguments", f.Arguments)
	return d.toolDelta(s, legacyCall, "", name != "", args != "")
}

// chatText decodes a delta's text: a string, or an array of typed parts
// ([{"type":"text","text":"..."}]) whose texts are joined; thought
// reports a part of type "thinking" or "reasoning" that carried text
// (Mistral's {"type":"thinking","thinking":[{"type":"text","text":...}]}),
// which is not in text. Anything else is ignored with a note.
func chatText(s Sink, field string, raw json.RawMessage) (text string, thought bool) {
	if absent(raw) {
		return "", false
	}
	var v string
	if json.Unmarshal(raw, &v) == nil {
		return v, false
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) == nil {
		var sb strings.Builder
		for _, p := range parts {
			var part struct {
				Type     string          `json:"type"`
				Text     json.RawMessage `json:"text"`
				Thinking json.RawMessage `json:"thinking"`
			}
			if json.Unmarshal(p, &part) != nil {
				continue
			}
			var t string
			if part.Type == "thinking" || part.Type == "reasoning" {
				if json.Unmarshal(part.Text, &t) == nil && t != "" {
					thought = true
				} else if t, th := chatText(s, field+" thinking", part.Thinking); t != "" || th {
					thought = true
				}
				continue
			}
			if json.Unmarshal(part.Text, &t) == nil {
				sb.WriteString(t)
			}
		}
		return sb.String(), thought
	}
	note(s, "%s ignored: neither a string nor an array of parts (%s)", field, truncate(string(raw), 40))
	return "", false
}

// isReasoning reports whether a reasoning field (a string or text parts)
// carried text.
func isReasoning(s Sink, field string, raw json.RawMessage) bool {
	text, thought := chatText(s, field, raw)
	return text != "" || thought
}

// isThought reports whether a delta's or message's extra_content flags
// its content as a thought: {"google": {"thought": true}}.
func isThought(raw json.RawMessage) bool {
	if absent(raw) {
		return false
	}
	var x struct {
		Google struct {
			Thought bool `json:"thought"`
		} `json:"google"`
	}
	return json.Unmarshal(raw, &x) == nil && x.Google.Thought
}

// thoughtEnd closes Gemini's thought summaries: the first answer delta
// after them begins with it.
const thoughtEnd = "</thought>"

// afterThought is unflagged content text as the answer: after a flagged
// thought, its leading thoughtEnd is cut (and the next content is taken
// as it is).
func (d *chatDecoder) afterThought(text string) string {
	if d.thought && text != "" {
		d.thought = false
		return strings.TrimPrefix(text, thoughtEnd)
	}
	return text
}

// chatUsage takes the token counts of a usage object.
func chatUsage(s Sink, raw json.RawMessage) {
	var u rawUsage
	if decodeObject(s, "usage", raw, &u) {
		applyUsage(s, usageKeys{"prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"},
			u.PromptTokens, u.CompletionTokens, u.PromptTokensDetails, u.CompletionTokensDetails)
	}
}

// chatIsAnswer reports whether a body is a JSON object with choices or an
// error object, as a chat completion (or its failure) is; a failed
// Responses object (its "object" is "response") is not.
func chatIsAnswer(body []byte) bool {
	var c struct {
		Choices json.RawMessage `json:"choices"`
		Error   json.RawMessage `json:"error"`
		Object  json.RawMessage `json:"object"`
	}
	return json.Unmarshal(body, &c) == nil && (!absent(c.Choices) || !absent(c.Error) && string(c.Object) != `"response"`)
}

// chatWhole reads a non-streamed chat.completion body, as the stream's
// decoder reads chunks: the model, usage (also in x_groq), finish_reason
// and choice 0's message: its content (a string or text parts), refusal
// and tool_calls (each element a call). A body that is not a chat
// completion (not a JSON object with choices, or one cut short) is an
// error naming what it is, and so is an error object.
func chatWhole(s Sink, body []byte) error {
	var c struct {
		rawChunk
		Choices []json.RawMessage `json:"choices"`
	}
	if json.Unmarshal(body, &c) != nil || absent(c.Error) && c.Choices == nil {
		what := "a JSON object with choices"
		if p := ByAnswer(body); p != nil && p != Chat {
			what = "it is " + p.Answer
		}
		return errors.New("the answer is not a chat completion (" + what + "): " + truncate(string(body), 120))
	}
	if !absent(c.Error) {
		return errors.New("error object in a 2xx answer: " + errorText(c.Error))
	}
	if !absent(c.Model) {
		var m string
		if json.Unmarshal(c.Model, &m) == nil && m != "" {
			s.Model(m)
		}
	}
	if !absent(c.XGroq) {
		var xg struct {
			Usage json.RawMessage `json:"usage"`
		}
		if json.Unmarshal(c.XGroq, &xg) == nil {
			chatUsage(s, xg.Usage)
		}
	}
	chatUsage(s, c.Usage)
	others := false
	for _, raw := range c.Choices {
		var ch struct {
			Index        json.RawMessage `json:"index"`
			Message      json.RawMessage `json:"message"`
			FinishReason json.RawMessage `json:"finish_reason"`
		}
		var i int
		if json.Unmarshal(raw, &ch) != nil || !absent(ch.Index) && (json.Unmarshal(ch.Index, &i) != nil || i != 0) {
			others = true
			continue
		}
		if !absent(ch.FinishReason) {
			s.Finish(str(s, "finish_reason", ch.FinishReason))
		}
		var m struct {
			Content      json.RawMessage `json:"content"`
			Refusal      json.RawMessage `json:"refusal"`
			ToolCalls    []rawToolCall   `json:"tool_calls"`
			FunctionCall json.RawMessage `json:"function_call"`
			ExtraContent json.RawMessage `json:"extra_content"`
		}
		if absent(ch.Message) || json.Unmarshal(ch.Message, &m) != nil {
			s.Note("message ignored: not an object")
			continue
		}
		text, _ := chatText(s, "message.content", m.Content)
		if isThought(m.ExtraContent) {
			text = wholeAfterThought(text)
		}
		if text != "" {
			s.Answer(text)
		}
		if text, _ := chatText(s, "message.refusal", m.Refusal); text != "" {
			s.Refusal(text)
		}
		if !absent(m.FunctionCall) {
			m.ToolCalls = append(m.ToolCalls, rawToolCall{Function: m.FunctionCall})
		}
		for _, tc := range m.ToolCalls {
			var f rawFunction
			if !absent(tc.Function) && json.Unmarshal(tc.Function, &f) != nil {
				note(s, "tool call function ignored: not an object (%s)", truncate(string(tc.Function), 40))
			}
			name, args := str(s, "tool call function.name", f.Name), str(s, "tool call function.arguments", f.Arguments)
			if str(s, "tool call id", tc.ID) == "" && name == "" && args == "" {
				continue
			}
			n := s.ToolCall()
			s.ToolName(n)
			s.ToolArgs(n)
		}
	}
	if others {
		s.Note("choices other than index 0 ignored (n > 1): only the first choice is measured")
	}
	return nil
}

// wholeAfterThought is the answer of a whole message flagged as a thought
// (Gemini's "<thought>…</thought>answer"): what follows its last
// thoughtEnd; none without one (it is all thought).
func wholeAfterThought(text string) string {
	if i := strings.LastIndex(text, thoughtEnd); i >= 0 {
		return text[i+len(thoughtEnd):]
	}
	return ""
}

// view is b as a string without a copy, valid while b is (a Sink copies
// what it keeps).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// fast applies a chunk the scanner could read; ok is false (and nothing
// changed) when data must go through slow.
func (d *chatDecoder) fast(s Sink, data []byte) (token, ok bool) {
	var f chunkscan.Facts
	if !d.last.Match(data, &f) {
		if !chunkscan.Scan(data, &f) {
			return false, false
		}
		d.last.Keep(data, &f)
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
				ids[k] = view(b)
			}
		}
	}
	if f.Used {
		switch {
		case len(model) > 0:
			s.Model(view(model))
		case model == nil && modelS != "":
			s.Model(modelS)
		}
	}
	if f.PromptTokens >= 0 {
		s.Count(PromptTokens, int(f.PromptTokens))
	}
	if f.Completion >= 0 {
		s.Count(CompletionTokens, int(f.Completion))
	}
	if f.Cached >= 0 {
		s.Count(CachedTokens, int(f.Cached))
	}
	if f.ReasoningTokens >= 0 {
		s.Count(ReasoningTokens, int(f.ReasoningTokens))
	}
	if f.Others {
		d.others = true
	}
	if f.HasFinish {
		if finish != nil {
			s.Finish(view(finish))
		} else {
			s.Finish(finishS)
		}
	}
	// A string is either decoded in place (content) or unquoted
	// (contentS), never both.
	if len(content) > 0 {
		contentS = view(content)
	}
	if contentS = d.afterThought(contentS); contentS != "" {
		token = true
		s.Answer(contentS)
	}
	if f.Reasoning {
		token = true
	}
	if len(refusal) > 0 {
		token = true
		s.Refusal(view(refusal))
	} else if refusalS != "" {
		token = true
		s.Refusal(refusalS)
	}
	for k, tc := range f.Tools[:f.NTools] {
		if d.toolDelta(s, tc.Index, ids[k], tc.Name, tc.Args) {
			token = true
		}
	}
	return token, true
}
