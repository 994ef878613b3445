// Package fakeprovider is a fake LLM provider (OpenAI chat completions,
// OpenAI's Responses API, Anthropic's Messages API, Google's Gemini API
// and Amazon Bedrock's Converse and ConverseStream, in AWS event-stream
// frames) that injects cold
// starts, queueing, stalls and errors, deterministically, so that latency
// tests meet a realistic tail without a real endpoint.
//
// A [Fake] is an http.Handler driven by a [Profile]: a Go struct, a YAML
// file ([LoadProfile], [ParseProfile]) or a named preset ([Preset],
// [Presets]) fitted to measurements of real serverless endpoints. Serve it
// in memory with [Fake.Client] or [Fake.Transport] (on synctest's fake
// clock), on a real loopback socket with [NewServer] or [StartServer], or
// from any language with the fakellm command:
//
//	go run ./cmd/fakellm serve -preset llama-4-maverick
//
// In a test, inside synctest.Test:
//
//	prof, _ := fakeprovider.Preset("mistral-3-14b")
//	fake := fakeprovider.New(prof)
//	t.Cleanup(fake.Close)
//	client := fake.Client() // serves every URL, e.g. "http://fake/v1"
//
// Each request arrives, waits for a model load when the deployment scaled
// to zero ([ColdStart]), waits for a free slot, then streams its first
// token after a TTFT draw and every further token after an ITL draw
// (distributions are [Dist] values: [LogNormal], [Mixture], [Interpolated]
// and others). Prefill, prefix-cache hits ([PrefixCache]), slowdown under
// load and measured load levels ([LoadLevel]) shape the TTFT; [Stall]s add
// long silences; [Faults] inject at most one failure per request (HTTP 529,
// 429, 500 or 503, an empty stream, a disconnect, a malformed chunk or an
// in-band error event), each in the shape of the protocol asked for; a
// load level may carry its own stall and fault rates. An interpolated
// [Dist] may end in a generalised Pareto [Tail] that draws past its
// largest value. A [ScriptEntry] forces a fault or a stall on chosen
// requests. Inside synctest.Test a 30 s cold start or a 20 min stall
// costs no real time and is measured exactly.
//
// Every random draw comes from (Profile.Seed, request key), the key being
// the request's X-Request-ID header, so concurrency and goroutine order do
// not change outcomes: the same seed and trace IDs give the same timings
// and faults. Calls of one agent chain can share a decode speed
// ([Conversation], [ChainKey]). [Fake.Served] reports what happened to each
// request; GET /metrics reports the same timeline as vLLM's Prometheus
// histograms and gauges (queue, prefill, decode, TTFT, e2e; waiting,
// running), for package servermetrics; [Predictor] computes what a quiet
// fake does with a trace ID without serving it.
//
// The full reference (the endpoints and their streams, headers, the timing
// model, faults per protocol, profile units, memory) is
// docs/fakeprovider.md in the repository; how the presets were calibrated
// and the published measurements behind them are in docs/fit.md,
// docs/presets-research.md and docs/sources.md.
package fakeprovider
