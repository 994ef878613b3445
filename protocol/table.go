package protocol

import "strings"

// builtin is the table of the protocols the library ships. Their paths,
// events and answers are told apart whatever the order; chat is the
// default of a request that names none.
var builtin = []*Protocol{Chat, Responses, Messages, Gemini, Bedrock}

// Builtin returns the built-in protocols: Chat, Responses, Messages,
// Gemini, Bedrock.
func Builtin() []*Protocol { return append([]*Protocol(nil), builtin...) }

// Names returns the built-in protocols' names, as specs spell them: chat,
// responses, messages, gemini, bedrock.
func Names() []Name {
	names := make([]Name, len(builtin))
	for i, p := range builtin {
		names[i] = p.Name
	}
	return names
}

// Lookup returns the built-in protocol of that name; "" is Chat. It is
// nil for a name no built-in protocol has.
func Lookup(name Name) *Protocol {
	if name == "" {
		return Chat
	}
	for _, p := range builtin {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// EndsSequence reports whether a finish reason means the model stopped
// on its own in any built-in protocol (see Protocol.EndOfSequence): a
// record keeps its finish reason, not its protocol, so its decode rate
// asks the table.
func EndsSequence(finishReason string) bool {
	for _, p := range builtin {
		if p.EndOfSequence != nil && p.EndOfSequence(finishReason) {
			return true
		}
	}
	return false
}

// ByPath returns the built-in protocol whose requests go to path (a
// request's URL path, e.g. "/v1/responses"), or nil when the path names
// none (then a stream's first event tells: see ByEvent).
func ByPath(path string) *Protocol {
	for _, p := range builtin {
		if p.MatchPath != nil && p.MatchPath(path) {
			return p
		}
	}
	return nil
}

// ByEvent returns the built-in protocol a stream's event of that SSE type
// and data belongs to, or nil when the event does not tell (a chat
// chunk names no type).
func ByEvent(typ string, data []byte) *Protocol {
	for _, p := range builtin {
		if p.MatchEvent != nil && p.MatchEvent(typ, data) {
			return p
		}
	}
	return nil
}

// ByAnswer returns the built-in protocol whose whole answer object body
// is ("object":"chat.completion", "object":"response", "type":"message"),
// or nil.
func ByAnswer(body []byte) *Protocol {
	for _, p := range builtin {
		if p.IsAnswer != nil && p.IsAnswer(body) {
			return p
		}
	}
	return nil
}

// ByStreamType returns the built-in protocol whose stream has the
// Content-Type ct (Protocol.StreamType, parameters and case aside), or
// nil.
func ByStreamType(ct string) *Protocol {
	for _, p := range builtin {
		if p.IsStream(ct) {
			return p
		}
	}
	return nil
}

// IsStream reports whether the Content-Type ct is p's stream's
// (StreamType, parameters and case aside); false when p names none.
func (p *Protocol) IsStream(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return p.StreamType != "" && strings.EqualFold(strings.TrimSpace(mt), p.StreamType)
}
