// Package wire writes the fake's answers in each protocol's shape: the
// streamed events and the whole (non-streaming) answer of OpenAI's Chat
// Completions, OpenAI's Responses, Anthropic's Messages, Google's Gemini
// and Amazon Bedrock's Converse (whose stream is AWS event-stream frames:
// its encoder says so with a ContentType method).
//
// The fake decides what to send and when (tokens, their kind, the finish
// reason, faults); an Encoder decides how the bytes look. One encoder
// serves one request: it is built from the request's State, then called
// in order, Start once, Tokens once per event, then End, or ErrorEvent or
// Malformed on a fault. Encoders append to the caller's buffer, so that
// the events due together leave in one write. A new protocol's writer is
// one file here holding its Encoder and constructor, and its Protocol
// value.
package wire

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/protocol"
)

// Kind is what a token is: reasoning, answer text or a tool call's
// arguments.
type Kind uint8

// The kinds of token; KindNone is no token (no item open).
const (
	KindNone Kind = iota
	KindReasoning
	KindText
	KindTool
)

// State is what an encoder reads of its request, fixed before the first
// event.
type State struct {
	// Index is the request's arrival index, part of every id.
	Index int
	// Created is the request's arrival, the answer's created time.
	Created time.Time
	// Model is the model the answer names.
	Model string
	// PromptTokens is the prompt's length; CachedTokens those of them
	// the prefix cache served.
	PromptTokens, CachedTokens int
	// MaxTokens is the request's cap on output tokens; 0 when it set none.
	MaxTokens int
	// Reasoning is the answer's reasoning tokens, which come first.
	Reasoning int
	// OneCall: the request asked for at most one tool call.
	OneCall bool
	// IncludeUsage: a chat stream ends with a usage chunk.
	IncludeUsage bool
	// ToolCall: the answer's content is tool calls, ToolArgs tokens of
	// arguments each.
	ToolCall bool
	ToolArgs []int
	// ToolName names the function that call (from 0) calls.
	ToolName func(call int) string
}

// Encoder writes one request's answer in its protocol's shape.
type Encoder interface {
	// Start appends the events sent at admission, before any token.
	Start(b []byte) []byte
	// Tokens appends the event carrying stream tokens [from, from+k),
	// reasoning included, all of kind.
	Tokens(b []byte, from, k int, kind Kind) []byte
	// End appends the closing events of a stream of reasoning then
	// content tokens that ended for finish ("stop", "length",
	// "tool_calls").
	End(b []byte, reasoning, content int, finish string) []byte
	// ErrorEvent appends the in-band error that ends a stream whose
	// generation failed with msg.
	ErrorEvent(b []byte, msg string) []byte
	// Malformed is a broken event: an injected malformed fault.
	Malformed() []byte
	// Answer is the whole answer (for JSON) of a request that did not
	// stream.
	Answer(reasoning, content int, finish string) any
}

var (
	contentWords   = []string{" The", " tail", " is", " where", " users", " live", ";", " measure", " it", " and", " budget", " for", " it", "."}
	reasoningWords = []string{" Let", " me", " think", " about", " this", "…"}
)

// AppendText appends the text of tokens [from, from+k): JSON-safe words.
func AppendText(b []byte, from, k int, reasoning bool) []byte {
	words := contentWords
	if reasoning {
		words = reasoningWords
	}
	for i := from; i < from+k; i++ {
		b = append(b, words[i%len(words)]...)
	}
	return b
}

// AppendArgs appends the raw text of a tool call's argument tokens [from,
// from+k) out of n planned: {"query":" then words then "} ({} for one
// token), so the whole is a JSON object.
func AppendArgs(b []byte, from, k, n int) []byte {
	for i := from; i < from+k; i++ {
		switch {
		case n == 1:
			b = append(b, "{}"...)
		case i == 0:
			b = append(b, `{"query":"`...)
		case i == n-1:
			b = append(b, `"}`...)
		default:
			b = append(b, contentWords[i%len(contentWords)]...)
		}
	}
	return b
}

