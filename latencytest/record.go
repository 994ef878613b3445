package latencytest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/internal/gaps"
	"github.com/tailguard/tailguard/internal/httpattempt"
	"github.com/tailguard/tailguard/latencytest/internal/summary"
	"github.com/tailguard/tailguard/protocol"
)

// HTTPClass is the class of an HTTP error status: "http_529".
func HTTPClass(status int) string { return fmt.Sprintf("http_%d", status) }

// CheckClass returns an error unless class is one a Record's Err can hold:
// one of Classes, or "http_" and a status from 100 to 599 ("http_529").
// The error names the class and the classes there are.
func CheckClass(class string) error {
	if slices.Contains(Classes, class) {
		return nil
	}
	code, ok := strings.CutPrefix(class, "http_")
	if ok && len(code) == 3 && code[0] >= '1' && code[0] <= '5' &&
		code[1] >= '0' && code[1] <= '9' && code[2] >= '0' && code[2] <= '9' {
		return nil
	}
	return fmt.Errorf("latencytest: unknown error class %q (want http_<status> such as http_529, or one of %s)", class, strings.Join(Classes, ", "))
}

// Record is one call, measured on the client with the monotonic clock. All
// durations are from Start (when the request was sent).
type Record struct {
	// ID is the trace ID, sent as X-Request-ID: "c8-0017", "chain03-call04".
	ID string `json:"id"`
	// Warmup marks a warm-up request: sent, then discarded from every
	// figure (by submission order, never by completion order).
	Warmup bool `json:"warmup,omitempty"`
	// Run is the repeat index (Batch.Repeat), from 0.
	Run int `json:"run,omitempty"`
	// Concurrency is the load level the request ran at.
	Concurrency int `json:"concurrency,omitempty"`
	// Chain and Call place a chain call (from 0); both 0 outside chains.
	Chain int `json:"chain,omitempty"`
	Call  int `json:"call,omitempty"`
	// Session and Turn place a conversation's turn (package agent's
	// Conversation; Turn from 1); both 0 outside conversations.
	Session int `json:"session,omitempty"`
	Turn    int `json:"turn,omitempty"`
	// PromptClass is the Mix class ("short", "medium", "long").
	PromptClass string `json:"prompt_class,omitempty"`
	// PromptChars is the number of characters of prompt text the request
	// sent: its messages' content, the nonce included (0: not known, as
	// for a Func call or a format that does not give it). With the
	// server's PromptTokens it gives the tokenizer's characters per token
	// (package fit).
	PromptChars int `json:"prompt_chars,omitempty"`
	// MaxTokens is the cap sent (0: none).
	MaxTokens int `json:"max_tokens,omitempty"`

	// OpenLoop marks a request sent by an OpenLoop on its schedule: only
	// then are Scheduled, StartDelay and FromSchedule meaningful (a
	// closed-loop request has no schedule to be late for).
	OpenLoop bool `json:"open_loop,omitempty"`
	// Scheduled is when the request was due to be sent, as an offset from
	// the run's start (Result.Start).
	Scheduled time.Duration `json:"scheduled_ns,omitempty"`
	// StartDelay is how much later than Scheduled the request was sent
	// (waiting for a free slot under OpenLoop.MaxInFlight, or a busy
	// client); 0 when on time.
	StartDelay time.Duration `json:"start_delay_ns,omitempty"`
	// FromSchedule is the time from the scheduled send to the end of the
	// response: StartDelay + Total. A wait the client imposed on itself
	// counts here, so coordinated omission cannot hide a stall.
	FromSchedule time.Duration `json:"from_schedule_ns,omitempty"`

	// Start is the wall-clock time the request was sent.
	Start time.Time `json:"start"`
	// DNS, Connect and TLS are connection setup (0 on a reused connection).
	DNS     time.Duration `json:"dns_ns,omitempty"`
	Connect time.Duration `json:"connect_ns,omitempty"`
	TLS     time.Duration `json:"tls_ns,omitempty"`
	// TTFB is the time to the response headers (NotObserved without one).
	TTFB time.Duration `json:"ttfb_ns"`
	// TTFT is the time to the first token of any kind, reasoning included.
	TTFT time.Duration `json:"ttft_ns"`
	// FirstAnswer is the time to the first non-empty answer content.
	FirstAnswer time.Duration `json:"first_answer_ns"`
	// LastToken is the time of the last token.
	LastToken time.Duration `json:"last_token_ns"`
	// Total is the time until the response ended (or failed).
	Total time.Duration `json:"total_ns"`
	// MaxGap is the longest silence between consecutive tokens; for a
	// request that failed mid-stream, the open silence before the failure
	// counts too.
	MaxGap time.Duration `json:"max_gap_ns"`
	// Gaps are the inter-token gaps, one per token event after the first.
	Gaps gaps.Gaps `json:"gaps_ns,omitzero"`

	// TokenEvents counts the SSE events that carried a token.
	TokenEvents int `json:"token_events"`
	// Token counts from the response's usage (0 when it sent none: see
	// UsageReported and CachedReported).
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	// UsageReported is set when the server reported usage (a valid
	// prompt_tokens or completion_tokens): without it the token counts are
	// "not reported", never zero.
	UsageReported bool `json:"usage_reported,omitempty"`
	// CachedReported is set when usage.prompt_tokens_details.cached_tokens
	// was present (even 0): only then does CachedTokens prove anything
	// about the provider's cache.
	CachedReported bool `json:"cached_reported,omitempty"`
	// ToolCalls is the number of tool calls in the answer (distinct
	// tool-call indexes or items); an answer may be text, tool calls or both.
	ToolCalls int `json:"tool_calls,omitempty"`
	// FirstToolCall is the time to the first tool call's name (0 without
	// a tool call). The first tool call is the one whose delta came
	// first; a non-streamed answer's calls all arrive with its body.
	FirstToolCall time.Duration `json:"first_tool_call_ns,omitempty"`
	// ToolArgsDone is the time to the end of the first tool call's
	// arguments: its last argument delta (0 without a tool call, or
	// without arguments).
	ToolArgsDone time.Duration `json:"tool_args_done_ns,omitempty"`
	// HostedTools is the number of calls of tools the provider ran itself
	// (a web search, code execution, an MCP server's tool: Messages'
	// server_tool_use, Responses' web_search_call…): a token each, but
	// neither a tool call nor an answer.
	HostedTools int `json:"hosted_tools,omitempty"`
	// FinishReason is the last finish_reason seen (Responses: the
	// response's status or incomplete reason; Messages: stop_reason).
	FinishReason string `json:"finish_reason,omitempty"`
	// Model is the model ID the response named.
	Model string `json:"model,omitempty"`
	// ServerLatency is the latency the server reports it spent on the
	// answer (Bedrock's metrics.latencyMs), beside the client's Total; 0
	// when it reports none.
	ServerLatency time.Duration `json:"server_latency_ns,omitempty"`

	// Status is the HTTP status (0 without a response).
	Status int `json:"status"`
	// Err is the error class ("" for success; see the Class constants).
	Err string `json:"err,omitempty"`
	// Detail explains the error in words (the API key never appears).
	Detail string `json:"detail,omitempty"`
	// CancelAt is when the client cancelled the call on purpose (class
	// "cancelled", see Cancel), and CancelClose how long its connection
	// then took to close; both 0 otherwise.
	CancelAt    time.Duration `json:"cancel_at_ns,omitempty"`
	CancelClose time.Duration `json:"cancel_close_ns,omitempty"`
	// ServerAfterClose is how many tokens the server says it generated
	// after it saw the client's close, when ServerCloseReported (a fake
	// provider's Served.AfterClose, joined by trace ID): more than one
	// event's worth is a server that kept generating for nobody.
	ServerAfterClose    int  `json:"server_after_close,omitempty"`
	ServerCloseReported bool `json:"server_close_reported,omitempty"`
	// Injected is what the server says it injected into this request: its
	// Tailguard-Injected response header, which a fault-injecting server
	// or proxy (fakeprovider's fake among them) may set
	// ("stall,cold_start=30s"); "" otherwise.
	Injected string `json:"injected,omitempty"`
	// Notes are what the client ignored in an answer it otherwise
	// measured (a usage count that is not a count, a field of the wrong
	// type, choices other than the first), one line each, at most 10.
	Notes []string `json:"notes,omitempty"`
	// Content is the answer text (reasoning and refusals excluded). The
	// TB wrappers (Measure) leave it out of records.jsonl unless asked
	// (Batch.KeepContent, Chain.KeepContent).
	Content string `json:"content,omitempty"`
	// Attempts are the HTTP requests a Func call made through Instrument
	// (retries, tool calls), in the order they were sent; nil for a call
	// that made none and for the other providers. See Func for which
	// attempt the record's figures come from.
	Attempts []httpattempt.Attempt `json:"attempts,omitempty"`
}

