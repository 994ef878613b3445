package protocol_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/protocol"
)

// Every built-in protocol is in the table under its name, complete, and
// the names specs accept are the table's.
func TestTableNames(t *testing.T) {
	var names []protocol.Name
	for _, p := range protocol.Builtin() {
		if why := p.Valid(); why != "" {
			t.Errorf("%s: %s", p.Name, why)
		}
		if protocol.Lookup(p.Name) != p {
			t.Errorf("Lookup(%q) is not the table's", p.Name)
		}
		names = append(names, p.Name)
	}
	want := protocol.Names()
	if !slices.Equal(names, want) || !slices.Equal(want, []protocol.Name{"chat", "responses", "messages", "gemini", "bedrock"}) {
		t.Errorf("table names %v, Names %v", names, want)
	}
	if protocol.Lookup("") != protocol.Chat || protocol.Lookup("grpc") != nil {
		t.Error(`Lookup("") must be Chat and Lookup("grpc") nil`)
	}
	if why := (&protocol.Protocol{Name: "x"}).Valid(); why != "protocol x has no Path, Body, NewDecoder, Whole" {
		t.Errorf("Valid of an empty protocol: %q", why)
	}
}

// Detection by path, by a stream's first event and by a whole answer,
// each one answer whatever the table's order: no two protocols claim one
// path, event or answer.
func TestTableDetects(t *testing.T) {
	for _, tc := range []struct {
		path string
		want *protocol.Protocol
	}{
		{"/v1/responses", protocol.Responses},
		{"/v1/responses/", protocol.Responses},
		{"/v1/messages", protocol.Messages},
		{"/v1/chat/completions", protocol.Chat},
		{"/v1/completions", protocol.Chat}, // legacy completions stream chat-like chunks
		{"/v1/embeddings", nil},
		{"/gateway/llm", nil},
	} {
		if got := protocol.ByPath(tc.path); got != tc.want {
			t.Errorf("ByPath(%q) = %v, want %v", tc.path, name(got), name(tc.want))
		}
		claims := 0
		for _, p := range protocol.Builtin() {
			if p.MatchPath(tc.path) {
				claims++
			}
		}
		if claims > 1 {
			t.Errorf("%s: %d protocols claim it", tc.path, claims)
		}
	}
	for _, tc := range []struct {
		typ, data string
		want      *protocol.Protocol
	}{
		{"response.created", `{"type":"response.created"}`, protocol.Responses},
		{"", `{"type":"response.output_text.delta"}`, protocol.Responses},
		{"message", `{"type":"message_start","message":{}}`, protocol.Messages},
		{"content_block_delta", `{}`, protocol.Messages},
		{"", `{"id":"c","choices":[]}`, nil},
		{"", `not json`, nil},
	} {
		if got := protocol.ByEvent(tc.typ, []byte(tc.data)); got != tc.want {
			t.Errorf("ByEvent(%q, %s) = %v, want %v", tc.typ, tc.data, name(got), name(tc.want))
		}
	}
	for _, tc := range []struct {
		body string
		want *protocol.Protocol
	}{
		{`{"object":"response","output":[]}`, protocol.Responses},
		{`{"object":"response","status":"failed","error":{"message":"x"}}`, protocol.Responses},
		{`{"type":"message","content":[]}`, protocol.Messages},
		{`{"object":"chat.completion","choices":[]}`, protocol.Chat},
		{`{"error":{"message":"overloaded"}}`, protocol.Chat},
		{`{"type":"error","error":{"type":"overloaded_error"}}`, protocol.Chat},
		{`{"object":"list","data":[]}`, nil},
	} {
		if got := protocol.ByAnswer([]byte(tc.body)); got != tc.want {
			t.Errorf("ByAnswer(%s) = %v, want %v", tc.body, name(got), name(tc.want))
		}
		claims := 0
		for _, p := range protocol.Builtin() {
			if p.IsAnswer([]byte(tc.body)) {
				claims++
			}
		}
		if claims > 1 {
			t.Errorf("%s: %d protocols claim it", tc.body, claims)
		}
	}
}

func name(p *protocol.Protocol) string {
	if p == nil {
		return "nil"
	}
	return string(p.Name)
}

// The bodies: chat's is what encoding/json writes for the same map; the
// Messages body moves system messages up and always caps; the Responses
// body sends the messages as input.
func TestBodies(t *testing.T) {
	temp := 0.5
	r := protocol.Request{Model: "m", Messages: []protocol.Message{{Role: "system", Content: "be <brief>"}, {Role: "user", Content: "hi é"}},
		MaxTokens: 7, Temperature: &temp, Stream: true, Usage: true}
	want, _ := json.Marshal(map[string]any{"max_tokens": 7, "messages": r.Messages, "model": "m", "stream": true,
		"stream_options": map[string]bool{"include_usage": true}, "temperature": 0.5})
	if got, _ := protocol.Chat.Body(r); string(got) != string(want) {
		t.Errorf("chat body\n%s\nwant\n%s", got, want)
	}
	r.Usage = false
	want, _ = json.Marshal(map[string]any{"max_tokens": 7, "messages": r.Messages, "model": "m", "stream": true, "temperature": 0.5})
	if got, _ := protocol.Chat.Body(r); string(got) != string(want) {
		t.Errorf("chat body without usage\n%s\nwant\n%s", got, want)
	}
	r.MaxTokens = 0
	if got, _ := protocol.Messages.Body(r); string(got) != `{"max_tokens":4096,"messages":[{"role":"user","content":"hi é"}],"model":"m","stream":true,"system":"be \u003cbrief\u003e","temperature":0.5}` {
		t.Errorf("messages body %s", got)
	}
	if got, _ := protocol.Responses.Body(r); string(got) != `{"input":[{"role":"system","content":"be \u003cbrief\u003e"},{"role":"user","content":"hi é"}],"model":"m","stream":true,"temperature":0.5}` {
		t.Errorf("responses body %s", got)
	}
}

