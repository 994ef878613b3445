package latencytest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// NotObserved marks a time in a Record that did not happen (no token, no
// answer): -1ns.
const NotObserved = time.Duration(-1)

// Error classes of a Record's Err. "" means success. HTTP errors are
// "http_<status>" (see HTTPClass).
const (
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
)

// ClassToolError is a chain's class (ChainRun.Err), never a call's: a
// tool step (Chain.Tool) returned an error, its text in ChainRun.ToolErr.
const ClassToolError = "tool_error"

// Classes lists the error classes besides "http_<status>": every Class
// constant above (add a new class to both).
var Classes = []string{
	ClassFirstTokenTimeout, ClassTotalTimeout, ClassEmptyStream, ClassEmptyAnswer, ClassTruncated,
	ClassBadStream, ClassRefusal, ClassContentFilter, ClassTransport, ClassCanceled, ClassCallError,
}

// HTTPClass is the class of an HTTP error status: "http_529".
func HTTPClass(status int) string { return fmt.Sprintf("http_%d", status) }

// IsClass reports whether class is one a Record's Err can hold: one of
// Classes, or "http_" and a status from 100 to 599 ("http_529").
func IsClass(class string) bool {
	if slices.Contains(Classes, class) {
		return true
	}
	code, ok := strings.CutPrefix(class, "http_")
	return ok && len(code) == 3 && code[0] >= '1' && code[0] <= '5' &&
		code[1] >= '0' && code[1] <= '9' && code[2] >= '0' && code[2] <= '9'
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
	// PromptClass is the Mix class ("short", "medium", "long").
	PromptClass string `json:"prompt_class,omitempty"`
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
	Gaps Gaps `json:"gaps_ns,omitzero"`

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
	// FinishReason is the last finish_reason seen (Responses: the
	// response's status or incomplete reason; Messages: stop_reason).
	FinishReason string `json:"finish_reason,omitempty"`
	// Model is the model ID the response named.
	Model string `json:"model,omitempty"`

	// Status is the HTTP status (0 without a response).
	Status int `json:"status"`
	// Err is the error class ("" for success; see the Class constants).
	Err string `json:"err,omitempty"`
	// Detail explains the error in words (the API key never appears).
	Detail string `json:"detail,omitempty"`
	// Injected is what a fake provider says it injected into this request
	// (its X-Fake-Injected header: "stall,cold_start=30s"); "" otherwise.
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
	Attempts []Attempt `json:"attempts,omitempty"`
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
// model stopped on its own (finish_reason "stop"), the extra token is the
// end-of-sequence token some servers count (Ollama) and n is the token
// events. When usage reported no completion tokens, n is the token events
// and the rate is in events per second (see DecodeRateUnit).
//
// It is 0 for a failed request (a failure is never fast), and NaN for a
// success that has no rate: fewer than two tokens (a one-token answer),
// no token observed, or every token in one event (no time between the
// first and the last). Result.DecodeRates leaves those out, never counting
// them as 0.
func (r *Record) DecodeRate() float64 {
	if !r.OK() {
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
	case r.DecodeRateUnit() == UnitEventsPerSecond:
		return r.TokenEvents
	case r.CompletionTokens == r.TokenEvents+1 && r.FinishReason == "stop":
		return r.TokenEvents
	}
	return r.CompletionTokens
}

// Units of Record.DecodeRateUnit.
const (
	UnitTokensPerSecond = "tokens/s" // completion tokens from usage
	UnitEventsPerSecond = "events/s" // token events (SSE events that carried a token), usage absent
)

// DecodeRateUnit is the unit of DecodeRate: UnitTokensPerSecond when usage
// reported completion tokens, else UnitEventsPerSecond (a server that
// sends several tokens an event then looks slower than it is).
func (r *Record) DecodeRateUnit() string {
	if r.CompletionTokens > 0 {
		return UnitTokensPerSecond
	}
	return UnitEventsPerSecond
}

// Gaps holds a request's inter-token gaps compactly (unsigned varint
// nanoseconds, about 4 bytes a gap), so that a record stays small.
type Gaps struct {
	b []byte
	n int
}

// Add appends a gap (a negative one is stored as 0). Add is for the code
// that records a request: a copied Gaps shares its bytes with the original,
// so only one of them may be added to.
func (g *Gaps) Add(d time.Duration) {
	g.b = binary.AppendUvarint(g.b, uint64(max(d, 0)))
	g.n++
}

// Len is the number of gaps.
func (g Gaps) Len() int { return g.n }

// All returns the gaps in order.
func (g Gaps) All() []time.Duration { return g.appendTo(make([]time.Duration, 0, g.n)) }

func (g Gaps) appendTo(out []time.Duration) []time.Duration {
	b := g.b
	for len(b) > 0 {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			break
		}
		out = append(out, time.Duration(v))
		b = b[k:]
	}
	return out
}

