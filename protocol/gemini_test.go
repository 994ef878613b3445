package protocol_test

import (
	"net/http"
	"net/url"
	"os"
	"testing"

	"github.com/tailguard/tailguard/protocol"
)

// Gemini is found by its paths (streamed and whole), its chunks and its
// answers, and no other protocol claims them; Gemini claims no other
// protocol's.
func TestGeminiDetected(t *testing.T) {
	one := func(what string, claims func(p *protocol.Protocol) bool, want *protocol.Protocol) {
		t.Helper()
		var got []protocol.Name
		for _, p := range protocol.Builtin() {
			if claims(p) {
				got = append(got, p.Name)
			}
		}
		if want == nil && len(got) != 0 || want != nil && (len(got) != 1 || got[0] != want.Name) {
			t.Errorf("%s: claimed by %v, want %v", what, got, name(want))
		}
	}
	for path, want := range map[string]*protocol.Protocol{
		"/v1beta/models/gemini-2.5-flash:streamGenerateContent": protocol.Gemini,
		"/v1beta/models/gemini-2.5-flash:generateContent":       protocol.Gemini,
		"/v1/tunedModels/my-model:generateContent":              protocol.Gemini,
		"/v1beta/models/gemini-2.5-flash:countTokens":           nil,
		"/v1beta/models": nil,
	} {
		one(path, func(p *protocol.Protocol) bool { return p.MatchPath != nil && p.MatchPath(path) }, want)
	}
	for data, want := range map[string]*protocol.Protocol{
		`{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"}}],"modelVersion":"gemini-2.5-flash"}`: protocol.Gemini,
		`{"promptFeedback":{"blockReason":"SAFETY"}}`:                                                             protocol.Gemini,
		`{"usageMetadata":{"promptTokenCount":3},"modelVersion":"gemini-2.5-flash"}`:                              protocol.Gemini,
		`{"id":"c","choices":[]}`:                       nil,
		`{"type":"message_start","message":{}}`:         protocol.Messages,
		`{"error":{"code":500,"status":"INTERNAL"}}`:    nil,
		`{"usage":{"prompt_tokens":1},"model":"gpt-x"}`: nil,
	} {
		one("event "+data, func(p *protocol.Protocol) bool { return p.MatchEvent != nil && p.MatchEvent("", []byte(data)) }, want)
	}
	if protocol.ByAnswer([]byte(`{"candidates":[],"usageMetadata":{}}`)) != protocol.Gemini {
		t.Error("ByAnswer does not find a GenerateContentResponse")
	}
	if protocol.Gemini.MatchEvent("content_block_delta", []byte(`{"candidates":[]}`)) {
		t.Error("a named event is not Gemini's")
	}
}

// The request: the model in the path (streamed with alt=sse, or whole),
// contents of role user and model, system messages as the
// systemInstruction, the cap and temperature in generationConfig; the
// key in x-goog-api-key.
func TestGeminiRequest(t *testing.T) {
	g := protocol.Gemini
	for model, want := range map[string]string{
		"gemini-2.5-flash":       "/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		"models/gemini-2.5-pro":  "/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
		"tunedModels/t 1":        "/tunedModels/t%201:streamGenerateContent?alt=sse",
		"a/b":                    "/models/a%2Fb:streamGenerateContent?alt=sse",
		"gemini-2.5-flash-lite?": "/models/gemini-2.5-flash-lite%3F:streamGenerateContent?alt=sse",
	} {
		if got := g.Path(model); got != want {
			t.Errorf("Path(%q) = %q, want %q", model, got, want)
		}
	}
	if got := g.WholePath("gemini-2.5-flash"); got != "/models/gemini-2.5-flash:generateContent" {
		t.Errorf("WholePath = %q", got)
	}
	temp := 0.5
	body, err := g.Body(protocol.Request{Model: "m", Stream: true, Usage: true, MaxTokens: 7, Temperature: &temp,
		Messages: []protocol.Message{{Role: "system", Content: "be <brief>"}, {Role: "user", Content: "hi"},
			{Role: "assistant", Content: "hello"}, {Role: "developer", Content: "no lists"}, {Role: "user", Content: "why?"}}})
	want := `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello"}]},{"role":"user","parts":[{"text":"why?"}]}],` +
		`"systemInstruction":{"parts":[{"text":"be \u003cbrief\u003e"},{"text":"no lists"}]},"generationConfig":{"maxOutputTokens":7,"temperature":0.5}}`
	if err != nil || string(body) != want {
		t.Errorf("body %s (%v)\nwant %s", body, err, want)
	}
	if body, _ := g.Body(protocol.Request{Model: "m"}); string(body) != `{"contents":[]}` {
		t.Errorf("empty request body %s", body)
	}
	h := http.Header{}
	g.Auth(h, "k-1")
	if h.Get("X-Goog-Api-Key") != "k-1" || h.Get("Authorization") != "" {
		t.Errorf("auth headers %v", h)
	}
	for in, want := range map[string]string{
		"https://generativelanguage.googleapis.com": "https://generativelanguage.googleapis.com/v1beta",
		"http://127.0.0.1:9/":                       "http://127.0.0.1:9/v1beta",
		"https://gw.test/google/v1/":                "https://gw.test/google/v1/",
		"https://gw.test/v1alpha":                   "https://gw.test/v1alpha",
		"https://gw.test/vertex":                    "https://gw.test/vertex/v1beta",
	} {
		u, _ := url.Parse(in)
		if g.BaseURL(u); u.String() != want {
			t.Errorf("BaseURL(%s) = %s, want %s", in, u, want)
		}
	}
}

// The key's variable is GEMINI_API_KEY, or GOOGLE_API_KEY when that is
// unset (set empty, GEMINI_API_KEY still wins); the base URL defaults to
// Google's.
func TestGeminiEnv(t *testing.T) {
	env := protocol.Gemini.Env
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "")
	os.Unsetenv("GEMINI_API_KEY")
	os.Unsetenv("GOOGLE_API_KEY")
	if env.KeyVar() != "GEMINI_API_KEY" || env.Base() != "https://generativelanguage.googleapis.com" {
		t.Errorf("nothing set: key var %s, base %s", env.KeyVar(), env.Base())
	}
	t.Setenv("GOOGLE_API_KEY", "g")
	if env.KeyVar() != "GOOGLE_API_KEY" {
		t.Errorf("only GOOGLE_API_KEY set: key var %s", env.KeyVar())
	}
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9")
	if env.KeyVar() != "GEMINI_API_KEY" || env.Base() != "http://127.0.0.1:9" {
		t.Errorf("both set: key var %s, base %s", env.KeyVar(), env.Base())
	}
	if protocol.Chat.Env.KeyVar() != "OPENAI_API_KEY" {
		t.Errorf("chat's key var %s", protocol.Chat.Env.KeyVar())
	}
}

// Google's error bodies give their status and message, also inside the
// array a stream without alt=sse fails with; other shapes as ErrorText.
func TestGeminiErrorText(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`: "RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota).",
		`[{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}]`:                             "UNAVAILABLE: The model is overloaded.",
		`{"error":{"code":400,"message":"API key not valid."}}`:                                                            "API key not valid.",
		`{"error":{"message":"slow down","type":"rate_limit"}}`:                                                            "rate_limit: slow down",
	} {
		if got, ok := protocol.Gemini.ErrorText([]byte(body)); !ok || got != want {
			t.Errorf("ErrorText(%s) = %q %v, want %q", body, got, ok, want)
		}
	}
	if _, ok := protocol.Gemini.ErrorText([]byte(`<html>502</html>`)); ok {
		t.Error("ErrorText read a body that is no error object")
	}
}
