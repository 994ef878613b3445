package latencytest

import (
	"net/http"
	"reflect"
	"testing"
)

// Each option is of the types of the providers that use it, and of no
// other: given to a provider that would ignore it, it does not compile.
// The providers' option types are read from their signatures, and each
// option's type both as declared (what a call site is checked against)
// and as returned.
func TestOptionsApplyWhereTheyWork(t *testing.T) {
	variadic := func(f any) reflect.Type {
		ft := reflect.TypeOf(f)
		return ft.In(ft.NumIn() - 1).Elem()
	}
	kinds := []struct {
		name string
		typ  reflect.Type
	}{
		{"OpenAI", variadic(OpenAI)},
		{"OpenAIFromEnv", variadic(OpenAIFromEnv)},
		{"Responses", variadic(Responses)},
		{"Anthropic", variadic(Anthropic)},
		{"AnthropicFromEnv", variadic(AnthropicFromEnv)},
		{"HTTP", variadic(HTTP)},
	}
	openai := []string{"OpenAI", "OpenAIFromEnv"}
	llm := append(openai[:2:2], "Responses", "Anthropic", "AnthropicFromEnv")
	all := append(llm[:5:5], "HTTP")
	for _, tc := range []struct {
		name string
		ctor any // the option's constructor: its declared result type
		opt  any // an option it returns
		want []string
	}{
		{"WithHTTPClient", WithHTTPClient, WithHTTPClient(http.DefaultClient), all},
		{"WithAPIKey", WithAPIKey, WithAPIKey("k"), all},
		{"WithHeader", WithHeader, WithHeader("X-A", "b"), all},
		{"WithModel", WithModel, WithModel("m"), llm},
		{"WithNetHTTP", WithNetHTTP, WithNetHTTP(), llm},
		{"WithoutStreaming", WithoutStreaming, WithoutStreaming(), llm},
		{"WithoutStreamOptions", WithoutStreamOptions, WithoutStreamOptions(), openai},
		{"WithBody", WithBody, WithBody("text/plain", nil), []string{"HTTP"}},
		{"WithOpenAIStream", WithOpenAIStream, WithOpenAIStream(), []string{"HTTP"}},
	} {
		for _, typ := range []reflect.Type{reflect.TypeOf(tc.ctor).Out(0), reflect.TypeOf(tc.opt)} {
			var got []string
			for _, k := range kinds {
				if typ.Implements(k.typ) {
					got = append(got, k.name)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s (%v) applies to %v, want %v", tc.name, typ, got, tc.want)
			}
		}
	}
}
