package latencytest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/internal/chathook"

	"github.com/tailguard/tailguard/protocol"
)

// streamFixtures reads testdata/stream/*.sse: chat-completions streams in
// the shapes other providers and features send them (tool calls, Azure's
// content filter, Groq's x_groq usage, Gemini's usage on every chunk,
// Ollama's counts), each opening with SSE comments that cite its source.
func streamFixtures(t testing.TB) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "stream", "*.sse"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no stream fixtures: %v", err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".sse")] = string(b)
	}
	return out
}

// sseBlocks cuts a fixture into its blocks, each ending with its blank
// line: the comment block first, then one block per event.
func sseBlocks(s string) []string {
	var out []string
	for s != "" {
		i := strings.Index(s, "\n\n")
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i+2])
		s = s[i+2:]
	}
	return out
}

// fixtureWant is what a fixture's record must hold when block k (the
// comment block is 0, the first event 1) arrives at k*10ms.
type fixtureWant struct {
	class, content, finish, model string
	events, toolCalls             int
	prompt, completion, reasoning int
	usage                         bool
	ttft, firstAnswer, firstTool  int // blocks; -1: NotObserved (firstTool: 0)
	argsDone, last                int
	decodeRate                    float64 // tokens/s; NaN: none
}

const blockGap = 10 * time.Millisecond

var fixtureWants = map[string]fixtureWant{
	// One tool call and no text is a success: the call's first delta (its
	// id and name) is the first token and the first answer, each argument
	// delta a token; usage 16 tokens over 7 events in 60 ms.
	"openai_tool_call": {finish: "tool_calls", model: "gpt-4o-2024-08-06", events: 7, toolCalls: 1,
		prompt: 65, completion: 16, usage: true, ttft: 1, firstAnswer: 1, firstTool: 1, argsDone: 7, last: 7,
		decodeRate: 15 / 0.060},
	// Two calls, indexes 0 then 1: the first call's arguments end at
	// block 8, before the second call begins.
	"openai_parallel_tool_calls": {finish: "tool_calls", model: "gpt-4o-2024-08-06", events: 14, toolCalls: 2,
		prompt: 80, completion: 40, usage: true, ttft: 2, firstAnswer: 2, firstTool: 2, argsDone: 8, last: 15,
		decodeRate: 39 / 0.130},
	// Text first: the first answer is the text, the tool call comes later.
	"openai_text_then_tool_call": {content: "Let me check the weather.", finish: "tool_calls", model: "gpt-4o-2024-08-06",
		events: 6, toolCalls: 1, prompt: 70, completion: 20, usage: true, ttft: 2, firstAnswer: 2, firstTool: 5, argsDone: 7, last: 7,
		decodeRate: 19 / 0.050},
	// Azure: every field present (null when unset); the prompt-filter
	// chunk names no model and carries no token.
	"azure_tool_call": {finish: "tool_calls", model: "gpt-5-mini-2025-08-07", events: 6, toolCalls: 1,
		prompt: 40, completion: 150, reasoning: 128, usage: true, ttft: 2, firstAnswer: 2, firstTool: 2, argsDone: 7, last: 7,
		decodeRate: 149 / 0.050},
	// The content filter cut the answer: its own class, not a success.
	"azure_content_filter": {class: ClassContentFilter, content: "Here is how", finish: "content_filter", model: "gpt-5-mini-2025-08-07",
		events: 3, ttft: 3, firstAnswer: 3, firstTool: -1, argsDone: -1, last: 5, decodeRate: 0},
	// Groq's usage is in x_groq.usage: 4 tokens over 30 ms.
	"groq_x_groq_usage": {content: "Fast inference matters.", finish: "stop", model: "llama-3.1-8b-instant", events: 4,
		prompt: 40, completion: 4, usage: true, ttft: 2, firstAnswer: 2, firstTool: -1, argsDone: -1, last: 5, decodeRate: 3 / 0.030},
	// Gemini's usage on every chunk: the last one counts (5, not 1).
	"gemini_usage_every_chunk": {content: "The sky is blue.", finish: "stop", model: "gemini-2.5-flash", events: 5,
		prompt: 9, completion: 5, usage: true, ttft: 1, firstAnswer: 1, firstTool: -1, argsDone: -1, last: 5, decodeRate: 4 / 0.040},
	// Ollama counts the end-of-sequence token: completion_tokens 3 for 2
	// streamed tokens; the rate counts the 2 tokens streamed, (2-1)/10 ms
	// = 100 tokens/s, not (3-1)/10 ms.
	"ollama_eos_counted": {content: "Hello!", finish: "stop", model: "llama3.2:1b", events: 2,
		prompt: 26, completion: 3, usage: true, ttft: 1, firstAnswer: 1, firstTool: -1, argsDone: -1, last: 2, decodeRate: 100},
	// The legacy function_call is a tool call too: its name at block 1,
	// its arguments in 8 deltas; no usage, so events/s: (9-1)/80 ms.
	"openai_legacy_function_call": {finish: "function_call", model: "gpt-3.5-turbo-0613", events: 9, toolCalls: 1,
		ttft: 1, firstAnswer: 1, firstTool: 1, argsDone: 9, last: 9, decodeRate: 100},
	// Ollama's parallel calls all at index 0, each with its own id and
	// name: two calls. Without usage the rate is in events/s: (2-1)/10 ms.
	"ollama_parallel_index0": {finish: "tool_calls", model: "llama3.2:1b", events: 2, toolCalls: 2,
		ttft: 1, firstAnswer: 1, firstTool: 1, argsDone: 1, last: 2, decodeRate: 100},
	// Gemini's thought summaries are content flagged as thoughts: tokens
	// (TTFT at block 1) but not the answer, which begins at block 3 with
	// the closing </thought> cut; 31 tokens over 30 ms.
	"gemini_thought_summaries": {content: "Hello! How can I help?", finish: "stop", model: "gemini-2.5-flash", events: 4,
		prompt: 2, completion: 31, usage: true, ttft: 1, firstAnswer: 3, firstTool: -1, argsDone: -1, last: 4, decodeRate: 30 / 0.030},
	// Mistral's thinking parts are reasoning; the text parts the answer.
	"mistral_thinking_parts": {content: "Hi there!", finish: "stop", model: "magistral-medium-2509", events: 4,
		prompt: 8, completion: 12, usage: true, ttft: 1, firstAnswer: 3, firstTool: -1, argsDone: -1, last: 4, decodeRate: 11 / 0.030},
}

