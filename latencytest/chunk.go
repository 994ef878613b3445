package latencytest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The fast path: most events of a chat-completions stream are one chunk of
// one shape ({"id":…,"model":…,"choices":[{"index":0,"delta":{"content":
// "…"}}],"usage":null}), and decoding each through encoding/json's
// reflection costs more than the rest of the client together. fastChunk
// scans such a chunk's bytes once, validating the whole document as
// encoding/json would, and hands back what stream.event would take from
// it. Anything it is not sure of (a field of an unexpected type, a key that
// matches a known field only case-insensitively, a duplicate key, a
// surrogate escape, invalid UTF-8, a non-integer count, an error field, a
// second choice 0, an array of text parts) makes it give up before it has
// changed anything, and the event goes through encoding/json (stream.event).
// So both paths give the same records by construction, and a test checks
// it on every event the package's tests decode (see chunk_test.go).

// chunkFacts is what the fast path took from one chunk.
type chunkFacts struct {
	model                     span
	promptTokens, completion  int64 // -1: absent
	cached, reasoningTokens   int64 // -1: absent
	choice0                   bool  // a choice with index 0 (or none) was seen
	others                    bool  // a choice with another index was seen
	finish                    span
	hasFinish                 bool
	content, refusal          span
	reasoning                 bool // non-empty reasoning_content or reasoning
	hasContent, hasRefusal    bool
	contentEsc, refusalEsc    bool
	modelEsc, finishEsc, used bool
	tools                     [maxFastTools]toolFacts // choice 0's delta.tool_calls, in order
	nTools                    int
}

// maxFastTools is how many elements of a delta's tool_calls the fast path
// takes; more go the slow way.
const maxFastTools = 4

// toolFacts is one element of a delta's tool_calls: what stream.toolDelta
// takes from it.
type toolFacts struct {
	index        int64
	id           span
	idEsc, hasID bool
	name, args   bool // a non-empty function.name, function.arguments
}

// span is a string's bytes inside the chunk, quotes excluded; esc is set
// when it holds escapes.
type span struct{ start, end int }

var (
	chunkFields  = []string{"model", "choices", "usage", "error", "object", "message", "x_groq"}
	choiceFields = []string{"index", "delta", "finish_reason"}
	deltaFields  = []string{"content", "reasoning_content", "reasoning", "refusal", "tool_calls", "function_call"}
	toolFields   = []string{"index", "id", "function"}
	funcFields   = []string{"name", "arguments"}
	usageFields  = []string{"prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"}
	detailFields = []string{"cached_tokens", "reasoning_tokens"}
)

// fastChunk scans data; ok is false when the event must take the slow
// path.
func fastChunk(data []byte, f *chunkFacts) (ok bool) {
	*f = chunkFacts{promptTokens: -1, completion: -1, cached: -1, reasoningTokens: -1}
	s := chunkScanner{b: data}
	var seen uint32
	once := func(bit int) bool {
		if seen&(1<<bit) != 0 {
			return false // a duplicate key: encoding/json takes the last
		}
		seen |= 1 << bit
		return true
	}
	ok = s.object(func(key []byte) bool {
		i, fold := known(key, chunkFields...)
		if fold || (i >= 0 && !once(i)) {
			return false
		}
		switch i {
		case 0: // model
			sp, esc, present, ok := s.optString()
			if present {
				f.model, f.modelEsc, f.used = sp, esc, true
			}
			return ok
		case 1: // choices
			if s.null() {
				return true
			}
			return s.array(func() bool { return s.choice(f) })
		case 2: // usage
			if s.null() {
				return true
			}
			return s.usage(f)
		case 3: // error: only null is the common case
			return s.null()
		case 4: // object: "error" (or what might decode to it) goes the slow way
			if s.peek() == '"' {
				sp, esc, ok := s.str()
				return ok && !esc && string(data[sp.start:sp.end]) != "error"
			}
			return s.skip(0)
		case 6: // x_groq: usage in it (once a stream) goes the slow way
			if s.null() {
				return true
			}
			return s.object(func(key []byte) bool {
				switch i, fold := known(key, "usage"); {
				case fold:
					return false
				case i == 0:
					return s.null() // a usage that is not null: the slow way
				}
				return s.skip(0)
			})
		}
		return s.skip(0)
	})
	if !ok {
		return false
	}
	s.ws()
	return s.i == len(data)
}

