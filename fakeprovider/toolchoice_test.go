package fakeprovider

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// namesProfile answers with three tool calls of 3 argument tokens each
// (probability p), 8 text tokens otherwise, 2 tokens an event.
func namesProfile(p float64) Profile {
	return Profile{
		Seed: 5, TTFT: Fixed(100 * time.Millisecond), ITL: Fixed(10 * time.Millisecond),
		OutputTokens: Fixed(8), TokensPerChunk: Fixed(2),
		ToolCalls: ToolCalls{Probability: p, ArgumentsTokens: Fixed(3), Parallel: Fixed(3)},
	}
}

// twoToolBodies are request bodies per protocol listing the tools alpha
// and beta, in that order; choice is the tool_choice JSON ("" for none),
// each protocol's from its own map entry.
func twoToolBodies(stream bool, choice map[string]string) map[string]string {
	s := strconv.FormatBool(stream)
	tc := func(path string) string {
		if c := choice[path]; c != "" {
			return `,"tool_choice":` + c
		}
		return ""
	}
	const chat, resp, msgs = "/v1/chat/completions", "/v1/responses", "/v1/messages"
	return map[string]string{
		chat: `{"model":"fake-model","stream":` + s + `,"messages":[{"role":"user","content":"hi"}],"tools":[` +
			`{"type":"function","function":{"name":"alpha"}},{"type":"function","function":{"name":"beta"}}]` + tc(chat) + `}`,
		resp: `{"model":"fake-model","stream":` + s + `,"input":"hi","tools":[` +
			`{"type":"function","name":"alpha"},{"type":"function","name":"beta"}]` + tc(resp) + `}`,
		msgs: `{"model":"fake-model","stream":` + s + `,"max_tokens":64,"messages":[{"role":"user","content":"hi"}],"tools":[` +
			`{"name":"alpha","input_schema":{"type":"object"}},{"name":"beta","input_schema":{"type":"object"}}]` + tc(msgs) + `}`,
	}
}

// namedChoice forces tool name in each protocol's form.
func namedChoice(name string) map[string]string {
	q := strconv.Quote(name)
	return map[string]string{
		"/v1/chat/completions": `{"type":"function","function":{"name":` + q + `}}`,
		"/v1/responses":        `{"type":"function","name":` + q + `}`,
		"/v1/messages":         `{"type":"tool","name":` + q + `}`,
	}
}

// callNames is the function name of each tool call of an answer, in
// order, read from the stream's events (each call's opening event names
// it) or from the whole answer; each call counted once.
func callNames(t *testing.T, path string, stream bool, raw []byte) []string {
	t.Helper()
	var names []string
	if !stream {
		var a struct {
			Choices []struct {
				Message struct {
					ToolCalls []struct{ Function struct{ Name string } } `json:"tool_calls"`
				}
			}
			Output  []struct{ Type, Name string }
			Content []struct{ Type, Name string }
		}
		require.NoError(t, json.Unmarshal(raw, &a), "%s", raw)
		for _, c := range a.Choices {
			for _, tc := range c.Message.ToolCalls {
				names = append(names, tc.Function.Name)
			}
		}
		for _, o := range a.Output {
			if o.Type == "function_call" {
				names = append(names, o.Name)
			}
		}
		for _, c := range a.Content {
			if c.Type == "tool_use" {
				names = append(names, c.Name)
			}
		}
		return names
	}
	for _, ev := range dataLines(t, raw) {
		switch path {
		case "/v1/chat/completions":
			choices, _ := ev["choices"].([]any)
			for _, c := range choices {
				delta, _ := c.(map[string]any)["delta"].(map[string]any)
				tcs, _ := delta["tool_calls"].([]any)
				for _, tc := range tcs {
					if name, ok := tc.(map[string]any)["function"].(map[string]any)["name"].(string); ok {
						names = append(names, name)
					}
				}
			}
		case "/v1/responses":
			if it, _ := ev["item"].(map[string]any); ev["type"] == "response.output_item.added" && it["type"] == "function_call" {
				names = append(names, it["name"].(string))
			}
		case "/v1/messages":
			if b, _ := ev["content_block"].(map[string]any); ev["type"] == "content_block_start" && b["type"] == "tool_use" {
				names = append(names, b["name"].(string))
			}
		}
	}
	return names
}

