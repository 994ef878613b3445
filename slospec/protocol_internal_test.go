package slospec

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/latencytest"
)

// An endpoint target names its protocol: the spec key is checked, the
// protocol's environment variables are the defaults, and the target runs
// the protocol's provider on the protocol's path.
func TestEndpointProtocol(t *testing.T) {
	if _, err := ParseSpec([]byte("target:\n  endpoint: {protocol: grpc}\nobjectives: {error_rate: 1%}\n")); err == nil ||
		!strings.Contains(err.Error(), `line 2: target.endpoint.protocol: "grpc" is not a protocol: want chat, responses, messages, gemini or bedrock`) {
		t.Errorf("error %v", err)
	}
	for _, tc := range []struct {
		spec, base, kind, endpoint string
		vars                       [3]string
	}{
		{"{}", "http://h.test/v1", "openai-chat-completions (streaming)", "http://h.test/v1/chat/completions",
			[3]string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"}},
		{"{protocol: chat}", "http://h.test/v1", "openai-chat-completions (streaming)", "http://h.test/v1/chat/completions",
			[3]string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"}},
		{"{protocol: responses}", "http://h.test/v1", "openai-responses (streaming)", "http://h.test/v1/responses",
			[3]string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"}},
		{"{protocol: messages}", "http://h.test", "anthropic-messages (streaming)", "http://h.test/v1/messages",
			[3]string{"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_MODEL"}},
		{"{protocol: messages, base_url_env: GW_URL, model_env: GW_MODEL}", "http://gw.test/v1", "anthropic-messages (streaming)", "http://gw.test/v1/messages",
			[3]string{"GW_URL", "ANTHROPIC_API_KEY", "GW_MODEL"}},
		{"{stream: true}", "http://h.test/v1", "openai-chat-completions (streaming)", "http://h.test/v1/chat/completions",
			[3]string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"}},
		{"{stream: false}", "http://h.test/v1", "openai-chat-completions (not streaming)", "http://h.test/v1/chat/completions",
			[3]string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"}},
		{"{protocol: responses, stream: false}", "http://h.test/v1", "openai-responses (not streaming)", "http://h.test/v1/responses",
			[3]string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"}},
		{"{stream: false, protocol: messages}", "http://h.test", "anthropic-messages (not streaming)", "http://h.test/v1/messages",
			[3]string{"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_MODEL"}},
		{"{protocol: gemini}", "http://h.test", "gemini-generate-content (streaming)", "http://h.test/v1beta/models/model-x:streamGenerateContent",
			[3]string{"GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GEMINI_MODEL"}},
		{"{protocol: gemini, stream: false}", "http://h.test/v1", "gemini-generate-content (not streaming)", "http://h.test/v1/models/model-x:generateContent",
			[3]string{"GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GEMINI_MODEL"}},
		{"{protocol: bedrock}", "http://h.test", "bedrock-converse (streaming)", "http://h.test/model/model-x/converse-stream",
			[3]string{"AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_BEARER_TOKEN_BEDROCK", "BEDROCK_MODEL_ID"}},
		{"{protocol: bedrock, stream: false}", "http://h.test", "bedrock-converse (not streaming)", "http://h.test/model/model-x/converse",
			[3]string{"AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_BEARER_TOKEN_BEDROCK", "BEDROCK_MODEL_ID"}},
	} {
		s, err := ParseSpec([]byte("target:\n  endpoint: " + tc.spec + "\nobjectives: {error_rate: 1%}\n"))
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		ep := s.Target.Endpoint
		b, k, m := ep.Vars()
		if [3]string{b, k, m} != tc.vars {
			t.Errorf("%s: variables %s %s %s, want %v", tc.spec, b, k, m, tc.vars)
		}
		t.Setenv(b, tc.base)
		t.Setenv(k, "")
		t.Setenv(m, "model-x")
		rt, skip, err := ep.resolve()
		if err != nil || skip != "" {
			t.Fatalf("%s: %v %s", tc.spec, err, skip)
		}
		d := rt.provider.(interface {
			Describe() latencytest.Description
		}).Describe()
		if d.Kind != tc.kind || d.Endpoint != tc.endpoint || d.Model != "model-x" || !strings.Contains(rt.desc, "$"+b) ||
			strings.Contains(rt.desc, "not streaming") != strings.Contains(tc.kind, "not streaming") {
			t.Errorf("%s: %+v (%s), want %s at %s", tc.spec, d, rt.desc, tc.kind, tc.endpoint)
		}
	}
}

// A gemini endpoint needs no base URL (Google's is the default, unless
// the spec names a variable of its own) and reads GOOGLE_API_KEY when
// GEMINI_API_KEY is unset.
func TestEndpointGeminiDefaults(t *testing.T) {
	for _, v := range []string{"GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_MODEL", "GW_URL"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	ep := Endpoint{Protocol: ProtocolGemini}
	if m := ep.Missing(); !slices.Equal(m, []string{"GEMINI_API_KEY", "GEMINI_MODEL"}) {
		t.Errorf("missing %v, want the key's and the model's (the base URL has a default)", m)
	}
	if m := (Endpoint{Protocol: ProtocolGemini, BaseURLEnv: "GW_URL"}).Missing(); !slices.Equal(m, []string{"GW_URL", "GEMINI_API_KEY", "GEMINI_MODEL"}) {
		t.Errorf("a variable of the spec's own: missing %v", m)
	}
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_MODEL", "gemini-x")
	if _, k, _ := ep.Vars(); k != "GOOGLE_API_KEY" || len(ep.Missing()) != 0 {
		t.Errorf("key variable %s, missing %v", k, ep.Missing())
	}
	rt, skip, err := ep.resolve()
	if err != nil || skip != "" {
		t.Fatalf("%v %s", err, skip)
	}
	d := rt.provider.(interface {
		Describe() latencytest.Description
	}).Describe()
	if want := "https://generativelanguage.googleapis.com/v1beta/models/gemini-x:streamGenerateContent"; d.Endpoint != want {
		t.Errorf("endpoint %s, want %s", d.Endpoint, want)
	}
}
