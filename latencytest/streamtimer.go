package latencytest

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
	"time"
	"unsafe"

	"github.com/tailguard/tailguard/internal/sse"
)

// streamTimer times an OpenAI-style chat-completions event stream as its
// bytes arrive, into a Record whose durations count from the request's
// start: TTFT, first answer, every gap and the longest, token events,
// usage, model, finish reason and the answer. It is the one decoder behind
// both the OpenAI provider (which reads the body itself) and Instrument
// (which times the bytes as the user's client reads them).
type streamTimer struct {
	parser  sse.Parser
	st      stream
	redact  func(string) string
	onFirst func() // called at the first token; may be nil
	emit    sse.Emit
	sniff   bool // the protocol is unknown: the first events tell (protocol.go)
}

// newStreamTimer times a stream into rec, whose token clocks must start
// NotObserved. redact scrubs event data before anything keeps or cuts it.
func newStreamTimer(rec *Record, redact func(string) string, onFirst func()) *streamTimer {
	t := &streamTimer{st: stream{rec: rec}, redact: redact, onFirst: onFirst}
	t.emit = t.onRaw
	return t
}

// feed parses bytes that a read returned at now (from the request's
// start); now is kept even when b is empty, as the time the stream ended.
// The error is for an event beyond the size limit (a bad stream).
func (t *streamTimer) feed(b []byte, now time.Duration) error {
	t.st.now = now
	if len(b) == 0 {
		return nil
	}
	return t.parser.Feed(b, t.emit)
}

// end is called at EOF: it dispatches an event left without its blank
// line ("data: [DONE]" at the very end).
func (t *streamTimer) end() { t.parser.End(t.emit) }

// stopped reports [DONE] or an error: nothing after it counts.
func (t *streamTimer) stopped() bool { return t.st.stop }

// now is the time of the last read fed.
func (t *streamTimer) now() time.Duration { return t.st.now }

// finish stores the answer (see stream.finish).
func (t *streamTimer) finish() { t.st.finish() }

// onRaw decodes one event (its data valid only during the call) and times
// it: the common chunk through the fast path (chunk.go), anything else,
// and any event that holds a secret, through encoding/json (stream.event).
func (t *streamTimer) onRaw(typ string, data []byte, id string) {
	st, rec := &t.st, t.st.rec
	if st.stop {
		return // nothing after [DONE] or an error counts
	}
	if t.sniff && st.proto == nil && rec.TokenEvents == 0 {
		st.proto = sniffProtocol(typ, data)
	}
	var token bool
	fast := false
	redacted, clean := t.clean(data)
	if clean && typ != "error" && st.proto == nil {
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			st.done, st.stop = true, true
			return
		}
		token, fast = st.fastEvent(data)
		if fast && fastPathCheck != nil {
			fastPathCheck(data)
		}
	}
	if !fast {
		if clean {
			redacted = string(data)
		}
		token = st.dispatch(sse.Event{Type: typ, Data: redacted, ID: id}) // redacted before any note or detail cuts it
	}
	if !token {
		return
	}
	if rec.TTFT < 0 {
		rec.TTFT = st.now
		if t.onFirst != nil {
			t.onFirst()
		}
	} else {
		gap := st.now - rec.LastToken
		rec.Gaps.Add(gap)
		rec.MaxGap = max(rec.MaxGap, gap)
	}
	rec.LastToken = st.now
	rec.TokenEvents++
}

// clean reports whether data holds no secret (redaction leaves it as it
// is); otherwise it returns the redacted text. The redactor is handed a
// view of data that it does not keep (redactSecrets only searches it),
// so that the common case allocates nothing.
func (t *streamTimer) clean(data []byte) (redacted string, clean bool) {
	if len(data) == 0 {
		return "", true
	}
	view := unsafe.String(&data[0], len(data))
	r := t.redact(view)
	if len(r) == len(view) && unsafe.StringData(r) == unsafe.StringData(view) {
		return "", true
	}
	return strings.Clone(r), false
}

// fastPathCheck, when set (by the package's tests), is called with every
// event the fast path decoded, to check it against encoding/json.
var fastPathCheck func(data []byte)

// verdict judges a stream that ended (EOF or [DONE]; call finish first):
// the error class and detail, or "" for a good answer.
func (t *streamTimer) verdict() (class, detail string) {
	st, rec := &t.st, t.st.rec
	switch {
	case st.bad != "":
		return ClassBadStream, st.bad
	case !st.done:
		return ClassTruncated, "the stream ended without " + st.endMark()
	case rec.FinishReason == "content_filter":
		return ClassContentFilter, fmt.Sprintf("the provider's content filter stopped the answer (finish_reason content_filter) after %d token events: a policy outcome, not latency", rec.TokenEvents)
	case st.refusal.Len() > 0:
		return ClassRefusal, "refused: " + truncate(t.redact(st.refusal.String()), 200)
	case rec.TokenEvents == 0:
		return ClassEmptyStream, "the stream ended without a token"
	case rec.FirstAnswer < 0:
		return ClassEmptyAnswer, fmt.Sprintf("%d token events but no answer content or tool call (finish_reason %q)", rec.TokenEvents, rec.FinishReason)
	}
	return "", ""
}

// isEventStream reports whether a Content-Type is text/event-stream (in any
// case, parameters allowed). A response without a Content-Type is given
// the benefit of the doubt.
func isEventStream(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
	}
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

// isJSON reports whether a Content-Type is application/json or a +json
// type (in any case, parameters allowed).
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
