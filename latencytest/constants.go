package latencytest

import (
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/sample"
)

// The environment variables, the defaults and limits, the values that
// mark a time that is not a latency, and the error classes.
//
// The environment variables are read only at the edge: OpenAIFromEnv
// reads the OPENAI_* ones, AnthropicFromEnv the ANTHROPIC_* ones, and
// Load.FromEnv (which Measure calls) the TAILGUARD_* ones to fill the
// fields a runner leaves unset. Run reads none.
const (
	EnvBaseURL          = "OPENAI_BASE_URL"
	EnvAPIKey           = "OPENAI_API_KEY"
	EnvModel            = "OPENAI_MODEL"
	envAnthropicBaseURL = "ANTHROPIC_BASE_URL"
	envAnthropicAPIKey  = "ANTHROPIC_API_KEY"
	envAnthropicModel   = "ANTHROPIC_MODEL"
	// EnvShard gives a runner its shard when its Shard field is zero:
	// "i/n", i from 0 (JOB_COMPLETION_INDEX of a Kubernetes Indexed Job is
	// 0-based too; a GitHub Actions matrix can list 0 to n-1). See Shard.
	EnvShard = "TAILGUARD_SHARD"
	// EnvStartAt aligns the shards of one run: an RFC 3339 instant
	// ("2025-06-01T12:00:00Z") that every runner of the process waits for
	// before its first request (Load.StartAt, when that field is zero).
	// It may be at most 10 minutes ahead and at most a minute past when a
	// runner starts; further is an error that names the variable.
	// Once a runner of the process has reached the instant, later runners
	// of the same process (the next level of a sweep, a chain after a
	// batch) start at once. A runner inside a synctest bubble (virtual
	// time, from 2000) ignores a real instant (2001 or later), logs so
	// once, and says so in box 9: the variable set for a distributed run
	// does not fail the virtual-time tests of the same process.
	EnvStartAt = "TAILGUARD_START_AT"
	// EnvLocation labels the client's network location in the disclosure
	// when Load.Location is empty.
	EnvLocation = "TAILGUARD_LOCATION"

	// The values that mark a time that is not a latency.

	// Failed is the value a failed request takes in a latency Sample
	// (sample.Failed): it counts as infinitely slow, so a failed request
	// can only make a figure worse, never better.
	Failed = sample.Failed
	// NotObserved marks a time in a Record that did not happen (no token,
	// no answer): -1ns.
	NotObserved = time.Duration(-1)

	// Error classes of a Record's Err. "" means success. HTTP errors are
	// "http_<status>" (see HTTPClass).

	ClassFirstTokenTimeout = "first_token_timeout" // no token before Request.FirstTokenTimeout
	ClassTotalTimeout      = "total_timeout"       // not done before Request.TotalTimeout or the hard cap
	ClassEmptyStream       = "empty_stream"        // 200 and a clean end, but no token at all
	ClassEmptyAnswer       = "empty_answer"        // tokens, but no answer content (e.g. reasoning used the cap)
	ClassTruncated         = "truncated"           // the stream ended without [DONE] (Responses: response.completed; Messages: message_stop)
	ClassBadStream         = "bad_stream"          // a malformed event, an error event or object mid-stream, or a 2xx answer that is not an event stream
	ClassRefusal           = "refusal"             // the model refused (delta.refusal): an answer of its own kind, timed, but not the answer asked for
	ClassContentFilter     = "content_filter"      // the provider's content filter stopped the answer (finish_reason content_filter): policy, not latency
	ClassTransport         = "transport"           // no HTTP answer: connection refused, reset, DNS…
	ClassCanceled          = "canceled"            // the run's context ended (deadline, cancel)
	ClassCallError         = "call_error"          // a Func call returned an error that no HTTP attempt explains (its text in Detail)
	// ClassToolError is a chain's class (ChainRun.Err), never a call's: a
	// tool step (Chain.Tool) returned an error, its text in
	// ChainRun.ToolErr.
	ClassToolError = "tool_error"
)

// The unexported defaults and limits.
const (
	// defaultRequests is the number of measured requests a Batch sends
	// unless told otherwise (Batch.Requests): 75.
	defaultRequests = defaults.Requests
	// defaultWarmup is the number of warm-up requests a Batch sends and
	// discards unless told otherwise (Warmup, NoWarmup): 10.
	defaultWarmup = defaults.Warmup
	// defaultMaxInFlight is OpenLoop.MaxInFlight's default: a safety cap
	// on the requests in flight, high enough that an honest open loop
	// rarely meets it (10,000).
	defaultMaxInFlight = 10_000
	// defaultIdleGap is how long a provider must have had nothing in
	// flight from this client before a request counts as a cold-start
	// candidate in ColdStarts: one minute.
	defaultIdleGap = defaults.IdleGap
	// defaultChainPrompt opens a chain unless Chain.Prompt is set.
	defaultChainPrompt = defaults.ChainPrompt
	// maxOpenLoopRequests is the most requests one OpenLoop run may plan
	// (10,000,000; compact records keep about 60 bytes each).
	maxOpenLoopRequests = 10_000_000
	// maxWindows is the most windows Result.Windows makes (100,000).
	maxWindows = defaults.MaxWindows
	// lateStart is how late a request must start, after its scheduled
	// send, to count as late in Result.Lag and the disclosure: 1ms. Below
	// it is timer and scheduler jitter on a real clock (on synctest's fake
	// clock a request is either exactly on time or waited for something).
	lateStart = time.Millisecond
)

// The error classes and the default prompt mix.
var (
	// Classes lists the error classes of a call besides "http_<status>": every
	// Class constant but ClassToolError, a chain's (add a new class to
	// both).
	Classes = []string{
		ClassFirstTokenTimeout, ClassTotalTimeout, ClassEmptyStream, ClassEmptyAnswer, ClassTruncated,
		ClassBadStream, ClassRefusal, ClassContentFilter, ClassTransport, ClassCanceled, ClassCallError,
		classCancelled, // the client's own cancel (see Cancel)
	}
	// DefaultMix is 70% short, 20% medium, 10% long prompts (about 200,
	// 1,000 and 6,000 tokens, capped at 100, 300 and 600 tokens), seed 7:
	// the mix of published benchmarks (docs/sources.md), what a Batch uses
	// when Mix is left empty.
	DefaultMix = Mix{Seed: 7, Classes: []PromptClass{
		{Name: "short", Weight: 0.7, PromptTokens: 200, MaxTokens: 100},
		{Name: "medium", Weight: 0.2, PromptTokens: 1000, MaxTokens: 300},
		{Name: "long", Weight: 0.1, PromptTokens: 6000, MaxTokens: 600},
	}}
)
