package latencytest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/protocol"
)

// The built-in providers send what the protocols ask: the path, the
// body's fields, the key in Authorization (Responses) or x-api-key with
// anthropic-version (Anthropic, never a bearer token); the version is no
// secret, the key is redacted wherever it comes back.
func TestProtocolRequests(t *testing.T) {
	temp := 0.5
	req := Request{ID: "r-1", MaxTokens: 64, Temperature: &temp,
		Messages: []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}}
	for _, tc := range []struct {
		api        *protocol.Protocol
		path, body string
		header     map[string]string
		answer     string
	}{
		{protocol.Responses, "/v1/responses",
			`{"input":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"max_output_tokens":64,"model":"m-1","stream":true,"temperature":0.5}`,
			map[string]string{"Authorization": "Bearer " + key, "X-Api-Key": "", "Accept": "text/event-stream"},
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"" + key + " 2023-06-01\"}\n\n" +
				"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n"},
		{protocol.Messages, "/v1/messages",
			`{"max_tokens":64,"messages":[{"role":"user","content":"hi"}],"model":"m-1","stream":true,"system":"be brief","temperature":0.5}`,
			map[string]string{"Authorization": "", "X-Api-Key": key, "Anthropic-Version": protocol.AnthropicVersion},
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m-1\"}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + key[:10] + "\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + key[10:] + " 2023-06-01\"}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
	} {
		// The body, through a client of one's own (both paths send the
		// same payload).
		var body string
		capture := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			b, _ := io.ReadAll(r.Body)
			body = string(b)
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
				Body: io.NopCloser(strings.NewReader(tc.answer)), Request: r}, nil
		})}
		if rec := protoProvider(tc.api, capture).Call(context.Background(), req); !rec.OK() || body != tc.body {
			t.Errorf("%s: body\n%s\nwant\n%s\nrecord %+v", tc.api.Title, body, tc.body, rec)
		}
		// The path and headers on both paths.
		for _, fast := range []bool{true, false} {
			var path string
			var header http.Header
			srv := &pipeServer{respond: func(w io.Writer, r *http.Request, _ int) bool {
				path, header = r.URL.Path, r.Header.Clone()
				return writeBytes(w, sseHead+"Transfer-Encoding: chunked\r\n\r\n"+chunked(tc.answer), false)
			}}
			o := pipeProto(t, tc.api, srv, fast)
			rec := o.Call(context.Background(), req)
			o.CloseIdleConnections()
			srv.close()
			if path != tc.path {
				t.Errorf("%s fast %v: path %q, want %q", tc.api.Title, fast, path, tc.path)
			}
			for k, v := range tc.header {
				if header.Get(k) != v {
					t.Errorf("%s fast %v: header %s = %q, want %q", tc.api.Title, fast, k, header.Get(k), v)
				}
			}
			if !rec.OK() || strings.Contains(fmt.Sprintf("%+v", rec), key) || rec.Content != "[redacted] 2023-06-01" {
				t.Errorf("%s fast %v: record %+v: want the key redacted, the version kept", tc.api.Title, fast, rec)
			}
			if d := o.Describe(); d.Kind != tc.api.Kind+" (streaming)" || !strings.HasSuffix(d.Endpoint, tc.path) {
				t.Errorf("%s: description %+v", tc.api.Title, d)
			}
		}
	}
}

// AnthropicFromEnv names what is unset, adds /v1 to a base URL given as
// Anthropic's SDKs take it, and sends the key as x-api-key; an error body
// that echoes the key is redacted.
func TestAnthropicFromEnv(t *testing.T) {
	t.Setenv(envAnthropicBaseURL, "")
	t.Setenv(envAnthropicModel, "")
	os.Unsetenv(envAnthropicAPIKey)
	if _, err := AnthropicFromEnv(); err == nil || !strings.Contains(err.Error(),
		"ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY (set it empty for a server without keys), ANTHROPIC_MODEL not set") {
		t.Errorf("error %v", err)
	}
	t.Setenv(envAnthropicAPIKey, key)
	t.Setenv(envAnthropicModel, "claude-x")
	t.Setenv(envAnthropicBaseURL, "ftp://x")
	if _, err := AnthropicFromEnv(); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("error %v", err)
	}
	for base, want := range map[string]string{"https://api.anthropic.test": "/v1/messages", "https://api.anthropic.test/v1/": "/v1/messages",
		"https://gw.test/anthropic": "/anthropic/v1/messages"} {
		t.Setenv(envAnthropicBaseURL, base)
		var path, apiKey string
		c := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			path, apiKey = r.URL.Path, r.Header.Get("X-Api-Key")
			return &http.Response{StatusCode: 401, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + key + `"}}`)), Request: r}, nil
		})}
		p, err := AnthropicFromEnv(WithHTTPClient(c))
		if err != nil {
			t.Fatal(err)
		}
		rec := p.Call(context.Background(), Request{ID: "e-1", Messages: []Message{{Role: "user", Content: "hi"}}})
		if path != want || apiKey != key || rec.Err != HTTPClass(401) || describe(p).Model != "claude-x" ||
			!strings.Contains(rec.Detail, "authentication_error: invalid x-api-key [redacted]") || strings.Contains(fmt.Sprintf("%+v", rec), key) {
			t.Errorf("base %s: path %q (want %q), x-api-key sent %v, record %+v", base, path, want, apiKey == key, rec)
		}
	}
}