// at is block k's time; -1 is NotObserved.
func at(k int) time.Duration {
	if k < 0 {
		return NotObserved
	}
	return time.Duration(k) * blockGap
}

// checkFixture compares a record with its fixture's want; timed says
// whether the clock readings are exact (blocks at k*10ms).
func checkFixture(t *testing.T, what string, rec Record, w fixtureWant, timed bool) {
	t.Helper()
	type row struct {
		field     string
		got, want any
	}
	rows := []row{
		{"Err", rec.Err, w.class}, {"Content", rec.Content, w.content}, {"FinishReason", rec.FinishReason, w.finish},
		{"Model", rec.Model, w.model}, {"TokenEvents", rec.TokenEvents, w.events}, {"ToolCalls", rec.ToolCalls, w.toolCalls},
		{"PromptTokens", rec.PromptTokens, w.prompt}, {"CompletionTokens", rec.CompletionTokens, w.completion},
		{"ReasoningTokens", rec.ReasoningTokens, w.reasoning}, {"UsageReported", rec.UsageReported, w.usage},
	}
	if timed {
		firstTool, argsDone := at(w.firstTool), at(w.argsDone)
		if w.firstTool < 0 {
			firstTool, argsDone = 0, 0 // 0 without a tool call
		}
		rows = append(rows, row{"TTFT", rec.TTFT, at(w.ttft)}, row{"FirstAnswer", rec.FirstAnswer, at(w.firstAnswer)},
			row{"FirstToolCall", rec.FirstToolCall, firstTool}, row{"ToolArgsDone", rec.ToolArgsDone, argsDone},
			row{"LastToken", rec.LastToken, at(w.last)})
		got, want := rec.DecodeRate(), w.decodeRate
		if !(math.IsNaN(got) && math.IsNaN(want)) && math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: DecodeRate %v, want %v", what, got, want)
		}
	}
	for _, r := range rows {
		if !reflect.DeepEqual(r.got, r.want) {
			t.Errorf("%s: %s = %v, want %v (detail %q, notes %q)", what, r.field, r.got, r.want, rec.Detail, rec.Notes)
		}
	}
}

