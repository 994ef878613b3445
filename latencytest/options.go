package latencytest

import "fmt"

// Option configures a provider: OpenAI, Responses, Anthropic, NewLLM (the
// LLM providers) or HTTP. Most options apply to every provider; some to
// the LLM providers only (WithModel, WithNetHTTP, WithoutStreaming), to
// HTTP only (WithBody, WithOpenAIStream), or to a protocol with a usage
// field in its requests only (WithoutStreamOptions: chat completions).
// An option given to a provider it does not apply to panics at
// construction, naming the option and the provider, never ignored.
type Option interface {
	option() *providerOption
}

// providerOption is an Option: its name (in panics), where it applies and what
// it sets.
type providerOption struct {
	name  string
	scope scope
	set   func(*LLMProvider)
}

func (o *providerOption) option() *providerOption { return o }

// scope is where an option applies.
type scope uint8

const (
	anyProvider scope = iota // every provider
	llmScope                 // the LLM providers
	httpScope                // HTTP
	usageScope               // LLM providers whose protocol has a UsageKey
)

// String names a scope's providers, for the panic.
func (s scope) String() string {
	switch s {
	case llmScope:
		return "the LLM providers (OpenAI, Responses, Anthropic, NewLLM)"
	case httpScope:
		return "HTTP"
	case usageScope:
		return "protocols with a usage field in their requests (OpenAI chat completions)"
	}
	return "every provider"
}

// allProviders is an option every provider takes.
func allProviders(name string, set func(*LLMProvider)) Option {
	return &providerOption{name: name, scope: anyProvider, set: set}
}

// llmOnly is an option of the LLM providers.
func llmOnly(name string, set func(*LLMProvider)) Option {
	return &providerOption{name: name, scope: llmScope, set: set}
}

// httpOnly is an option of HTTP.
func httpOnly(name string, set func(*LLMProvider)) Option {
	return &providerOption{name: name, scope: httpScope, set: set}
}

// apply applies opts to the provider o, named provider in a panic (o.api
// nil: HTTP). It panics with the option and provider named when one does
// not apply, or is nil.
func apply(o *LLMProvider, provider string, opts []Option) {
	for i, opt := range opts {
		if opt == nil {
			panic(fmt.Sprintf("latencytest: option %d given to %s is nil", i+1, provider))
		}
		op := opt.option()
		ok := true
		switch op.scope {
		case llmScope:
			ok = o.api != nil
		case httpScope:
			ok = o.api == nil
		case usageScope:
			ok = o.api != nil && o.api.UsageKey != ""
		}
		if !ok {
			panic(fmt.Sprintf("latencytest: %s does not apply to %s: it is an option of %s", op.name, provider, op.scope))
		}
		op.set(o)
	}
}
