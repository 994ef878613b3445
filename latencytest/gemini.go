package latencytest

import "github.com/tailguard/tailguard/protocol"

// Gemini returns a Provider that streams from Google's Gemini API
// (generativelanguage): baseURL is the API root with its version
// ("https://generativelanguage.googleapis.com/v1beta"); requests go to
// baseURL + "/models/{model}:streamGenerateContent?alt=sse", or
// ":generateContent" with WithoutStreaming, the key (WithAPIKey) in the
// x-goog-api-key header (never as a bearer token; redacted as WithAPIKey
// describes). System messages become the systemInstruction, assistant
// messages the model's turns; the cap is generationConfig.maxOutputTokens.
// It takes OpenAI's options and measures as OpenAI does: TTFT is the
// first token of any kind (text, a thought part, a functionCall), the
// first answer the first text that is no thought or the first
// functionCall (a functionCall-only answer is a success; its name and
// arguments arrive whole, so FirstToolCall and ToolArgsDone are the
// same read), usage comes from usageMetadata (CompletionTokens is
// candidatesTokenCount plus thoughtsTokenCount, ReasoningTokens
// thoughtsTokenCount, CachedTokens cachedContentTokenCount, reported only
// when the server sends it), and the finish reason is candidate 0's
// finishReason (STOP, MAX_TOKENS: both successes).
//
// A stream ends well when its last chunk carries a finishReason, and
// without one is truncated. A safety or policy stop (finishReason
// SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII and the like,
// or promptFeedback.blockReason) is finish reason "content_filter", the
// content_filter class, with a note naming Gemini's reason. An error
// object in the stream fails the request as bad_stream with its status
// and message; an error status up front is its HTTP class with the
// same detail. It is NewLLM(baseURL, protocol.Gemini, opts...); it
// panics if baseURL is not an http(s) URL.
func Gemini(baseURL string, opts ...Option) *LLMProvider {
	return NewLLM(baseURL, protocol.Gemini, opts...)
}

// GeminiFromEnv returns the Gemini provider for GOOGLE_GEMINI_BASE_URL
// (default https://generativelanguage.googleapis.com), the key in
// GEMINI_API_KEY, or GOOGLE_API_KEY when that is unset, and GEMINI_MODEL.
// The base URL is taken as Google's SDKs take it, without the version:
// "/v1beta" is added unless its path ends in a version ("/v1"). The error
// names the variables that are unset. The key must be set but may be
// empty (for a local server without keys); the model must not be empty.
func GeminiFromEnv(opts ...Option) (*LLMProvider, error) {
	return llmFromEnv(protocol.Gemini, opts)
}