// Every fixture, its blocks 10 ms apart on synctest's clock, gives its
// record exactly: tool calls are tokens and answers, timed to their name
// and their arguments' end; content_filter fails; usage from x_groq and
// from every chunk; decode rates without the end-of-sequence token.
func TestDialectFixturesTimed(t *testing.T) {
	fixtures := streamFixtures(t)
	if len(fixtures) != len(fixtureWants) {
		t.Errorf("%d fixtures, %d wants: every fixture needs a want", len(fixtures), len(fixtureWants))
	}
	for name, body := range fixtures {
		w, ok := fixtureWants[name]
		if !ok {
			t.Errorf("fixture %s has no want", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var steps []step
				for k, b := range sseBlocks(body) {
					steps = append(steps, step{at: at(k), data: b})
				}
				p := OpenAI("http://fake/v1", WithHTTPClient(scripted(steps, false, nil)))
				rec := p.Call(context.Background(), Request{ID: "f-1", Messages: []Message{{Role: "user", Content: "hi"}}})
				checkFixture(t, name, rec, w, true)
			})
		})
	}
}

// Every fixture through both HTTP paths (the own HTTP/1.1 client and
// net/http), in several framings: the same record from each, and the
// fixture's want.
func TestDialectFixturesBothPaths(t *testing.T) {
	framings := []struct {
		name     string
		frame    func(s string) string
		bytewise bool
	}{
		{"chunked per event", func(s string) string {
			var cuts []int
			for i, b := range sseBlocks(s) {
				if i > 0 {
					cuts = append(cuts, cuts[i-1]+len(b))
				} else {
					cuts = append(cuts, len(b))
				}
			}
			return "Transfer-Encoding: chunked\r\n\r\n" + chunked(s, cuts[:len(cuts)-1]...)
		}, false},
		{"content-length a byte per read", func(s string) string {
			return "Content-Length: " + strconv.Itoa(len(s)) + "\r\n\r\n" + s
		}, true},
	}
	for name, body := range streamFixtures(t) {
		for _, fr := range framings {
			t.Run(name+"/"+fr.name, func(t *testing.T) {
				fast, slow := bothPaths(t, func(w io.Writer, req *http.Request, _ int) bool {
					return writeBytes(w, sseHead+fr.frame(body), fr.bytewise)
				}, Request{})
				sameToolRecords(t, name, fast, slow)
				checkFixture(t, name+" "+fr.name, fast, fixtureWants[name], false)
			})
		}
	}
}

// The tool-call fixture cut into two chunks at every byte: the same
// record from both HTTP paths at every cut.
func TestToolCallFixtureEveryCutBothPaths(t *testing.T) {
	body := streamFixtures(t)["openai_tool_call"]
	step := 1
	if testing.Short() {
		step = 17 // every 17th byte (-short): cuts inside every event
	}
	for i := 1; i < len(body); i += step {
		fast, slow := bothPaths(t, func(w io.Writer, req *http.Request, _ int) bool {
			return writeBytes(w, sseHead+"Transfer-Encoding: chunked\r\n\r\n"+chunked(body, i), false)
		}, Request{})
		sameToolRecords(t, fmt.Sprintf("cut at byte %d", i), fast, slow)
		checkFixture(t, fmt.Sprintf("cut at byte %d", i), fast, fixtureWants["openai_tool_call"], false)
	}
}

// sameToolRecords is sameRecords (timings excepted) with the tool-call
// clocks left out as well.
func sameToolRecords(t *testing.T, what string, fast, slow Record) {
	t.Helper()
	fast.FirstToolCall, fast.ToolArgsDone, slow.FirstToolCall, slow.ToolArgsDone = 0, 0, 0, 0
	sameRecords(t, what, fast, slow)
}

// decodeAll feeds a stream to a stream timer in the given pieces, all read
// at 5 ms, and returns its record; slow sends every event through
// encoding/json.
func decodeAll(pieces []string, slow bool) Record {
	rec := Record{TTFB: NotObserved, TTFT: NotObserved, FirstAnswer: NotObserved, LastToken: NotObserved}
	st := newStreamTimer(&rec, protocol.Chat, func(s string) string { return s }, nil)
	if slow {
		_, slowEvent, _ := chathook.New()
		st.emit = func(typ string, data []byte, id string) {
			s := &st.st
			if s.stop {
				return
			}
			if strings.TrimSpace(string(data)) == "[DONE]" {
				s.done, s.stop = true, true
				return
			}
			if slowEvent(s, data) {
				if rec.TTFT < 0 {
					rec.TTFT = s.now
				}
				rec.LastToken = s.now
				rec.TokenEvents++
			}
		}
	}
	for _, p := range pieces {
		_ = st.feed([]byte(p), 5*time.Millisecond)
	}
	st.end()
	st.finish()
	rec.Err, rec.Detail = st.verdict()
	rec.Gaps = Gaps{}
	return rec
}