// choice scans one element of choices.
func (s *chunkScanner) choice(f *chunkFacts) bool {
	if s.null() {
		// encoding/json leaves a null choice empty: index 0, no delta.
		if f.choice0 {
			return false
		}
		f.choice0 = true
		return true
	}
	var seen uint32
	index := int64(0)
	var delta chunkFacts
	ok := s.object(func(key []byte) bool {
		i, fold := known(key, choiceFields...)
		if fold || (i >= 0 && seen&(1<<i) != 0) {
			return false
		}
		if i >= 0 {
			seen |= 1 << i
		}
		switch i {
		case 0: // index
			if s.null() {
				return true
			}
			sp, digits, ok := s.number()
			if !ok || !digits || sp.end-sp.start > 18 {
				return false
			}
			index, _ = strconv.ParseInt(string(s.b[sp.start:sp.end]), 10, 64)
			return true
		case 1: // delta
			if s.null() {
				return true
			}
			return s.delta(&delta)
		case 2: // finish_reason
			sp, esc, present, ok := s.optString()
			if present {
				delta.finish, delta.finishEsc, delta.hasFinish = sp, esc, true
			}
			return ok
		}
		return s.skip(0)
	})
	if !ok {
		return false
	}
	if index != 0 {
		f.others = true
		return true
	}
	if f.choice0 {
		return false // a second choice 0: rare, the slow way
	}
	f.choice0 = true
	f.finish, f.finishEsc, f.hasFinish = delta.finish, delta.finishEsc, delta.hasFinish
	f.content, f.contentEsc, f.hasContent = delta.content, delta.contentEsc, delta.hasContent
	f.refusal, f.refusalEsc, f.hasRefusal = delta.refusal, delta.refusalEsc, delta.hasRefusal
	f.reasoning = delta.reasoning
	f.tools, f.nTools = delta.tools, delta.nTools
	return true
}

// delta scans a choice's delta object.
func (s *chunkScanner) delta(f *chunkFacts) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		i, fold := known(key, deltaFields...)
		if fold || (i >= 0 && seen&(1<<i) != 0) {
			return false
		}
		if i < 0 {
			return s.skip(0)
		}
		seen |= 1 << i
		switch i {
		case 4: // tool_calls
			if s.null() {
				return true
			}
			return s.array(func() bool { return s.toolCall(f) })
		case 5: // the legacy function_call: rare, the slow way unless null
			return s.null()
		}
		sp, esc, present, ok := s.optString() // an array of parts: the slow way
		if !ok || !present {
			return ok
		}
		switch i {
		case 0:
			f.content, f.contentEsc, f.hasContent = sp, esc, true
		case 1, 2:
			// Every escape decodes to at least one byte: a non-empty
			// string is non-empty text.
			f.reasoning = f.reasoning || sp.end > sp.start
		case 3:
			f.refusal, f.refusalEsc, f.hasRefusal = sp, esc, true
		}
		return true
	})
}