// MarshalJSON writes the gaps as an array of nanoseconds.
func (g Gaps) MarshalJSON() ([]byte, error) {
	if g.n == 0 {
		return []byte("[]"), nil
	}
	return json.Marshal(g.All())
}

// UnmarshalJSON reads an array of nanoseconds.
func (g *Gaps) UnmarshalJSON(b []byte) error {
	var ds []time.Duration
	if err := json.Unmarshal(b, &ds); err != nil {
		return err
	}
	*g = Gaps{}
	for _, d := range ds {
		g.Add(d)
	}
	return nil
}

// IsZero lets encoding/json's omitempty drop an empty list.
func (g Gaps) IsZero() bool { return g.n == 0 }

// Counts accounts for every request: Sent = Kept + Discarded + Failed.
type Counts struct {
	// Planned is how many requests the run meant to send.
	Planned int `json:"planned"`
	// Sent is how many were sent (fewer than Planned when the deadline
	// stopped the run).
	Sent int `json:"sent"`
	// Kept is measured requests that succeeded.
	Kept int `json:"kept"`
	// Discarded is warm-up requests (whatever their outcome).
	Discarded int `json:"discarded"`
	// Failed is measured requests that failed.
	Failed int `json:"failed"`
}

// Result is what a batch measured: every record, warm-up included, in
// submission order.
type Result struct {
	Records []Record `json:"records"`
	// Planned is how many requests the run meant to send.
	Planned int `json:"planned"`
	// Partial is set when the run stopped before sending everything;
	// PartialReason says why.
	Partial       bool   `json:"partial,omitempty"`
	PartialReason string `json:"partial_reason,omitempty"`
	// Start and End bound the run (wall clock).
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// CPUPerWall is the client's CPU seconds per wall second over the run
	// (NaN when unknown). Above 0.7 the client is part of the tail.
	CPUPerWall float64 `json:"cpu_per_wall"`
	// Machine is what other processes did to the client's timings over
	// the run (PSI, load, timer lateness; see MachineLoad); nil when not
	// measured (a merge, a baseline read from records).
	Machine *MachineLoad `json:"machine,omitempty"`
	// RepeatGaps holds the run-to-run gaps when the batch was repeated.
	RepeatGaps []RepeatGap `json:"repeat_gaps,omitempty"`
	// Disclosure says how it was measured.
	Disclosure Disclosure `json:"disclosure"`
	// Shard is the part of a split run (see Shard) this result measured:
	// set by a runner under TAILGUARD_SHARD or a Shard field, zero for a
	// whole run and for what MergeRecords joins. sloassert fails every
	// objective on a shard ("merge the shards, then judge") unless it
	// allows one (sloassert.AllowShard).
	Shard Shard `json:"shard,omitzero"`
}

// MarshalJSON writes a non-finite Gap and a Failed run quantile as null.
func (g RepeatGap) MarshalJSON() ([]byte, error) {
	type plain RepeatGap
	return json.Marshal(struct {
		plain
		Runs []*int64 `json:"runs_ns"`
		Gap  *float64 `json:"gap"`
	}{plain(g), durations(g.Runs), finite(g.Gap)})
}

// durations renders latencies for JSON: nanoseconds, Failed as null.
func durations(ds []time.Duration) []*int64 {
	out := make([]*int64, len(ds))
	for i, d := range ds {
		out[i] = nanos(d)
	}
	return out
}

// nanos is d in nanoseconds, or nil for Failed (which JSON would
// otherwise show as 9223372036854775807).
func nanos(d time.Duration) *int64 {
	if d == Failed {
		return nil
	}
	n := int64(d)
	return &n
}

// RepeatGap is the between-run gap of one quantile: the noise floor. A
// change smaller than Gap is not a finding.
type RepeatGap struct {
	Metric string          `json:"metric"` // "ttft" or "total"
	Q      float64         `json:"q"`
	Runs   []time.Duration `json:"runs_ns"`
	// Gap is (max-min)/min over the runs, a fraction.
	Gap float64 `json:"gap"`
}

// Measured returns copies of the non-warm-up records.
func (r *Result) Measured() []Record {
	out := make([]Record, 0, len(r.Records))
	for _, rec := range r.Records {
		if !rec.Warmup {
			out = append(out, rec)
		}
	}
	return out
}

// sample collects one value per measured record; failed records give
// Failed, and a value that was not observed gives Failed too.
func (r *Result) sample(get func(*Record) time.Duration) Sample {
	s := make(Sample, 0, len(r.Records))
	for i := range r.Records {
		rec := &r.Records[i]
		if rec.Warmup {
			continue
		}
		v := get(rec)
		if !rec.OK() || v < 0 {
			v = Failed
		}
		s = append(s, v)
	}
	return s
}

