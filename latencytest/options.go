package latencytest

// Each provider takes its own option type, so that an option a provider
// would not use does not compile: WithBody is an HTTPOption only,
// WithoutStreamOptions an OpenAIOption only, WithoutStreaming a
// WholeAnswerOption only. The options every provider takes
// (WithHTTPClient, WithAPIKey, WithHeader) are an Option, which is each of
// them; WithModel and WithNetHTTP are an LLMOption, which OpenAI,
// Responses and Anthropic take. A slice of options is typed for the
// provider it is given to ([]latencytest.OpenAIOption for OpenAI(url,
// opts...)).

// OpenAIOption configures OpenAI and OpenAIFromEnv.
type OpenAIOption interface{ applyOpenAI(*LLMProvider) }

// WholeAnswerOption configures Responses, Anthropic and AnthropicFromEnv:
// the providers that can ask for a whole answer instead of a stream
// (WithoutStreaming).
type WholeAnswerOption interface {
	applyResponses(*LLMProvider)
	applyAnthropic(*LLMProvider)
}

// HTTPOption configures HTTP.
type HTTPOption interface{ applyHTTP(*LLMProvider) }

// LLMOption configures the LLM providers: OpenAI, Responses and
// Anthropic.
type LLMOption interface {
	OpenAIOption
	WholeAnswerOption
}

// Option configures every provider: OpenAI, Responses, Anthropic and
// HTTP.
type Option interface {
	LLMOption
	HTTPOption
}

// allOption is an Option.
type allOption func(*LLMProvider)

func (f allOption) applyOpenAI(o *LLMProvider)    { f(o) }
func (f allOption) applyResponses(o *LLMProvider) { f(o) }
func (f allOption) applyAnthropic(o *LLMProvider) { f(o) }
func (f allOption) applyHTTP(o *LLMProvider)      { f(o) }

// llmOption is an LLMOption.
type llmOption func(*LLMProvider)

func (f llmOption) applyOpenAI(o *LLMProvider)    { f(o) }
func (f llmOption) applyResponses(o *LLMProvider) { f(o) }
func (f llmOption) applyAnthropic(o *LLMProvider) { f(o) }

// chatOption is OpenAI's own.
type chatOption func(*LLMProvider)

func (f chatOption) applyOpenAI(o *LLMProvider) { f(o) }

// wholeOption is a WholeAnswerOption.
type wholeOption func(*LLMProvider)

func (f wholeOption) applyResponses(o *LLMProvider) { f(o) }
func (f wholeOption) applyAnthropic(o *LLMProvider) { f(o) }

// httpOption is HTTP's own.
type httpOption func(*LLMProvider)

func (f httpOption) applyHTTP(o *LLMProvider) { f(o) }
