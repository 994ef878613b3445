package fakeprovider

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// badModel is the model the bad-input fakes serve; "fake-model" (the
// default) is one of the wrong names.
const badModel = "bad-input-model"

// badCase is one request the fake must refuse with OpenAI's error body.
type badCase struct {
	name   string
	method string
	path   string
	body   string
	status int
	typ    string
	param  string // "" when the body's param must be null
	code   string // "" when the body's code must be null
	header map[string]string
	msg    string // "" or text the message must hold
	reason string
}

func withMsg(c badCase, msg string) badCase { c.msg = msg; return c }

// badCases are the requests both bad-input tests send, in order, to one
// Fake; a valid request after them must still stream.
func badCases() []badCase {
	const chat = "/v1/chat/completions"
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	m := `"model":"` + badModel + `",`
	valid := "{" + m + msgs + "}"
	bad := func(name, body, param, code, reason string) badCase {
		return badCase{name: name, method: "POST", path: chat, body: body, status: 400, typ: "invalid_request_error",
			param: param, code: code, reason: reason}
	}
	return []badCase{
		bad("malformed JSON", `{"model":"`+badModel+`","messages":[`, "", "invalid_json", "the body ends mid-array"),
		bad("empty body", "", "", "invalid_json", "no JSON at all"),
		bad("not an object", `["hi"]`, "", "invalid_json", "a request is an object"),
		bad("trailing garbage", valid+"x", "", "invalid_json", "one JSON value, nothing after it"),
		bad("stream of a wrong type", "{"+m+msgs+`,"stream":"yes"}`, "", "invalid_json", "stream is a boolean"),
		bad("no messages", "{"+m+`"stream":true}`, "messages", "", "messages is required"),
		bad("empty messages", "{"+m+`"messages":[]}`, "messages", "", "at least one message"),
		bad("empty model", `{"model":"",`+msgs+"}", "model", "", "model is required"),
		bad("missing model", "{"+msgs+"}", "model", "", "model is required"),
		{name: "unknown model", method: "POST", path: chat, body: `{"model":"fake-model",` + msgs + "}", status: 404,
			typ: "invalid_request_error", code: "model_not_found",
			msg:    "The model `fake-model` does not exist or you do not have access to it.",
			reason: "OpenAI answers 404 model_not_found (param null), so SDKs raise their not-found error"},
		withMsg(bad("stream_options without stream", "{"+m+msgs+`,"stream_options":{"include_usage":true}}`, "stream_options", "",
			"stream_options belongs to streamed requests only, as OpenAI says"),
			"The 'stream_options' parameter is only allowed when 'stream' is enabled."),
		withMsg(bad("stream_options with stream false", "{"+m+msgs+`,"stream":false,"stream_options":{"include_usage":false}}`, "stream_options", "",
			"an explicit false is no stream either"), "only allowed when 'stream' is enabled"),
		withMsg(bad("n of 2", "{"+m+msgs+`,"stream":true,"n":2}`, "n", "",
			"the fake generates one choice; a second must not be silently missing"), "n is 2"),
		withMsg(bad("n of 0", "{"+m+msgs+`,"n":0}`, "n", "", "no choice at all"), "n must be 1 or absent"),
		withMsg(bad("logprobs true", "{"+m+msgs+`,"logprobs":true}`, "logprobs", "",
			"the fake sends logprobs null; a client that asked would find none"), "logprobs are not generated"),
		withMsg(bad("top_logprobs", "{"+m+msgs+`,"top_logprobs":3}`, "top_logprobs", "", "same, with the count"), "top_logprobs 3"),
		{name: "X-Request-ID over 256 bytes", method: "POST", path: chat, body: valid, status: 400, typ: "invalid_request_error",
			header: map[string]string{"X-Request-ID": strings.Repeat("x", maxRequestIDBytes+1)},
			msg:    "the X-Request-ID header is 257 bytes; the limit is 256",
			reason: "a trace ID is short; a huge one would be kept in Served and echoed"},
		{name: "unknown model by ID", method: "GET", path: "/v1/models/gpt-4o", status: 404, typ: "invalid_request_error",
			code: "model_not_found", msg: "The model `gpt-4o` does not exist or you do not have access to it.",
			reason: "GET /v1/models/{id} of another model is OpenAI's 404"},
		{name: "POST a model", method: "POST", path: "/v1/models/" + badModel, status: 405, typ: "invalid_request_error",
			reason: "a model is read with GET"},
		bad("max_tokens negative", "{"+m+msgs+`,"max_tokens":-1}`, "max_tokens", "", "max_tokens is at least 1"),
		bad("max_tokens zero", "{"+m+msgs+`,"max_tokens":0}`, "max_tokens", "", "0 tokens is no answer"),
		bad("max_tokens huge", "{"+m+msgs+`,"max_tokens":1048577}`, "max_tokens", "", "1<<20 + 1 is above the limit"),
		bad("max_tokens fractional", "{"+m+msgs+`,"max_tokens":1.5}`, "", "invalid_json", "an integer field"),
		bad("max_completion_tokens negative", "{"+m+msgs+`,"max_completion_tokens":-5}`, "max_completion_tokens", "",
			"the newer name is checked too"),
		bad("content a number", "{"+m+`"messages":[{"role":"user","content":42}]}`, "messages[0].content", "",
			"content is a string or an array of parts"),
		bad("content an object", "{"+m+`"messages":[{"role":"user","content":{"text":"hi"}}]}`, "messages[0].content", "",
			"an object is not an array of parts"),
		bad("second content wrong", "{"+m+`"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[1,2]}]}`,
			"messages[1].content", "", "the index of the bad message"),
		bad("missing role", "{"+m+`"messages":[{"content":"hi"}]}`, "messages[0].role", "", "every message has a role"),
		{name: "body over 8 MiB", method: "POST", path: chat, body: strings.Repeat(" ", maxBodyBytes+1), status: 413,
			typ: "invalid_request_error", reason: "one byte over the limit; the JSON is never parsed"},
		{name: "GET chat", method: "GET", path: chat, status: 405, typ: "invalid_request_error",
			reason: "chat completions are POSTed"},
		{name: "POST models", method: "POST", path: "/v1/models", body: valid, status: 405, typ: "invalid_request_error",
			reason: "models are listed with GET"},
		{name: "unknown path", method: "POST", path: "/v1/completions", body: valid, status: 404, typ: "invalid_request_error",
			reason: "the legacy completions API is not served"},
		{name: "root", method: "GET", path: "/", status: 404, typ: "invalid_request_error",
			reason: "nothing at the root"},
	}
}

