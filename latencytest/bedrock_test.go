package latencytest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/tailguard/tailguard/internal/h1"
)

// frame is one event-stream message of a fixture: an event (or, with
// exception set, an exception) of type typ with a JSON payload.
type frame struct {
	typ       string
	exception bool
	payload   string
}

// encodeFrames writes frames as Bedrock does, with aws-sdk-go-v2's
// encoder; the byte offsets where each frame ends come with them.
func encodeFrames(t testing.TB, frames []frame) (body []byte, ends []int) {
	t.Helper()
	enc := eventstream.NewEncoder()
	var buf bytes.Buffer
	for _, f := range frames {
		var h eventstream.Headers
		if f.exception {
			h.Set(":message-type", eventstream.StringValue("exception"))
			h.Set(":exception-type", eventstream.StringValue(f.typ))
		} else {
			h.Set(":message-type", eventstream.StringValue("event"))
			h.Set(":event-type", eventstream.StringValue(f.typ))
		}
		h.Set(":content-type", eventstream.StringValue("application/json"))
		if err := enc.Encode(&buf, eventstream.Message{Headers: h, Payload: []byte(f.payload)}); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, buf.Len())
	}
	return buf.Bytes(), ends
}

// The fixtures' frames, in the shapes AWS documents for ConverseStream
// (ConverseStreamOutput; the "p" field is Bedrock's padding).
var (
	brStart = frame{"messageStart", false, `{"p":"abcdefgh","role":"assistant"}`}
	brText  = func(i int, s string) frame { return brDelta(i, `{"text":`+strconv.Quote(s)+`}`) }
	brDelta = func(i int, d string) frame {
		return frame{"contentBlockDelta", false, fmt.Sprintf(`{"contentBlockIndex":%d,"delta":%s,"p":"ab"}`, i, d)}
	}
	brStop     = func(i int) frame { return frame{"contentBlockStop", false, fmt.Sprintf(`{"contentBlockIndex":%d}`, i)} }
	brMsgStop  = func(r string) frame { return frame{"messageStop", false, `{"stopReason":"` + r + `"}`} }
	brMetadata = frame{"metadata", false, `{"usage":{"inputTokens":10,"outputTokens":3,"totalTokens":19,"cacheReadInputTokens":4,"cacheWriteInputTokens":2},"metrics":{"latencyMs":250},"p":"abc"}`}
	brTool     = func(i int, id, name string) frame {
		return frame{"contentBlockStart", false, fmt.Sprintf(`{"contentBlockIndex":%d,"start":{"toolUse":{"toolUseId":%q,"name":%q}}}`, i, id, name)}
	}
	brInput = func(i int, s string) frame { return brDelta(i, `{"toolUse":{"input":`+strconv.Quote(s)+`}}`) }
	brExc   = func(typ, payload string) frame { return frame{typ, true, payload} }
)

// bedrockWant is what a fixture's record holds when frame k arrives at
// k*10 ms (frame 0 at 0 ms).
type bedrockWant struct {
	class, content, finish                 string
	events, toolCalls, prompt, completion  int
	cached                                 int
	server                                 time.Duration
	ttft, firstAnswer, firstTool, argsDone int // frames; -1: NotObserved (firstTool, argsDone: 0 when none)
	last                                   int
}

type bedrockFixture struct {
	name   string
	frames []frame
	want   bedrockWant
}

// textFrames is the plain answer: two text deltas, end_turn, metadata.
var textFrames = []frame{brStart, brText(0, "Hello"), brText(0, " world"), brStop(0), brMsgStop("end_turn"), brMetadata}