// OK reports whether the call succeeded.
func (r *Record) OK() bool { return r.Err == "" }

// TokensUnobserved reports a successful record whose token clocks were
// never filled in: no token event and a zero TTFT (a custom Provider that
// times only the whole call). Its TTFT and first answer are not
// measurements, so they enter latency samples as Failed, never as 0.
func (r *Record) TokensUnobserved() bool { return r.OK() && r.TokenEvents == 0 && r.TTFT == 0 }

// DecodeRate is the decode speed: (n-1)/(last token - first token), in
// tokens per second, n the answer's tokens. n is usage's completion
// tokens, except that it never counts a token the answer did not stream:
// when completion_tokens is the streamed token events plus one and the
// model stopped on its own (protocol.EndsSequence: chat's "stop",
// Messages' "end_turn" or "stop_sequence", Responses' "completed"), the
// extra token is the end-of-sequence token some servers count (Ollama)
// and n is the token events. When usage reported no completion tokens, n is the token events
// and the rate is in events per second.
//
// It is 0 for a failed request (a failure is never fast; a cancel's rate
// counts what it saw), and NaN for a success that has no rate: fewer than
// two tokens (a one-token answer), no token observed, or every token in
// one event (no time between the first and the last). Decode-rate
// figures (sloassert.MinDecodeRate) leave those out, never counting them
// as 0.
func (r *Record) DecodeRate() float64 {
	if !r.OK() && !cancelled(r) {
		return 0
	}
	n := r.decodeTokens()
	span := r.LastToken - r.TTFT
	if n < 2 || r.TTFT < 0 || span <= 0 {
		return math.NaN()
	}
	return float64(n-1) / span.Seconds()
}