// Every fixture cut into two pieces at every byte decodes, through the
// fast path, to the record encoding/json gives the whole stream: the fast
// scanner and the general decoder agree on whole streams, tool-call state
// carried across events included. Under -short every 29th byte.
func TestDialectFixturesEveryCutFastMatchesSlow(t *testing.T) {
	step := 1
	if testing.Short() {
		step = 29
	}
	for name, body := range streamFixtures(t) {
		want := decodeAll([]string{body}, true)
		if want.TokenEvents == 0 {
			t.Fatalf("%s: no token decoded: %+v", name, want)
		}
		for i := 0; i <= len(body); i += step {
			if got := decodeAll([]string{body[:i], body[i:]}, false); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s cut at byte %d:\nfast: %+v\nslow: %+v", name, i, got, want)
			}
		}
	}
}

// FuzzToolCallStream: any sequence of events decodes to the same record
// through the fast path and through encoding/json (tool-call state across
// events: indexes reused with new ids, names, arguments).
func FuzzToolCallStream(f *testing.F) {
	for _, body := range streamFixtures(f) {
		f.Add([]byte(body))
	}
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"b\",\"function\":{\"arguments\":\"x\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"g\",\"arguments\":\"y\"}}]}}]}\n\ndata: [DONE]\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		slow := decodeAll([]string{string(stream)}, true)
		fast := decodeAll([]string{string(stream)}, false)
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("stream %q\nfast: %+v\nslow: %+v", stream, fast, slow)
		}
	})
}

// A server that refuses stream_options (Mistral: 422 extra_forbidden;
// old Azure api-versions: 400 unknown_parameter) is measured without it:
// the refused request is sent once more without stream_options, its
// record timed on the resent request and noting why, and no later
// request sends it; on both HTTP paths. A 400 that does not name
// stream_options is an ordinary failure, never resent, and
// WithoutStreamOptions never sends it.
func TestStreamOptionsRefused(t *testing.T) {
	mistral := `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted","input":{"include_usage":true}}]},"type":"invalid_request_message_error","param":null,"code":null}`
	azure := `{"error":{"code":"unknown_parameter","message":"Unrecognized request argument supplied: stream_options","param":null,"type":"invalid_request_error"}}`
	for _, tc := range []struct {
		name, why string
		status    int
		refusal   string
		opts      []Option
		always    bool // refuse whatever was sent
		resent    bool // the first call sends twice
		bodies    []bool
		class     string
	}{
		{"mistral 422", "resent once without it, then never sent", 422, mistral, nil, false, true, []bool{true, false, false}, ""},
		{"azure 400", "the same for old Azure api-versions", 400, azure, nil, false, true, []bool{true, false, false}, ""},
		{"other 400", "a 400 that does not name stream_options fails as it is", 400, `{"error":{"message":"bad temperature"}}`, nil, true, false, []bool{true, true}, "http_400"},
		{"422 naming it when it was not sent", "a 422 is read as a refusal only of what was sent", 422, mistral, []Option{WithoutStreamOptions()}, true, false, []bool{false, false}, "http_422"},
		{"WithoutStreamOptions", "never sent", 200, "", []Option{WithoutStreamOptions()}, false, false, []bool{false, false}, ""},
	} {
		for _, fast := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/fast=%v", tc.name, fast), func(t *testing.T) {
				srv := &bodyServer{respond: func(w io.Writer, body string) {
					if tc.refusal != "" && (tc.always || strings.Contains(body, "stream_options")) {
						fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
							tc.status, http.StatusText(tc.status), len(tc.refusal), tc.refusal)
						return
					}
					b := tok("a") + tok("b") + done
					fmt.Fprintf(w, "%sContent-Length: %d\r\n\r\n%s", sseHead, len(b), b)
				}}
				opts := append([]Option{withDial(srv.dial), WithAPIKey(key)}, tc.opts...)
				if !fast {
					opts = append(opts, WithoutFastPath())
				}
				o := OpenAI("http://127.0.0.1:9/v1", opts...)
				defer srv.close()
				defer o.CloseIdleConnections()
				first := o.Call(context.Background(), Request{ID: "s-1", Messages: []Message{{Role: "user", Content: "hi"}}})
				second := o.Call(context.Background(), Request{ID: "s-2", Messages: []Message{{Role: "user", Content: "hi"}}})
				bodies := srv.seen()
				var sent []bool
				for _, b := range bodies {
					sent = append(sent, strings.Contains(b, `"stream_options":{"include_usage":true}`))
				}
				if !reflect.DeepEqual(sent, tc.bodies) {
					t.Errorf("%s: stream_options sent %v, want %v", tc.why, sent, tc.bodies)
				}
				for i, rec := range []Record{first, second} {
					if rec.Err != tc.class {
						t.Errorf("%s: call %d class %q (%s), want %q", tc.why, i, rec.Err, rec.Detail, tc.class)
					}
				}
				noted := len(first.Notes) > 0 && strings.HasPrefix(first.Notes[0], streamOptionsNote)
				if noted != tc.resent || len(second.Notes) > 0 && strings.HasPrefix(second.Notes[0], streamOptionsNote) {
					t.Errorf("%s: notes %q then %q", tc.why, first.Notes, second.Notes)
				}
				if tc.resent && (!strings.Contains(first.Notes[0], "http_"+strconv.Itoa(tc.status)) || strings.Contains(first.Notes[0], key)) {
					t.Errorf("the note names the refusal's class: %q", first.Notes[0])
				}
				if tc.resent && first.Content != "ab" {
					t.Errorf("the resent request's answer is the record's: %+v", first)
				}
			})
		}
	}
}

