// Package chunkscan reads an OpenAI chat-completions chunk without
// encoding/json: [Scan] validates the chunk's JSON as encoding/json would
// and returns the few fields a stream decoder takes from it ([Facts]), or
// gives up; [Template] reads the next chunk of the same shape by scanning
// only its text.
//
// Most events of a chat-completions stream are one chunk of
// one shape ({"id":…,"model":…,"choices":[{"index":0,"delta":{"content":
// "…"}}],"usage":null}), and decoding each through encoding/json's
// reflection costs more than the rest of the client together. Scan
// scans such a chunk's bytes once, validating the whole document as
// encoding/json would, and hands back what the slow decoder would take from
// it. Anything it is not sure of (a field of an unexpected type, a key that
// matches a known field only case-insensitively, a duplicate key, a
// surrogate escape, invalid UTF-8, a non-integer count, an error field, a
// second choice 0, an array of text parts, a vendor's extra_content) makes
// it give up before the caller has changed anything, and the event goes
// through encoding/json.
// latencytest's tests check that both paths give the same records on
// every event they decode.
package chunkscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Facts is what Scan took from one chunk: spans into its bytes (see
// Text and Unquote) and counts, -1 where absent.
type Facts struct {
	Model                     Span
	PromptTokens, Completion  int64 // -1: absent
	Cached, ReasoningTokens   int64 // -1: absent
	Choice0                   bool  // a choice with index 0 (or none) was seen
	Others                    bool  // a choice with another index was seen
	Finish                    Span
	HasFinish                 bool
	Content, Refusal          Span
	Reasoning                 bool // non-empty reasoning_content, reasoning or thinking
	HasContent, HasRefusal    bool
	ContentEsc, RefusalEsc    bool
	ModelEsc, FinishEsc, Used bool
	Tools                     [MaxTools]Tool // choice 0's delta.tool_calls, in order
	NTools                    int
}

// MaxTools is how many elements of a delta's tool_calls the fast path
// takes; more go the slow way.
const MaxTools = 4

// Tool is one element of a delta's tool_calls: its index, id and whether
// it carries a function name and arguments.
type Tool struct {
	Index        int64
	ID           Span
	IDEsc, HasID bool
	Name, Args   bool // a non-empty function.name, function.arguments
}

// Span is a string's bytes inside the chunk, [Start, End), quotes
// excluded.
type Span struct{ Start, End int }

var (
	chunkFields  = []string{"model", "choices", "usage", "error", "object", "message", "x_groq"}
	choiceFields = []string{"index", "delta", "finish_reason"}
	deltaFields  = []string{"content", "reasoning_content", "reasoning", "refusal", "tool_calls", "function_call", "thinking", "extra_content"}
	toolFields   = []string{"index", "id", "function"}
	funcFields   = []string{"name", "arguments"}
	usageFields  = []string{"prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"}
	detailFields = []string{"cached_tokens", "reasoning_tokens"}
)

// Scan reads the chunk data into f; ok is false when the event must take
// the slow path (f is then to be ignored).
func Scan(data []byte, f *Facts) (ok bool) {
	*f = Facts{PromptTokens: -1, Completion: -1, Cached: -1, ReasoningTokens: -1}
	s := chunkScanner{b: data}
	ok = s.fields(chunkFields, func(i int) bool {
		switch i {
		case 0: // model
			sp, esc, present, ok := s.optString()
			if present {
				f.Model, f.ModelEsc, f.Used = sp, esc, true
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
				return ok && !esc && string(data[sp.Start:sp.End]) != "error"
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
func (s *chunkScanner) choice(f *Facts) bool {
	if s.null() {
		// encoding/json leaves a null choice empty: index 0, no delta.
		if f.Choice0 {
			return false
		}
		f.Choice0 = true
		return true
	}
	index := int64(0)
	var delta Facts
	ok := s.fields(choiceFields, func(i int) bool {
		switch i {
		case 0: // index
			return s.optIndex(&index)
		case 1: // delta
			if s.null() {
				return true
			}
			return s.delta(&delta)
		case 2: // finish_reason
			sp, esc, present, ok := s.optString()
			if present {
				delta.Finish, delta.FinishEsc, delta.HasFinish = sp, esc, true
			}
			return ok
		}
		return s.skip(0)
	})
	if !ok {
		return false
	}
	if index != 0 {
		f.Others = true
		return true
	}
	if f.Choice0 {
		return false // a second choice 0: rare, the slow way
	}
	f.Choice0 = true
	f.Finish, f.FinishEsc, f.HasFinish = delta.Finish, delta.FinishEsc, delta.HasFinish
	f.Content, f.ContentEsc, f.HasContent = delta.Content, delta.ContentEsc, delta.HasContent
	f.Refusal, f.RefusalEsc, f.HasRefusal = delta.Refusal, delta.RefusalEsc, delta.HasRefusal
	f.Reasoning = delta.Reasoning
	f.Tools, f.NTools = delta.Tools, delta.NTools
	return true
}

// fields scans an object for the keys in names and calls fn with a key's
// index to read its value. A key that matches one of names only when case
// is folded, or one seen twice, sends the event to the slow path
// (encoding/json matches keys case-insensitively and keeps the last);
// other keys are skipped.
func (s *chunkScanner) fields(names []string, fn func(i int) bool) bool {
	var seen uint32
	return s.object(func(key []byte) bool {
		i, fold := known(key, names...)
		if fold || (i >= 0 && seen&(1<<i) != 0) {
			return false
		}
		if i < 0 {
			return s.skip(0)
		}
		seen |= 1 << i
		return fn(i)
	})
}

// delta scans a choice's delta object.
func (s *chunkScanner) delta(f *Facts) bool {
	return s.fields(deltaFields, func(i int) bool {
		switch i {
		case 4: // tool_calls
			if s.null() {
				return true
			}
			return s.array(func() bool { return s.toolCall(f) })
		case 5: // the legacy function_call: rare, the slow way unless null
			return s.null()
		case 7: // extra_content (Gemini's thought flag): the slow way unless null
			return s.null()
		}
		sp, esc, present, ok := s.optString() // an array of parts: the slow way
		if !ok || !present {
			return ok
		}
		switch i {
		case 0:
			f.Content, f.ContentEsc, f.HasContent = sp, esc, true
		case 1, 2, 6:
			// Every escape decodes to at least one byte: a non-empty
			// string is non-empty text.
			f.Reasoning = f.Reasoning || sp.End > sp.Start
		case 3:
			f.Refusal, f.RefusalEsc, f.HasRefusal = sp, esc, true
		}
		return true
	})
}

// toolCall scans one element of a delta's tool_calls: an object whose
// index is null or a plain integer, id null or a string, function null
// or an object of strings; anything else (a null element included) goes
// the slow way, as does a fifth element.
func (s *chunkScanner) toolCall(f *Facts) bool {
	if f.NTools == MaxTools || s.peek() != '{' {
		return false
	}
	var t Tool
	ok := s.fields(toolFields, func(i int) bool {
		switch i {
		case 0: // index
			return s.optIndex(&t.Index)
		case 1: // id
			sp, esc, present, ok := s.optString()
			if present && sp.End > sp.Start {
				t.ID, t.IDEsc, t.HasID = sp, esc, true
			}
			return ok
		}
		// function
		if s.null() {
			return true
		}
		return s.fields(funcFields, func(j int) bool {
			sp, _, present, ok := s.optString()
			// Every escape decodes to at least one byte: a non-empty
			// string is non-empty text.
			nonEmpty := present && sp.End > sp.Start
			if j == 0 {
				t.Name = nonEmpty
			} else {
				t.Args = nonEmpty
			}
			return ok
		})
	})
	if !ok {
		return false
	}
	f.Tools[f.NTools] = t
	f.NTools++
	return true
}

// usage scans a usage object.
func (s *chunkScanner) usage(f *Facts) bool {
	return s.fields(usageFields, func(i int) bool {
		var ok bool
		switch i {
		case 0:
			f.PromptTokens, ok = s.optCount()
		case 1:
			f.Completion, ok = s.optCount()
		case 2:
			f.Cached, ok = s.detail(0)
		case 3:
			f.ReasoningTokens, ok = s.detail(1)
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
	ok = s.fields(detailFields, func(i int) bool {
		if i != want {
			return s.skip(0)
		}
		var ok bool
		n, ok = s.optCount()
		return ok
	})
	return n, ok
}

// Text returns a string Span's text, decoded as encoding/json decodes it.
func Text(data []byte, sp Span, esc bool) ([]byte, bool) {
	raw := data[sp.Start:sp.End]
	if !esc {
		return raw, true
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		// Bytes above 0x7F only: as they are when they are valid UTF-8.
		return raw, utf8.Valid(raw)
	}
	return nil, false
}

// Unquote decodes a JSON string Span through encoding/json (escapes,
// surrogates, invalid UTF-8 all as it decodes them).
func Unquote(data []byte, sp Span) (string, bool) {
	var str string
	if json.Unmarshal(data[sp.Start-1:sp.End+1], &str) != nil {
		return "", false
	}
	return str, true
}

// Template is the last chunk the fast path scanned whole, kept when
// the answer text is the last string in it: most chunks of a stream are
// that chunk again with other text (the same id, model and created
// time), and Match reads such a chunk by comparing its bytes with the
// template's around the text, scanning only the text. Bytes equal up to
// the text's opening quote leave a JSON scanner in the same state there,
// a valid string brings it to the closing quote, and equal bytes after
// it end the document in the same way: the chunk's facts are the
// template's with the new text, as Scan would find them.
type Template struct {
	data  []byte // the template's bytes (nil: none)
	facts Facts
}

// Keep makes data (just scanned whole into f) the template, when its
// content is its last string.
func (t *Template) Keep(data []byte, f *Facts) {
	t.data = t.data[:0]
	if !f.HasContent || f.HasFinish || f.HasRefusal || f.NTools > 0 || f.Used && f.Model.End > f.Content.Start {
		return
	}
	t.data, t.facts = append(t.data, data...), *f
}

// Match reads data as the template with other text, into f; false when
// it is not.
func (t *Template) Match(data []byte, f *Facts) bool {
	if len(t.data) == 0 {
		return false
	}
	open := t.facts.Content.Start - 1 // the text's opening quote
	if len(data) <= open || !bytes.Equal(data[:open+1], t.data[:open+1]) {
		return false
	}
	s := chunkScanner{b: data, i: open}
	sp, esc, ok := s.str()
	if !ok || !bytes.Equal(data[s.i:], t.data[t.facts.Content.End+1:]) {
		return false
	}
	*f = t.facts
	f.Content, f.ContentEsc = sp, esc
	return true
}

// Held reports whether the template holds a chunk (Keep kept the last).
func (t *Template) Held() bool { return len(t.data) > 0 }
