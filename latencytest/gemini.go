package latencytest

import "github.com/tailguard/tailguard/protocol"

// Gemini returns a Provider that streams from Google's Gemini API at
// baseURL, its root with the version (".../v1beta"): requests go to
// "/models/{model}:streamGenerateContent?alt=sse" (":generateContent"
// with WithoutStreaming), the key (WithAPIKey, redacted as it describes)
// in x-goog-api-key. It takes OpenAI's options and measures as OpenAI
// does, reading what protocol.Gemini describes: thoughts are tokens,
// never the answer; a functionCall is a tool call, its name and
// arguments whole; a safety stop is the content_filter class; a stream
// without a final finishReason is truncated. It is NewLLM(baseURL,
// protocol.Gemini, opts...) and panics as NewLLM does.
func Gemini(baseURL string, opts ...Option) *LLMProvider {
	return NewLLM(baseURL, protocol.Gemini, opts...)
}

// GeminiFromEnv returns the Gemini provider for GOOGLE_GEMINI_BASE_URL
// (default Google's; "/v1beta" added unless the path ends in a version),
// GEMINI_API_KEY (GOOGLE_API_KEY when unset; may be empty) and
// GEMINI_MODEL; the error names what is unset.
func GeminiFromEnv(opts ...Option) (*LLMProvider, error) {
	return llmFromEnv(protocol.Gemini, opts)
}
