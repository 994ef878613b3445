package latencytest

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/protocol"
)

// protoBothPaths calls api's provider on the own HTTP/1.1 client and on
// net/http, each answering with head+body once, and checks the two
// records agree (timings excepted); it returns the own client's.
func protoBothPaths(t *testing.T, what string, api *protocol.Protocol, head, body string, opts ...Option) Record {
	t.Helper()
	var recs [2]Record
	for i, fast := range []bool{true, false} {
		srv := &pipeServer{respond: func(w io.Writer, _ *http.Request, _ int) bool {
			return writeBytes(w, head+"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body, false)
		}}
		o := NewLLM("http://127.0.0.1:9/v1", api, append([]Option{withDial(srv.dial), WithAPIKey(key), WithModel("m-1")}, opts...)...)
		if !fast {
			o = NewLLM("http://127.0.0.1:9/v1", api, append([]Option{withDial(srv.dial), WithAPIKey(key), WithModel("m-1"), WithoutFastPath()}, opts...)...)
		}
		if fast != (o.h1req != nil) {
			t.Fatalf("%s: fast path %v, want %v", what, o.h1req != nil, fast)
		}
		recs[i] = o.Call(context.Background(), Request{ID: "d-1", Messages: []Message{{Role: "user", Content: "hi"}}})
		o.CloseIdleConnections()
		srv.close()
	}
	sameToolRecords(t, what, recs[0], recs[1])
	return recs[0]
}

// decodeWith feeds a stream of protocol api to a stream timer, event k
// (from 0) read at k+1 ms, and returns its record, judged.
func decodeWith(api *protocol.Protocol, body string) Record {
	rec := Record{TTFB: NotObserved, TTFT: NotObserved, FirstAnswer: NotObserved, LastToken: NotObserved}
	st := newStreamTimer(&rec, api, func(s string) string { return s }, nil)
	for k, event := range strings.SplitAfter(body, "\n\n") {
		_ = st.feed([]byte(event), time.Duration(k+1)*time.Millisecond)
	}
	st.end()
	st.finish()
	rec.Err, rec.Detail = st.verdict()
	return rec
}

// The decode rate's stop rule is each protocol's: with usage one above
// the tokens streamed, the model's own stop (chat's stop, Messages'
// end_turn and stop_sequence, Responses' completed) counts that token as
// the end-of-sequence token, so the rate counts the tokens streamed; at
// the cap (length, max_tokens, max_output_tokens) usage counts as it is.
// On both HTTP paths.
func TestEndOfSequenceEachProtocol(t *testing.T) {
	chat := streamFixtures(t)["ollama_eos_counted"]
	var messages, responses string
	for _, f := range protoFixtures {
		switch f.file {
		case "messages_ollama_eos.sse":
			messages, _ = f.read(t)
		case "responses_ollama_eos.sse":
			responses, _ = f.read(t)
		}
	}
	capResponses := func(s string) string {
		s = strings.ReplaceAll(s, "response.completed", "response.incomplete")
		return strings.Replace(s, `"status":"completed"`, `"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}`, 1)
	}
	for _, tc := range []struct {
		name   string
		api    *protocol.Protocol
		body   string
		finish string
		eos    bool
	}{
		{"chat stop", protocol.Chat, chat, "stop", true},
		{"chat length", protocol.Chat, strings.ReplaceAll(chat, `"finish_reason":"stop"`, `"finish_reason":"length"`), "length", false},
		{"messages end_turn", protocol.Messages, messages, "end_turn", true},
		{"messages stop_sequence", protocol.Messages, strings.ReplaceAll(messages, "end_turn", "stop_sequence"), "stop_sequence", true},
		{"messages max_tokens", protocol.Messages, strings.ReplaceAll(messages, "end_turn", "max_tokens"), "max_tokens", false},
		{"responses completed", protocol.Responses, responses, "completed", true},
		{"responses max_output_tokens", protocol.Responses, capResponses(responses), "max_output_tokens", false},
	} {
		rec := protoBothPaths(t, tc.name, tc.api, sseHead, tc.body)
		// 2 tokens streamed, usage 3: the end-of-sequence token, or one
		// more answer token at the cap.
		want := 3
		if tc.eos {
			want = 2
		}
		span := (rec.LastToken - rec.TTFT).Seconds()
		if !rec.OK() || rec.FinishReason != tc.finish || rec.TokenEvents != 2 || rec.CompletionTokens != 3 ||
			rec.decodeTokens() != want || math.Abs(rec.DecodeRate()-float64(want-1)/span) > 1e-9*rec.DecodeRate() {
			t.Errorf("%s: finish %q, %d events, usage %d, %d decode tokens (want %d), rate %v over %v (detail %q)",
				tc.name, rec.FinishReason, rec.TokenEvents, rec.CompletionTokens, rec.decodeTokens(), want, rec.DecodeRate(), span, rec.Detail)
		}
	}
}

// Non-streamed answers on both HTTP paths: a hosted tool's call is its
// own count in a Messages message and a Responses object, never a tool
// call; a whole Gemini message flagged as a thought
// ("<thought>…</thought>answer", as the OpenAI-compatible endpoint sends
// it) answers only what follows its thought.
func TestWholeHostedToolsAndThoughts(t *testing.T) {
	const jsonHead = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	messages := `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[` +
		`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"rivers"}},` +
		`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","title":"River","url":"https://example.com/r"}]},` +
		`{"type":"mcp_tool_use","id":"mcptoolu_1","name":"echo","server_name":"example","input":{"x":1}},` +
		`{"type":"mcp_tool_result","tool_use_id":"mcptoolu_1","is_error":false,"content":[{"type":"text","text":"1"}]},` +
		`{"type":"text","text":"A river was cleaned up."}],"stop_reason":"end_turn","usage":{"input_tokens":90,"output_tokens":30}}`
	responses := `{"id":"resp_1","object":"response","status":"completed","model":"gpt-4.1-2025-04-14","output":[` +
		`{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"rivers"}},` +
		`{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"A river was cleaned up.","annotations":[]}]}],` +
		`"usage":{"input_tokens":90,"output_tokens":30}}`
	gemini := `{"id":"g-1","object":"chat.completion","model":"gemini-2.5-flash","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",` +
		`"content":"<thought>**Greeting**\n\nSay hi back.</thought>A river was cleaned up.","extra_content":{"google":{"thought":true}}}}],` +
		`"usage":{"prompt_tokens":9,"completion_tokens":30,"total_tokens":39}}`
	for _, tc := range []struct {
		name   string
		api    *protocol.Protocol
		body   string
		hosted int
	}{
		{"messages", protocol.Messages, messages, 2},
		{"responses", protocol.Responses, responses, 1},
		{"chat gemini thought", protocol.Chat, gemini, 0},
	} {
		rec := protoBothPaths(t, tc.name, tc.api, jsonHead, tc.body, WithoutStreaming())
		if !rec.OK() || rec.Content != "A river was cleaned up." || rec.ToolCalls != 0 || rec.HostedTools != tc.hosted {
			t.Errorf("%s: record %+v: want the text alone as the answer, no tool call, %d hosted", tc.name, rec, tc.hosted)
		}
	}
}

// Each kind of output item and content block, streamed: the agent's
// calls (Responses' function, custom, computer, local shell, apply-patch
// calls, a shell call in its local environment, a tool search it runs;
// Messages' tool_use) are tool calls; the provider's (web and file
// search, code interpreter, image generation, MCP, a shell in its
// container, a tool search on its servers; server_tool_use, mcp_tool_use)
// are hosted tools, a token each but no answer; their input deltas are
// tokens and their results none. Nothing is noted as unknown.
func TestHostedToolKinds(t *testing.T) {
	respItem := func(item string) string {
		return `data: {"type":"response.created","response":{"model":"m","status":"in_progress"}}` + "\n\n" +
			`data: {"type":"response.output_item.added","output_index":0,"item":` + item + `}` + "\n\n"
	}
	respEnd := `data: {"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_1"}}` + "\n\n" +
		`data: {"type":"response.output_text.delta","output_index":1,"delta":"ok"}` + "\n\n" +
		`data: {"type":"response.completed","response":{"model":"m","status":"completed"}}` + "\n\n"
	msgBlock := func(block string, deltas ...string) string {
		s := `data: {"type":"message_start","message":{"model":"m","usage":{"input_tokens":1}}}` + "\n\n" +
			`data: {"type":"content_block_start","index":0,"content_block":` + block + `}` + "\n\n"
		for _, d := range deltas {
			s += `data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":` + strconv.Quote(d) + `}}` + "\n\n"
		}
		return s + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
			`data: {"type":"content_block_start","index":1,"content_block":{"type":"mcp_tool_result","tool_use_id":"x","content":[]}}` + "\n\n" +
			`data: {"type":"content_block_stop","index":1}` + "\n\n" +
			`data: {"type":"content_block_start","index":2,"content_block":{"type":"text","text":"ok"}}` + "\n\n" +
			`data: {"type":"content_block_stop","index":2}` + "\n\n" +
			`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}` + "\n\n" +
			`data: {"type":"message_stop"}` + "\n\n"
	}
	for _, tc := range []struct {
		name                  string
		api                   *protocol.Protocol
		body                  string
		calls, hosted, tokens int
		answerFirst, args     bool // the first token is the answer; the first call's arguments were timed
	}{
		{"responses function_call", protocol.Responses, respItem(`{"type":"function_call","id":"fc_1","name":"f"}`) +
			`data: {"type":"response.function_call_arguments.delta","output_index":0,"delta":"{}"}` + "\n\n" + respEnd, 1, 0, 3, true, true},
		{"responses computer_call", protocol.Responses, respItem(`{"type":"computer_call","id":"cu_1","action":{"type":"click","x":1,"y":2}}`) + respEnd, 1, 0, 2, true, false},
		{"responses local_shell_call", protocol.Responses, respItem(`{"type":"local_shell_call","id":"lsh_1"}`) + respEnd, 1, 0, 2, true, false},
		{"responses apply_patch_call", protocol.Responses, respItem(`{"type":"apply_patch_call","id":"ap_1"}`) + respEnd, 1, 0, 2, true, false},
		{"responses local shell_call", protocol.Responses, respItem(`{"type":"shell_call","id":"sh_1","environment":{"type":"local"}}`) +
			`data: {"type":"response.shell_call_command.added","output_index":0,"command_index":0,"command":""}` + "\n\n" +
			`data: {"type":"response.shell_call_command.delta","output_index":0,"command_index":0,"delta":"ls"}` + "\n\n" +
			`data: {"type":"response.shell_call_command.done","output_index":0,"command_index":0,"command":"ls"}` + "\n\n" + respEnd, 1, 0, 3, true, true},
		{"responses client tool_search_call", protocol.Responses, respItem(`{"type":"tool_search_call","id":"ts_1","execution":"client"}`) + respEnd, 1, 0, 2, true, false},
		{"responses web_search_call", protocol.Responses, respItem(`{"type":"web_search_call","id":"ws_1","status":"in_progress"}`) + respEnd, 0, 1, 2, false, false},
		{"responses file_search_call", protocol.Responses, respItem(`{"type":"file_search_call","id":"fs_1"}`) +
			`data: {"type":"response.file_search_call.searching","output_index":0,"item_id":"fs_1"}` + "\n\n" + respEnd, 0, 1, 2, false, false},
		{"responses code_interpreter_call", protocol.Responses, respItem(`{"type":"code_interpreter_call","id":"ci_1"}`) +
			`data: {"type":"response.code_interpreter_call_code.delta","output_index":0,"item_id":"ci_1","delta":"print(1)"}` + "\n\n" +
			`data: {"type":"response.code_interpreter_call.interpreting","output_index":0,"item_id":"ci_1"}` + "\n\n" + respEnd, 0, 1, 3, false, false},
		{"responses image_generation_call", protocol.Responses, respItem(`{"type":"image_generation_call","id":"ig_1"}`) +
			`data: {"type":"response.image_generation_call.partial_image","output_index":0,"item_id":"ig_1","partial_image_b64":"aGk="}` + "\n\n" + respEnd, 0, 1, 2, false, false},
		{"responses mcp_call", protocol.Responses, respItem(`{"type":"mcp_call","id":"mcp_1","name":"echo","server_label":"x"}`) +
			`data: {"type":"response.mcp_call_arguments.delta","output_index":0,"item_id":"mcp_1","delta":"{}"}` + "\n\n" +
			`data: {"type":"response.mcp_call.completed","output_index":0,"item_id":"mcp_1"}` + "\n\n" + respEnd, 0, 1, 3, false, false},
		{"responses container shell_call", protocol.Responses, respItem(`{"type":"shell_call","id":"sh_1","environment":{"type":"container_reference","container_id":"c"}}`) +
			`data: {"type":"response.shell_call_command.delta","output_index":0,"command_index":0,"delta":"ls"}` + "\n\n" + respEnd, 0, 1, 3, false, false},
		{"responses server tool_search_call", protocol.Responses, respItem(`{"type":"tool_search_call","id":"ts_1","execution":"server"}`) + respEnd, 0, 1, 2, false, false},
		{"messages tool_use", protocol.Messages, msgBlock(`{"type":"tool_use","id":"t","name":"f","input":{}}`, `{"a":`, `1}`), 1, 0, 4, true, true},
		{"messages server_tool_use", protocol.Messages, msgBlock(`{"type":"server_tool_use","id":"s","name":"web_search","input":{}}`, `{"query":"x"}`), 0, 1, 3, false, false},
		{"messages mcp_tool_use", protocol.Messages, msgBlock(`{"type":"mcp_tool_use","id":"m","name":"echo","server_name":"x","input":{}}`, `{}`), 0, 1, 3, false, false},
	} {
		rec := decodeWith(tc.api, tc.body)
		if !rec.OK() || rec.ToolCalls != tc.calls || rec.HostedTools != tc.hosted || rec.TokenEvents != tc.tokens ||
			rec.Content != "ok" || len(rec.Notes) != 0 || (rec.FirstAnswer == rec.TTFT) != tc.answerFirst ||
			(rec.ToolArgsDone != 0) != tc.args {
			t.Errorf("%s: record %+v: want %d tool calls, %d hosted, %d token events, the first token the answer %v, no notes",
				tc.name, rec, tc.calls, tc.hosted, tc.tokens, tc.answerFirst)
		}
	}
}

// responsesDocumented are the Responses stream's event types: every type
// of openai-python's ResponseStreamEvent union, vLLM's reasoning_part
// events and the older reasoning events.
var responsesDocumented = []string{
	"error", "response.audio.delta", "response.audio.done", "response.audio.transcript.delta", "response.audio.transcript.done",
	"response.code_interpreter_call.completed", "response.code_interpreter_call.in_progress", "response.code_interpreter_call.interpreting",
	"response.code_interpreter_call_code.delta", "response.code_interpreter_call_code.done", "response.completed",
	"response.content_part.added", "response.content_part.done", "response.created", "response.custom_tool_call_input.delta",
	"response.custom_tool_call_input.done", "response.failed", "response.file_search_call.completed", "response.file_search_call.in_progress",
	"response.file_search_call.searching", "response.function_call_arguments.delta", "response.function_call_arguments.done",
	"response.image_generation_call.completed", "response.image_generation_call.generating", "response.image_generation_call.in_progress",
	"response.image_generation_call.partial_image", "response.in_progress", "response.incomplete", "response.mcp_call.completed",
	"response.mcp_call.failed", "response.mcp_call.in_progress", "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done",
	"response.mcp_list_tools.completed", "response.mcp_list_tools.failed", "response.mcp_list_tools.in_progress",
	"response.output_item.added", "response.output_item.done", "response.output_text.annotation.added", "response.output_text.delta",
	"response.output_text.done", "response.queued", "response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
	"response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "response.reasoning_text.delta",
	"response.reasoning_text.done", "response.refusal.delta", "response.refusal.done", "response.shell_call_command.added",
	"response.shell_call_command.delta", "response.shell_call_command.done", "response.shell_call_output_content.delta",
	"response.shell_call_output_content.done", "response.web_search_call.completed", "response.web_search_call.in_progress",
	"response.web_search_call.searching",
	"response.reasoning_part.added", "response.reasoning_part.done", // vLLM's
	"response.reasoning.delta", "response.reasoning.done", "response.reasoning_summary.delta", "response.reasoning_summary.done",
}

// Every documented Responses event type is known: none is noted as
// unknown, whatever it carries; an undocumented one is.
func TestResponsesEventsKnown(t *testing.T) {
	for _, typ := range responsesDocumented {
		body := `data: {"type":"response.created","response":{"model":"m","status":"in_progress"}}` + "\n\n" +
			fmt.Sprintf(`data: {"type":%q,"output_index":0,"item_id":"x","delta":"d","item":{"type":"message"},"response":{"status":"in_progress"}}`, typ) + "\n\n"
		rec := decodeWith(protocol.Responses, body)
		for _, n := range rec.Notes {
			if strings.Contains(n, "unknown event") {
				t.Errorf("%s: noted %q", typ, n)
			}
		}
	}
	rec := decodeWith(protocol.Responses, `data: {"type":"response.teleport.delta","delta":"x"}`+"\n\n")
	if len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0], `unknown event type "response.teleport.delta"`) {
		t.Errorf("an undocumented event: notes %q", rec.Notes)
	}
}

// Instrument around a client of its own reads a hosted web search as the
// built-in provider does: its own count, the answer after it, timed from
// the call's start.
func TestInstrumentHostedTool(t *testing.T) {
	var f protoFixture
	for _, pf := range protoFixtures {
		if pf.file == "messages_web_search.sse" {
			f = pf
		}
	}
	_, blocks := f.read(t)
	synctest.Test(t, func(t *testing.T) {
		hc := &http.Client{Transport: Instrument(replay(blocks).Transport)}
		rec := Func(func(ctx context.Context, req Request) error {
			hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://fake/v1/messages", strings.NewReader(`{}`))
			if err != nil {
				return err
			}
			resp, err := hc.Do(hreq)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			_, err = io.ReadAll(resp.Body)
			return err
		}).Call(context.Background(), Request{ID: "i-1"})
		if !rec.OK() || rec.HostedTools != 1 || rec.ToolCalls != 0 || rec.TTFT != blockAt(f.tokens[0]) || rec.FirstAnswer != blockAt(f.answer) {
			t.Errorf("record %+v: want 1 hosted tool, no tool call, TTFT %v and first answer %v", rec, blockAt(f.tokens[0]), blockAt(f.answer))
		}
	})
}
