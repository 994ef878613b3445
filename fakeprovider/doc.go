// Package fakeprovider is an OpenAI-compatible chat-completions server that
// injects cold starts, queueing, stalls and errors, deterministically, so that
// latency tests meet a realistic tail without a real endpoint.
//
// A Fake is an http.Handler driven by a Profile (a Go struct or YAML; see
// ParseProfile). Serve it three ways: in memory with Transport or Client
// (runs on synctest's fake clock), on a real loopback socket with NewServer,
// or from any language with the fakellm command:
//
//	go run ./fakeprovider/cmd/fakellm -preset llama-4-maverick
//
// # API
//
// POST /v1/chat/completions (stream true or false, stream_options.include_usage,
// max_tokens, max_completion_tokens), GET /v1/models, GET /healthz, and
// GET /fake/served (what happened to each request, as JSON). A stream sends a
// role chunk with the first token, token chunks with delta.content or
// delta.reasoning_content, a chunk with finish_reason ("stop" or "length"),
// a usage chunk when asked, then "data: [DONE]". Errors carry OpenAI's error
// body. Bad requests get 400 (413 for a body over 8 MiB).
//
// # Timing
//
// For each request: arrival; a wait for a model load (cold start) when the
// deployment had scaled to zero; a FIFO wait for a slot (Replicas ×
// SlotsPerReplica); then the first token at admission + TTFT, where
// TTFT = (ttft + prefill_per_1k_tokens × prompt_tokens/1000) × cache factor
// (on a prefix-cache hit) × (1 + slowdown_per_inflight × others in flight);
// with prefix_cache.scope "prefill" (every preset's) the factor applies to
// the cached tokens' share of prefill only.
// Prompt tokens are estimated as characters/4. Every further SSE event comes
// after one ITL draw per token it carries; reasoning tokens come first and
// count against max_tokens (a request without one is capped at 1,048,576
// tokens, like a context limit). Durations too large for int64 nanoseconds
// saturate rather than wrap. A stall adds its length before the token it
// follows. The slot is released when the last token is sent (or the client
// goes away). Response headers are sent at admission time for streams, so a
// client's time to first byte measures queueing and cold starts, and its time
// to first token the rest.
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
// the same timings and faults. Without the header the key is the arrival
// count ("#N"), which is deterministic only for sequential clients. One
// dispatcher goroutine owns the shared state (slots, queue, warm/cold, prefix
// cache); arrivals at the same instant are ordered by trace ID. Script
// entries select requests by trace ID or by arrival index (from 0).
//
// # Faults
//
// Each request suffers at most one of: HTTP 529 (overloaded), 429 with
// Retry-After, 500, 503 (all answered at arrival, with OpenAI's error body),
// an empty 200 stream, a disconnect after k tokens (the connection drops,
// no [DONE]), or a malformed chunk after k tokens. Stalls are drawn apart
// from faults. Served reports what was injected into each request.
package fakeprovider