// appendEscaped appends s escaped for the inside of a JSON string (the
// fake's words hold no control characters).
func appendEscaped(b, s []byte) []byte {
	for _, c := range s {
		if c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return b
}

// ToolAt places the answer token i (from 0, after any reasoning) of a
// tool-call answer whose calls have args tokens each: in call `call`,
// `within` tokens after its start, in a call whose arguments are n tokens
// long.
func ToolAt(args []int, i int) (call, within, n int) {
	for call, n = range args {
		if i < n {
			return call, i, n
		}
		i -= n
	}
	return len(args) - 1, i + n, n // past the end: the last call
}

// ToolTexts is the arguments of each call begun within the first content
// answer tokens (the last one cut short when the cap cut it).
func ToolTexts(args []int, content int) []string {
	var out []string
	for _, n := range args {
		if content <= 0 {
			break
		}
		k := min(n, content)
		out = append(out, string(AppendArgs(nil, 0, k, n)))
		content -= k
	}
	return out
}

// ToolID names call `call` of the answer at arrival index index, with the
// protocol's prefix (call, toolu): the first call is prefix_fake_N, the
// others prefix_fake_N_call.
func ToolID(prefix string, index, call int) string {
	id := prefix + "_fake_" + strconv.Itoa(index)
	if call > 0 {
		id += "_" + strconv.Itoa(call)
	}
	return id
}

// toolCallAt is the tool call that stream token i (reasoning included)
// belongs to, and its place in it; tool tokens follow every reasoning
// token, so the first one seen marks where the calls start.
func toolCallAt(st *State, start *int, i int) (call, within, n int) {
	if *start < 0 {
		*start = i
	}
	return ToolAt(st.ToolArgs, i-*start)
}

// answerParts is the text of an answer: reasoning tokens, then text or
// tool calls' arguments (content tokens), one string per call begun.
type answerParts struct {
	reasoning, text string
	args            []string
}

// parts renders the first reasoning and content tokens of the answer.
func (st *State) parts(reasoning, content int) answerParts {
	var a answerParts
	a.reasoning = string(AppendText(nil, 0, reasoning, true))
	if st.ToolCall {
		a.args = ToolTexts(st.ToolArgs, content)
	} else {
		a.text = string(AppendText(nil, reasoning, content, false))
	}
	return a
}

// obj is a JSON object whose keys keep their order: alternating keys
// (strings) and values.
type obj []any

// MarshalJSON writes the object in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(o); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(o[i].(string))
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(o[i+1])
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// sseEvent appends one named event whose data is v's JSON.
func sseEvent(b []byte, name string, v any) []byte {
	data, _ := json.Marshal(v)
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// Protocol is one protocol's side of the fake: which paths are its, how
// it reads a request and writes the answer.
type Protocol struct {
	// Name names it, as Served.Protocol reports it.
	Name protocol.Name
	// Match reports whether a request path is the protocol's (its
	// endpoint, under any prefix).
	Match func(path string) bool
	// Parse validates a request body for a fake serving model, whose cap
	// on output tokens is maxOut; the error is ready to send.
	Parse func(body []byte, model string, maxOut int) (Request, *Error)
	// URL completes a parsed request from its URL, for a protocol that
	// puts the model and whether it streams there (optional: the body
	// says all); the error is ready to send.
	URL func(u *url.URL, r *Request, model string) *Error
	// ErrorBody is the protocol's error body for a status and message
	// (optional: OpenAI's).
	ErrorBody func(status int, msg string) []byte
	// Encoder makes the writer of one request's answer.
	Encoder func(*State) Encoder
}

// suffix matches the paths that end in one of suffixes.
func suffix(suffixes ...string) func(string) bool {
	return func(path string) bool {
		for _, s := range suffixes {
			if strings.HasSuffix(path, s) {
				return true
			}
		}
		return false
	}
}

// The protocols the fake serves.
var (
	// Chat is OpenAI's Chat Completions API.
	Chat = Protocol{Name: protocol.NameChat, Match: suffix("/chat/completions"), Parse: parseChat, Encoder: newChat}
	// Responses is OpenAI's Responses API.
	Responses = Protocol{Name: protocol.NameResponses, Match: suffix("/responses"), Parse: parseResponses, Encoder: newResponses}
	// Messages is Anthropic's Messages API; its errors take Anthropic's
	// shape (MessagesError).
	Messages = Protocol{Name: protocol.NameMessages, Match: suffix("/messages"), Parse: parseMessages, Encoder: newMessages}
	// Gemini is Google's Gemini API: the model and whether the answer
	// streams are in the path; its errors take Google's shape
	// (GeminiError).
	Gemini = Protocol{Name: protocol.NameGemini, Match: suffix(":streamGenerateContent", ":generateContent"), Parse: parseGemini,
		URL: geminiURL, ErrorBody: GeminiError, Encoder: newGemini}
	// Bedrock is Amazon Bedrock's Converse API (ConverseStream streams
	// AWS event-stream frames): the model and whether the answer streams
	// are in the path; its errors take Bedrock's shape (BedrockError).
	Bedrock = Protocol{Name: protocol.NameBedrock, Match: bedrockMatch, Parse: parseBedrock, URL: bedrockURL, Encoder: newBedrock}
)
