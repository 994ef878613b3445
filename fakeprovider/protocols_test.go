package fakeprovider

import (
	"bufio"
	"encoding/json"
	"go/build"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tgprotocol "github.com/tailguard/tailguard/protocol"
)

func TestParseProfileToolCallsAndAttempts(t *testing.T) {
	p, err := ParseProfile([]byte("tool_calls: {probability: 30%, arguments_tokens: 40}\nscript:\n  - {id: t1, status: 529, attempts: 1}\n"))
	require.NoError(t, err)
	assert.Equal(t, 0.3, p.ToolCalls.Probability, "30% is the fraction 0.3")
	assert.Equal(t, Fixed(40), p.ToolCalls.ArgumentsTokens)
	assert.Equal(t, 1, p.Script[0].Attempts)

	p, err = ParseProfile([]byte("tool_calls: {probability: 0.25, arguments_tokens: {dist: uniform, min: 10, max: 50}}\n"))
	require.NoError(t, err)
	assert.Equal(t, 0.25, p.ToolCalls.Probability, "a plain number is a fraction")
	assert.False(t, p.ToolCalls.Parallel.IsSet(), "parallel defaults to one call")

	p, err = ParseProfile([]byte("tool_calls: {probability: 30%, arguments_tokens: 40, parallel: 2}\n"))
	require.NoError(t, err)
	assert.Equal(t, Fixed(2), p.ToolCalls.Parallel)
	p, err = ParseProfile([]byte("tool_calls: {probability: 1, parallel: {dist: uniform, min: 1, max: 4}}\n"))
	require.NoError(t, err)
	assert.Equal(t, Uniform(1, 4), p.ToolCalls.Parallel)

	for _, tc := range []struct{ name, yaml, msg string }{
		{"unknown key", "model: m\ntool_calls: {probability: 0.3, args: 4}\n", `line 2: tool_calls.args: unknown key "args" in tool_calls`},
		{"probability above 1", "model: m\nseed: 1\ntool_calls: {probability: 30}\n", "line 3: tool_calls.probability: probability 30 is above 1: a plain number is a fraction; write 30% or 0.3"},
		{"probability not a number", "tool_calls:\n  probability: often\n", `line 2: tool_calls.probability: "often" is not a probability`},
		{"negative arguments", "model: m\ntool_calls:\n  probability: 0.1\n  arguments_tokens: -3\n", "line 4"},
		{"negative parallel", "model: m\ntool_calls:\n  probability: 0.1\n  parallel: -2\n", "line 4"},
		{"parallel not a count", "tool_calls: {probability: 0.1, parallel: two}\n", "line 1"},
		{"fractional attempts", "script:\n  - {id: a, status: 529, attempts: 1.5}\n", "line 2: script[0].attempts: 1.5 is not a whole number"},
		{"negative attempts", "script:\n  - id: a\n    status: 529\n    attempts: -1\n", "line 4: script[0].attempts: negative (-1)"},
		{"attempts without id", "script:\n  - request: 3\n    status: 529\n    attempts: 1\n", "script[0].attempts: needs id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProfile([]byte(tc.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestToolCallsMoveNoOtherDraw: tool_calls draws on its own random stream,
// so adding it changes no TTFT, fault or stall, and the requests that
// answer text stream exactly as before; about the configured share answer
// with a tool call.
func TestToolCallsMoveNoOtherDraw(t *testing.T) {
	base := Profile{
		Seed:            11,
		TTFT:            LogNormal(300*time.Millisecond, 2*time.Second),
		ITL:             LogNormal(20*time.Millisecond, 80*time.Millisecond),
		OutputTokens:    Uniform(10, 60),
		ReasoningTokens: Uniform(0, 8),
		Stall:           Stall{Probability: 0.05, AfterToken: 3, Duration: Fixed(time.Second)},
		Faults:          Faults{HTTP529: 0.02, Disconnect: 0.02, AfterToken: 2},
	}
	tools := base
	tools.ToolCalls = ToolCalls{Probability: 0.3, ArgumentsTokens: Fixed(12)}
	a, err := NewPredictor(base)
	require.NoError(t, err)
	b, err := NewPredictor(tools)
	require.NoError(t, err)
	const n = 2000
	calls := 0
	for i := range n {
		id := "trace-" + strconv.Itoa(i)
		pa, pb := a.Predict(id, 100, 0), b.Predict(id, 100, 0)
		require.Equal(t, pa.TTFT, pb.TTFT, id)
		require.Equal(t, pa.Fault, pb.Fault, id)
		require.Equal(t, pa.Stall, pb.Stall, id)
		require.Equal(t, pa.Status, pb.Status, id)
		if pb.Finish == "tool_calls" {
			calls++
			require.Equal(t, pb.ReasoningTokens+12, pb.Tokens, id)
			continue
		}
		require.Equal(t, pa, pb, "%s answers text: it must not move", id)
	}
	share := float64(calls) / n
	t.Logf("tool calls: %d of %d answers (%.3f, configured 0.3)", calls, n, share)
	// 4% of requests end in a fault (no finish): expect 0.3 × 0.96 =
	// 0.288; Binomial(2000, 0.288) has sd 0.0101, so 0.06 is 5 sd.
	assert.InDelta(t, 0.3, share, 0.06)
}

// sseEvents reads a named-event SSE body: event names and data.
func sseEvents(t *testing.T, body io.Reader) (names []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("event %s: data %q is not JSON: %v", name, line, err)
			}
			if m["type"] != name {
				t.Errorf("event %s carries type %v", name, m["type"])
			}
			names, data = append(names, name), append(data, m)
		}
	}
	return names, data
}