// eachProtocol runs fn for each protocol, streamed and whole, as a subtest
// inside synctest.Test with a fresh fake of profile p.
func eachProtocol(t *testing.T, p Profile, fn func(t *testing.T, f *Fake, path string, stream bool)) {
	for _, stream := range []bool{true, false} {
		for path := range twoToolBodies(stream, nil) {
			name := strings.TrimPrefix(path, "/v1/")
			if !stream {
				name += "/whole"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					f := New(p)
					t.Cleanup(f.Close)
					fn(t, f, path, stream)
				})
			})
		}
	}
}

// TestParallelCallsCycleTools: three parallel calls over the tools alpha
// and beta name alpha, beta, alpha, in every protocol, streamed and
// whole; latencytest reads the three calls back.
func TestParallelCallsCycleTools(t *testing.T) {
	eachProtocol(t, namesProfile(1), func(t *testing.T, f *Fake, path string, stream bool) {
		rec, raw := instrumentedPost(t, f, path, "cycle", twoToolBodies(stream, nil)[path])
		require.True(t, rec.OK(), "%s %s: %s", rec.Err, rec.Detail, raw)
		assert.Equal(t, 3, rec.ToolCalls)
		assert.Equal(t, []string{"alpha", "beta", "alpha"}, callNames(t, path, stream, raw), "%s", raw)
		assert.Equal(t, 3, servedID(t, f, "cycle").ToolCalls)
	})
}

// TestToolChoiceForcesTool: a tool_choice naming beta (the second tool)
// makes every call of the answer name beta, in every protocol's own form,
// streamed and whole.
func TestToolChoiceForcesTool(t *testing.T) {
	eachProtocol(t, namesProfile(1), func(t *testing.T, f *Fake, path string, stream bool) {
		rec, raw := instrumentedPost(t, f, path, "forced", twoToolBodies(stream, namedChoice("beta"))[path])
		require.True(t, rec.OK(), "%s %s: %s", rec.Err, rec.Detail, raw)
		assert.Equal(t, 3, rec.ToolCalls)
		assert.Equal(t, []string{"beta", "beta", "beta"}, callNames(t, path, stream, raw), "%s", raw)
	})
}

// TestToolChoiceForcedWithoutCoin: a named tool_choice demands a call, so
// a profile that never calls tools (probability 0) calls the forced one.
func TestToolChoiceForcedWithoutCoin(t *testing.T) {
	eachProtocol(t, namesProfile(0), func(t *testing.T, f *Fake, path string, stream bool) {
		rec, raw := instrumentedPost(t, f, path, "forced0", twoToolBodies(stream, namedChoice("beta"))[path])
		require.True(t, rec.OK(), "%s %s: %s", rec.Err, rec.Detail, raw)
		assert.Equal(t, []string{"beta", "beta", "beta"}, callNames(t, path, stream, raw), "%s", raw)
	})
}

// postRaw sends body to path on f and returns the status and body.
func postRaw(t *testing.T, f *Fake, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://fake"+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw
}

// errorOf reads an error body in the protocol's shape: OpenAI's
// {"error":{"message","type","param"}}, Anthropic's
// {"type":"error","error":{"type","message"}}.
func errorOf(t *testing.T, path string, raw []byte) (typ, param, msg string) {
	t.Helper()
	var e struct {
		Type  string
		Error struct {
			Message, Type string
			Param         *string
		}
	}
	require.NoError(t, json.Unmarshal(raw, &e), "%s", raw)
	if path == "/v1/messages" {
		assert.Equal(t, "error", e.Type, "Anthropic's error shape: %s", raw)
		assert.Nil(t, e.Error.Param, "Anthropic's error has no param: %s", raw)
	} else if e.Error.Param != nil {
		param = *e.Error.Param
	}
	return e.Error.Type, param, e.Error.Message
}