// toolCall scans one element of a delta's tool_calls: an object whose
// index is null or a plain integer, id null or a string, function null
// or an object of strings; anything else (a null element included) goes
// the slow way, as does a fifth element.
func (s *chunkScanner) toolCall(f *chunkFacts) bool {
	if f.nTools == maxFastTools || s.peek() != '{' {
		return false
	}
	var t toolFacts
	var seen uint32
	ok := s.object(func(key []byte) bool {
		i, fold := known(key, toolFields...)
		if fold || (i >= 0 && seen&(1<<i) != 0) {
			return false
		}
		if i < 0 {
			return s.skip(0)
		}
		seen |= 1 << i
		switch i {
		case 0: // index
			if s.null() {
				return true
			}
			sp, digits, ok := s.number()
			if !ok || !digits || sp.end-sp.start > 18 {
				return false
			}
			t.index, _ = strconv.ParseInt(string(s.b[sp.start:sp.end]), 10, 64)
			return true
		case 1: // id
			sp, esc, present, ok := s.optString()
			if present && sp.end > sp.start {
				t.id, t.idEsc, t.hasID = sp, esc, true
			}
			return ok
		}
		// function
		if s.null() {
			return true
		}
		var fseen uint32
		return s.object(func(key []byte) bool {
			j, fold := known(key, funcFields...)
			if fold || (j >= 0 && fseen&(1<<j) != 0) {
				return false
			}
			if j < 0 {
				return s.skip(0)
			}
			fseen |= 1 << j
			sp, _, present, ok := s.optString()
			// Every escape decodes to at least one byte: a non-empty
			// string is non-empty text.
			nonEmpty := present && sp.end > sp.start
			if j == 0 {
				t.name = nonEmpty
			} else {
				t.args = nonEmpty
			}
			return ok
		})
	})
	if !ok {
		return false
	}
	f.tools[f.nTools] = t
	f.nTools++
	return true
}

// usage scans a usage object.
func (s *chunkScanner) usage(f *chunkFacts) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		i, fold := known(key, usageFields...)
		if fold || (i >= 0 && seen&(1<<i) != 0) {
			return false
		}
		if i < 0 {
			return s.skip(0)
		}
		seen |= 1 << i
		var ok bool
		switch i {
		case 0:
			f.promptTokens, ok = s.optCount()
		case 1:
			f.completion, ok = s.optCount()
		case 2:
			f.cached, ok = s.detail(0)
		case 3:
			f.reasoningTokens, ok = s.detail(1)
		}
		return ok
	})
}

// detail scans a usage details object for detailFields[want]: -1 when
// absent or null.
func (s *chunkScanner) detail(want int) (n int64, ok bool) {
	n = -1
	if s.null() {
		return n, true
	}
	var seen uint32
	ok = s.object(func(key []byte) bool {
		i, fold := known(key, detailFields...)
		if fold || (i >= 0 && seen&(1<<i) != 0) {
			return false
		}
		if i != want {
			if i >= 0 {
				seen |= 1 << i
			}
			return s.skip(0)
		}
		seen |= 1 << i
		var ok bool
		n, ok = s.optCount()
		return ok
	})
	return n, ok
}

// text returns a string span's text, decoded as encoding/json decodes it.
func text(data []byte, sp span, esc bool) ([]byte, bool) {
	raw := data[sp.start:sp.end]
	if !esc {
		return raw, true
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		// Bytes above 0x7F only: as they are when they are valid UTF-8.
		return raw, utf8.Valid(raw)
	}
	return nil, false
}

// unquote decodes a JSON string span through encoding/json (escapes,
// surrogates, invalid UTF-8 all as it decodes them).
func unquote(data []byte, sp span) (string, bool) {
	var str string
	if json.Unmarshal(data[sp.start-1:sp.end+1], &str) != nil {
		return "", false
	}
	return str, true
}