// The resent request is timed alone: the refused one's time (a 300 ms
// refusal here) is in the note, not in the record; and the run's
// disclosure counts the requests resent.
func TestStreamOptionsRefusedTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refusal := `{"error":{"code":"unknown_parameter","message":"Unrecognized request argument supplied: stream_options"}}`
		c := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			b, _ := io.ReadAll(r.Body)
			if strings.Contains(string(b), "stream_options") {
				time.Sleep(300 * time.Millisecond)
				return &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}},
					Body: io.NopCloser(strings.NewReader(refusal)), Request: r}, nil
			}
			return scripted([]step{{40 * time.Millisecond, tok("a")}, {50 * time.Millisecond, tok("b") + done}}, false, nil).Transport.RoundTrip(r)
		})}
		p := OpenAI("http://fake/v1", WithHTTPClient(c))
		res, err := Batch{Requests: 3, Concurrency: 1, NoWarmup: true, Load: Load{Prompt: "hi"}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		rec := res.Records[0]
		if !rec.OK() || rec.TTFT != 40*time.Millisecond || rec.Total != 50*time.Millisecond || !strings.Contains(rec.Notes[0], "took 300ms") {
			t.Errorf("first record %+v: want TTFT 40ms and total 50ms of the resent request, the refusal's 300ms noted", rec)
		}
		for _, r := range res.Records[1:] {
			if !r.OK() || r.TTFT != 40*time.Millisecond || len(r.Notes) > 0 {
				t.Errorf("later record %+v: sent without stream_options from the start", r)
			}
		}
		if b1 := res.Disclosure.Box(1).Answer; !strings.Contains(b1, "refused stream_options: 1 request(s) were resent") {
			t.Errorf("box 1 %q: want the resent request counted", b1)
		}
	})
}

// bodyServer answers each request over an in-memory connection with what
// respond writes for its body, keeping the connection; seen lists the
// bodies in order.
type bodyServer struct {
	respond func(w io.Writer, body string)
	mu      sync.Mutex
	bodies  []string
	conns   []net.Conn
	wg      sync.WaitGroup
}

func (s *bodyServer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	client, server := net.Pipe()
	s.mu.Lock()
	s.conns = append(s.conns, server)
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer server.Close()
		br := bufio.NewReader(server)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			b, _ := io.ReadAll(req.Body)
			s.mu.Lock()
			s.bodies = append(s.bodies, string(b))
			s.mu.Unlock()
			s.respond(server, string(b))
		}
	}()
	return client, nil
}

