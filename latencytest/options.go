package latencytest

// Each provider takes its own option type, so that an option a provider
// would not use does not compile: WithBody and WithOpenAIStream are an
// HTTPOption only, WithoutStreamOptions an OpenAIOption only. The options
// every provider takes (WithHTTPClient, WithAPIKey, WithHeader) are an
// Option, which is each of them; WithModel, WithNetHTTP and
// WithoutStreaming are an LLMOption, which OpenAI, Responses and
// Anthropic take. A slice of options is typed for the provider it is
// given to ([]latencytest.OpenAIOption for OpenAI(url, opts...),
// []latencytest.LLMOption for Responses and Anthropic).

// OpenAIOption configures OpenAI and OpenAIFromEnv.
type OpenAIOption interface{ applyOpenAI(*LLMProvider) }

// HTTPOption configures HTTP.
type HTTPOption interface{ applyHTTP(*LLMProvider) }

// LLMOption configures the LLM providers: OpenAI and OpenAIFromEnv (it is
// an OpenAIOption), Responses, Anthropic and AnthropicFromEnv (which take
// nothing else).
type LLMOption interface {
	OpenAIOption
	applyLLM(*LLMProvider)
}

// Option configures every provider: OpenAI, Responses, Anthropic and
// HTTP.
type Option interface {
	LLMOption
	HTTPOption
}

// allOption is an Option.
type allOption func(*LLMProvider)

func (f allOption) applyOpenAI(o *LLMProvider) { f(o) }
func (f allOption) applyLLM(o *LLMProvider)    { f(o) }
func (f allOption) applyHTTP(o *LLMProvider)   { f(o) }

// llmOption is an LLMOption.
type llmOption func(*LLMProvider)

func (f llmOption) applyOpenAI(o *LLMProvider) { f(o) }
func (f llmOption) applyLLM(o *LLMProvider)    { f(o) }

// chatOption is OpenAI's own.
type chatOption func(*LLMProvider)

func (f chatOption) applyOpenAI(o *LLMProvider) { f(o) }

// httpOption is HTTP's own.
type httpOption func(*LLMProvider)

func (f httpOption) applyHTTP(o *LLMProvider) { f(o) }