// TestToolChoiceUnknownTool: a tool_choice naming a tool the request does
// not list is a 400 invalid_request_error in the protocol's error shape
// whose message names the tool and the tools listed; so are a forced
// tool without a name and a demanded call ("required", {"type":"any"})
// on a request without tools. Nothing
// is served; a valid request after them is.
func TestToolChoiceUnknownTool(t *testing.T) {
	required := map[string]string{"/v1/chat/completions": `"required"`, "/v1/responses": `"required"`,
		"/v1/messages": `{"type":"any"}`}
	eachProtocol(t, namesProfile(1), func(t *testing.T, f *Fake, path string, stream bool) {
		status, raw := postRaw(t, f, path, twoToolBodies(stream, namedChoice("gamma"))[path])
		assert.Equal(t, http.StatusBadRequest, status, "%s", raw)
		typ, param, msg := errorOf(t, path, raw)
		assert.Equal(t, "invalid_request_error", typ)
		assert.Contains(t, msg, `"gamma"`, "the message names the forced tool")
		assert.Contains(t, msg, "alpha, beta", "and the tools the request lists")
		if path != "/v1/messages" {
			assert.Equal(t, "tool_choice", param)
		}

		status, raw = postRaw(t, f, path, twoToolBodies(stream, namedChoice(""))[path])
		assert.Equal(t, http.StatusBadRequest, status, "%s", raw)
		_, _, msg = errorOf(t, path, raw)
		assert.Contains(t, msg, "names none", "a forced tool without a name")

		noTools := strings.NewReplacer(`,"tools":[`, `,"unused":[`).Replace(twoToolBodies(stream, required)[path])
		status, raw = postRaw(t, f, path, noTools)
		assert.Equal(t, http.StatusBadRequest, status, "%s", raw)
		typ, _, msg = errorOf(t, path, raw)
		assert.Equal(t, "invalid_request_error", typ)
		assert.Contains(t, msg, "lists no tools")
		assert.Empty(t, f.Served(), "a refused request is not served")

		rec, raw := instrumentedPost(t, f, path, "after", twoToolBodies(stream, namedChoice("alpha"))[path])
		require.True(t, rec.OK(), "%s %s: %s", rec.Err, rec.Detail, raw)
		assert.Equal(t, []string{"alpha", "alpha", "alpha"}, callNames(t, path, stream, raw))
	})
}

// TestToolChoiceRequired: "required" ({"type":"any"} for Messages) makes
// a profile with tool-call probability 0 answer with tool calls (three,
// cycling through the tools), at the text answer's TTFT and ITLs; "none"
// still answers text, and so does no tool_choice.
func TestToolChoiceRequired(t *testing.T) {
	required := map[string]string{"/v1/chat/completions": `"required"`, "/v1/responses": `"required"`,
		"/v1/messages": `{"type":"any"}`}
	none := map[string]string{"/v1/chat/completions": `"none"`, "/v1/responses": `"none"`,
		"/v1/messages": `{"type":"none"}`}
	eachProtocol(t, namesProfile(0), func(t *testing.T, f *Fake, path string, stream bool) {
		rec, raw := instrumentedPost(t, f, path, "required", twoToolBodies(stream, required)[path])
		require.True(t, rec.OK(), "%s %s: %s", rec.Err, rec.Detail, raw)
		assert.Equal(t, 3, rec.ToolCalls, "%s", raw)
		assert.Equal(t, []string{"alpha", "beta", "alpha"}, callNames(t, path, stream, raw))
		sv := servedID(t, f, "required")
		assert.Equal(t, 9, sv.Tokens, "three calls of 3 argument tokens")
		assert.Equal(t, "tool_calls", sv.FinishReason)
		if stream {
			assert.Equal(t, 100*time.Millisecond, rec.TTFT)
			assert.Equal(t, 100*time.Millisecond+7*10*time.Millisecond, rec.Total,
				"2 tokens at TTFT, then an ITL for each of the other 7")
		}

		for id, choice := range map[string]map[string]string{"none": none, "auto": nil} {
			rec, raw = instrumentedPost(t, f, path, id, twoToolBodies(stream, choice)[path])
			require.True(t, rec.OK(), "%s %s: %s", rec.Err, rec.Detail, raw)
			assert.Zero(t, rec.ToolCalls, "%s: %s", id, raw)
			assert.NotEmpty(t, rec.Content, id)
			assert.Equal(t, 8, servedID(t, f, id).Tokens, id)
		}
	})
}

