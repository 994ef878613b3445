package latencytest

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/tailguard/tailguard/internal/sse"
)

// protocol is one wire protocol the HTTP providers speak: OpenAI's chat
// completions, OpenAI's Responses API or Anthropic's Messages API. The
// three share the transport, the timers, the redaction and the verdict;
// they differ in the path, the request body, the headers and the events.
type protocol struct {
	name string // in errors: "OpenAI", "Responses", "Anthropic"
	kind string // Description.Kind
	path string // appended to the base URL
	// payload encodes a request body; nil: chat's (LLMProvider.payload).
	payload func(o *LLMProvider, req Request) ([]byte, error)
	// decoder returns a fresh event decoder; nil: chat's (stream.event).
	decoder func() eventDecoder
	// prepare adjusts the provider after its options (headers).
	prepare func(o *LLMProvider)
	// public lists header values that are not secrets (see LLMProvider.secrets).
	public func(o *LLMProvider) []string
}

// The protocols.
var (
	chatAPI      = &protocol{name: "OpenAI", kind: "openai-chat-completions (streaming)", path: "/chat/completions"}
	responsesAPI = &protocol{name: "Responses", kind: "openai-responses (streaming)", path: "/responses",
		payload: responsesPayload, decoder: func() eventDecoder { return &responsesDecoder{} }}
	messagesAPI = &protocol{name: "Anthropic", kind: "anthropic-messages (streaming)", path: "/messages",
		payload: messagesPayload, decoder: func() eventDecoder { return &messagesDecoder{} },
		prepare: anthropicHeaders, public: anthropicPublic}
)

// eventDecoder decodes the events of one stream of a protocol other than
// chat completions into the stream's record. It sets s.done at the event
// that ends a good stream, s.stop at that or at an error (nothing after
// counts), s.bad with the reason a stream is malformed or failed.
type eventDecoder interface {
	// event decodes one event (its data redacted) and reports whether it
	// carried a token: answer text, reasoning, a refusal or a tool call.
	event(s *stream, ev sse.Event) (token bool)
	// terminal names the event(s) that end a good stream, for the
	// verdict on a stream cut before it.
	terminal() string
}

// sniffProtocol picks the decoder for a stream whose protocol the request
// path did not tell (Instrument on a gateway's path): by the event type of
// its first event that names one, or nil for chat completions.
func sniffProtocol(typ string, data []byte) eventDecoder {
	t := typ
	if t == "" || t == "message" {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(data, &head) != nil {
			return nil
		}
		t = head.Type
	}
	switch {
	case strings.HasPrefix(t, "response."):
		return &responsesDecoder{}
	case t == "message_start" || strings.HasPrefix(t, "content_block_") || t == "message_delta" || t == "message_stop":
		return &messagesDecoder{}
	}
	return nil
}

// protocolOfPath picks the decoder by a request's path: nil for chat
// completions and for a path that names no protocol (then the stream's
// events decide: see sniffProtocol).
func protocolOfPath(path string) (d eventDecoder, known bool) {
	p := strings.TrimRight(path, "/")
	switch {
	case strings.HasSuffix(p, "/responses"):
		return &responsesDecoder{}, true
	case strings.HasSuffix(p, "/messages"):
		return &messagesDecoder{}, true
	case strings.HasSuffix(p, "/chat/completions"), strings.HasSuffix(p, "/completions"):
		return nil, true
	}
	return nil, false
}

// validArgs reports whether a tool call's arguments are JSON ("" counts
// as no arguments).
func validArgs(args string) bool {
	return strings.TrimSpace(args) == "" || json.Valid([]byte(args))
}

// eventType is an event's type: the JSON "type" field, else the SSE event
// field. data is the raw JSON already decoded into typ by the caller.
func eventType(ev sse.Event, jsonType string) string {
	if jsonType != "" {
		return jsonType
	}
	return ev.Type
}

// withoutPublic drops the values public names from a secrets list.
func withoutPublic(secrets, public []string) []string {
	return slices.DeleteFunc(secrets, func(s string) bool { return slices.Contains(public, s) })
}

// decodeEvent decodes a protocol's event into v (whose type field is
// *rawType) and returns its type: the JSON "type", or the SSE event name
// where that is missing, "error" for an SSE error event. An event that
// is not JSON fails the stream (an SSE error event with its text).
func decodeEvent(s *stream, ev sse.Event, v any, rawType *json.RawMessage) (typ string, ok bool) {
	if err := json.Unmarshal([]byte(ev.Data), v); err != nil {
		if ev.Type == "error" {
			s.fail("error event: %s", truncate(strings.TrimSpace(ev.Data), 200))
			return "", false
		}
		s.fail("malformed event: %s", err.Error())
		return "", false
	}
	var jt string
	_ = json.Unmarshal(*rawType, &jt)
	typ = eventType(ev, jt)
	if ev.Type == "error" {
		typ = "error"
	}
	return typ, true
}
