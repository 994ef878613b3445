package latencytest

import "github.com/tailguard/tailguard/protocol"

// Anthropic returns a Provider that streams from Anthropic's Messages API
// (also served by vLLM and gateways): baseURL is the API root
// ("https://api.anthropic.com/v1"); requests go to baseURL + "/messages"
// with stream true, the key (WithAPIKey) in the x-api-key header (never
// as a bearer token; redacted as WithAPIKey describes) and
// anthropic-version 2023-06-01 (WithHeader("anthropic-version", v)
// sends another). System messages become the top-level system prompt;
// max_tokens is the request's cap, 4096 without one.
// It takes OpenAI's options and measures as OpenAI does: TTFT is the first
// token of any kind (text, thinking, a tool_use block's start or its
// input_json_delta), the first answer is the first text or tool_use (a
// tool-use-only answer is a success), every gap between token events
// counts (ping and signature_delta are not tokens), usage comes from
// message_start and message_delta (PromptTokens is input_tokens plus
// cache_read_input_tokens and cache_creation_input_tokens, CachedTokens
// is cache_read_input_tokens), and the finish reason is stop_reason.
//
// A stream ends well at message_stop, and without it is truncated. An
// error event (overloaded_error, rate_limit_error, api_error) fails the
// request as bad_stream naming the error's type; a 529 up front is
// http_529. A content_block_delta before its content_block_start, a
// message_stop without message_start and tool input that is not JSON
// fail it as bad_stream too. Event types it does not know are skipped
// with a note. It is NewLLM(baseURL, protocol.Messages, opts...); it
// panics if baseURL is not an http(s) URL.
func Anthropic(baseURL string, opts ...Option) *LLMProvider {
	return NewLLM(baseURL, protocol.Messages, opts...)
}

// AnthropicFromEnv returns the Anthropic provider for ANTHROPIC_BASE_URL,
// ANTHROPIC_API_KEY and ANTHROPIC_MODEL. The base URL is taken as
// Anthropic's SDKs take it, without the version ("https://api.anthropic.com"):
// "/v1" is added unless its path already ends in "/v1". The error names the
// variables that are unset. The key must be set but may be empty (for a
// local server without keys); the others must not be empty.
func AnthropicFromEnv(opts ...Option) (*LLMProvider, error) {
	return llmFromEnv(protocol.Messages, opts)
}
