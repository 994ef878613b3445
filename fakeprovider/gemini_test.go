package fakeprovider

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// geminiChunks reads a Gemini SSE body: each event's data (no event
// names, CRLF framing) as JSON.
func geminiChunks(t *testing.T, body io.Reader) []map[string]any {
	t.Helper()
	b, err := io.ReadAll(body)
	require.NoError(t, err)
	var out []map[string]any
	for _, ev := range strings.Split(string(b), "\r\n\r\n") {
		if ev == "" {
			continue
		}
		require.True(t, strings.HasPrefix(ev, "data: ") && !strings.Contains(ev, "\n"), "event %q", ev)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &m), ev)
		out = append(out, m)
	}
	return out
}

// cand0 is a chunk's candidate 0 and its parts.
func cand0(t *testing.T, chunk map[string]any) (map[string]any, []any) {
	t.Helper()
	cands, _ := chunk["candidates"].([]any)
	require.Len(t, cands, 1, "%v", chunk)
	c := cands[0].(map[string]any)
	parts, _ := c["content"].(map[string]any)["parts"].([]any)
	return c, parts
}

const (
	geminiPath = "/v1beta/models/fake-model:streamGenerateContent?alt=sse"
	geminiBody = `{"contents":[{"role":"user","parts":[{"text":"hello there"}]}],"systemInstruction":{"parts":[{"text":"be brief"}]},"generationConfig":{"maxOutputTokens":64}}`
)

// The fake speaks Gemini: thought parts first, text chunks, the last
// chunk with STOP and the whole usage; errors, a wrong model, a stream
// without alt=sse and a bad body in Google's error shape; faults
// (malformed, error_event, disconnect, empty) and the Tailguard-Injected
// header as for the other protocols.
func TestGeminiRawShapes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(Profile{Seed: 1, OutputTokens: Fixed(3), ReasoningTokens: Fixed(2), Faults: Faults{RetryAfter: 2500 * time.Millisecond},
			Script: []ScriptEntry{{ID: "r429", Status: 429}, {ID: "r529", Status: 529}, {ID: "bad", Fault: FaultMalformed, AfterToken: 1},
				{ID: "err", Fault: FaultErrorEvent, AfterToken: 1}, {ID: "cut", Fault: FaultDisconnect, AfterToken: 2},
				{ID: "empty", Fault: FaultEmpty}, {ID: "cold", ColdStart: 3 * time.Second}}})
		t.Cleanup(f.Close)
		c := f.Client()

		resp := post(t, c, geminiPath, "ok", geminiBody)
		assert.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		assert.Equal(t, "ok", resp.Header.Get("X-Request-Id"))
		assert.Empty(t, resp.Header.Get(HeaderInjected))
		chunks := geminiChunks(t, resp.Body)
		require.Len(t, chunks, 6, "2 thought chunks, 3 text chunks, the last chunk")
		for i, ch := range chunks {
			c, parts := cand0(t, ch)
			require.Len(t, parts, 1)
			p := parts[0].(map[string]any)
			assert.Equal(t, i < 2, p["thought"] == true, "chunk %d: thought %v", i, p["thought"])
			assert.Equal(t, "fake-model", ch["modelVersion"])
			assert.Equal(t, i == 5, c["finishReason"] != nil, "chunk %d", i)
		}
		last, _ := cand0(t, chunks[5])
		assert.Equal(t, "STOP", last["finishReason"])
		u := chunks[5]["usageMetadata"].(map[string]any)
		assert.EqualValues(t, 3, u["candidatesTokenCount"], "thoughts are counted apart")
		assert.EqualValues(t, 2, u["thoughtsTokenCount"])
		assert.EqualValues(t, u["promptTokenCount"].(float64)+5, u["totalTokenCount"])

		resp = post(t, c, geminiPath, "r429", geminiBody)
		assert.Equal(t, 429, resp.StatusCode)
		assert.Equal(t, "3", resp.Header.Get("Retry-After"), "2.5 s rounded up")
		assert.Equal(t, "http_429", resp.Header.Get(HeaderInjected))
		b, _ := io.ReadAll(resp.Body)
		assert.JSONEq(t, `{"error":{"code":429,"message":"Rate limit reached for requests","status":"RESOURCE_EXHAUSTED"}}`, string(b))
		resp = post(t, c, geminiPath, "r529", geminiBody)
		b, _ = io.ReadAll(resp.Body)
		assert.Equal(t, 529, resp.StatusCode)
		assert.JSONEq(t, `{"error":{"code":529,"message":"Overloaded","status":"UNAVAILABLE"}}`, string(b))

		resp = post(t, c, geminiPath, "bad", geminiBody)
		b, _ = io.ReadAll(resp.Body)
		assert.Contains(t, string(b), "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"tr\r\n\r\n", "a malformed chunk")
		resp = post(t, c, geminiPath, "err", geminiBody)
		b, _ = io.ReadAll(resp.Body)
		assert.True(t, strings.HasSuffix(string(b), `"status":"INTERNAL"}}`+"\r\n\r\n"), "an error chunk ends the stream:\n%s", b)
		resp = post(t, c, geminiPath, "cut", geminiBody)
		b, err := io.ReadAll(resp.Body)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.Equal(t, 2, strings.Count(string(b), "data: "), "two chunks before the cut:\n%s", b)
		assert.NotContains(t, string(b), "finishReason")
		chunks = geminiChunks(t, post(t, c, geminiPath, "empty", geminiBody).Body)
		require.Len(t, chunks, 1, "an empty answer is its last chunk alone")
		last, _ = cand0(t, chunks[0])
		assert.Equal(t, "STOP", last["finishReason"])
		resp = post(t, c, geminiPath, "cold", geminiBody)
		assert.Equal(t, "cold_start=3s", resp.Header.Get(HeaderInjected))

		for _, tc := range []struct {
			path, body, status, msg string
			code                    int
		}{
			{"/v1beta/models/other:streamGenerateContent?alt=sse", geminiBody, "NOT_FOUND", "models/other is not found", 404},
			{"/v1beta/models/fake-model:streamGenerateContent", geminiBody, "INVALID_ARGUMENT", "add ?alt=sse", 400},
			{geminiPath, `{"contents":[]}`, "INVALID_ARGUMENT", "contents is not specified", 400},
			{geminiPath, `{"contents":[{"role":"system","parts":[{"text":"x"}]}]}`, "INVALID_ARGUMENT", "contents[0].role", 400},
			{geminiPath, `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"maxOutputTokens":0}}`, "INVALID_ARGUMENT", "max_output_tokens: 0 is outside", 400},
			{geminiPath, `{"contents":[{"parts":[{"text":"x"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`, "INVALID_ARGUMENT", "lists no tools", 400},
		} {
			resp := post(t, c, tc.path, "", tc.body)
			b, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tc.code, resp.StatusCode, string(b))
			var e struct {
				Error struct {
					Code            int
					Status, Message string
				}
			}
			require.NoError(t, json.Unmarshal(b, &e), string(b))
			assert.Equal(t, tc.code, e.Error.Code)
			assert.Equal(t, tc.status, e.Error.Status)
			assert.Contains(t, e.Error.Message, tc.msg)
		}
		for _, sv := range f.Served() {
			assert.Equal(t, ProtocolGemini, sv.Protocol, sv.ID)
		}
	})
}