// TestToolChoiceNoneOverCoin: "none" turns a profile that always calls
// tools into text, in every protocol (TestToolChoiceNone covers the
// rest); "required" there changes nothing.
func TestToolChoiceNoneOverCoin(t *testing.T) {
	none := map[string]string{"/v1/chat/completions": `"none"`, "/v1/responses": `"none"`,
		"/v1/messages": `{"type":"none"}`}
	eachProtocol(t, namesProfile(1), func(t *testing.T, f *Fake, path string, stream bool) {
		rec, raw := instrumentedPost(t, f, path, "none", twoToolBodies(stream, none)[path])
		require.True(t, rec.OK(), "%s %s: %s", rec.Err, rec.Detail, raw)
		assert.Zero(t, rec.ToolCalls, "%s", raw)
		assert.Empty(t, callNames(t, path, stream, raw))
		assert.Equal(t, 8, servedID(t, f, "none").Tokens)
	})
}

// TestWithToolsKeepsDraws: forcing tool calls (withTools) on a profile
// whose coin draws calls half the time moves no other draw: TTFT, ITL,
// reasoning, faults and stalls are the plan's own; a plan the coin made
// calls keeps its calls; one it made text gets the calls the same key
// draws under probability 1. Over 400 keys both kinds occur.
func TestWithToolsKeepsDraws(t *testing.T) {
	p := Profile{Seed: 11, TTFT: LogNormal(200*time.Millisecond, 600*time.Millisecond), ITL: LogNormal(20*time.Millisecond, 50*time.Millisecond),
		ITLPerRequest: true, OutputTokens: Uniform(10, 50), ReasoningTokens: Uniform(0, 20),
		Faults: Faults{HTTP429: 0.05}, Stall: Stall{Probability: 0.1, Duration: Fixed(time.Second)},
		ToolCalls: ToolCalls{Probability: 0.5, ArgumentsTokens: Uniform(5, 40), Parallel: Uniform(1, 3)}}
	half := p.withDefaults()
	p.ToolCalls.Probability = 1
	always := p.withDefaults()
	var heads, tails int
	for i := range 400 {
		key := "keep-" + strconv.Itoa(i)
		pl, forced, all := newPlan(&half, key), newPlan(&half, key), newPlan(&always, key)
		forced.withTools(&half)
		require.True(t, forced.toolCall, key)
		if pl.toolCall {
			heads++
			assert.Equal(t, pl.toolArgs, forced.toolArgs, "%s: the coin's calls stay", key)
		} else {
			tails++
			assert.Equal(t, all.toolArgs, forced.toolArgs, "%s: the calls probability 1 draws", key)
			assert.Equal(t, pl.output, forced.textOutput, "%s: the text it would have been", key)
		}
		assert.Equal(t, pl.ttft, forced.ttft, key)
		assert.Equal(t, pl.itl, forced.itl, key)
		assert.Equal(t, pl.reasoning, forced.reasoning, key)
		assert.Equal(t, pl.fault, forced.fault, key)
		assert.Equal(t, pl.stall, forced.stall, key)
		assert.Equal(t, pl.stallAfter, forced.stallAfter, key)
	}
	assert.Greater(t, heads, 100)
	assert.Greater(t, tails, 100)
}

// TestOneToolCall: a request that allows one call at a time
// (parallel_tool_calls false for chat and Responses, Messages'
// tool_choice {"type":"auto","disable_parallel_tool_use":true}) gets only
// the first of the three calls the profile draws, in every protocol,
// streamed and whole; the Responses answer says parallel_tool_calls
// false.
func TestOneToolCall(t *testing.T) {
	eachProtocol(t, namesProfile(1), func(t *testing.T, f *Fake, path string, stream bool) {
		body := twoToolBodies(stream, map[string]string{"/v1/messages": `{"type":"auto","disable_parallel_tool_use":true}`})[path]
		if path != "/v1/messages" {
			body = strings.TrimSuffix(body, "}") + `,"parallel_tool_calls":false}`
		}
		rec, raw := instrumentedPost(t, f, path, "one", body)
		require.True(t, rec.OK(), "%s %s: %s", rec.Err, rec.Detail, raw)
		assert.Equal(t, 1, rec.ToolCalls)
		assert.Equal(t, []string{"alpha"}, callNames(t, path, stream, raw), "%s", raw)
		assert.Equal(t, 1, servedID(t, f, "one").ToolCalls)
		if path == "/v1/responses" && !stream {
			assert.Contains(t, string(raw), `"parallel_tool_calls":false`)
		}
	})
}
