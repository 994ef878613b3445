package fakeprovider

import (
	"bytes"
	"context"
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

	"github.com/tailguard/tailguard/latencytest"
)

// parallelProfile answers every request with two tool calls of 5
// argument tokens each after 2 reasoning tokens, 2 tokens an event: the
// events carry tokens at 100 ms (reasoning), 120, 140, 150 (call 0's
// last), 170, 190 and 200 ms (call 1's last). Text answers (tool_choice
// none) are 8 tokens.
func parallelProfile() Profile {
	return Profile{
		Seed: 3, TTFT: Fixed(100 * time.Millisecond), ITL: Fixed(10 * time.Millisecond),
		ReasoningTokens: Fixed(2), OutputTokens: Fixed(8), TokensPerChunk: Fixed(2),
		ToolCalls: ToolCalls{Probability: 1, ArgumentsTokens: Fixed(5), Parallel: Fixed(2)},
	}
}

// toolBodies are request bodies per protocol with one tool listed; extra
// is spliced into each (a tool_choice, say).
func toolBodies(stream bool, extra string) map[string]string {
	s := "false"
	if stream {
		s = "true"
	}
	return map[string]string{
		"/v1/chat/completions": `{"model":"fake-model","stream":` + s + `,"messages":[{"role":"user","content":"hi"}],` +
			`"tools":[{"type":"function","function":{"name":"search"}}]` + extra + `}`,
		"/v1/responses": `{"model":"fake-model","stream":` + s + `,"input":"hi","tools":[{"type":"function","name":"search"}]` + extra + `}`,
		"/v1/messages": `{"model":"fake-model","stream":` + s + `,"max_tokens":64,"messages":[{"role":"user","content":"hi"}],` +
			`"tools":[{"name":"search","input_schema":{"type":"object"}}]` + extra + `}`,
	}
}

// instrumentedPost sends body to path on f through latencytest.Instrument
// inside a latencytest.Func call: the record is latencytest's reading of
// the answer, and the raw body is returned beside it.
func instrumentedPost(t *testing.T, f *Fake, path, id, body string) (latencytest.Record, []byte) {
	t.Helper()
	c := &http.Client{Transport: latencytest.Instrument(f.Client().Transport)}
	var raw []byte
	rec := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://fake"+path, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-ID", id)
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		raw, err = io.ReadAll(resp.Body)
		return err
	}).Call(context.Background(), latencytest.Request{ID: id})
	return rec, raw
}

// servedID is the fake's record of the request with trace ID id.
func servedID(t *testing.T, f *Fake, id string) Served {
	t.Helper()
	for _, sv := range f.Served() {
		if sv.ID == id {
			return sv
		}
	}
	t.Fatalf("the fake served no %q", id)
	return Served{}
}

// dataLines is the JSON of each SSE data line but [DONE].
func dataLines(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range bytes.Lines(body) {
		line = bytes.TrimSpace(line)
		if !bytes.HasPrefix(line, []byte("data: ")) || string(line) == "data: [DONE]" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(line[len("data: "):], &m), "%s", line)
		out = append(out, m)
	}
	return out
}

