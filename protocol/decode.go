package protocol

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tailguard/tailguard/internal/chunkscan"
)

// ErrorText extracts the message of a JSON error body in the shape most
// LLM APIs share: {"error": {"message", "type"}}, {"error": "..."}, or
// vLLM's {"object": "error", "message": ...}; ok is false for any other
// body. It is the default of Protocol.ErrorText.
func ErrorText(b []byte) (msg string, ok bool) {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Object  string          `json:"object"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(b, &e) != nil {
		return "", false
	}
	if !absent(e.Error) {
		return errorText(e.Error), true
	}
	if e.Object == "error" && !absent(e.Message) {
		return errorText(e.Message), true
	}
	return "", false
}

// errorText renders an error field: a string, an object with a message
// (and type), or the raw JSON.
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return truncate(s, 200)
	}
	var e struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		if e.Type != "" {
			return truncate(e.Type+": "+e.Message, 200)
		}
		return truncate(e.Message, 200)
	}
	return truncate(string(raw), 200)
}

// eventError is the message of an SSE error event's data: an error
// object, or the data itself.
func eventError(data string) string {
	if msg, ok := ErrorText([]byte(data)); ok {
		return msg
	}
	return truncate(strings.TrimSpace(data), 200)
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

// truncate cuts s to at most n bytes on a rune boundary, marking the cut
// with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// absent reports whether a field was missing or null.
func absent(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// note adds a formatted note.
func note(s Sink, format string, args ...any) { s.Note(fmt.Sprintf(format, args...)) }

// fail fails the stream with a formatted reason.
func fail(s Sink, format string, args ...any) { s.Fail(fmt.Sprintf(format, args...)) }

// str decodes a JSON string field; absent or not a string gives "" (the
// latter noted).
func str(s Sink, field string, raw json.RawMessage) string {
	if absent(raw) {
		return ""
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		note(s, "%s ignored: not a string (%s)", field, truncate(string(raw), 40))
		return ""
	}
	return v
}

// decodeObject decodes the object field into v (a pointer to its raw
// fields); false when it is absent or null, or not an object (noted).
func decodeObject(s Sink, field string, raw json.RawMessage, v any) bool {
	if absent(raw) {
		return false
	}
	if json.Unmarshal(raw, v) != nil {
		note(s, "%s ignored: not an object (%s)", field, truncate(string(raw), 40))
		return false
	}
	return true
}

// maxCount bounds a token count: anything above is not one.
const maxCount = chunkscan.MaxCount

// count decodes a token count; ok is false when it is absent or not a
// count (noted).
func count(s Sink, field string, raw json.RawMessage) (n int, ok bool) {
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
	note(s, "%s = %s ignored: not a token count", field, truncate(v, 40))
	return 0, false
}

// usageKeys name a protocol's usage fields: the prompt and answer counts
// and their details objects (cached and reasoning tokens inside).
type usageKeys struct{ in, out, inDetails, outDetails string }

// applyUsage records a usage object's counts (each checked by count):
// the prompt and answer tokens, the cached tokens in the input details
// and the reasoning tokens in the output details.
func applyUsage(s Sink, k usageKeys, in, out, inDetails, outDetails json.RawMessage) {
	if n, ok := count(s, "usage."+k.in, in); ok {
		s.Count(PromptTokens, n)
	}
	if n, ok := count(s, "usage."+k.out, out); ok {
		s.Count(CompletionTokens, n)
	}
	var details struct {
		CachedTokens    json.RawMessage `json:"cached_tokens"`
		ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
	}
	if !absent(inDetails) {
		if json.Unmarshal(inDetails, &details) != nil {
			note(s, "usage.%s ignored: not an object", k.inDetails)
		} else if n, ok := count(s, "usage."+k.inDetails+".cached_tokens", details.CachedTokens); ok {
			s.Count(CachedTokens, n)
		}
	}
	details.CachedTokens, details.ReasoningTokens = nil, nil
	if !absent(outDetails) {
		if json.Unmarshal(outDetails, &details) != nil {
			note(s, "usage.%s ignored: not an object", k.outDetails)
		} else if n, ok := count(s, "usage."+k.outDetails+".reasoning_tokens", details.ReasoningTokens); ok {
			s.Count(ReasoningTokens, n)
		}
	}
}

// validArgs reports whether a tool call's arguments are JSON ("" counts
// as no arguments).
func validArgs(args string) bool {
	return strings.TrimSpace(args) == "" || json.Valid([]byte(args))
}

// decodeEvent decodes a protocol's event into v (whose type field is
// *rawType) and returns its type: the JSON "type", or the SSE event name
// where that is missing, "error" for an SSE error event. An event that
// is not JSON fails the stream (an SSE error event with its text).
func decodeEvent(s Sink, typ string, data []byte, v any, rawType *json.RawMessage) (string, bool) {
	if err := json.Unmarshal(data, v); err != nil {
		if typ == "error" {
			fail(s, "error event: %s", truncate(strings.TrimSpace(string(data)), 200))
			return "", false
		}
		fail(s, "malformed event: %s", err.Error())
		return "", false
	}
	var jt string
	_ = json.Unmarshal(*rawType, &jt)
	switch {
	case typ == "error":
		return "error", true
	case jt != "":
		return jt, true
	}
	return typ, true
}

// eventTypeOf is an event's type for detection: the SSE event field, or
// the JSON "type" field when that is missing or "message".
func eventTypeOf(typ string, data []byte) string {
	if typ != "" && typ != "message" {
		return typ
	}
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &head) != nil {
		return ""
	}
	return head.Type
}

// objectIs reports whether a JSON body's "object" (or, with key "type",
// "type") field is want.
func objectIs(body []byte, key, want string) bool {
	var head struct {
		Object string `json:"object"`
		Type   string `json:"type"`
	}
	if json.Unmarshal(body, &head) != nil {
		return false
	}
	if key == "type" {
		return head.Type == want
	}
	return head.Object == want
}

// pathEnds reports whether a path, trailing slashes cut, ends in one of
// the suffixes.
func pathEnds(path string, suffixes ...string) bool {
	p := strings.TrimRight(path, "/")
	for _, s := range suffixes {
		if strings.HasSuffix(p, s) {
			return true
		}
	}
	return false
}