// decodeTokens is DecodeRate's n.
func (r *Record) decodeTokens() int {
	switch {
	case r.decodeRateUnit() == unitEventsPerSecond:
		return r.TokenEvents
	case r.CompletionTokens == r.TokenEvents+1 && protocol.EndsSequence(r.FinishReason):
		return r.TokenEvents
	}
	return r.CompletionTokens
}

// Units of Record.DecodeRateUnit.
const (
	unitTokensPerSecond = "tokens/s" // completion tokens from usage
	unitEventsPerSecond = "events/s" // token events (SSE events that carried a token), usage absent
)

// decodeRateUnit is the unit of DecodeRate: unitTokensPerSecond when usage
// reported completion tokens, else unitEventsPerSecond (a server that
// sends several tokens an event then looks slower than it is).
func (r *Record) decodeRateUnit() string {
	if r.CompletionTokens > 0 {
		return unitTokensPerSecond
	}
	return unitEventsPerSecond
}

// Counts accounts for every request: Sent = Kept + Discarded + Failed +
// Cancelled (Planned, Sent, Kept, Discarded, Failed, Cancelled).
type Counts = disclosure.Counts

// ErrorExample is one error class of a result: how many measured
// requests failed with it, and the first of them in submission order as
// an example (Class, Count, ID, Detail); String renders it on one line.
type ErrorExample = summary.ErrorExample
