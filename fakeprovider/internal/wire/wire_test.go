package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestParse: each protocol's parser reads the prompt, the caps and the
// tool choice in its own form, and rejects bad bodies with the status
// and parameter the real API names.
func TestParse(t *testing.T) {
	type want struct {
		status         int    // 0: valid
		param, message string // of the error (message: a substring)
		check          func(t *testing.T, r Request)
	}
	cases := []struct {
		name string
		p    Protocol
		body string
		want want
	}{
		{"chat: the smaller cap, tools, usage", Chat,
			`{"model":"m","messages":[{"role":"user","content":"abcdefgh"}],"stream":true,"stream_options":{"include_usage":true},
			"max_tokens":30,"max_completion_tokens":20,"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}}],
			"tool_choice":"required","parallel_tool_calls":false}`,
			want{check: func(t *testing.T, r Request) {
				if r.Prompt != "abcdefgh" || r.PromptTokens != 2 || r.MaxTokens != 20 || !r.Stream || !r.IncludeUsage {
					t.Errorf("got %+v", r)
				}
				if !r.MustCall || !r.OneCall || r.NoTools || r.ToolName(0) != "f" || r.ToolName(3) != "g" {
					t.Errorf("tools: got %+v", r)
				}
			}}},
		{"chat: forced function", Chat,
			`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}}],
			"tool_choice":{"type":"function","function":{"name":"g"}}}`,
			want{check: func(t *testing.T, r Request) {
				if r.ToolName(0) != "g" || r.ToolName(1) != "g" || !r.MustCall {
					t.Errorf("got %+v", r)
				}
			}}},
		{"chat: no tools, default name", Chat, `{"model":"m","messages":[{"role":"user","content":"x"}]}`,
			want{check: func(t *testing.T, r Request) {
				if r.ToolName(0) != defaultToolName || r.MustCall || r.NoTools || r.MaxTokens != 0 {
					t.Errorf("got %+v", r)
				}
			}}},
		{"chat: wrong model", Chat, `{"model":"x","messages":[{"role":"user","content":"x"}]}`,
			want{status: 404, message: "The model `x` does not exist"}},
		{"chat: n", Chat, `{"model":"m","messages":[{"role":"user","content":"x"}],"n":2}`, want{status: 400, param: "n"}},
		{"chat: cap too big", Chat, `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":101}`,
			want{status: 400, param: "max_tokens", message: "outside [1, 100]"}},
		{"responses: instructions then input", Responses,
			`{"model":"m","instructions":"be brief","input":[{"role":"user","content":[{"type":"input_text","text":" hi"}]}],"max_output_tokens":7,
			"tools":[{"type":"function","name":"f"},{"type":"web_search"}],"tool_choice":"none"}`,
			want{check: func(t *testing.T, r Request) {
				if r.Prompt != "be brief hi" || r.MaxTokens != 7 || r.Stream || !r.IncludeUsage || !r.NoTools || r.ToolName(1) != "f" {
					t.Errorf("got %+v", r)
				}
			}}},
		{"responses: a forced tool it does not list", Responses,
			`{"model":"m","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`,
			want{status: 400, param: "tool_choice", message: `tool "g" is not among the request's tools (f)`}},
		{"responses: no input", Responses, `{"model":"m"}`, want{status: 400, param: "input"}},
		{"messages: system, one call", Messages,
			`{"model":"m","max_tokens":9,"system":"sys ","messages":[{"role":"user","content":"q"}],"stream":true,
			"tools":[{"name":"f"}],"tool_choice":{"type":"any","disable_parallel_tool_use":true}}`,
			want{check: func(t *testing.T, r Request) {
				if r.Prompt != "sys q" || r.MaxTokens != 9 || !r.Stream || !r.MustCall || !r.OneCall || r.ToolName(0) != "f" {
					t.Errorf("got %+v", r)
				}
			}}},
		{"messages: no max_tokens", Messages, `{"model":"m","messages":[{"role":"user","content":"q"}]}`,
			want{status: 400, param: "max_tokens", message: "max_tokens: Field required"}},
		{"messages: wrong model", Messages, `{"model":"x","max_tokens":9,"messages":[{"role":"user","content":"q"}]}`,
			want{status: 404, message: "model: x"}},
		{"messages: a named tool without tools", Messages,
			`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"q"}],"tool_choice":{"type":"tool","name":"f"}}`,
			want{status: 400, param: "tool_choice.name", message: `tool_choice.name: it demands tool "f" but the request lists no tools.`}},
		{"messages: a bad role", Messages, `{"model":"m","max_tokens":9,"messages":[{"role":"system","content":"q"}]}`,
			want{status: 400, message: "messages.0.role"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := c.p.Parse([]byte(c.body), "m", 100)
			if c.want.status == 0 {
				if err != nil {
					t.Fatalf("error %d %q", err.Status, err.Message)
				}
				c.want.check(t, r)
				return
			}
			if err == nil {
				t.Fatalf("no error, want %d", c.want.status)
			}
			if err.Status != c.want.status || err.Param != c.want.param || !strings.Contains(err.Message, c.want.message) {
				t.Errorf("error %d param %q %q; want %d param %q containing %q", err.Status, err.Param, err.Message,
					c.want.status, c.want.param, c.want.message)
			}
		})
	}
}