func post(t *testing.T, c *http.Client, path, id, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://fake"+path, strings.NewReader(body))
	require.NoError(t, err)
	if id != "" {
		req.Header.Set("X-Request-ID", id)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const messagesBody = `{"model":"fake-model","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hello there"}]}`

func TestMessagesRawShapes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(Profile{Seed: 1, OutputTokens: Fixed(3), Faults: Faults{RetryAfter: 2500 * time.Millisecond},
			Script: []ScriptEntry{{ID: "r429", Status: 429}, {ID: "r529", Status: 529}}})
		t.Cleanup(f.Close)
		c := f.Client()

		resp := post(t, c, "/v1/messages", "ok", messagesBody)
		h := resp.Header
		assert.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, "text/event-stream", h.Get("Content-Type"))
		assert.Equal(t, "ok", h.Get("X-Request-Id"), "the trace ID is echoed as for chat")
		assert.Equal(t, "req_fake_0", h.Get("Request-Id"), "Anthropic's request-id names this attempt")
		assert.Equal(t, "10000", h.Get("Anthropic-Ratelimit-Requests-Limit"))
		assert.Equal(t, "9999", h.Get("Anthropic-Ratelimit-Requests-Remaining"))
		_, err := time.Parse(time.RFC3339, h.Get("Anthropic-Ratelimit-Tokens-Reset"))
		assert.NoError(t, err, "resets are RFC 3339 instants")
		assert.Empty(t, h.Get("X-Ratelimit-Limit-Requests"), "OpenAI's headers are not Anthropic's")
		names, data := sseEvents(t, resp.Body)
		assert.Equal(t, []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta",
			"content_block_delta", "content_block_stop", "message_delta", "message_stop"}, names)
		assert.Equal(t, "end_turn", data[7]["delta"].(map[string]any)["stop_reason"])

		resp = post(t, c, "/v1/messages", "r429", messagesBody)
		assert.Equal(t, 429, resp.StatusCode)
		assert.Equal(t, "3", resp.Header.Get("Retry-After"), "2.5 s rounded up")
		assert.Equal(t, "0", resp.Header.Get("Anthropic-Ratelimit-Requests-Remaining"))
		b, _ := io.ReadAll(resp.Body)
		assert.JSONEq(t, `{"type":"error","error":{"type":"rate_limit_error","message":"Rate limit reached for requests"},"request_id":"req_fake_1"}`, string(b))

		resp = post(t, c, "/v1/messages", "r529", messagesBody)
		assert.Equal(t, 529, resp.StatusCode)
		assert.Empty(t, resp.Header.Get("Retry-After"), "Anthropic's 529 carries no retry-after")
		b, _ = io.ReadAll(resp.Body)
		assert.JSONEq(t, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_fake_2"}`, string(b))

		for _, tc := range []struct{ body, status, typ, msg string }{
			{`{"model":"fake-model","messages":[{"role":"user","content":"x"}]}`, "400", "invalid_request_error", "max_tokens: Field required"},
			{`{"model":"other","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, "404", "not_found_error", "model: other"},
			{`{"model":"fake-model","max_tokens":5,"messages":[]}`, "400", "invalid_request_error", "at least one message"},
			{`{"model":"fake-model","max_tokens":5,"messages":[{"role":"system","content":"x"}]}`, "400", "invalid_request_error", "messages.0.role"},
		} {
			resp := post(t, c, "/v1/messages", "", tc.body)
			b, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tc.status, strconv.Itoa(resp.StatusCode), string(b))
			var e struct {
				Type  string
				Error struct{ Type, Message string }
			}
			require.NoError(t, json.Unmarshal(b, &e))
			assert.Equal(t, "error", e.Type)
			assert.Equal(t, tc.typ, e.Error.Type)
			assert.Contains(t, e.Error.Message, tc.msg)
		}
	})
}

func TestResponsesRawShapes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(Profile{Seed: 1, OutputTokens: Fixed(3), Script: []ScriptEntry{
			{ID: "r429", Status: 429}, {ID: "bad", Fault: FaultMalformed, AfterToken: 1}}})
		t.Cleanup(f.Close)
		c := f.Client()
		const body = `{"model":"fake-model","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}],"stream":true}`
		resp := post(t, c, "/v1/responses", "ok", body)
		assert.Equal(t, "10000", resp.Header.Get("X-Ratelimit-Limit-Requests"), "OpenAI's rate-limit headers")
		names, data := sseEvents(t, resp.Body)
		require.NotEmpty(t, names)
		assert.Equal(t, "response.created", names[0])
		assert.Equal(t, "response.completed", names[len(names)-1])
		final := data[len(data)-1]["response"].(map[string]any)
		assert.Equal(t, "resp_fake_0", final["id"], "the response ID is the fake's own, per attempt")
		assert.Equal(t, "completed", final["status"])

		resp = post(t, c, "/v1/responses", "r429", body)
		assert.Equal(t, 429, resp.StatusCode)
		assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		assert.Equal(t, "1000", resp.Header.Get("Retry-After-Ms"))
		b, _ := io.ReadAll(resp.Body)
		assert.Contains(t, string(b), `"code":"rate_limit_exceeded"`)

		resp = post(t, c, "/v1/responses", "bad", body)
		b, _ = io.ReadAll(resp.Body)
		assert.Contains(t, string(b), "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"tr\n\n",
			"a malformed event in the protocol's shape")

		resp = post(t, c, "/v1/responses", "", `{"model":"fake-model","stream":true}`)
		assert.Equal(t, 400, resp.StatusCode)
		b, _ = io.ReadAll(resp.Body)
		assert.Contains(t, string(b), "Missing required parameter: 'input'.")

		served := f.Served()
		require.Len(t, served, 3)
		assert.Equal(t, ProtocolResponses, served[0].Protocol)
	})
}

// TestLibraryImportsNoMock: the fake's own code (not its tests) imports no
// mocking library, so users' module graphs stay free of one.
func TestLibraryImportsNoMock(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	for _, imp := range pkg.Imports {
		assert.NotContains(t, imp, "httpmock", "library code imports %s", imp)
	}
}

// TestProtocolsEmptyAndDisconnect: an empty answer is a complete stream
// with no content in each protocol; a disconnect cuts the body short with
// no end event.
func TestProtocolsEmptyAndDisconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(Profile{Seed: 1, OutputTokens: Fixed(5), Script: []ScriptEntry{
			{ID: "empty", Fault: FaultEmpty}, {ID: "cut", Fault: FaultDisconnect, AfterToken: 2}}})
		t.Cleanup(f.Close)
		c := f.Client()
		const resBody = `{"model":"fake-model","input":"hi","stream":true}`
		names, data := sseEvents(t, post(t, c, "/v1/responses", "empty", resBody).Body)
		assert.Equal(t, []string{"response.created", "response.in_progress", "response.completed"}, names)
		assert.Empty(t, data[2]["response"].(map[string]any)["output"])
		names, _ = sseEvents(t, post(t, c, "/v1/messages", "empty", messagesBody).Body)
		assert.Equal(t, []string{"message_start", "ping", "message_delta", "message_stop"}, names)

		for _, path := range []string{"/v1/responses", "/v1/messages"} {
			body := resBody
			if path == "/v1/messages" {
				body = messagesBody
			}
			resp := post(t, c, path, "cut", body)
			b, err := io.ReadAll(resp.Body)
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF, path)
			assert.Equal(t, 2, strings.Count(string(b), "delta\ndata: "), "%s: two token events before the cut:\n%s", path, b)
			assert.NotContains(t, string(b), "completed\n", path)
			assert.NotContains(t, string(b), "message_stop", path)
		}
	})
}

