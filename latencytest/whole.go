package latencytest

import (
	"fmt"
	"time"

	"github.com/tailguard/tailguard/protocol"
)

// WithoutStreaming makes OpenAI, Responses, Anthropic and Gemini ask for
// the whole answer at once (stream false; OpenAI sends no stream_options, as
// with WithoutStreamOptions, and no provider asks for text/event-stream)
// and time it as Instrument times a non-streamed answer: Total is the
// body's end, the token clocks (TTFT, first answer, gaps) stay
// NotObserved, as a whole answer has no first token to time, and
// FirstToolCall and ToolArgsDone are the body's end when it holds a tool
// call. Text, refusals, tool calls, usage and the finish reason are read
// as from a stream and judged alike (a tool-call-only answer is a
// success; no text and no tool call, e.g. nothing but reasoning, is
// empty_answer); a body that is not the protocol's answer object (a chat
// completion, a response, a message) fails as bad_stream, naming what it
// is. Description.Kind says "(not streaming)".
func WithoutStreaming() Option {
	return llmOnly("WithoutStreaming", func(o *LLMProvider) { o.noStream = true })
}

// decodeWhole decodes a non-streamed answer of protocol p (its body
// redacted) into rec: the token clocks stay NotObserved, a tool call's
// clocks are now. It judges it: the error class and detail, or "" for a
// good answer.
func decodeWhole(p *protocol.Protocol, body []byte, rec *Record, now time.Duration) (class, detail string) {
	s := &stream{rec: rec, now: now, whole: true, api: p}
	err := p.Whole(s, body)
	s.finish()
	switch {
	case err != nil:
		return ClassBadStream, err.Error()
	case s.filtered():
		return ClassContentFilter, "the provider's content filter stopped the answer (finish_reason " + rec.FinishReason + "): a policy outcome, not latency"
	case s.refusal.Len() > 0:
		return ClassRefusal, "refused: " + truncate(s.refusal.String(), 200)
	case rec.Content == "" && rec.ToolCalls == 0:
		return ClassEmptyAnswer, fmt.Sprintf("no answer content or tool call (finish_reason %q)", rec.FinishReason)
	}
	return "", ""
}