// sendBad sends tc and checks the status and OpenAI's error body. Every
// message names the case, for loops that cannot use t.Run (in a synctest
// bubble).
func sendBad(t *testing.T, c *http.Client, base string, tc badCase) {
	t.Helper()
	why := tc.name + ": " + tc.reason
	req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
	require.NoError(t, err, why)
	for k, v := range tc.header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	require.NoError(t, err, "%s: the fake must answer (a panic drops the connection)", why)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, why)

	assert.Equal(t, tc.status, resp.StatusCode, "%s; body %s", why, body)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), why)
	if tc.status == http.StatusMethodNotAllowed {
		want := "POST"
		if strings.Contains(tc.path, "/models") {
			want = "GET"
		}
		assert.Equal(t, want, resp.Header.Get("Allow"), "%s: a 405 says which method to use", why)
	}

	// OpenAI's shape: {"error":{"message":...,"type":...,"param":...,"code":...}},
	// with null for an unset param or code.
	var top map[string]map[string]any
	require.NoError(t, json.Unmarshal(body, &top), "%s: body %s", why, body)
	require.Len(t, top, 1, "%s: body %s", why, body)
	e, ok := top["error"]
	require.True(t, ok, "%s: body %s has no error object", why, body)
	assert.ElementsMatch(t, []string{"message", "type", "param", "code"}, errorKeys(e), "%s: body %s", why, body)
	msg, _ := e["message"].(string)
	assert.NotEmpty(t, msg, "%s: the message says what is wrong", why)
	assert.Contains(t, msg, tc.msg, why)
	assert.NotEmpty(t, resp.Header.Get("X-Request-Id"), "%s: every answer has x-request-id", why)
	assert.Equal(t, tc.typ, e["type"], why)
	assert.Equal(t, nullable(tc.param), e["param"], why)
	assert.Equal(t, nullable(tc.code), e["code"], why)
}

func errorKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// nullable is what encoding/json decodes a param or code into: nil for null.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func TestBadInputInMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{Model: badModel, TTFT: Fixed(200 * time.Millisecond), ITL: Fixed(10 * time.Millisecond), OutputTokens: Fixed(64)})
		c := f.Client()
		for _, tc := range badCases() {
			sendBad(t, c, "http://fake", tc) // no t.Run inside a bubble
		}

		// The fake keeps serving, with its timing intact: a fixed 200 ms
		// TTFT, then 63 tokens 10 ms apart: 200 + 630 = 830 ms.
		r := do(t, c, "http://fake", reqOpts{id: "after-bad", model: badModel})
		require.NoError(t, r.readErr)
		require.Equal(t, 200, r.status, r.body)
		assert.Equal(t, 200*time.Millisecond, r.firstTok)
		assert.Equal(t, 830*time.Millisecond, r.lastTok)
		assert.Equal(t, 64, r.tokens)
		assert.True(t, r.sawDone)
	})
}