func bedrockFixtures() []bedrockFixture {
	plain := bedrockWant{content: "Hello world", finish: "end_turn", events: 2, prompt: 16, completion: 3, cached: 4,
		server: 250 * time.Millisecond, ttft: 1, firstAnswer: 1, firstTool: -1, argsDone: -1, last: 2}
	stopped := func(reason, class string) bedrockFixture {
		w := plain
		w.finish, w.class = reason, class
		return bedrockFixture{"stop " + reason, []frame{brStart, brText(0, "Hello"), brText(0, " world"), brStop(0), brMsgStop(reason), brMetadata}, w}
	}
	exception := func(typ, class string) bedrockFixture {
		return bedrockFixture{typ, []frame{brStart, brText(0, "Hel"), brExc(typ, `{"message":"it failed"}`)},
			bedrockWant{class: class, content: "Hel", events: 1, ttft: 1, firstAnswer: 1, firstTool: -1, argsDone: -1, last: 1}}
	}
	return []bedrockFixture{
		{"text", textFrames, plain},
		// Reasoning first: tokens (TTFT at frame 1), never the answer; the
		// signature is no token.
		{"reasoning", []frame{brStart, brDelta(0, `{"reasoningContent":{"text":"Let me think"}}`),
			brDelta(0, `{"reasoningContent":{"text":" about it."}}`), brDelta(0, `{"reasoningContent":{"signature":"c2ln"}}`),
			brStop(0), brText(1, "Hello"), brText(1, " world"), brStop(1), brMsgStop("end_turn"), brMetadata},
			bedrockWant{content: "Hello world", finish: "end_turn", events: 4, prompt: 16, completion: 3, cached: 4,
				server: 250 * time.Millisecond, ttft: 1, firstAnswer: 5, firstTool: -1, argsDone: -1, last: 6}},
		// Reasoning delivered encrypted is a token too.
		{"redacted reasoning", []frame{brStart, brDelta(0, `{"reasoningContent":{"redactedContent":"ZW5jcnlwdGVk"}}`), brStop(0),
			brText(1, "Hi"), brStop(1), brMsgStop("end_turn"), brMetadata},
			bedrockWant{content: "Hi", finish: "end_turn", events: 2, prompt: 16, completion: 3, cached: 4,
				server: 250 * time.Millisecond, ttft: 1, firstAnswer: 3, firstTool: -1, argsDone: -1, last: 3}},
		// Text, then two tool calls in parallel: the first call named at
		// frame 3, its input done at frame 5.
		{"parallel toolUse", []frame{brStart, brText(0, "Let me check."), brStop(0),
			brTool(1, "tooluse_1", "get_weather"), brInput(1, `{"city":`), brInput(1, `"Paris"}`), brStop(1),
			brTool(2, "tooluse_2", "get_time"), brInput(2, `{}`), brStop(2), brMsgStop("tool_use"), brMetadata},
			bedrockWant{content: "Let me check.", finish: "tool_use", events: 6, toolCalls: 2, prompt: 16, completion: 3, cached: 4,
				server: 250 * time.Millisecond, ttft: 1, firstAnswer: 1, firstTool: 3, argsDone: 5, last: 8}},
		{"toolUse input not JSON", []frame{brStart, brTool(0, "t", "f"), brInput(0, `{"city":`), brStop(0), brMsgStop("tool_use"), brMetadata},
			bedrockWant{class: ClassBadStream, events: 2, toolCalls: 1, ttft: 1, firstAnswer: 1, firstTool: 1, argsDone: 2, last: 2}},
		{"toolUse delta before its start", []frame{brStart, brInput(0, `{}`), brMsgStop("tool_use"), brMetadata},
			bedrockWant{class: ClassBadStream, ttft: -1, firstAnswer: -1, firstTool: -1, argsDone: -1, last: -1}},
		stopped("max_tokens", ""),
		stopped("stop_sequence", ""),
		stopped("guardrail_intervened", ClassContentFilter),
		stopped("content_filtered", ClassContentFilter),
		exception("throttlingException", "http_429"),
		exception("modelStreamErrorException", "http_424"),
		exception("serviceUnavailableException", "http_503"),
		exception("validationException", "http_400"),
		exception("internalServerException", "http_500"),
		exception("modelTimeoutException", "http_408"),
		exception("someNewException", ClassBadStream),
		// messageStop but the metadata never came: the answer is whole,
		// its usage not reported.
		{"no metadata", textFrames[:5], bedrockWant{content: "Hello world", finish: "end_turn", events: 2,
			ttft: 1, firstAnswer: 1, firstTool: -1, argsDone: -1, last: 2}},
		{"no messageStop", textFrames[:4], bedrockWant{class: ClassTruncated, content: "Hello world", events: 2,
			ttft: 1, firstAnswer: 1, firstTool: -1, argsDone: -1, last: 2}},
	}
}

// checkBedrock compares a record with its want; timed says whether the
// clock readings are exact (frame k at k*10 ms).
func checkBedrock(t *testing.T, what string, rec Record, w bedrockWant, timed bool) {
	t.Helper()
	type row struct {
		field     string
		got, want any
	}
	rows := []row{
		{"Err", rec.Err, w.class}, {"Content", rec.Content, w.content}, {"FinishReason", rec.FinishReason, w.finish},
		{"TokenEvents", rec.TokenEvents, w.events}, {"ToolCalls", rec.ToolCalls, w.toolCalls},
		{"PromptTokens", rec.PromptTokens, w.prompt}, {"CompletionTokens", rec.CompletionTokens, w.completion},
		{"CachedTokens", rec.CachedTokens, w.cached}, {"ServerLatency", rec.ServerLatency, w.server},
		{"UsageReported", rec.UsageReported, w.completion > 0},
	}
	if timed {
		firstTool, argsDone := at(w.firstTool), at(w.argsDone)
		if w.firstTool < 0 {
			firstTool, argsDone = 0, 0
		}
		rows = append(rows, row{"TTFT", rec.TTFT, at(w.ttft)}, row{"FirstAnswer", rec.FirstAnswer, at(w.firstAnswer)},
			row{"FirstToolCall", rec.FirstToolCall, firstTool}, row{"ToolArgsDone", rec.ToolArgsDone, argsDone},
			row{"LastToken", rec.LastToken, at(w.last)})
	}
	for _, r := range rows {
		if !reflect.DeepEqual(r.got, r.want) {
			t.Errorf("%s: %s = %v, want %v (detail %q, notes %q)", what, r.field, r.got, r.want, rec.Detail, rec.Notes)
		}
	}
}

