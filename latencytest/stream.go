package latencytest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/chunkscan"
	"github.com/tailguard/tailguard/protocol"
)

// stream is the state of one answer being decoded, a stream's or a whole
// one's: it is the protocol.Sink its protocol's decoder reports to, and
// stamps each report with now, the time of the read being decoded.
type stream struct {
	rec       *Record
	now       time.Duration // time of the read being parsed
	content   strings.Builder
	refusal   strings.Builder
	bad       string // why the stream is bad ("" when it is not)
	badStatus int    // the status of an in-band error (FailStatus); 0: bad_stream
	done      bool   // the protocol's end seen
	stop      bool   // stop reading: the end or an error
	whole     bool   // a whole answer: no token clock is set
	notesCut  bool
	dec       protocol.Decoder // nil until the protocol is known (see streamTimer.sniff)
	api       *protocol.Protocol
	toolNamed bool // the first tool call's name arrived (Record.FirstToolCall)
}

// endMark names what a good stream of the stream's protocol ends with.
func (s *stream) endMark() string {
	if s.api == nil || s.api.Terminal == "" {
		return protocol.Chat.Terminal
	}
	return s.api.Terminal
}

// maxNotes bounds Record.Notes.
const maxNotes = 10

// note adds a line to the record's notes, once.
func (s *stream) note(format string, args ...any) { s.Note(fmt.Sprintf(format, args...)) }

// Note adds a line to the record's notes, once.
func (s *stream) Note(n string) {
	if slices.Contains(s.rec.Notes, n) || s.notesCut {
		return
	}
	if len(s.rec.Notes) == maxNotes-1 {
		s.rec.Notes, s.notesCut = append(s.rec.Notes, "(further notes dropped)"), true
		return
	}
	s.rec.Notes = append(s.rec.Notes, strings.Clone(n))
}

// finish ends the decoder and stores the answer text (without the
// builder's spare capacity).
func (s *stream) finish() {
	if s.dec != nil {
		s.dec.End(s)
		s.dec = nil
	}
	s.rec.Content = strings.Clone(s.content.String())
}

// answerAt marks the first answer (text, refusal or tool call) now.
func (s *stream) answerAt() {
	if s.rec.FirstAnswer < 0 && !s.whole {
		s.rec.FirstAnswer = s.now
	}
}

// Answer adds answer text.
func (s *stream) Answer(text string) {
	s.content.WriteString(text)
	s.answerAt()
}

// Refusal adds refusal text.
func (s *stream) Refusal(text string) {
	s.refusal.WriteString(text)
	s.answerAt()
}

// ToolCall counts a tool call.
func (s *stream) ToolCall() int {
	s.rec.ToolCalls++
	s.answerAt()
	return s.rec.ToolCalls
}

// ToolName times the first call's name.
func (s *stream) ToolName(n int) {
	if n == 1 && !s.toolNamed {
		s.rec.FirstToolCall, s.toolNamed = s.now, true
	}
	s.answerAt()
}

// ToolArgs times the first call's arguments.
func (s *stream) ToolArgs(n int) {
	if n == 1 {
		s.rec.ToolArgsDone = s.now
	}
	s.answerAt()
}

// HostedTool counts a hosted tool's call (no answer).
func (s *stream) HostedTool() { s.rec.HostedTools++ }

// Model sets the model that answered.
func (s *stream) Model(name string) {
	if name != s.rec.Model {
		s.rec.Model = strings.Clone(name)
	}
}

// Finish sets the finish reason.
func (s *stream) Finish(reason string) {
	if reason != s.rec.FinishReason {
		s.rec.FinishReason = strings.Clone(reason)
	}
}

// Count sets a token count; one out of range is ignored with a note.
func (s *stream) Count(c protocol.Counter, n int) {
	if n < 0 || n > maxCount {
		s.note("token count %d ignored: not in [0, 2^31)", n)
		return
	}
	switch c {
	case protocol.PromptTokens:
		s.rec.PromptTokens, s.rec.UsageReported = n, true
	case protocol.CompletionTokens:
		s.rec.CompletionTokens, s.rec.UsageReported = n, true
	case protocol.CachedTokens:
		s.rec.CachedTokens, s.rec.CachedReported = n, true
	case protocol.ReasoningTokens:
		s.rec.ReasoningTokens = n
	}
}

// Bad marks the stream bad (the first reason wins); reading goes on.
func (s *stream) Bad(reason string) {
	if s.bad == "" {
		s.bad = strings.Clone(reason)
	}
}

// Fail marks the stream bad (the first reason wins) and stops it.
func (s *stream) Fail(reason string) {
	s.Bad(reason)
	s.stop = true
}

// Done ends a good stream.
func (s *stream) Done() { s.done, s.stop = true, true }

// FailStatus fails the stream with the class of an HTTP status (the
// first reason wins) and stops it.
func (s *stream) FailStatus(status int, reason string) {
	if s.bad == "" && status >= 100 && status <= 599 {
		s.badStatus = status
	}
	s.Fail(reason)
}

// ServerLatency keeps the server's own latency.
func (s *stream) ServerLatency(d time.Duration) { s.rec.ServerLatency = d }

// badClass is the class of a bad stream: bad_stream, or an in-band
// error's HTTP class.
func (s *stream) badClass() string {
	if s.badStatus != 0 {
		return HTTPClass(s.badStatus)
	}
	return ClassBadStream
}

// filtered reports a finish reason that means the provider's content
// filter stopped the answer, in the stream's protocol.
func (s *stream) filtered() bool {
	r := s.rec.FinishReason
	return r == "content_filter" || s.api != nil && s.api.Filtered != nil && s.api.Filtered(r)
}

// maxCount bounds a usage count: anything above is not a token count.
const maxCount = chunkscan.MaxCount
