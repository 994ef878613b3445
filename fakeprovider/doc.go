// Package fakeprovider is a fake LLM provider (OpenAI chat completions,
// OpenAI's Responses API and Anthropic's Messages API) that injects cold
// starts, queueing, stalls and errors, deterministically, so that latency
// tests meet a realistic tail without a real endpoint.
//
// A Fake is an http.Handler driven by a Profile (a Go struct or YAML; see
// ParseProfile). Serve it three ways: in memory with Transport or Client
// (runs on synctest's fake clock), on a real loopback socket with NewServer,
// or from any language with the fakellm command:
//
//	go run ./cmd/fakellm serve -preset llama-4-maverick
//
// # API
//
// POST /v1/chat/completions (stream true or false, stream_options.include_usage,
// max_tokens, max_completion_tokens), GET /v1/models, GET /v1/models/{id},
// GET /healthz, and GET /fake/served (what happened to each request, as
// JSON). A stream sends a role chunk with the first token, token chunks
// with delta.content or delta.reasoning_content, a chunk with finish_reason
// ("stop" or "length"; an empty stream says "stop"), a usage chunk when
// asked, then "data: [DONE]". Errors carry OpenAI's error body. Bad
// requests get 400: among them stream_options without stream, as OpenAI
// answers, and what the fake cannot honour rather than silently ignore
// (n other than 1, logprobs true, top_logprobs). A model other than the
// profile's gets OpenAI's 404 with code model_not_found, so SDKs raise their
// not-found error. A body over 8 MiB gets 413. Other sampling fields
// (temperature, top_p, seed, stop, tools, ...) are accepted and change
// nothing: the fake's answers are latency, not text.
//
// POST /v1/responses (OpenAI's Responses API: input, instructions, stream,
// max_output_tokens, tools) and POST /v1/messages (Anthropic's Messages
// API: messages, system, max_tokens (required), stream, tools) serve the
// same timeline, draws, faults and script as chat, keyed by the same
// X-Request-ID, in each provider's shape. A Responses stream sends
// response.created and response.in_progress at admission, then per output
// item output_item.added, its deltas (reasoning as a reasoning item's
// response.reasoning_summary_text.delta, text as
// response.output_text.delta, a tool call as a function_call item's
// response.function_call_arguments.delta) and done events, then
// response.completed, or response.incomplete when max_output_tokens cut
// the answer; usage carries input_tokens_details.cached_tokens and
// output_tokens_details.reasoning_tokens. A Messages stream sends
// message_start (usage with cache_read_input_tokens; input_tokens counts
// the uncached rest, as Anthropic counts) and ping at admission, then a
// content block per part (thinking with thinking_delta and a
// signature_delta, text with text_delta, tool_use with input_json_delta),
// message_delta with stop_reason (end_turn, max_tokens or tool_use) and
// output_tokens, and message_stop. Errors on /v1/messages carry
// Anthropic's body {"type":"error","error":{"type":...,"message":...}}.
// Every request records its protocol in Served.Protocol.
//
// tool_calls: {probability: 30%, arguments_tokens: 40} makes that share of
// answers one function call (see ToolCalls), streamed at the same ITLs as
// text: in chat as delta.tool_calls (the first chunk names the function)
// and finish_reason "tool_calls".
//
// # Headers
//
// Every answer carries x-request-id: the client's X-Request-ID, or
// "req_fake_N" without one, N counting the requests the fake received from
// 0 (such a chat request's trace ID is "#N"). An X-Request-ID over 256
// bytes gets 400. Chat answers carry OpenAI's rate-limit headers for a
// fixed quota the fake never enforces: x-ratelimit-limit-requests 10000
// and x-ratelimit-limit-tokens 10000000 (per minute);
// x-ratelimit-remaining-requests 9999 and x-ratelimit-reset-requests 6ms
// (a minute's share of one request); x-ratelimit-remaining-tokens the limit
// less the request's prompt tokens and max_tokens, and
// x-ratelimit-reset-tokens their share of a minute (OpenAI charges both up
// front). A 429 says 0 requests remain until faults.retry_after. A 429 or
// 503 carries Retry-After (faults.retry_after in whole seconds, rounded
// up) and retry-after-ms; a 529, like Anthropic's, carries neither.
// Messages answers carry Anthropic's anthropic-ratelimit-{requests,tokens,
// input-tokens,output-tokens}-{limit,remaining,reset} headers for the same
// quota (resets as RFC 3339 instants), retry-after on a 429 only, and
// request-id "req_fake_N" naming the attempt (a retry resending the same
// X-Request-ID gets a new one; response and message IDs are per attempt
// too). X-Fake-Injected names what was injected (see HeaderInjected); GET
// /fake/served carries X-Fake-Served-Dropped (see Fake.ServedDropped).
//
// Over a real socket (NewServer, StartServer, fakellm) headers must arrive
// within 10 s and the body within 30 s more (then 408); the body deadline
// is lifted once the body is in, so a stream may last as long as it must.
//
// # Timing
//
// For each request: arrival; a wait for a model load (cold start) when the
// deployment had scaled to zero; a FIFO wait for a slot (Replicas ×
// SlotsPerReplica); then the first token at admission + TTFT, where
// TTFT = (ttft + prefill_per_1k_tokens × prompt_tokens/1000) × cache factor
// (on a prefix-cache hit) × (1 + slowdown_per_inflight × others in flight);
// with prefix_cache.scope "prefill" (every preset's) the factor applies to
// the cached tokens' share of prefill only. With load levels (Profile.Load)
// the ttft and itl are drawn from the level for the requests in flight at
// admission, as measured at that concurrency (see LoadLevel).
// Prompt tokens are estimated as characters/4. Every further SSE event
// comes after one ITL draw per token it carries; reasoning tokens come
// first and count against max_tokens (a request without one is capped at
// 1,048,576 tokens, like a context limit). Durations too large for int64
// nanoseconds saturate rather than wrap. A stall adds its length before the
// token it follows. Over real sockets on Linux each event leaves when due
// to within tens of microseconds (a kernel timer read through the runtime's
// poller; Go's own timers can be a millisecond late there), at the cost of
// one wake-up per event; in memory, time is synctest's. The slot is
// released when the last token is sent (or the client goes away). Response
// headers are sent at admission time for streams, so a client's time to
// first byte measures queueing and cold starts, and its time to first token
// the rest.
//
// The fake reads the clock with time.Now and waits with timers, so inside
// synctest.Test (with Client or Transport) a 30 s cold start or a 20 min stall
// costs no real time and is measured exactly: a fixed 200 ms TTFT with 10 ms
// ITL over 64 tokens streams its first token at exactly 200 ms and its last
// at 830 ms.
//
// # Determinism
//
// Every random draw comes from (Profile.Seed, request key), the key being the
// request's X-Request-ID header (the harness's trace ID), so concurrency and
// goroutine order do not change outcomes: the same seed and trace IDs give
// the same timings and faults. Without the header the key is "#N", N
// counting the requests of any kind the fake received from 0, which is
// deterministic only for sequential clients. One
// dispatcher goroutine owns the shared state (slots, queue, warm/cold, prefix
// cache); arrivals at the same instant are ordered by trace ID. Script
// entries select requests by trace ID or by arrival index (from 0).
//
// # Chains
//
// With conversation: {icc: 0.53} the calls of one agent chain share a
// decode speed: a request whose X-Request-ID ends in "-call" and digits
// (latencytest's Chain sends "chain03-call04") has its ITLs multiplied by
// its chain's lognormal factor, calibrated so that log call totals have
// that intraclass correlation (see Conversation and ChainKey).
//
// Predictor computes what a quiet fake does with a trace ID without
// serving it (the fit package replays profiles with it).
//
// # Faults
//
// Each request suffers at most one of: HTTP 529 (overloaded), 429 with
// Retry-After, 500, 503 (all answered at arrival, with OpenAI's error body),
// an empty 200 stream, a disconnect after k tokens (the connection drops,
// no [DONE]), a malformed chunk after k tokens, or an in-band error event
// after k tokens (error_event). Stalls are drawn apart from faults. Served
// reports what was injected into each request.
//
// The error event is what vLLM sends when generation fails mid-stream: one
// event data: {"error":{"message":"...","type":"InternalServerError","param":null,"code":500}}
// (code is the HTTP status, a number, as vLLM writes it), then
// "data: [DONE]", with no finish_reason and no usage. OpenAI's SDKs raise
// it as an error. A request that does not stream gets HTTP 500 with
// OpenAI's error body at that point instead.
//
// In the other protocols each fault takes that protocol's shape: an HTTP
// fault on /v1/messages is Anthropic's error body (529 overloaded_error,
// 429 rate_limit_error, 500 and 503 api_error); the error event is, in a
// Responses stream, an error event then response.failed (status failed,
// error code server_error), and in a Messages stream Anthropic's
// event: error with overloaded_error (a Messages request that does not
// stream gets 529 overloaded_error instead); a malformed event is a cut
// response.output_text.delta or content_block_delta. A script entry chosen
// by ID with attempts: 1 hits only the first arrival of that ID, so an
// SDK's retry (which resends the same headers) succeeds.
//
// # Profile units
//
// Probabilities (faults.*, stall.probability) and mixture weights are
// written as a plain number, a fraction in [0,1] (0.005), or as a
// percentage with % (0.5%), read in decimal so 0.5% is exactly 0.005. A
// plain number above 1 is an error that says what to write ("write 5% or
// 0.05"), so a percentage is never mistaken for a fraction. sloassert specs
// take percentages only; profiles take both because a fraction is what the
// Go fields hold. Whole-number keys (seed, replicas, slots_per_replica,
// output_tokens, tokens_per_chunk, reasoning_tokens, after_token,
// served_limit, and a script entry's request, status, tokens and
// after_token) refuse fractions such as 1.9 or 1e3 rather than truncate
// them; durations carry a unit (250ms). Every such error names the field's
// path and line. A profile is at most 1 MiB.
//
// # Memory
//
// Served keeps the last Profile.ServedLimit requests (100,000 by default)
// and counts the ones it dropped (ServedDropped), so a fakellm left
// running does not grow without bound.
package fakeprovider