func (s *bodyServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

func (s *bodyServer) close() {
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// DecodeRate counts only tokens the answer streamed, and a success that
// has no rate is NaN (left out of DecodeRates), never 0; a failure is 0.
func TestDecodeRateCountsStreamedTokens(t *testing.T) {
	ms := time.Millisecond
	rec := func(events, completion int, finish, err string) Record {
		return Record{TTFT: 100 * ms, LastToken: 100*ms + time.Duration(max(events-1, 0))*10*ms, TokenEvents: events,
			CompletionTokens: completion, UsageReported: completion > 0, FinishReason: finish, Err: err}
	}
	for _, tc := range []struct {
		name, why string
		rec       Record
		want      float64 // NaN: no rate
	}{
		{"usage as streamed", "(11-1)/100 ms", rec(11, 11, "stop", ""), 100},
		{"end-of-sequence counted", "usage one more than the events and the model stopped: the events, (11-1)/100 ms", rec(11, 12, "stop", ""), 100},
		{"two-token answer with its end-of-sequence", "Ollama: 2 streamed, 3 counted: (2-1)/10 ms, not twice that", rec(2, 3, "stop", ""), 100},
		{"one more at the cap", "finish_reason length: usage as reported, (12-1)/100 ms", rec(11, 12, "length", ""), 110},
		{"several tokens an event", "usage well above the events: usage, (41-1)/100 ms", rec(11, 41, "stop", ""), 400},
		{"no usage", "events/s: (11-1)/100 ms", rec(11, 0, "stop", ""), 100},
		{"one token", "no rate, not 0", rec(1, 1, "stop", ""), math.NaN()},
		{"one token and its end-of-sequence", "2 counted, 1 streamed: no rate", rec(1, 2, "stop", ""), math.NaN()},
		{"one event, many tokens", "no time between first and last token: no rate", rec(1, 30, "stop", ""), math.NaN()},
		{"no token observed", "a custom provider's whole-call record", Record{TTFT: NotObserved, LastToken: NotObserved}, math.NaN()},
		{"failed", "a failure is never fast: 0", rec(11, 11, "stop", ClassTruncated), 0},
		{"failed one token", "0 as well", rec(1, 1, "", ClassTruncated), 0},
	} {
		got := tc.rec.DecodeRate()
		if !(math.IsNaN(got) && math.IsNaN(tc.want)) && math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s (%s): %v, want %v", tc.name, tc.why, got, tc.want)
		}
	}
	res := &Result{Records: []Record{rec(11, 11, "stop", ""), rec(1, 1, "stop", ""), rec(3, 3, "stop", ClassTruncated)}}
	if got := res.decodeRates(); len(got) != 2 || got[0] != 100 || got[1] != 0 {
		t.Errorf("DecodeRates %v: want [100 0], the one-token answer left out", got)
	}
}

// Box 12 says "requested" when no response named the model (a run of
// 404s): a model only the request named is never shown as the API's.
func TestDisclosureModelOnlyRequested(t *testing.T) {
	notFound := answerAs(404, "application/json", `{"error":{"message":"The model m-x does not exist"}}`, false)
	p := OpenAI("http://fake/v1", WithHTTPClient(notFound), WithModel("m-x"))
	res, err := Batch{Requests: 2, NoWarmup: true, Load: Load{Prompt: "hi"}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Records[0].Model; m != "" {
		t.Errorf("record model %q: no response named one", m)
	}
	b12 := res.Disclosure.Box(12).Answer
	if strings.Contains(b12, "as the API named it") || !strings.Contains(b12, `requested "m-x"`) {
		t.Errorf("box 12 %q: want the requested model, not one the API named", b12)
	}
	// A response that names its model is shown as the API's.
	named := answerAs(200, "text/event-stream", `data: {"model":"m-x-2025","choices":[{"index":0,"delta":{"content":"a"}}]}`+"\n\n"+done, false)
	res, err = Batch{Requests: 2, NoWarmup: true, Load: Load{Prompt: "hi"}}.Run(context.Background(), OpenAI("http://fake/v1", WithHTTPClient(named), WithModel("m-x")))
	if err != nil {
		t.Fatal(err)
	}
	if b12 := res.Disclosure.Box(12).Answer; !strings.Contains(b12, "m-x-2025 (as the API named it") {
		t.Errorf("box 12 %q", b12)
	}
}

// readAll is "your own client": it posts through hc, reads the whole body
// and closes it.
func readAll(ctx context.Context, hc *http.Client) error {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://fake/v1/chat/completions", strings.NewReader(`{}`))
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
}

// A streamed tool call measured through Instrument gives the provider's
// tool-call figures, timed from the call's start (a 100 ms wait before
// the request included).
func TestInstrumentStreamedToolCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var steps []step
		for k, b := range sseBlocks(streamFixtures(t)["openai_text_then_tool_call"]) {
			steps = append(steps, step{at: at(k), data: b})
		}
		hc := &http.Client{Transport: Instrument(scripted(steps, false, nil).Transport)}
		p := Func(func(ctx context.Context, req Request) error {
			time.Sleep(100 * time.Millisecond)
			return readAll(ctx, hc)
		})
		rec := p.Call(context.Background(), Request{ID: "i-1"})
		w := fixtureWants["openai_text_then_tool_call"]
		if !rec.OK() || rec.ToolCalls != 1 || rec.FirstToolCall != 100*time.Millisecond+at(w.firstTool) ||
			rec.ToolArgsDone != 100*time.Millisecond+at(w.argsDone) || rec.FirstAnswer != 100*time.Millisecond+at(w.firstAnswer) {
			t.Errorf("record %+v: want the fixture's tool-call clocks plus the 100 ms wait", rec)
		}
	})
}