// Messages' key goes to x-api-key, its version is set unless given and
// is no secret, and a base URL from the environment gains /v1 once; the
// environment variables are latencytest's.
func TestMessagesHeadersAndEnv(t *testing.T) {
	h := http.Header{}
	public := protocol.Messages.Header(h)
	protocol.Messages.Auth(h, "k-123")
	if h.Get("X-Api-Key") != "k-123" || h.Get("Anthropic-Version") != protocol.AnthropicVersion || !slices.Equal(public, []string{protocol.AnthropicVersion}) {
		t.Errorf("headers %v, public %v", h, public)
	}
	h = http.Header{"Anthropic-Version": {"2099-01-01"}}
	if protocol.Messages.Header(h); h.Get("Anthropic-Version") != "2099-01-01" {
		t.Errorf("a given version was replaced: %v", h)
	}
	for in, want := range map[string]string{"https://api.anthropic.com": "https://api.anthropic.com/v1",
		"https://gw/x/v1/": "https://gw/x/v1/", "http://127.0.0.1:9/": "http://127.0.0.1:9/v1"} {
		u, _ := url.Parse(in)
		if protocol.Messages.BaseURL(u); u.String() != want {
			t.Errorf("BaseURL(%s) = %s, want %s", in, u, want)
		}
	}
	for p, want := range map[*protocol.Protocol][3]string{
		protocol.Chat:      {latencytest.EnvBaseURL, latencytest.EnvAPIKey, latencytest.EnvModel},
		protocol.Responses: {latencytest.EnvBaseURL, latencytest.EnvAPIKey, latencytest.EnvModel},
		protocol.Messages:  {"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_MODEL"},
		protocol.Bedrock:   {"AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_BEARER_TOKEN_BEDROCK", "BEDROCK_MODEL_ID"},
	} {
		if got := [3]string{p.Env.BaseURL, p.Env.APIKey, p.Env.Model}; got != want {
			t.Errorf("%s env %v, want %v", p.Name, got, want)
		}
	}
}

// Each built-in protocol's natural stop ends a sequence, as its decoder
// reports it to Sink.Finish (chat's finish_reason, Messages' stop_reason,
// Responses' status); a cap, a tool call or a pause does not.
func TestEndsSequence(t *testing.T) {
	for _, tc := range []struct {
		api    *protocol.Protocol
		reason string
		want   bool
	}{
		{protocol.Chat, "stop", true}, {protocol.Chat, "length", false}, {protocol.Chat, "tool_calls", false},
		{protocol.Messages, "end_turn", true}, {protocol.Messages, "stop_sequence", true},
		{protocol.Messages, "max_tokens", false}, {protocol.Messages, "tool_use", false}, {protocol.Messages, "pause_turn", false},
		{protocol.Responses, "completed", true}, {protocol.Responses, "max_output_tokens", false},
		{protocol.Responses, "content_filter", false},
		{protocol.Gemini, "STOP", true}, {protocol.Gemini, "MAX_TOKENS", false},
		{protocol.Bedrock, "end_turn", true}, {protocol.Bedrock, "stop_sequence", true}, {protocol.Bedrock, "max_tokens", false},
		{protocol.Bedrock, "tool_use", false}, {protocol.Bedrock, "guardrail_intervened", false},
	} {
		if got := tc.api.EndOfSequence != nil && tc.api.EndOfSequence(tc.reason); got != tc.want {
			t.Errorf("%s: EndOfSequence(%q) = %v, want %v", tc.api.Name, tc.reason, got, tc.want)
		}
		if protocol.EndsSequence(tc.reason) != tc.want {
			t.Errorf("EndsSequence(%q) != %v", tc.reason, tc.want)
		}
	}
	if protocol.EndsSequence("") {
		t.Error(`EndsSequence("") is true`)
	}
}

// ErrorText reads the shapes LLM APIs share and nothing else.
func TestErrorText(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"slow down","type":"rate_limit"}}`: "rate_limit: slow down",
		`{"error":"bad key"}`:                     "bad key",
		`{"object":"error","message":"no model"}`: "no model",
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`: "overloaded_error: Overloaded",
	} {
		if got, ok := protocol.ErrorText([]byte(body)); !ok || got != want {
			t.Errorf("ErrorText(%s) = %q %v, want %q", body, got, ok, want)
		}
	}
	if _, ok := protocol.ErrorText([]byte(`{"detail":"x"}`)); ok {
		t.Error("ErrorText read a body of another shape")
	}
}

// IsStream matches a Content-Type to the protocol's stream type,
// parameters and case aside; a protocol that names none matches nothing.
func TestIsStream(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/vnd.amazon.eventstream":                true,
		"Application/VND.Amazon.EventStream; charset=utf-8": true,
		"application/json":                                  false,
		"":                                                  false,
	} {
		if got := protocol.Bedrock.IsStream(ct); got != want {
			t.Errorf("Bedrock.IsStream(%q) = %v, want %v", ct, got, want)
		}
	}
	if protocol.Chat.IsStream("text/event-stream") {
		t.Error("chat names no stream type, yet matched one")
	}
}
