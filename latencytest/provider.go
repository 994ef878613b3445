package latencytest

import (
	"context"
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/protocol"
)

// Provider performs one call and reports its timeline as a Record. A
// provider failure is data in the Record (Err, Detail), never a panic or an
// error return. Implementations must be safe for concurrent use and must
// honour ctx.
type Provider interface {
	Call(ctx context.Context, req Request) Record
}

// Request is one call to make.
type Request struct {
	// ID is the trace ID; providers send it as X-Request-ID.
	ID string
	// Messages is the conversation, oldest first.
	Messages []Message
	// MaxTokens caps the answer (0: no cap sent).
	MaxTokens int
	// Temperature is sent when non-nil.
	Temperature *float64
	// FirstTokenTimeout fails the call (first_token_timeout) when no token
	// arrives in time; 0: none.
	FirstTokenTimeout time.Duration
	// TotalTimeout fails the call (total_timeout) when it is not done in
	// time; 0: only the hard cap.
	TotalTimeout time.Duration
	// HardCap bounds every call so that a stalled stream never hangs a test
	// (total_timeout); 0 means 150s.
	HardCap time.Duration
	// CancelAfter and CancelAfterTokens cancel the call on purpose (see
	// Cancel, which sets them): after this long, or once this many token
	// events arrived; 0: not by that.
	CancelAfter       time.Duration
	CancelAfterTokens int
	// prompt is the shared text Messages end with, when a Batch built
	// them from its mix (or a Chain its first call, or a replayed trace
	// a prompt size it repeats): the body is then prebuilt
	// (promptbody.go).
	prompt *promptTemplate
}

// limit is the call's deadline: the smaller of TotalTimeout and HardCap.
func (r Request) limit() time.Duration {
	capd := r.HardCap
	if capd <= 0 {
		capd = defaults.HardCap
	}
	if r.TotalTimeout > 0 && r.TotalTimeout < capd {
		return r.TotalTimeout
	}
	return capd
}

// Message is one chat message.
type Message = protocol.Message

// Description says what a provider talks to, for the disclosure. It never
// holds a credential.
type Description struct {
	// Kind is the protocol, e.g. "openai-chat-completions (streaming)".
	Kind string
	// Endpoint is scheme://host/path, without credentials or query.
	Endpoint string
	// Model is the model ID requested.
	Model string
	// Client names the HTTP client that measured the requests and what it
	// times, e.g. "tailguard's HTTP/1.1 client (events timed at the socket
	// read that brought them)"; "" for a provider that does not say.
	Client string
}

// describer is implemented by providers that can describe themselves
// (any provider with a Describe() Description method, a user's own too).
type describer interface {
	Describe() Description
}

func describe(p Provider) Description {
	if d, ok := p.(describer); ok {
		return d.Describe()
	}
	return Description{Kind: "custom provider"}
}