// framesAt is an in-memory server that writes frame k of body (cut at
// ends) at k*10 ms, with Bedrock's Content-Type.
func framesAt(body []byte, ends []int) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		pr, pw := io.Pipe()
		gone := make(chan struct{})
		start := time.Now()
		go func() {
			defer pw.Close()
			from := 0
			for k, end := range ends {
				select {
				case <-time.After(time.Until(start.Add(at(k)))):
				case <-gone:
					return
				}
				if _, err := pw.Write(body[from:end]); err != nil {
					return
				}
				from = end
			}
		}()
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/vnd.amazon.eventstream"}},
			Body: &notifyBody{ReadCloser: pr, gone: gone}, Request: r}, nil
	})}
}

const bedrockModel = "anthropic.claude-3-7-sonnet-20250219-v1:0"

// Every fixture, its frames 10 ms apart on synctest's clock, gives its
// record exactly.
func TestBedrockFixturesTimed(t *testing.T) {
	for _, fx := range bedrockFixtures() {
		t.Run(fx.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				body, ends := encodeFrames(t, fx.frames)
				p := Bedrock("http://fake", bedrockModel, WithHTTPClient(framesAt(body, ends)))
				rec := p.Call(context.Background(), Request{ID: "b-1", Messages: []Message{{Role: "user", Content: "hi"}}})
				checkBedrock(t, fx.name, rec, fx.want, true)
			})
		})
	}
}

// bedrockHead is the head of a ConverseStream answer.
const bedrockHead = "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.amazon.eventstream\r\nX-Amzn-Requestid: r-1\r\n"

// bedrockBothPaths calls respond's answer through the own HTTP/1.1 client
// and through net/http (WithNetHTTP) with the Bedrock provider, and
// returns the two records and the requests the server saw.
func bedrockBothPaths(t *testing.T, respond func(w io.Writer, req *http.Request, n int) bool, opts ...Option) (fast, slow Record, reqs []*http.Request) {
	t.Helper()
	for _, f := range []bool{true, false} {
		var seen []*http.Request
		srv := &pipeServer{respond: func(w io.Writer, req *http.Request, n int) bool {
			seen = append(seen, req)
			return respond(w, req, n)
		}}
		o := append([]Option{withDial(srv.dial)}, opts...)
		if !f {
			o = append(o, WithNetHTTP())
		}
		p := Bedrock("http://127.0.0.1:9", bedrockModel, o...)
		if f && h1.Supported && p.h1req == nil {
			t.Fatal("the own client does not speak to a loopback http:// endpoint")
		}
		rec := p.Call(context.Background(), Request{ID: "b-1", Messages: []Message{{Role: "user", Content: "hi"}}})
		p.CloseIdleConnections()
		srv.close()
		if f {
			fast = rec
		} else {
			slow = rec
		}
		reqs = append(reqs, seen...)
	}
	return fast, slow, reqs
}

// Every fixture through both HTTP paths, chunked a frame per chunk and
// read a byte at a time: the same record from each, and the fixture's.
func TestBedrockFixturesBothPaths(t *testing.T) {
	for _, fx := range bedrockFixtures() {
		body, ends := encodeFrames(t, fx.frames)
		for _, bytewise := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bytewise=%v", fx.name, bytewise), func(t *testing.T) {
				fast, slow, reqs := bedrockBothPaths(t, func(w io.Writer, _ *http.Request, _ int) bool {
					if bytewise {
						return writeBytes(w, bedrockHead+"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+string(body), true)
					}
					return writeBytes(w, bedrockHead+"Transfer-Encoding: chunked\r\n\r\n"+chunked(string(body), ends[:len(ends)-1]...), false)
				})
				sameToolRecords(t, fx.name, fast, slow)
				checkBedrock(t, fx.name, fast, fx.want, false)
				for _, r := range reqs {
					if r.URL.EscapedPath() != "/model/anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse-stream" ||
						r.Header.Get("Accept") != "application/vnd.amazon.eventstream" {
						t.Errorf("request %s %s, Accept %q", r.Method, r.URL.EscapedPath(), r.Header.Get("Accept"))
					}
				}
			})
		}
	}
}