// TTFT is the time to first token of each measured request (Failed for a
// failed request, and for one that never observed a token: see
// Record.TokensUnobserved).
func (r *Result) TTFT() Sample {
	return r.sample(func(x *Record) time.Duration {
		if x.TokensUnobserved() {
			return NotObserved
		}
		return x.TTFT
	})
}

// FirstAnswer is the time to the first answer token of each measured
// request (Failed for a failed request, and for one that never observed a
// token).
func (r *Result) FirstAnswer() Sample {
	return r.sample(func(x *Record) time.Duration {
		if x.TokensUnobserved() {
			return NotObserved
		}
		return x.FirstAnswer
	})
}

// Total is the total time of each measured request (Failed for a failed
// request).
func (r *Result) Total() Sample { return r.sample(func(x *Record) time.Duration { return x.Total }) }

// MaxGap is the longest inter-token silence of each measured request
// (Failed for a failed request, and for one with no token event: a
// provider that does not observe tokens cannot vouch for its silences).
func (r *Result) MaxGap() Sample {
	return r.sample(func(x *Record) time.Duration {
		if x.TokenEvents == 0 {
			return NotObserved
		}
		return x.MaxGap
	})
}

// ITL pools every inter-token gap of the measured requests. A failed
// request adds its gaps and one Failed value (its last silence never
// ended), so failures can only make the figure worse.
func (r *Result) ITL() Sample {
	var s Sample
	for i := range r.Records {
		if rec := &r.Records[i]; !rec.Warmup {
			s = rec.Gaps.appendTo(s)
			if !rec.OK() {
				s = append(s, Failed)
			}
		}
	}
	return s
}

