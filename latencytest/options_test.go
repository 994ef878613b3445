package latencytest

import (
	"net/http"
	"reflect"
	"testing"
)

// Each option is of the types of the providers that use it, and of no
// other: given to a provider that would ignore it, it does not compile.
func TestOptionsApplyWhereTheyWork(t *testing.T) {
	kinds := []struct {
		name string
		typ  reflect.Type
	}{
		{"OpenAI", reflect.TypeFor[OpenAIOption]()},
		{"Responses", reflect.TypeFor[interface{ applyResponses(*LLMProvider) }]()},
		{"Anthropic", reflect.TypeFor[interface{ applyAnthropic(*LLMProvider) }]()},
		{"HTTP", reflect.TypeFor[HTTPOption]()},
	}
	all := []string{"OpenAI", "Responses", "Anthropic", "HTTP"}
	llm := []string{"OpenAI", "Responses", "Anthropic"}
	for _, tc := range []struct {
		name string
		opt  any
		want []string
	}{
		{"WithHTTPClient", WithHTTPClient(http.DefaultClient), all},
		{"WithAPIKey", WithAPIKey("k"), all},
		{"WithHeader", WithHeader("X-A", "b"), all},
		{"WithModel", WithModel("m"), llm},
		{"WithNetHTTP", WithNetHTTP(), llm},
		{"WithoutStreamOptions", WithoutStreamOptions(), []string{"OpenAI"}},
		{"WithoutStreaming", WithoutStreaming(), []string{"Responses", "Anthropic"}},
		{"WithBody", WithBody("text/plain", nil), []string{"HTTP"}},
		{"WithOpenAIStream", WithOpenAIStream(), []string{"HTTP"}},
	} {
		var got []string
		for _, k := range kinds {
			if reflect.TypeOf(tc.opt).Implements(k.typ) {
				got = append(got, k.name)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s applies to %v, want %v", tc.name, got, tc.want)
		}
	}
	// The declared result types say the same, so call sites are checked.
	for _, c := range []struct {
		name      string
		typ, kind reflect.Type
		want      bool
	}{
		{"WithoutStreaming for OpenAI", reflect.TypeFor[WholeAnswerOption](), reflect.TypeFor[OpenAIOption](), false},
		{"WithModel for HTTP", reflect.TypeFor[LLMOption](), reflect.TypeFor[HTTPOption](), false},
		{"WithAPIKey for HTTP", reflect.TypeFor[Option](), reflect.TypeFor[HTTPOption](), true},
		{"WithAPIKey for Anthropic", reflect.TypeFor[Option](), reflect.TypeFor[WholeAnswerOption](), true},
		{"WithModel for Responses", reflect.TypeFor[LLMOption](), reflect.TypeFor[WholeAnswerOption](), true},
		{"WithoutStreamOptions for Responses", reflect.TypeFor[OpenAIOption](), reflect.TypeFor[WholeAnswerOption](), false},
	} {
		if got := c.typ.Implements(c.kind); got != c.want {
			t.Errorf("%s compiles: %v, want %v", c.name, got, c.want)
		}
	}
}