// A non-streamed chat.completion read through Instrument is judged as a
// stream is: tool calls in message.tool_calls (a success without text),
// usage and model; content_filter, an empty message and a refusal fail;
// a JSON answer that is not a chat completion is not judged.
func TestInstrumentNonStreamedCompletion(t *testing.T) {
	toolCalls := `{"id":"chatcmpl-ns1","object":"chat.completion","created":1727000000,"model":"gpt-4o-2024-08-06",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[` +
		`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}},` +
		`{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Tokyo\"}"}}]},` +
		`"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":80,"completion_tokens":40,"total_tokens":120}}`
	for _, tc := range []struct {
		name, why, body, class string
		toolCalls              int
		content                string
	}{
		{"tool calls", "OpenAI's documented parallel tool calls, no text: a success", toolCalls, "", 2, ""},
		{"text", "an ordinary answer", `{"object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`, "", 0, "hi"},
		{"content filter", "Azure's filter cut the answer", `{"object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Here"},"finish_reason":"content_filter"}]}`, ClassContentFilter, 0, "Here"},
		{"empty", "no text and no tool call", `{"object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"length"}]}`, ClassEmptyAnswer, 0, ""},
		{"refusal", "the model refused", `{"object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't"},"finish_reason":"stop"}]}`, ClassRefusal, 0, ""},
		{"legacy function_call", "the deprecated single call is a tool call too", `{"object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"function_call":{"name":"f","arguments":"{}"}},"finish_reason":"function_call"}]}`, "", 1, ""},
		{"not a completion", "an embeddings answer is not judged", `{"object":"list","data":[{"embedding":[0.1]}]}`, "", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := roundTrip(func(r *http.Request) (*http.Response, error) {
					time.Sleep(250 * time.Millisecond)
					return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
						Body: io.NopCloser(strings.NewReader(tc.body)), Request: r}, nil
				})
				hc := &http.Client{Transport: Instrument(rt)}
				rec := Func(func(ctx context.Context, req Request) error { return readAll(ctx, hc) }).Call(context.Background(), Request{ID: "n-1"})
				if rec.Err != tc.class || rec.ToolCalls != tc.toolCalls || rec.Content != tc.content {
					t.Errorf("%s: class %q (%s), %d tool calls, content %q; want %q, %d, %q", tc.why, rec.Err, rec.Detail, rec.ToolCalls, rec.Content, tc.class, tc.toolCalls, tc.content)
				}
				if tc.name == "tool calls" && (rec.FirstToolCall != 250*time.Millisecond || rec.ToolArgsDone != 250*time.Millisecond ||
					rec.CompletionTokens != 40 || rec.Model != "gpt-4o-2024-08-06" || rec.TTFT != NotObserved) {
					t.Errorf("record %+v: want the tool calls at the body's arrival, usage and model, no token clock", rec)
				}
			})
		})
	}
}