// DecodeRates is the decode speed (tokens/s, or events/s for requests
// without usage: see DecodeRateUnit) of each measured request; a failed
// request counts as 0, and a success without a rate (a one-token answer:
// see Record.DecodeRate) is left out, so it neither fails nor helps a
// decode-rate floor.
func (r *Result) DecodeRates() Rates {
	out := make(Rates, 0, len(r.Records))
	for i := range r.Records {
		if !r.Records[i].Warmup {
			if v := r.Records[i].DecodeRate(); !math.IsNaN(v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// DecodeRateUnit is the unit of DecodeRates: UnitEventsPerSecond when any
// measured success reported no usage (its rate counts token events), else
// UnitTokensPerSecond; "" when no measured request succeeded.
func (r *Result) DecodeRateUnit() string {
	unit := ""
	for i := range r.Records {
		if rec := &r.Records[i]; !rec.Warmup && rec.OK() {
			if unit = rec.DecodeRateUnit(); unit == UnitEventsPerSecond {
				return unit
			}
		}
	}
	return unit
}

// Counts accounts for every request sent.
func (r *Result) Counts() Counts {
	c := Counts{Planned: r.Planned, Sent: len(r.Records)}
	for i := range r.Records {
		switch rec := &r.Records[i]; {
		case rec.Warmup:
			c.Discarded++
		case rec.OK():
			c.Kept++
		default:
			c.Failed++
		}
	}
	return c
}

// ErrorRate is the fraction of measured requests that failed; NaN when no
// request was measured.
func (r *Result) ErrorRate() float64 {
	c := r.Counts()
	if c.Kept+c.Failed == 0 {
		return math.NaN()
	}
	return float64(c.Failed) / float64(c.Kept+c.Failed)
}

// Errors counts the measured failures by class.
func (r *Result) Errors() map[string]int {
	m := map[string]int{}
	for i := range r.Records {
		if rec := &r.Records[i]; !rec.Warmup && !rec.OK() {
			m[rec.Err]++
		}
	}
	return m
}

// ErrorExample is one error class of a result: how many measured requests
// failed with it, and the first of them in submission order as an
// example.
type ErrorExample struct {
	Class  string `json:"class"`
	Count  int    `json:"count"`
	ID     string `json:"id"`               // the example's trace ID
	Detail string `json:"detail,omitempty"` // the example's Detail
}

// String renders the example on one line, its detail cut to 80
// characters: `http_400 100 (e.g. c1-0000: "you must provide a model
// parameter")`.
func (e ErrorExample) String() string {
	if e.Detail == "" {
		return fmt.Sprintf("%s %d (e.g. %s)", e.Class, e.Count, e.ID)
	}
	return fmt.Sprintf("%s %d (e.g. %s: %q)", e.Class, e.Count, e.ID, cutRunes(e.Detail, 80))
}

// cutRunes cuts s to at most n characters, marking a cut with "…".
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// ErrorExamples lists the measured failures by class, most frequent
// first (ties by class), each with its first request as an example; nil
// when nothing failed.
func (r *Result) ErrorExamples() []ErrorExample {
	var out []ErrorExample
	at := map[string]int{}
	for i := range r.Records {
		rec := &r.Records[i]
		if rec.Warmup || rec.OK() {
			continue
		}
		k, ok := at[rec.Err]
		if !ok {
			k = len(out)
			at[rec.Err] = k
			out = append(out, ErrorExample{Class: rec.Err, ID: rec.ID, Detail: rec.Detail})
		}
		out[k].Count++
	}
	slices.SortStableFunc(out, func(a, b ErrorExample) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Class, b.Class)
	})
	return out
}

// ErrorClasses returns the classes of Errors, sorted.
func (r *Result) ErrorClasses() []string { return slices.Sorted(maps.Keys(r.Errors())) }

// CachedTokens sums usage.prompt_tokens_details.cached_tokens over the
// measured requests: 0 proves the prompts missed the provider's cache.
func (r *Result) CachedTokens() int {
	n := 0
	for i := range r.Records {
		if !r.Records[i].Warmup {
			n += r.Records[i].CachedTokens
		}
	}
	return n
}

// ChainResult is what a chain run measured.
type ChainResult struct {
	Chains []ChainRun `json:"chains"`
	// Planned is how many chains the run meant to complete.
	Planned       int        `json:"planned"`
	Partial       bool       `json:"partial,omitempty"`
	PartialReason string     `json:"partial_reason,omitempty"`
	Start         time.Time  `json:"start"`
	End           time.Time  `json:"end"`
	CPUPerWall    float64    `json:"cpu_per_wall"`
	Disclosure    Disclosure `json:"disclosure"`
	// Machine is as Result.Machine.
	Machine *MachineLoad `json:"machine,omitempty"`
	// Shard is the part of a split run these chains are, as Result.Shard.
	Shard Shard `json:"shard,omitzero"`
}

// ChainRun is one chain: its calls in order and its measured total.
type ChainRun struct {
	ID    string   `json:"id"`
	Calls []Record `json:"calls"`
	// Total is measured around the whole chain: its calls and its tool
	// steps (Chain.Tool).
	Total time.Duration `json:"total_ns"`
	// ModelTime is the sum of the calls' Total; ToolTime the sum of the
	// tool steps' wall times (0 without Chain.Tool), over ToolSteps steps.
	ModelTime time.Duration `json:"model_ns,omitempty"`
	ToolTime  time.Duration `json:"tool_ns,omitempty"`
	ToolSteps int           `json:"tool_steps,omitempty"`
	// ToolErr is the error of the tool step that failed the chain (Err
	// "tool_error"), "" otherwise.
	ToolErr string `json:"tool_err,omitempty"`
	// Err is the class of the first failed call ("" when all succeeded;
	// "canceled" when the run's deadline cut the chain short).
	Err string `json:"err,omitempty"`
	// Cut says why the chain stopped before its last call ("" when it ran
	// them all).
	Cut string `json:"cut,omitempty"`
}

// OK reports whether every call of the chain succeeded.
func (c *ChainRun) OK() bool { return c.Err == "" }

// Totals is the measured total of each chain; a chain with a failed call
// (an empty answer included) is Failed: the task did not get done.
func (cr *ChainResult) Totals() Sample {
	s := make(Sample, 0, len(cr.Chains))
	for i := range cr.Chains {
		if cr.Chains[i].OK() {
			s = append(s, cr.Chains[i].Total)
		} else {
			s = append(s, Failed)
		}
	}
	return s
}

// Calls returns every call of every chain as one Result, for per-call
// figures. A chain run cut short gives a Partial result.
func (cr *ChainResult) Calls() *Result {
	r := &Result{Start: cr.Start, End: cr.End, CPUPerWall: cr.CPUPerWall, Machine: cr.Machine, Disclosure: cr.Disclosure,
		Partial: cr.Partial, PartialReason: cr.PartialReason, Shard: cr.Shard}
	for _, c := range cr.Chains {
		r.Records = append(r.Records, c.Calls...)
	}
	r.Planned = len(r.Records)
	return r
}

// ErrorRate is the fraction of chains with a failed call, among those
// not cut short by the run's end (see ChainRun.CutShort); NaN when there
// are none.
func (cr *ChainResult) ErrorRate() float64 {
	n, finished := 0, 0
	for i := range cr.Chains {
		if !cr.Chains[i].CutShort() {
			finished++
			if !cr.Chains[i].OK() {
				n++
			}
		}
	}
	if finished == 0 {
		return math.NaN()
	}
	return float64(n) / float64(finished)
}
