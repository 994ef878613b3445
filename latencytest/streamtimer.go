package latencytest

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
	"time"
	"unsafe"

	"github.com/tailguard/tailguard/internal/sse"
	"github.com/tailguard/tailguard/protocol"
)

// streamTimer times a protocol's stream (its framing and decoder: see
// protocol.Protocol) as its bytes arrive, into a Record whose durations
// count from the request's start: TTFT, first answer, every gap and the
// longest, token events, usage, model, finish reason and the answer. It
// is the one timer behind both the LLM providers (which read the body
// themselves) and Instrument (which times the bytes as the user's client
// reads them).
type streamTimer struct {
	parser  sse.Parser
	lines   lineParser      // for a protocol framed in lines (protocol.Lines)
	framer  protocol.Framer // for a protocol that frames its own stream (protocol.Protocol.NewFramer)
	emitRaw func(typ string, data []byte)
	st      stream
	redact  func(string) string
	onFirst func() // called at the first token; may be nil
	emit    sse.Emit
	sniff   bool // the protocol is unknown: the first events tell (protocol.ByEvent)
}

// newStreamTimer times a stream of protocol p (nil: unknown, the first
// events tell, else chat) into rec, whose token clocks must start
// NotObserved. redact scrubs event data before anything keeps or cuts it.
func newStreamTimer(rec *Record, p *protocol.Protocol, redact func(string) string, onFirst func()) *streamTimer {
	t := &streamTimer{st: stream{rec: rec}, redact: redact, onFirst: onFirst}
	if p != nil {
		t.st.api, t.st.dec = p, p.NewDecoder()
		if p.NewFramer != nil {
			t.framer = p.NewFramer()
			t.emitRaw = func(typ string, data []byte) { t.onRaw(typ, data, "") }
		}
	} else {
		t.sniff = true
	}
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
	if t.framer != nil {
		return t.framer.Feed(b, t.emitRaw)
	}
	if t.st.api != nil && t.st.api.Framing == protocol.Lines {
		return t.lines.feed(b, t.emit)
	}
	return t.parser.Feed(b, t.emit)
}

// end is called at EOF: it dispatches an event left without its blank
// line ("data: [DONE]" at the very end).
func (t *streamTimer) end() {
	if t.framer != nil {
		if err := t.framer.End(); err != nil && !t.st.stop {
			t.st.Note(err.Error())
		}
		return
	}
	if t.st.api != nil && t.st.api.Framing == protocol.Lines {
		t.lines.end(t.emit)
		return
	}
	t.parser.End(t.emit)
}

// stopped reports [DONE] or an error: nothing after it counts.
func (t *streamTimer) stopped() bool { return t.st.stop }

// now is the time of the last read fed.
func (t *streamTimer) now() time.Duration { return t.st.now }

// finish stores the answer (see stream.finish).
func (t *streamTimer) finish() { t.st.finish() }

// onRaw decodes one event (its data valid only during the call) through
// the protocol's decoder, redacted first when it holds a secret, and
// times it.
func (t *streamTimer) onRaw(typ string, data []byte, id string) {
	st, rec := &t.st, t.st.rec
	if st.stop {
		return // nothing after the end or an error counts
	}
	if t.sniff && rec.TokenEvents == 0 {
		// The protocol is unknown (Instrument on a path that names none):
		// the first event that names one tells, chat until then.
		if p := protocol.ByEvent(typ, data); p != nil {
			st.api, st.dec, t.sniff = p, p.NewDecoder(), false
		}
	}
	if st.dec == nil {
		st.api, st.dec = protocol.Chat, protocol.Chat.NewDecoder()
	}
	if redacted, clean := t.clean(data); !clean {
		data = []byte(redacted) // redacted before any note or detail cuts it
	}
	if !st.dec.Event(st, typ, data) {
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

// verdict judges a stream that ended (EOF or [DONE]; call finish first):
// the error class and detail, or "" for a good answer.
func (t *streamTimer) verdict() (class, detail string) {
	st, rec := &t.st, t.st.rec
	switch {
	case st.bad != "":
		return st.badClass(), st.bad
	case !st.done:
		return ClassTruncated, "the stream ended without " + st.endMark()
	case st.filtered():
		return ClassContentFilter, fmt.Sprintf("the provider's content filter stopped the answer (finish_reason %s) after %d token events: a policy outcome, not latency", rec.FinishReason, rec.TokenEvents)
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

// lineParser cuts a stream framed in lines (protocol.Lines) into events:
// each non-empty line, its line end (LF or CRLF) cut, is an event's data.
// A line longer than the SSE parser's event limit fails the stream.
type lineParser struct{ buf []byte }

// feed emits every line b completes.
func (p *lineParser) feed(b []byte, emit sse.Emit) error {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.buf = append(p.buf, b...)
			if len(p.buf) > maxLineBytes {
				return fmt.Errorf("a line longer than %d bytes", maxLineBytes)
			}
			return nil
		}
		line := b[:i]
		if len(p.buf) > 0 {
			p.buf = append(p.buf, line...)
			line = p.buf
		}
		p.emitLine(line, emit)
		p.buf = p.buf[:0]
		b = b[i+1:]
	}
	return nil
}

// end emits a last line without its line end.
func (p *lineParser) end(emit sse.Emit) {
	if len(p.buf) > 0 {
		p.emitLine(p.buf, emit)
		p.buf = p.buf[:0]
	}
}

func (p *lineParser) emitLine(line []byte, emit sse.Emit) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(bytes.TrimSpace(line)) > 0 {
		emit("", line, "")
	}
}

// maxLineBytes bounds a line of a stream framed in lines, as the SSE
// parser bounds an event.
const maxLineBytes = 64 << 20