// fastEvent applies a chunk the fast path could read; ok is false (and
// nothing changed) when data must go through event.
func (s *stream) fastEvent(data []byte) (token, ok bool) {
	var f chunkFacts
	if !s.last.match(data, &f) {
		if !fastChunk(data, &f) {
			return false, false
		}
		s.last.keep(data, &f)
	}
	// Strings with escapes are decoded before anything changes.
	var model, finish, content, refusal []byte
	var modelS, finishS, contentS, refusalS string
	decode := func(sp span, esc bool, b *[]byte, str *string) bool {
		if t, ok := text(data, sp, esc); ok {
			*b = t
			return true
		}
		v, ok := unquote(data, sp)
		*str = v
		return ok
	}
	if f.used && !decode(f.model, f.modelEsc, &model, &modelS) ||
		f.hasFinish && !decode(f.finish, f.finishEsc, &finish, &finishS) ||
		f.hasContent && !decode(f.content, f.contentEsc, &content, &contentS) ||
		f.hasRefusal && !decode(f.refusal, f.refusalEsc, &refusal, &refusalS) {
		return false, false
	}
	var ids [maxFastTools]string
	for k, tc := range f.tools[:f.nTools] {
		if tc.hasID {
			var b []byte
			if !decode(tc.id, tc.idEsc, &b, &ids[k]) {
				return false, false
			}
			if b != nil {
				ids[k] = string(b)
			}
		}
	}
	rec := s.rec
	if f.used {
		switch {
		case len(model) > 0 && string(model) != rec.Model:
			rec.Model = string(model)
		case model == nil && modelS != "":
			rec.Model = modelS
		}
	}
	if f.promptTokens >= 0 {
		rec.PromptTokens, rec.UsageReported = int(f.promptTokens), true
	}
	if f.completion >= 0 {
		rec.CompletionTokens, rec.UsageReported = int(f.completion), true
	}
	if f.cached >= 0 {
		rec.CachedTokens, rec.CachedReported = int(f.cached), true
	}
	if f.reasoningTokens >= 0 {
		rec.ReasoningTokens = int(f.reasoningTokens)
	}
	if f.others {
		s.others = true
	}
	if f.hasFinish {
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
		if rec.FirstAnswer < 0 {
			rec.FirstAnswer = s.now
		}
	}
	if f.reasoning {
		token = true
	}
	if len(refusal) > 0 || refusalS != "" {
		token = true
		s.refusal.Write(refusal)
		s.refusal.WriteString(refusalS)
		if rec.FirstAnswer < 0 {
			rec.FirstAnswer = s.now
		}
	}
	for k, tc := range f.tools[:f.nTools] {
		if s.toolDelta(tc.index, ids[k], tc.name, tc.args) {
			token = true
		}
	}
	return token, true
}

// chunkTemplate is the last chunk the fast path scanned whole, kept when
// the answer text is the last string in it: most chunks of a stream are
// that chunk again with other text (the same id, model and created
// time), and match reads such a chunk by comparing its bytes with the
// template's around the text, scanning only the text. Bytes equal up to
// the text's opening quote leave a JSON scanner in the same state there,
// a valid string brings it to the closing quote, and equal bytes after
// it end the document in the same way: the chunk's facts are the
// template's with the new text, as fastChunk would find them.
type chunkTemplate struct {
	data  []byte // the template's bytes (nil: none)
	facts chunkFacts
}

// keep makes data (just scanned whole into f) the template, when its
// content is its last string.
func (t *chunkTemplate) keep(data []byte, f *chunkFacts) {
	t.data = t.data[:0]
	if !f.hasContent || f.hasFinish || f.hasRefusal || f.nTools > 0 || f.used && f.model.end > f.content.start {
		return
	}
	t.data, t.facts = append(t.data, data...), *f
}

// match reads data as the template with other text, into f; false when
// it is not.
func (t *chunkTemplate) match(data []byte, f *chunkFacts) bool {
	if len(t.data) == 0 {
		return false
	}
	open := t.facts.content.start - 1 // the text's opening quote
	if len(data) <= open || !bytes.Equal(data[:open+1], t.data[:open+1]) {
		return false
	}
	s := chunkScanner{b: data, i: open}
	sp, esc, ok := s.str()
	if !ok || !bytes.Equal(data[s.i:], t.data[t.facts.content.end+1:]) {
		return false
	}
	*f = t.facts
	f.content, f.contentEsc = sp, esc
	return true
}