// Parallel function calls: each functionCall part arrives whole (name
// and args) when its last argument token is generated, in the request's
// tool order; the whole answer (generateContent) holds the same calls,
// a thought part and the usage; NONE forbids calls.
func TestGeminiFunctionCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(Profile{Seed: 1, OutputTokens: Fixed(3), ReasoningTokens: Fixed(1),
			ToolCalls: ToolCalls{Probability: 1, ArgumentsTokens: Fixed(3), Parallel: Fixed(2)}})
		t.Cleanup(f.Close)
		c := f.Client()
		const tools = `,"tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"object"}},{"name":"get_time"}]}]}`
		body := strings.TrimSuffix(geminiBody, "}") + tools
		chunks := geminiChunks(t, post(t, c, geminiPath, "t1", body).Body)
		var calls []map[string]any
		for _, ch := range chunks {
			_, parts := cand0(t, ch)
			for _, p := range parts {
				if fc, ok := p.(map[string]any)["functionCall"].(map[string]any); ok {
					calls = append(calls, fc)
				}
			}
		}
		require.Len(t, calls, 2)
		assert.Equal(t, "get_weather", calls[0]["name"])
		assert.Equal(t, "get_time", calls[1]["name"])
		assert.IsType(t, map[string]any{}, calls[0]["args"], "args are an object")
		last, _ := cand0(t, chunks[len(chunks)-1])
		assert.Equal(t, "STOP", last["finishReason"])

		resp := post(t, c, "/v1beta/models/fake-model:generateContent", "t2", body)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		var whole map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&whole))
		cand, parts := cand0(t, whole)
		require.Len(t, parts, 3, "a thought part and two calls")
		assert.Equal(t, true, parts[0].(map[string]any)["thought"])
		assert.Equal(t, "get_time", parts[2].(map[string]any)["functionCall"].(map[string]any)["name"])
		assert.Equal(t, "STOP", cand["finishReason"])
		assert.EqualValues(t, 1, whole["usageMetadata"].(map[string]any)["thoughtsTokenCount"])

		none := strings.TrimSuffix(body, "}") + `,"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`
		sc := bufio.NewScanner(post(t, c, geminiPath, "t3", none).Body)
		for sc.Scan() {
			assert.NotContains(t, sc.Text(), "functionCall")
		}
		served := f.Served()
		require.Len(t, served, 3)
		assert.Equal(t, []int{2, 2, 0}, []int{served[0].ToolCalls, served[1].ToolCalls, served[2].ToolCalls})
	})
}