// events is the data of each SSE event in b, and whether the stream ends
// with data: [DONE].
func events(t *testing.T, b []byte) (data []map[string]any, done bool) {
	t.Helper()
	if !bytes.HasSuffix(b, []byte("\n\n")) {
		t.Fatalf("the stream does not end an event: %q", b)
	}
	for ev := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n\n"), "\n\n") {
		for line := range strings.SplitSeq(ev, "\n") {
			d, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			if d == "[DONE]" {
				done = true
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("event data is not JSON: %v: %s", err, d)
			}
			data = append(data, m)
		}
	}
	return data, done
}

// streamText is the text a protocol's stream's deltas carry, in order.
func streamText(proto string, data []map[string]any) string {
	var sb strings.Builder
	str := func(v any) {
		if s, ok := v.(string); ok {
			sb.WriteString(s)
		}
	}
	for _, d := range data {
		switch proto {
		case "chat":
			choices, _ := d["choices"].([]any)
			if len(choices) == 0 {
				continue
			}
			delta, _ := choices[0].(map[string]any)["delta"].(map[string]any)
			str(delta["reasoning_content"])
			str(delta["content"])
			if calls, _ := delta["tool_calls"].([]any); len(calls) > 0 {
				fn, _ := calls[0].(map[string]any)["function"].(map[string]any)
				str(fn["arguments"])
			}
		case "responses":
			if typ, _ := d["type"].(string); strings.HasSuffix(typ, ".delta") {
				str(d["delta"])
			}
		case "messages":
			if delta, ok := d["delta"].(map[string]any); ok && d["type"] == "content_block_delta" {
				str(delta["thinking"])
				str(delta["text"])
				str(delta["partial_json"])
			}
		}
	}
	return sb.String()
}