// The plain stream cut at every byte (the body ending cleanly there):
// before messageStop's last byte it is truncated, a frame cut short
// noted; from messageStop on a success, with usage once the metadata
// frame is whole. Both paths agree at every cut. Under -short every 7th
// byte and every frame end.
func TestBedrockEveryCut(t *testing.T) {
	body, ends := encodeFrames(t, textFrames)
	stopEnd, metaEnd := ends[4], ends[5]
	step := 1
	if testing.Short() {
		step = 7
	}
	cuts := append([]int(nil), ends...)
	for i := 1; i < len(body); i += step {
		cuts = append(cuts, i)
	}
	for _, i := range cuts {
		fast, slow, _ := bedrockBothPaths(t, func(w io.Writer, _ *http.Request, _ int) bool {
			return writeBytes(w, bedrockHead+"Content-Length: "+strconv.Itoa(i)+"\r\n\r\n"+string(body[:i]), false)
		})
		what := fmt.Sprintf("cut at byte %d of %d", i, len(body))
		sameToolRecords(t, what, fast, slow)
		switch {
		case i < stopEnd && fast.Err != ClassTruncated:
			t.Errorf("%s: class %q (%s), want truncated", what, fast.Err, fast.Detail)
		case i >= stopEnd && fast.Err != "":
			t.Errorf("%s: class %q (%s), want a success", what, fast.Err, fast.Detail)
		case i >= stopEnd && fast.UsageReported != (i == metaEnd):
			t.Errorf("%s: usage reported %v", what, fast.UsageReported)
		}
		inFrame := !containsInt(ends, i)
		if noted := strings.Contains(strings.Join(fast.Notes, "|"), "inside an event-stream frame"); i < stopEnd && noted != inFrame {
			t.Errorf("%s: notes %q", what, fast.Notes)
		}
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// A frame whose checksum does not match (its payload, its prelude) fails
// the stream as bad_stream on both paths, naming the checksum.
func TestBedrockBadCRC(t *testing.T) {
	body, ends := encodeFrames(t, textFrames)
	for _, tc := range []struct {
		name string
		at   int
	}{
		{"payload byte", ends[1] + 30},
		{"prelude CRC", ends[1] + 9},
		{"message CRC", ends[2] - 1},
		{"length field", ends[1] + 2},
	} {
		bad := bytes.Clone(body)
		bad[tc.at] ^= 0x55
		fast, slow, _ := bedrockBothPaths(t, func(w io.Writer, _ *http.Request, _ int) bool {
			return writeBytes(w, bedrockHead+"Content-Length: "+strconv.Itoa(len(bad))+"\r\n\r\n"+string(bad), false)
		})
		sameToolRecords(t, tc.name, fast, slow)
		if fast.Err != ClassBadStream || !strings.Contains(fast.Detail, "frame") || fast.Content != "Hello" {
			t.Errorf("%s: class %q, detail %q, content %q", tc.name, fast.Err, fast.Detail, fast.Content)
		}
	}
}

// An error answer (Bedrock's {"message"} with x-amzn-ErrorType) fails
// with its status's class and message; a 200 that is no event stream is
// a bad stream naming what it is.
func TestBedrockErrorAnswers(t *testing.T) {
	for _, tc := range []struct{ name, head, body, class, detail string }{
		{"throttled", "HTTP/1.1 429 Too Many Requests\r\nX-Amzn-Errortype: ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/\r\nContent-Type: application/json\r\n",
			`{"message":"Too many requests, please wait before trying again."}`, "http_429", "Too many requests, please wait before trying again."},
		{"validation", "HTTP/1.1 400 Bad Request\r\nX-Amzn-Errortype: ValidationException\r\nContent-Type: application/json\r\n",
			`{"message":"The provided model identifier is invalid."}`, "http_400", "The provided model identifier is invalid."},
		{"typed body", "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n",
			`{"__type":"com.amazon.coral.service#AccessDeniedException","Message":"not authorized"}`, "http_403", "AccessDeniedException: not authorized"},
		{"json 200", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", `{"message":"hello"}`, ClassBadStream,
			"the answer is application/json, not application/vnd.amazon.eventstream: hello"},
	} {
		fast, slow, _ := bedrockBothPaths(t, func(w io.Writer, _ *http.Request, _ int) bool {
			return writeBytes(w, tc.head+"Content-Length: "+strconv.Itoa(len(tc.body))+"\r\n\r\n"+tc.body, false)
		})
		sameToolRecords(t, tc.name, fast, slow)
		if fast.Err != tc.class || fast.Detail != tc.detail {
			t.Errorf("%s: class %q detail %q, want %q %q", tc.name, fast.Err, fast.Detail, tc.class, tc.detail)
		}
	}
}