// Every protocol the fake serves is one complete entry in wires: its
// name (one of package protocol's built-ins), the paths it matches (each
// its own), how to parse a request and write an answer.
func TestWiresAreComplete(t *testing.T) {
	paths := map[string]bool{
		"/v1/chat/completions": false, "/v1/responses": false, "/v1/messages": false,
		"/v1beta/models/m:streamGenerateContent": false, "/model/m/converse-stream": false,
	}
	seen := map[tgprotocol.Name]bool{}
	for i, w := range wires {
		if w.Name == "" || w.Match == nil || w.Parse == nil || w.Encoder == nil {
			t.Errorf("wires[%d] (%q) lacks its name, Match, Parse or Encoder", i, w.Name)
			continue
		}
		if tgprotocol.Lookup(w.Name) == nil || seen[w.Name] {
			t.Errorf("wires[%d]: %q is no built-in protocol, or is served twice", i, w.Name)
		}
		seen[w.Name] = true
		if protocol(i).name() != w.Name {
			t.Errorf("protocol %d names itself %q, want %q", i, protocol(i).name(), w.Name)
		}
		for p := range paths {
			if w.Match(p) {
				if paths[p] {
					t.Errorf("%s is matched by two protocols", p)
				}
				paths[p] = true
			}
		}
	}
	for p, matched := range paths {
		if !matched {
			t.Errorf("no protocol serves %s", p)
		}
	}
	if len(seen) != len(tgprotocol.Names()) {
		t.Errorf("the fake serves %d protocols, package protocol has %d built in", len(seen), len(tgprotocol.Names()))
	}
}
