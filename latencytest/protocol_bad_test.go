package latencytest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/protocol"
)

// rev is a Responses event: its type and the rest of its JSON object.
func rev(typ, rest string) string {
	if rest != "" {
		rest = "," + rest
	}
	return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"" + rest + "}\n\n"
}

// mev is a Messages event.
func mev(typ, rest string) string { return rev(typ, rest) }

var (
	rCreated = rev("response.created", `"response":{"id":"resp_1","status":"in_progress","model":"gpt-x"}`)
	rText    = func(s string) string {
		q, _ := json.Marshal(s)
		return rev("response.output_text.delta", `"output_index":0,"delta":`+string(q))
	}
	rCompleted = rev("response.completed", `"response":{"status":"completed","usage":{"input_tokens":5,"output_tokens":2}}`)
	rCall      = rev("response.output_item.added", `"output_index":1,"item":{"id":"fc_1","type":"function_call","name":"f","arguments":""}`)
	rArgs      = func(s string) string {
		q, _ := json.Marshal(s)
		return rev("response.function_call_arguments.delta", `"item_id":"fc_1","output_index":1,"delta":`+string(q))
	}
	mStart = mev("message_start", `"message":{"model":"claude-x","usage":{"input_tokens":5,"output_tokens":1}}`)
	mBlock = func(i int, kind string) string {
		extra := `"text":""`
		switch kind {
		case "tool_use":
			extra = `"id":"toolu_1","name":"f","input":{}`
		case "thinking":
			extra = `"thinking":""`
		}
		return mev("content_block_start", fmt.Sprintf(`"index":%d,"content_block":{"type":%q,%s}`, i, kind, extra))
	}
	mText = func(i int, s string) string {
		q, _ := json.Marshal(s)
		return mev("content_block_delta", fmt.Sprintf(`"index":%d,"delta":{"type":"text_delta","text":%s}`, i, q))
	}
	mThink = func(i int, s string) string {
		q, _ := json.Marshal(s)
		return mev("content_block_delta", fmt.Sprintf(`"index":%d,"delta":{"type":"thinking_delta","thinking":%s}`, i, q))
	}
	mJSON = func(i int, s string) string {
		q, _ := json.Marshal(s)
		return mev("content_block_delta", fmt.Sprintf(`"index":%d,"delta":{"type":"input_json_delta","partial_json":%s}`, i, q))
	}
	mBlockStop = func(i int) string { return mev("content_block_stop", fmt.Sprintf(`"index":%d`, i)) }
	mDelta     = func(reason string) string {
		return mev("message_delta", `"delta":{"stop_reason":"`+reason+`","stop_sequence":null},"usage":{"output_tokens":9}`)
	}
	mStop = mev("message_stop", "")
)

