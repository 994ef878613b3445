package latencytest

// WithoutFastPath makes the OpenAI provider send every request through
// net/http (tests and benchmarks compare it with the fast path).
func WithoutFastPath() Option {
	return llmOnly("WithoutFastPath", func(o *LLMProvider) { o.noFastPath = true })
}