// callsInStream collects the tool calls of a streamed answer in the
// protocol's shape: each call's ID (or index for chat) and its arguments
// joined from the deltas.
func callsInStream(t *testing.T, path string, events []map[string]any) (ids []string, args []string) {
	t.Helper()
	byKey := map[string]int{}
	add := func(key, id string) {
		if _, ok := byKey[key]; !ok {
			byKey[key] = len(ids)
			ids, args = append(ids, id), append(args, "")
		}
	}
	for _, ev := range events {
		switch path {
		case "/v1/chat/completions":
			choices, _ := ev["choices"].([]any)
			for _, c := range choices {
				delta, _ := c.(map[string]any)["delta"].(map[string]any)
				tcs, _ := delta["tool_calls"].([]any)
				for _, tc := range tcs {
					tc := tc.(map[string]any)
					key, _ := json.Marshal(tc["index"])
					if id, ok := tc["id"].(string); ok {
						add(string(key), id)
					}
					fn := tc["function"].(map[string]any)
					args[byKey[string(key)]] += fn["arguments"].(string)
				}
			}
		case "/v1/responses":
			switch ev["type"] {
			case "response.output_item.added":
				if it := ev["item"].(map[string]any); it["type"] == "function_call" {
					add(it["id"].(string), it["call_id"].(string))
					assert.Equal(t, "search", it["name"])
				}
			case "response.function_call_arguments.delta":
				args[byKey[ev["item_id"].(string)]] += ev["delta"].(string)
			}
		case "/v1/messages":
			switch ev["type"] {
			case "content_block_start":
				if b := ev["content_block"].(map[string]any); b["type"] == "tool_use" {
					key, _ := json.Marshal(ev["index"])
					add(string(key), b["id"].(string))
					assert.Equal(t, "search", b["name"])
				}
			case "content_block_delta":
				if d := ev["delta"].(map[string]any); d["type"] == "input_json_delta" {
					key, _ := json.Marshal(ev["index"])
					args[byKey[string(key)]] += d["partial_json"].(string)
				}
			}
		}
	}
	return ids, args
}

// callsInAnswer collects the tool calls of a whole answer.
func callsInAnswer(t *testing.T, path string, body []byte) (ids []string, args []string) {
	t.Helper()
	var a struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					ID       string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
		}
		Output []struct {
			Type, Name, Arguments string
			CallID                string `json:"call_id"`
		}
		Content []struct {
			Type, ID, Name string
			Input          json.RawMessage
		}
	}
	require.NoError(t, json.Unmarshal(body, &a), "%s", body)
	switch path {
	case "/v1/chat/completions":
		for _, tc := range a.Choices[0].Message.ToolCalls {
			assert.Equal(t, "search", tc.Function.Name)
			ids, args = append(ids, tc.ID), append(args, tc.Function.Arguments)
		}
	case "/v1/responses":
		for _, o := range a.Output {
			if o.Type == "function_call" {
				assert.Equal(t, "search", o.Name)
				ids, args = append(ids, o.CallID), append(args, o.Arguments)
			}
		}
	case "/v1/messages":
		for _, c := range a.Content {
			if c.Type == "tool_use" {
				assert.Equal(t, "search", c.Name)
				ids, args = append(ids, c.ID), append(args, string(c.Input))
			}
		}
	}
	return ids, args
}

// TestParallelToolCalls: with tool_calls.parallel 2 each protocol answers
// with two tool calls in its own shape (chat: two indexes; Responses: two
// function_call items; Messages: two tool_use blocks), streamed and not,
// each with its own ID and whole JSON arguments, no event spanning two
// calls; latencytest reads both back, the first call's name and the end
// of its arguments at the planned instants.
func TestParallelToolCalls(t *testing.T) {
	for _, stream := range []bool{true, false} {
		for path, body := range toolBodies(stream, "") {
			name := strings.TrimPrefix(path, "/v1/")
			if !stream {
				name += "/whole"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					f := New(parallelProfile())
					t.Cleanup(f.Close)
					rec, raw := instrumentedPost(t, f, path, "par", body)
					require.True(t, rec.OK(), "%s %s: %s", rec.Err, rec.Detail, raw)
					assert.Equal(t, 2, rec.ToolCalls, "latencytest counts both calls")
					sv := servedID(t, f, "par")
					assert.Equal(t, 2, sv.ToolCalls)
					assert.Equal(t, 12, sv.Tokens)
					assert.Equal(t, "tool_calls", sv.FinishReason)
					assert.Equal(t, 200*time.Millisecond, rec.Total)
					var ids, args []string
					if stream {
						ids, args = callsInStream(t, path, dataLines(t, raw))
						assert.Equal(t, 120*time.Millisecond, rec.FirstToolCall, "the first call's name comes with its first arguments")
						assert.Equal(t, 150*time.Millisecond, rec.ToolArgsDone, "call 0's arguments end before call 1 begins")
					} else {
						ids, args = callsInAnswer(t, path, raw)
						assert.Equal(t, rec.Total, rec.FirstToolCall)
					}
					require.Len(t, ids, 2, "%s", raw)
					assert.NotEqual(t, ids[0], ids[1], "each call has its own ID")
					for i, a := range args {
						var v map[string]any
						assert.NoError(t, json.Unmarshal([]byte(a), &v), "call %d's arguments %q", i, a)
					}
				})
			})
		}
	}
}