// TestEncoders: each protocol's stream is well-formed SSE whose events
// carry the answer's text (every token's words, the tool calls'
// arguments), ends as the protocol ends, and its whole answer holds the
// same text; Malformed is not JSON.
func TestEncoders(t *testing.T) {
	for _, p := range []struct {
		name string
		p    Protocol
		done bool // ends with data: [DONE]
	}{{"chat", Chat, true}, {"responses", Responses, false}, {"messages", Messages, false}} {
		for _, tools := range []bool{false, true} {
			st := &State{Index: 7, Created: time.Unix(1_700_000_000, 0), Model: "m", PromptTokens: 10, CachedTokens: 4,
				Reasoning: 3, IncludeUsage: true, ToolName: func(call int) string { return []string{"f", "g"}[call%2] }}
			content := 5
			if tools {
				st.ToolCall, st.ToolArgs, content = true, []int{3, 2}, 5
			}
			e := p.p.Encoder(st)
			b := e.Start(nil)
			for from := 0; from < st.Reasoning+content; {
				kind, k := KindReasoning, min(2, st.Reasoning-from)
				if from >= st.Reasoning {
					kind, k = KindText, 2
					if tools {
						_, within, n := ToolAt(st.ToolArgs, from-st.Reasoning)
						kind, k = KindTool, min(2, n-within)
					}
					k = min(k, st.Reasoning+content-from)
				}
				b = e.Tokens(b, from, k, kind)
				from += k
			}
			b = e.End(b, st.Reasoning, content, "stop")
			data, done := events(t, b)
			if done != p.done {
				t.Errorf("%s tools %v: [DONE] %v, want %v", p.name, tools, done, p.done)
			}
			whole, err := json.Marshal(e.Answer(st.Reasoning, content, "stop"))
			if err != nil {
				t.Fatalf("%s: answer: %v", p.name, err)
			}
			// What both must carry: the reasoning, then the text or each
			// call's arguments.
			texts := []string{string(AppendText(nil, 0, st.Reasoning, true))}
			if tools {
				texts = append(texts, ToolTexts(st.ToolArgs, content)...)
			} else {
				texts = append(texts, string(AppendText(nil, st.Reasoning, content, false)))
			}
			if got, want := streamText(p.name, data), strings.Join(texts, ""); got != want {
				t.Errorf("%s tools %v: the deltas read %q, want %q", p.name, tools, got, want)
			}
			for _, text := range texts {
				q, _ := json.Marshal(text)
				quoted := string(q[1 : len(q)-1]) // as inside a JSON string
				if !strings.Contains(string(whole), quoted) && !strings.Contains(string(whole), text) {
					t.Errorf("%s tools %v: the answer lacks %q: %s", p.name, tools, text, whole)
				}
			}
			if tools && !strings.Contains(string(whole), "fake_7") {
				t.Errorf("%s: the tool calls' ids do not name the request: %s", p.name, whole)
			}
			if json.Valid(bytes.TrimPrefix(bytes.SplitN(e.Malformed(), []byte("data: "), 2)[1], nil)) {
				t.Errorf("%s: Malformed is valid JSON: %q", p.name, e.Malformed())
			}
			if data, _ := events(t, e.ErrorEvent(nil, "boom")); len(data) == 0 {
				t.Errorf("%s: ErrorEvent wrote no event", p.name)
			}
		}
	}
}

// TestToolTexts: the calls' arguments are JSON objects when whole, the
// last cut short by the cap; ToolAt places tokens within them.
func TestToolTexts(t *testing.T) {
	args := []int{1, 4}
	got := ToolTexts(args, 5)
	if len(got) != 2 || got[0] != "{}" || got[1] != `{"query":" tail is"}` {
		t.Errorf("ToolTexts whole: %q", got)
	}
	for _, a := range got {
		if !json.Valid([]byte(a)) {
			t.Errorf("%q is not JSON", a)
		}
	}
	if got := ToolTexts(args, 3); len(got) != 2 || got[1] != `{"query":" tail` {
		t.Errorf("ToolTexts cut: %q", got)
	}
	for i, want := range [][3]int{{0, 0, 1}, {1, 0, 4}, {1, 1, 4}, {1, 2, 4}, {1, 3, 4}} {
		if c, w, n := ToolAt(args, i); [3]int{c, w, n} != want {
			t.Errorf("ToolAt(%d) = %d, %d, %d; want %v", i, c, w, n, want)
		}
	}
}

// TestMessagesError: Anthropic's error body, its type from the status.
func TestMessagesError(t *testing.T) {
	for _, c := range []struct {
		status   int
		msg, out string
	}{
		{529, "busy", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`},
		{429, "slow down", `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"},"request_id":"req_1"}`},
		{502, "x", `{"type":"error","error":{"type":"api_error","message":"x"},"request_id":"req_1"}`},
		{400, "x", `{"type":"error","error":{"type":"invalid_request_error","message":"x"},"request_id":"req_1"}`},
	} {
		if got := string(MessagesError(c.status, c.msg, "req_1")); got != c.out {
			t.Errorf("%d: %s, want %s", c.status, got, c.out)
		}
	}
}