func TestBadInputLimits(t *testing.T) {
	const head = `{"model":"` + badModel + `","messages":[{"role":"user","content":"`
	for _, tc := range []struct {
		name   string
		body   string
		tokens int
		reason string
	}{
		{"max_tokens at the limit", head + `hi"}],"stream":true,"max_tokens":1048576}`, 8,
			"1<<20 is allowed; the answer is shorter anyway"},
		{"max_completion_tokens 1", head + `hi"}],"stream":true,"max_completion_tokens":1}`, 1,
			"the smallest cap"},
		{"content parts", `{"model":"` + badModel + `","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"stream":true}`, 8,
			"an array of parts is content"},
		{"null content", `{"model":"` + badModel + `","messages":[{"role":"assistant","content":null},{"role":"user","content":"hi"}],"stream":true}`, 8,
			"an assistant turn with only tool calls has null content"},
		{"body of exactly 8 MiB", padTo(head, `"}],"stream":true}`, maxBodyBytes), 8,
			"the limit itself is allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := mustNew(t, Profile{Model: badModel, TTFT: Fixed(200 * time.Millisecond), ITL: Fixed(10 * time.Millisecond), OutputTokens: Fixed(8)})
				req, err := http.NewRequest("POST", "http://fake/v1/chat/completions", strings.NewReader(tc.body))
				require.NoError(t, err)
				resp, err := f.Client().Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.Equal(t, 200, resp.StatusCode, "%s: %.300s", tc.reason, b)
				assert.Equal(t, tc.tokens, tokenEvents(t, string(b)), "%s: %.300s", tc.reason, b)
				assert.True(t, strings.HasSuffix(string(b), "data: [DONE]\n\n"), tc.reason)
			})
		})
	}
}

// tokenEvents counts the SSE events of body that carry content; every event
// but [DONE] must be valid JSON.
func tokenEvents(t *testing.T, body string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ev struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if !assert.NoError(t, json.Unmarshal([]byte(data), &ev), "event %.200s", data) {
			continue
		}
		if len(ev.Choices) > 0 && ev.Choices[0].Delta.Content != "" {
			n++
		}
	}
	return n
}

// padTo returns head + spaces + tail, len(total) bytes long.
func padTo(head, tail string, total int) string {
	return head + strings.Repeat(" ", total-len(head)-len(tail)) + tail
}

func TestBadInputRealServer(t *testing.T) {
	// A real socket does not run on synctest's clock: a zero-latency
	// profile finishes at once, and no timing is asserted.
	f := mustNew(t, Profile{Model: badModel, TTFT: Fixed(time.Duration(0)), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(4)})
	srv := NewServer(f)
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}

	for _, tc := range badCases() {
		t.Run(tc.name, func(t *testing.T) { sendBad(t, c, srv.URL, tc) })
	}

	r := do(t, c, srv.URL, reqOpts{id: "after-bad", model: badModel, usage: true})
	require.NoError(t, r.readErr)
	require.Equal(t, 200, r.status, r.body)
	assert.Equal(t, 4, r.tokens)
	assert.Equal(t, "stop", r.finish)
	assert.True(t, r.sawDone, "the stream ends with [DONE]")
	_, completion, _, ok := r.usage()
	assert.True(t, ok)
	assert.Equal(t, 4, completion)
}

func TestModelsAndHealthz(t *testing.T) {
	f := mustNew(t, Profile{Model: badModel})
	srv := NewServer(f)
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()

	for _, tc := range []struct {
		name string
		c    *http.Client
		base string
	}{
		{"in memory", f.Client(), "http://fake"},
		{"server", &http.Client{Transport: tr}, srv.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := tc.c.Get(tc.base + "/v1/models")
			require.NoError(t, err)
			var list struct {
				Object string `json:"object"`
				Data   []struct {
					ID     string `json:"id"`
					Object string `json:"object"`
				} `json:"data"`
			}
			err = json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			assert.Equal(t, "list", list.Object)
			require.Len(t, list.Data, 1, "the fake serves one model")
			assert.Equal(t, badModel, list.Data[0].ID, "the profile's model, not the default")
			assert.Equal(t, "model", list.Data[0].Object)

			// GET /v1/models/{id}: OpenAI's model object.
			resp, err = tc.c.Get(tc.base + "/v1/models/" + badModel)
			require.NoError(t, err)
			var model map[string]any
			err = json.NewDecoder(resp.Body).Decode(&model)
			resp.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, map[string]any{"id": badModel, "object": "model", "created": float64(0), "owned_by": "tailguard-fake"}, model)

			resp, err = tc.c.Get(tc.base + "/healthz")
			require.NoError(t, err)
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, "ok\n", string(b))
		})
	}
}