// rawRead is "your own client": it posts to path through hc, reads the
// body to its end and fails on an error status.
func rawRead(ctx context.Context, hc *http.Client, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://fake"+path, strings.NewReader("{}"))
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode >= 400 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// Malformed and failing streams of each protocol: a classified record,
// the same through Instrument as from the built-in provider, never a
// success without a token.
func TestProtocolBadInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		api     *protocol.Protocol
		status  int
		body    string
		cut     bool // the connection drops after body
		class   string
		detail  string // substring of Detail
		note    string // substring of a note
		content string
		tokens  int
		finish  string
	}{
		// Responses
		{name: "responses: unknown event type skipped with a note", api: protocol.Responses,
			body: rCreated + rev("response.future_thing", `"x":1`) + rText("a") + rCompleted,
			note: `unknown event type "response.future_thing" skipped`, content: "a", tokens: 1, finish: "completed"},
		{name: "responses: usage that is not an object skipped with a note", api: protocol.Responses,
			body: rCreated + rText("a") + rev("response.completed", `"response":{"status":"completed","usage":"x"}`),
			note: `usage ignored: not an object ("x")`, content: "a", tokens: 1, finish: "completed"},
		{name: "responses: arguments that are not JSON", api: protocol.Responses,
			body:  rCreated + rCall + rArgs(`{"city":`) + rCompleted,
			class: ClassBadStream, detail: "function call 1: its arguments are not JSON", tokens: 2},
		{name: "responses: arguments.done that are not JSON", api: protocol.Responses,
			body: rCreated + rCall + rArgs(`{"city":"P"}`) +
				rev("response.function_call_arguments.done", `"item_id":"fc_1","output_index":1,"arguments":"{\"city\""`) + rCompleted,
			class: ClassBadStream, detail: "not JSON", tokens: 2},
		{name: "responses: arguments for an item never added", api: protocol.Responses,
			body:  rCreated + rText("a") + rArgs(`{}`) + rCompleted,
			class: ClassBadStream, detail: "never added", content: "a", tokens: 1},
		{name: "responses: a tool call alone is an answer", api: protocol.Responses,
			body: rCreated + rCall + rArgs(`{"city":"P"}`) + rCompleted, tokens: 2, finish: "completed"},
		{name: "responses: error event after text", api: protocol.Responses,
			body:  rCreated + rText("a") + rev("error", `"code":"server_error","message":"The server had an error"`) + rCompleted,
			class: ClassBadStream, detail: "error event: server_error: The server had an error", content: "a", tokens: 1},
		{name: "responses: response.failed after text", api: protocol.Responses,
			body:  rCreated + rText("a") + rev("response.failed", `"response":{"status":"failed","error":{"code":"server_error","message":"boom"}}`),
			class: ClassBadStream, detail: "response.failed: server_error: boom", content: "a", tokens: 1, finish: "failed"},
		{name: "responses: incomplete at the cap is an answer", api: protocol.Responses,
			body:    rCreated + rText("a") + rev("response.incomplete", `"response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}`),
			content: "a", tokens: 1, finish: "max_output_tokens"},
		{name: "responses: reasoning alone to the cap is no answer", api: protocol.Responses,
			body: rCreated + rev("response.reasoning_summary_text.delta", `"output_index":0,"delta":"hmm"`) +
				rev("response.incomplete", `"response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}`),
			class: ClassEmptyAnswer, tokens: 1, finish: "max_output_tokens"},
		{name: "responses: completed without a token", api: protocol.Responses,
			body: rCreated + rCompleted, class: ClassEmptyStream},
		{name: "responses: refusal", api: protocol.Responses,
			body:  rCreated + rev("response.refusal.delta", `"output_index":0,"delta":"I can't"`) + rCompleted,
			class: ClassRefusal, detail: "I can't", tokens: 1},
		{name: "responses: close mid-event", api: protocol.Responses, cut: true,
			body:  rCreated + rText("a") + "event: response.output_text.delta\ndata: {\"type\":\"response.out",
			class: ClassTruncated, content: "a", tokens: 1},
		{name: "responses: clean end without response.completed", api: protocol.Responses,
			body:  rCreated + rText("a"),
			class: ClassTruncated, detail: "without response.completed", content: "a", tokens: 1},
		{name: "responses: malformed JSON", api: protocol.Responses,
			body:  rCreated + rText("a") + "data: {\"type\":\n\n" + rCompleted,
			class: ClassBadStream, detail: "malformed event", content: "a", tokens: 1},

		// Messages
		{name: "messages: unknown event type skipped with a note", api: protocol.Messages,
			body: mStart + mev("future_event", `"x":1`) + mBlock(0, "text") + mText(0, "a") + mBlockStop(0) + mDelta("end_turn") + mStop,
			note: `unknown event type "future_event" skipped`, content: "a", tokens: 1, finish: "end_turn"},
		{name: "messages: usage that is not an object skipped with a note", api: protocol.Messages,
			body: mev("message_start", `"message":{"model":"claude-x","usage":[1]}`) + mBlock(0, "text") + mText(0, "a") + mBlockStop(0) + mDelta("end_turn") + mStop,
			note: "usage ignored: not an object ([1])", content: "a", tokens: 1, finish: "end_turn"},
		{name: "messages: content_block_delta before its content_block_start", api: protocol.Messages,
			body:  mStart + mText(0, "a") + mBlock(0, "text") + mText(0, "b") + mStop,
			class: ClassBadStream, detail: "content_block_delta for block 0 before its content_block_start"},
		{name: "messages: tool input that is not JSON", api: protocol.Messages,
			body:  mStart + mBlock(0, "tool_use") + mJSON(0, `{"city": `) + mBlockStop(0) + mDelta("tool_use") + mStop,
			class: ClassBadStream, detail: "tool_use block 0: its input is not JSON", tokens: 2, finish: ""},
		{name: "messages: a tool call alone is an answer", api: protocol.Messages,
			body:   mStart + mBlock(0, "tool_use") + mJSON(0, `{"city": "P"}`) + mBlockStop(0) + mDelta("tool_use") + mStop,
			tokens: 2, finish: "tool_use"},
		{name: "messages: message_stop without message_start", api: protocol.Messages,
			body:  mBlock(0, "text") + mText(0, "a") + mBlockStop(0) + mStop,
			class: ClassBadStream, detail: "message_stop without message_start", note: "before message_start", content: "a", tokens: 1},
		{name: "messages: overloaded_error after text", api: protocol.Messages,
			body: mStart + mBlock(0, "text") + mText(0, "a") +
				"event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n" + mStop,
			class: ClassBadStream, detail: "error event: overloaded_error: Overloaded", content: "a", tokens: 1},
		{name: "messages: 529 up front", api: protocol.Messages, status: 529,
			body:  `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			class: HTTPClass(529), detail: "overloaded_error: Overloaded"},
		{name: "messages: 429 rate_limit_error", api: protocol.Messages, status: 429,
			body:  `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			class: HTTPClass(429), detail: "rate_limit_error"},
		{name: "messages: api_error mid-stream", api: protocol.Messages,
			body:  mStart + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}\n\n",
			class: ClassBadStream, detail: "api_error: Internal server error"},
		{name: "messages: close mid-event", api: protocol.Messages, cut: true,
			body:  mStart + mBlock(0, "text") + mText(0, "a") + "event: content_block_delta\ndata: {\"type\":\"content_bl",
			class: ClassTruncated, content: "a", tokens: 1},
		{name: "messages: clean end without message_stop", api: protocol.Messages,
			body:  mStart + mBlock(0, "text") + mText(0, "a"),
			class: ClassTruncated, detail: "without message_stop", content: "a", tokens: 1},
		{name: "messages: no token", api: protocol.Messages,
			body: mStart + mev("ping", "") + mDelta("end_turn") + mStop, class: ClassEmptyStream, finish: "end_turn"},
		{name: "messages: thinking alone to the cap is no answer", api: protocol.Messages,
			body:  mStart + mBlock(0, "thinking") + mThink(0, "hmm") + mBlockStop(0) + mDelta("max_tokens") + mStop,
			class: ClassEmptyAnswer, tokens: 1, finish: "max_tokens"},
		{name: "messages: input_json_delta on a text block", api: protocol.Messages,
			body:  mStart + mBlock(0, "text") + mJSON(0, `{}`) + mStop,
			class: ClassBadStream, detail: "input_json_delta for block 0, a text block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := tc.status
			if status == 0 {
				status = 200
			}
			ct := "text/event-stream"
			if status != 200 {
				ct = "application/json"
			}
			built := protoProvider(tc.api, answerAs(status, ct, tc.body, tc.cut)).Call(context.Background(),
				Request{ID: "b-1", Messages: []Message{{Role: "user", Content: "hi"}}})
			hc := &http.Client{Transport: Instrument(answerAs(status, ct, tc.body, tc.cut).Transport)}
			inst := Func(func(ctx context.Context, _ Request) error { return rawRead(ctx, hc, "/v1"+tc.api.Path("")) }).
				Call(context.Background(), Request{ID: "b-1"})
			for _, r := range []struct {
				what string
				rec  Record
			}{{"built-in", built}, {"through Instrument", inst}} {
				rec := r.rec
				detail := rec.Detail // Func's is fn's error; the attempt's names the server's
				for _, a := range rec.Attempts {
					detail += "\n" + a.Detail
				}
				ok := rec.Err == tc.class && strings.Contains(detail, tc.detail) && rec.Content == tc.content &&
					rec.TokenEvents == tc.tokens && (tc.note == "" || strings.Contains(strings.Join(rec.Notes, "\n"), tc.note))
				if tc.finish != "" && rec.FinishReason != tc.finish {
					ok = false
				}
				if rec.OK() && (rec.TokenEvents == 0 || rec.TTFT < 0 || rec.FirstAnswer < 0) {
					t.Errorf("%s: a success without a token or an answer: %+v", r.what, rec)
				}
				if !ok {
					t.Errorf("%s: got class %q detail %q content %q tokens %d finish %q notes %q\nwant class %q detail ~%q content %q tokens %d finish %q note ~%q",
						r.what, rec.Err, rec.Detail, rec.Content, rec.TokenEvents, rec.FinishReason, rec.Notes,
						tc.class, tc.detail, tc.content, tc.tokens, tc.finish, tc.note)
				}
			}
		})
	}
}

