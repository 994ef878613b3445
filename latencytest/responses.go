package latencytest

import "github.com/tailguard/tailguard/protocol"

// Responses returns a Provider that streams from OpenAI's Responses API:
// baseURL is the API root ("https://host/v1"); requests go to baseURL +
// "/responses" with stream true, the messages as "input" and the token cap
// as "max_output_tokens". It takes the options of OpenAI (the key as a
// bearer token, the model, headers, the HTTP client) and measures as
// OpenAI does: TTFT is the first token of any kind (answer text,
// reasoning or reasoning summary text, a refusal, a function call), the
// first answer is the first text, refusal or function call (a
// function-call-only answer is a success), every gap between token events
// counts, and usage comes from the final response (cached tokens from
// input_tokens_details, reasoning tokens from output_tokens_details).
//
// A stream ends well at response.completed or response.incomplete (its
// incomplete_details.reason, e.g. "max_output_tokens", becomes the
// finish reason; a completed response's is "completed"), and without
// either it is truncated. response.failed and error events fail the
// request as bad_stream, naming the server's error; so do function-call
// arguments that are not JSON. Event types it does not know are skipped
// with a note. It is NewLLM(baseURL, protocol.Responses, opts...); it
// panics if baseURL is not an http(s) URL.
func Responses(baseURL string, opts ...Option) *LLMProvider {
	return NewLLM(baseURL, protocol.Responses, opts...)
}