// finish_reason length (the answer reached its cap) stays a success, and
// content_filter is its own failure whatever came before it, even a tool
// call.
func TestFinishReasonVerdicts(t *testing.T) {
	fin := func(reason string) string {
		return `data: {"choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}` + "\n\n"
	}
	toolCall := `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]}}]}` + "\n\n"
	for _, tc := range []struct {
		name, body, class string
	}{
		{"length", tok("a") + fin("length") + done, ""},
		{"stop", tok("a") + fin("stop") + done, ""},
		{"tool calls", toolCall + fin("tool_calls") + done, ""},
		{"content filter", tok("a") + fin("content_filter") + done, ClassContentFilter},
		{"content filter before any token", fin("content_filter") + done, ClassContentFilter},
		{"content filter after a tool call", toolCall + fin("content_filter") + done, ClassContentFilter},
		{"content filter but no [DONE]", tok("a") + fin("content_filter"), ClassTruncated},
	} {
		rec := call(t, answer(200, tc.body, nil), Request{})
		if rec.Err != tc.class {
			t.Errorf("%s: class %q (%s), want %q", tc.name, rec.Err, rec.Detail, tc.class)
		}
		if tc.class == ClassContentFilter && !strings.Contains(rec.Detail, "content filter") {
			t.Errorf("%s: detail %q", tc.name, rec.Detail)
		}
	}
}

// BenchmarkToolCallDecode times the stream timer on OpenAI's parallel
// tool-call stream (testdata/stream/openai_parallel_tool_calls.sse), one
// read per event: the fast path (default) and encoding/json.
func BenchmarkToolCallDecode(b *testing.B) {
	blocks := sseBlocks(streamFixtures(b)["openai_parallel_tool_calls"])
	for _, mode := range []string{"fast", "encoding-json"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				rec := decodeAll(blocks, mode != "fast")
				if rec.ToolCalls != 2 || rec.TokenEvents != 14 {
					b.Fatalf("%+v", rec)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(blocks)), "ns/event")
		})
	}
}

// Requests in flight when the refusal comes are each resent once: at
// concurrency 4, the first 4 requests are refused (each after 300 ms),
// resent, and the other 4 never send stream_options; every record
// succeeds, and the disclosure counts the 4.
func TestStreamOptionsRefusedInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		with, without := 0, 0
		c := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			b, _ := io.ReadAll(r.Body)
			refused := strings.Contains(string(b), "stream_options")
			mu.Lock()
			if refused {
				with++
			} else {
				without++
			}
			mu.Unlock()
			if refused {
				time.Sleep(300 * time.Millisecond)
				body := `{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted"}]}`
				return &http.Response{StatusCode: 422, Header: http.Header{"Content-Type": {"application/json"}},
					Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
			}
			return scripted([]step{{40 * time.Millisecond, tok("a") + done}}, false, nil).Transport.RoundTrip(r)
		})}
		res, err := Batch{Requests: 8, Concurrency: 4, NoWarmup: true, Load: Load{Prompt: "hi"}}.Run(context.Background(), OpenAI("http://fake/v1", WithHTTPClient(c)))
		if err != nil {
			t.Fatal(err)
		}
		resent := 0
		for _, rec := range res.Records {
			if !rec.OK() {
				t.Errorf("record %+v failed", rec)
			}
			if len(rec.Notes) > 0 && strings.HasPrefix(rec.Notes[0], streamOptionsNote) {
				resent++
			}
		}
		if with != 4 || without != 8 || resent != 4 {
			t.Errorf("%d requests with stream_options, %d without, %d records noted resent: want 4, 8, 4", with, without, resent)
		}
		if b1 := res.Disclosure.Box(1).Answer; !strings.Contains(b1, "4 request(s) were resent") {
			t.Errorf("box 1 %q", b1)
		}
	})
}

// The disclosure says how many successes have no decode rate (left out
// of the decode-rate figures), and says nothing when all have one.
func TestDisclosureCountsSuccessesWithoutRate(t *testing.T) {
	ms := time.Millisecond
	one := Record{ID: "a", TTFT: 100 * ms, LastToken: 100 * ms, TokenEvents: 1, CompletionTokens: 1, UsageReported: true}
	many := Record{ID: "b", TTFT: 100 * ms, LastToken: 200 * ms, TokenEvents: 11, CompletionTokens: 11, UsageReported: true}
	b, _ := Batch{}.normalized()
	d := b.disclose(nil, &Result{Records: []Record{one, many, many}, Start: time.Now(), End: time.Now()})
	if b1 := d.Box(1).Answer; !strings.Contains(b1, "1 of 3 successes have no decode rate") {
		t.Errorf("box 1 %q", b1)
	}
	d = b.disclose(nil, &Result{Records: []Record{many}, Start: time.Now(), End: time.Now()})
	if b1 := d.Box(1).Answer; strings.Contains(b1, "no decode rate") {
		t.Errorf("box 1 %q: every success has a rate", b1)
	}
}