// Mangled fixtures (bytes dropped, flipped, duplicated, cut short; seeded)
// never panic, never give a success without a token, and always give a
// known class.
func TestProtocolMangledStreams(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 2))
	n := 300
	if testing.Short() {
		n = 60
	}
	for _, f := range protoFixtures {
		whole, _ := f.read(t)
		for range n {
			b := []byte(whole)
			for range 1 + rng.IntN(4) {
				if len(b) == 0 {
					break
				}
				i := rng.IntN(len(b))
				switch rng.IntN(4) {
				case 0:
					b = append(b[:i], b[i+1:]...)
				case 1:
					b[i] = byte(rng.IntN(128))
				case 2:
					j := min(len(b), i+rng.IntN(200))
					b = append(b[:j:j], append(append([]byte{}, b[i:j]...), b[j:]...)...)
				case 3:
					b = b[:i]
				}
			}
			rec := protoProvider(f.api, answerAs(200, "text/event-stream", string(b), false)).Call(context.Background(),
				Request{ID: "m-1", Messages: []Message{{Role: "user", Content: "hi"}}})
			if rec.Err != "" && CheckClass(rec.Err) != nil {
				t.Fatalf("%s: unknown class %q", f.file, rec.Err)
			}
			if rec.OK() && (rec.TokenEvents == 0 || rec.FirstAnswer < 0) {
				t.Fatalf("%s: a success without a token or an answer from\n%s\n%+v", f.file, b, rec)
			}
		}
	}
}
