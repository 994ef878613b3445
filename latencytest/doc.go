// Package latencytest measures calls from the client side and runs the
// batches, sweeps and agent chains that latency SLO tests are made of.
//
// A Provider makes one call and returns its Record; OpenAI streams chat
// completions from any OpenAI-compatible endpoint (including the in-memory
// fake of package fakeprovider), Responses streams from OpenAI's Responses
// API and Anthropic from Anthropic's Messages API, all three timed and
// judged alike (an answer may be text, tool calls or both). The runners (Batch, Sweep, OpenLoop, Chain) send
// requests with deterministic trace IDs, discard warm-up requests by
// submission order, start every prompt with a unique nonce, and return a
// Result with every record and a Disclosure of how it was measured. Each
// runner has a pure core, Run(ctx, provider), and a thin wrapper,
// Measure(t, provider), that takes its deadline from the test, writes the
// raw records and a summary as artifacts, and logs the result.
//
// # Timing
//
// All times are taken on the client with the monotonic clock, from the
// moment the request is sent: TTFB (response headers), TTFT (first token of
// any kind, reasoning included), FirstAnswer (first non-empty answer
// content), every inter-token gap and the longest (MaxGap, a stall), the
// last token, and Total (end of stream). Connection setup (DNS, connect,
// TLS) is broken out with net/http/httptrace. Token counts come from the
// response's usage; decode speed is (completion_tokens-1)/(last token -
// first token). Inside synctest.Test against the in-memory fake, every
// figure is exact: a fixed 200 ms TTFT and 10 ms ITL over 64 tokens measure
// exactly 200 ms and 830 ms.
//
// # Failures
//
// A failed call is a Record with an error class (Err): "http_<status>",
// "first_token_timeout", "total_timeout", "empty_stream" (200 but no token),
// "empty_answer" (tokens but no answer content or tool call, e.g.
// reasoning used the cap), "refusal" (the model refused: timed, but not
// the answer asked for), "content_filter" (the provider's content filter
// stopped the answer: policy, not latency), "truncated" (no [DONE]), "bad_stream" (a malformed stream, an
// error event or in-band error object, or a 2xx answer that is not
// text/event-stream), "transport", "canceled", or "call_error" (a Func
// call's own error, its text in Detail). The stream ends at
// data: [DONE]: a server that keeps the connection open after it adds no
// time. A successful call that never observed a token (a custom Provider
// that times only the whole call) has no TTFT: it enters TTFT samples as
// Failed, never as 0.
// Nothing is lost: Counts shows sent = kept + discarded + failed. A failed
// request never makes a latency figure look better: it enters every latency
// Sample as Failed (infinitely slow), so a quantile that reaches it is
// Failed and Mean, Stddev and CV are Failed, +Inf or NaN; decode rates count
// it as 0. Sample.Finite drops failures explicitly, for figures judged next
// to the error rate.
//
// # Usage
//
// Token counts come from the server's usage (or Groq's x_groq.usage; when
// every chunk carries usage, the last); Record.UsageReported and
// CachedReported say whether it sent them. Without usage, counts are "not
// reported", never zero, and decode rates count SSE events (DecodeRateUnit
// says "events/s"); the disclosure says so. A decode rate never counts a
// token the answer did not stream (see Record.DecodeRate), and a
// one-token answer has none. A server that refuses stream_options is
// measured without it (see OpenAI and WithoutStreamOptions).
//
// # Tool calls
//
// An answer may be text, tool calls, or both: a tool-call delta
// (choices[0].delta.tool_calls) is a token and an answer like text (TTFT,
// FirstAnswer, gaps and stalls count it), and an answer of tool calls
// alone is a success. Record.ToolCalls counts the calls, FirstToolCall is
// the time to the first one's name and ToolArgsDone to its last arguments
// delta.
//
// # Your own client, and any API
//
// Func(fn) measures any Go call (a gRPC method, a query, an agent step):
// total time, and fn's error as the class. Wrap your own HTTP client's
// transport with Instrument and the requests it makes inside the call are
// timed as the built-in providers time their own (first byte, each SSE
// event as your client reads it in the protocol the path or the events
// name, usage, end of body; a non-streamed answer at its body's end):
// each request is one of the
// record's Attempts, the first sent with the trace ID as X-Request-ID and
// the n-th with "<trace ID>-a<n>", so the fake draws a retry anew. The
// record's stream figures come from the last attempt that succeeded, timed
// from the call's start; Total covers the whole call. Retries are measured,
// not hidden: Result.FirstAttempt beside Result.Total, Result.Attempts and
// Retried, and the disclosure's box 2 sets first-attempt and with-retry
// p99 side by side. HTTP(method, url) measures a plain endpoint, its body
// timed as bytes whatever its type (headers, first and last byte, total);
// a redirect or a status of 400 or more is "http_<status>".
// Result.Cost prices the answers from their usage (Prices) and says what
// one useful answer costs once the failed and empty ones are paid for.
//
// # Secrets
//
// The API key, every WithHeader value and the base URL's user info and
// query values never reach a Record, a log line, an error or an artifact:
// any of them (8 bytes or longer) that a server echoes into a model name,
// answer, detail or note is replaced by "[redacted]", in any encoding
// (escaped for a URL, JSON or HTML, nested, base64 as in Basic auth), and
// so is a secret's start of 4 bytes or more where a text was cut short
// (see WithAPIKey). A refused URL that is no URL is not shown. Answers
// are left out of the records.jsonl artifact unless Batch.KeepContent (or
// Chain.KeepContent) asks for them: CI uploads artifacts.
//
// # Open loop
//
// A Batch is a closed loop: a request starts when a slot frees, so when
// the provider stalls the client sends less and the waits never show
// (coordinated omission). An OpenLoop starts requests on a schedule
// instead (Poisson or constant arrivals at Rate per second, seeded; or a
// replayed Schedule, or a production trace read by LoadSchedule: one
// "offset [prompt tokens [max tokens]]" a line), whatever is in flight,
// up to MaxInFlight (default 10,000, a safety cap). Each Record keeps when
// it was due (Scheduled, from the run's start), how late it started
// (StartDelay: MaxInFlight was full, or the client was busy) and
// FromSchedule = StartDelay + Total; Result.FromSchedule and
// TTFTFromSchedule measure from the schedule, so a request that waited
// counts its wait, and Result.Lag counts the requests that started
// LateStart (1ms) or more late. A record not sent on a schedule is Failed
// in those samples: a closed loop cannot vouch for the waits it hid. The
// disclosure says when the client fell behind (box 13) and how requests
// arrived (box 7).
//
// # The client's machine
//
// CPU/wall (box 13) sees only the client's own CPU. Each real-time run
// also samples the machine over the run (Result.Machine, a MachineLoad):
// Linux PSI (/proc/pressure/cpu, the share of the run in which a task
// waited for a CPU), the load average and runnable tasks against the
// cores (/proc/loadavg), and the lateness of a timer probe's wake-ups in
// the client (p50/p99/max). Box 13 adds the figures ("not available"
// where the platform lacks a signal; "not measured (virtual time)" in a
// synctest bubble, where the probe does not run) and warns when the
// timings may include scheduling delay of the client (MachineLoad.Warning;
// sloassert's report repeats it).
//
// # Shards
//
// One load can run from several processes or machines: TAILGUARD_SHARD=i/n
// (or a runner's Shard field; i from 0, as JOB_COMPLETION_INDEX) makes a
// runner send only its share, with the whole run's trace IDs: request i of
// a Batch (warm-up included) to shard i mod n, whole chains of a Chain, and
// every n-th arrival of an OpenLoop's one seeded schedule (rate/n each).
// Concurrency is the whole run's, split evenly among the shards.
// TAILGUARD_START_AT (RFC 3339, at most MaxStartWait ahead and MaxStartLate
// past) makes every shard wait for one instant, so their windows overlap.
// MergeRecords (and MergeLevels, by load level) joins the shards'
// records.jsonl files into one Result, recomputing every figure from the raw
// records: a trace ID in two files is an error, and windows that do not
// overlap are a warning (Disclosure.Warnings). A merge of an incomplete
// set is Partial, naming what is missing: a shard with no file (summaries
// and end lines say "shard 1/4" and the run's label), a file cut short or
// emptied (records files end with a count, {"end_of_records":N}; a
// summary says how many records were written and planned). A result
// measured as a shard carries Result.Shard, and sloassert fails it unless
// an objective allows one (sloassert.AllowShard). Inside a synctest
// bubble a real TAILGUARD_START_AT is ignored, with one log line. See
// Shard.
//
// # Other tools' records
//
// Import reads the per-request output of other load tools (AIPerf,
// vllm bench serve, GuideLLM, llmperf, k6, vegeta; see Formats) into a
// Result with the same semantics, so the same objectives judge it. A clock
// the tool did not measure is not observed (it counts as failed, never as
// 0), and the Disclosure names the tool, its version and what it missed.
//
// # Percentiles
//
// Quantiles are fractions in [0,1] (0.99 for p99), computed exactly from
// the raw values by linear interpolation between closest ranks (numpy's
// default, R type 7), so published figures can be recomputed from the raw
// records (WriteRecords, LoadRecords). CV is in percent and uses the sample
// standard deviation (n-1).
//
// # Determinism
//
// Trace IDs are deterministic ("c8-0017", "c8-r1-0017" for a repeat,
// "chain03-call04"), and so is each request's prompt class (Mix, seed 7).
// The nonce is not: it is a random per-run ID plus a hash of the trace ID,
// of fixed length, so a real provider's cache cannot serve one run's prompts
// to the next while the prompt's length never changes. Against the fake,
// which keys its randomness by trace ID, the same run twice gives the same
// records.
package latencytest