// TestParallelToolCallsCut: max_tokens cuts the calls as it cuts text:
// the call it lands in is cut short, later calls do not begin, and the
// answer finishes with "length".
func TestParallelToolCallsCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(parallelProfile())
		t.Cleanup(f.Close)
		for _, tc := range []struct {
			maxTokens, calls int
		}{{2 + 3, 1}, {2 + 5, 1}, {2 + 6, 2}, {2 + 9, 2}} {
			id := "cut" + strconv.Itoa(tc.maxTokens)
			body := strings.Replace(toolBodies(false, "")["/v1/messages"], `"max_tokens":64`, `"max_tokens":`+strconv.Itoa(tc.maxTokens), 1)
			rec, raw := instrumentedPost(t, f, "/v1/messages", id, body)
			sv := servedID(t, f, id)
			assert.Equal(t, tc.calls, sv.ToolCalls, "max_tokens %d", tc.maxTokens)
			assert.Equal(t, tc.calls, rec.ToolCalls, "max_tokens %d: latencytest", tc.maxTokens)
			assert.Equal(t, "length", sv.FinishReason, "max_tokens %d", tc.maxTokens)
			ids, _ := callsInAnswer(t, "/v1/messages", raw)
			assert.Len(t, ids, tc.calls, "max_tokens %d: %s", tc.maxTokens, raw)
		}
	})
}

// TestToolChoiceNone: a request that forbids tools (tool_choice "none"
// for chat and Responses, {"type":"none"} for Messages) gets the text
// answer the profile would give without tool calls, in every protocol,
// streamed and not; a tool_choice that allows them changes nothing.
func TestToolChoiceNone(t *testing.T) {
	none := map[string]string{"/v1/chat/completions": `,"tool_choice":"none"`, "/v1/responses": `,"tool_choice":"none"`,
		"/v1/messages": `,"tool_choice":{"type":"none"}`}
	auto := map[string]string{"/v1/chat/completions": `,"tool_choice":"auto"`, "/v1/responses": `,"tool_choice":"required"`,
		"/v1/messages": `,"tool_choice":{"type":"auto"}`}
	for _, stream := range []bool{true, false} {
		for path := range none {
			name := strings.TrimPrefix(path, "/v1/")
			if !stream {
				name += "/whole"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					f := New(parallelProfile())
					t.Cleanup(f.Close)
					rec, raw := instrumentedPost(t, f, path, "none", toolBodies(stream, none[path])[path])
					require.True(t, rec.OK(), "%s %s: %s", rec.Err, rec.Detail, raw)
					assert.Zero(t, rec.ToolCalls, "%s", raw)
					assert.NotEmpty(t, rec.Content)
					sv := servedID(t, f, "none")
					assert.Equal(t, 0, sv.ToolCalls)
					assert.Equal(t, 10, sv.Tokens, "2 reasoning and the 8 text tokens of output_tokens")
					assert.Equal(t, "stop", sv.FinishReason)

					rec, raw = instrumentedPost(t, f, path, "auto", toolBodies(stream, auto[path])[path])
					assert.Equal(t, 2, rec.ToolCalls, "%s", raw)
					assert.Equal(t, 2, servedID(t, f, "auto").ToolCalls)
				})
			})
		}
	}
}
