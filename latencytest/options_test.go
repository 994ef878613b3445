package latencytest

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/protocol"
)

// Each option applies to the providers that use it, and given to any
// other it panics at construction, naming the option and the provider,
// never ignored.
func TestOptionsApplyWhereTheyWork(t *testing.T) {
	t.Setenv(EnvBaseURL, "http://127.0.0.1:9/v1")
	t.Setenv(EnvAPIKey, "")
	t.Setenv(EnvModel, "m")
	t.Setenv(envAnthropicBaseURL, "http://127.0.0.1:9")
	t.Setenv(envAnthropicAPIKey, "")
	t.Setenv(envAnthropicModel, "m")
	custom := *protocol.Chat
	custom.Name, custom.Title, custom.UsageKey = "custom", "Custom", ""
	providers := []struct {
		name  string
		title string // as the panic names it
		build func(Option)
	}{
		{"OpenAI", "OpenAI", func(o Option) { OpenAI("http://127.0.0.1:9/v1", o) }},
		{"OpenAIFromEnv", "OpenAI", func(o Option) { _, _ = OpenAIFromEnv(o) }},
		{"Responses", "Responses", func(o Option) { Responses("http://127.0.0.1:9/v1", o) }},
		{"Anthropic", "Anthropic", func(o Option) { Anthropic("http://127.0.0.1:9/v1", o) }},
		{"AnthropicFromEnv", "Anthropic", func(o Option) { _, _ = AnthropicFromEnv(o) }},
		{"Gemini", "Gemini", func(o Option) { Gemini("http://127.0.0.1:9/v1beta", o) }},
		{"NewLLM(custom)", "Custom", func(o Option) { NewLLM("http://127.0.0.1:9/v1", &custom, o) }},
		{"HTTP", "HTTP", func(o Option) { HTTP("GET", "http://127.0.0.1:9/", o) }},
	}
	llm := []string{"OpenAI", "OpenAIFromEnv", "Responses", "Anthropic", "AnthropicFromEnv", "Gemini", "NewLLM(custom)"}
	all := append(llm[:len(llm):len(llm)], "HTTP")
	for _, tc := range []struct {
		name string
		opt  Option
		want []string
	}{
		{"WithHTTPClient", WithHTTPClient(http.DefaultClient), all},
		{"WithAPIKey", WithAPIKey("k"), all},
		{"WithHeader", WithHeader("X-A", "b"), all},
		{"WithModel", WithModel("m"), llm},
		{"WithNetHTTP", WithNetHTTP(), llm},
		{"WithoutStreaming", WithoutStreaming(), llm},
		{"WithoutStreamOptions", WithoutStreamOptions(), []string{"OpenAI", "OpenAIFromEnv"}},
		{"WithBody", WithBody("text/plain", nil), []string{"HTTP"}},
		{"WithOpenAIStream", WithOpenAIStream(), []string{"HTTP"}},
	} {
		var got []string
		for _, p := range providers {
			msg := panicOf(func() { p.build(tc.opt) })
			if msg == "" {
				got = append(got, p.name)
				continue
			}
			if want := fmt.Sprintf("latencytest: %s does not apply to %s: it is an option of ", tc.name, p.title); !strings.HasPrefix(msg, want) {
				t.Errorf("%s given to %s: panic %q, want it to start %q", tc.name, p.name, msg, want)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s applies to %v, want %v", tc.name, got, tc.want)
		}
	}
	if msg := panicOf(func() { OpenAI("http://127.0.0.1:9/v1", nil) }); msg != "latencytest: option 1 given to OpenAI is nil" {
		t.Errorf("a nil option: panic %q", msg)
	}
}

// panicOf is the text of f's panic, "" when it returns.
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// NewLLM refuses a missing or incomplete protocol at construction,
// naming what it lacks, and builds its path from the model the options
// set, whatever their order.
func TestNewLLMProtocol(t *testing.T) {
	if msg := panicOf(func() { NewLLM("http://127.0.0.1:9/v1", nil) }); msg != "latencytest: NewLLM without a protocol" {
		t.Errorf("nil protocol: panic %q", msg)
	}
	if msg := panicOf(func() { NewLLM("http://127.0.0.1:9/v1", &protocol.Protocol{Name: "half"}) }); msg != "latencytest: NewLLM: protocol half has no Path, Body, NewDecoder, Whole" {
		t.Errorf("incomplete protocol: panic %q", msg)
	}
	inPath := *protocol.Chat
	inPath.Kind = ""
	inPath.Name = "in-path"
	inPath.Path = func(model string) string { return "/models/" + model + ":stream?alt=sse" }
	o := NewLLM("http://127.0.0.1:9/v1beta?key=k-123456789", &inPath, WithHeader("X-A", "b"), WithModel("g-2"))
	if d := o.Describe(); d.Endpoint != "http://127.0.0.1:9/v1beta/models/g-2:stream" || d.Kind != "in-path (streaming)" {
		t.Errorf("description %+v", d)
	}
	if o.url != "http://127.0.0.1:9/v1beta/models/g-2:stream?key=k-123456789&alt=sse" {
		t.Errorf("url %s: want the model's path, then the base URL's query and the path's", o.url)
	}
}
