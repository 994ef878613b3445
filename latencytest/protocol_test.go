package latencytest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/protocol"

	"github.com/tailguard/tailguard/internal/sse/ssetest"
)

// protoFixture is a captured stream of one protocol and what its record
// must hold. Blocks are the fixture's events, numbered from 0 without the
// leading comment that cites the source.
type protoFixture struct {
	file      string
	api       *protocol.Protocol
	tokens    []int // the blocks that carry a token
	answer    int   // the block of the first answer
	tool      int   // the block of the first tool call's name (-1: none)
	argsDone  int   // the block of the first tool call's last arguments delta
	end       int   // the block that ends the stream
	content   string
	toolCalls int
	prompt    int
	output    int
	cached    int
	cachedRep bool
	reasoning int
	model     string
	finish    string
	hosted    int  // hosted tools' calls
	eos       bool // output counts an end-of-sequence token: the decode rate counts the token events
}

var protoFixtures = []protoFixture{
	{file: "responses_text.sse", api: protocol.Responses, tokens: []int{4, 5}, answer: 4, tool: -1, end: 9,
		content: "Hi there!", prompt: 37, output: 11, cached: 12, cachedRep: true, model: "gpt-4.1-2025-04-14", finish: "completed"},
	{file: "responses_tool.sse", api: protocol.Responses, tokens: []int{3, 7, 8, 9}, answer: 7, tool: 7, argsDone: 9, end: 12,
		toolCalls: 1, prompt: 291, output: 23, cachedRep: true, reasoning: 64, model: "o4-mini-2025-04-16", finish: "completed"},
	{file: "messages_text.sse", api: protocol.Messages, tokens: []int{3, 4}, answer: 3, tool: -1, end: 7,
		content: "Hello!", prompt: 25 + 2048, output: 15, cached: 2048, cachedRep: true, model: "claude-sonnet-4-20250514", finish: "end_turn"},
	{file: "messages_tool.sse", api: protocol.Messages, tokens: []int{2, 6, 9, 11, 12}, answer: 6, tool: 9, argsDone: 12, end: 15,
		content: "Okay, let's check", toolCalls: 1, prompt: 472, output: 89, model: "claude-sonnet-4-20250514", finish: "tool_use"},
	// A hosted web search: its call (block 3) and query (4) are tokens,
	// its result (6) none; no tool call, and the answer begins at block 9.
	{file: "messages_web_search.sse", api: protocol.Messages, tokens: []int{3, 4, 9, 10}, answer: 9, tool: -1, end: 13,
		content: "Error correction crossed the threshold.", prompt: 2679, output: 58, model: "claude-sonnet-4-20250514", finish: "end_turn", hosted: 1},
	{file: "responses_web_search.sse", api: protocol.Responses, tokens: []int{2, 9, 10}, answer: 9, tool: -1, end: 15,
		content: "A river was cleaned up.", prompt: 328, output: 42, cachedRep: true, model: "gpt-4.1-2025-04-14", finish: "completed", hosted: 1},
	// vLLM's reasoning_part events are known (no note).
	{file: "responses_vllm_reasoning.sse", api: protocol.Responses, tokens: []int{4, 5, 11}, answer: 11, tool: -1, end: 15,
		content: "Hello!", prompt: 12, output: 14, cachedRep: true, reasoning: 11, model: "Qwen/Qwen3-0.6B", finish: "completed"},
	// An object delta's text is reasoning: tokens at blocks 2 and 3.
	{file: "responses_vllm_reasoning_object.sse", api: protocol.Responses, tokens: []int{2, 3, 5}, answer: 5, tool: -1, end: 6,
		content: "Hi!", prompt: 70, output: 9, reasoning: 6, model: "openai/gpt-oss-20b", finish: "completed"},
	// Ollama counts the end-of-sequence token: 3 for 2 streamed, and
	// the model stopped on its own (end_turn, completed).
	{file: "messages_ollama_eos.sse", api: protocol.Messages, tokens: []int{2, 3}, answer: 2, tool: -1, end: 6,
		content: "Hello!", prompt: 26, output: 3, model: "llama3.2:1b", finish: "end_turn", eos: true},
	{file: "responses_ollama_eos.sse", api: protocol.Responses, tokens: []int{3, 4}, answer: 3, tool: -1, end: 6,
		content: "Hello!", prompt: 26, output: 3, model: "llama3.2:1b", finish: "completed", eos: true},
	// Gemini: thoughts are tokens, never the answer; the completion is
	// candidates plus thoughts (12+76); the stream ends with its last
	// chunk (finishReason STOP), no closing event.
	{file: "gemini_text.sse", api: protocol.Gemini, tokens: []int{0, 1, 2, 3}, answer: 2, tool: -1, end: 3,
		content: "The sky is blue because of Rayleigh scattering.", prompt: 10, output: 12 + 76, cached: 4, cachedRep: true,
		reasoning: 76, model: "gemini-2.5-flash", finish: "STOP"},
	// Two parallel functionCall parts in one chunk: the first call's name
	// and args arrive whole, with it.
	{file: "gemini_tool.sse", api: protocol.Gemini, tokens: []int{0, 1, 2}, answer: 1, tool: 2, argsDone: 2, end: 2,
		content: "Let me check both cities.", toolCalls: 2, prompt: 120, output: 40 + 30, reasoning: 30, model: "gemini-2.5-pro", finish: "STOP"},
}

// read returns the fixture file and its event blocks (each with its
// blank line); the first element of blocks is the citing comment.
func (f protoFixture) read(t testing.TB) (whole string, blocks []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "protocols", f.file))
	if err != nil {
		t.Fatal(err)
	}
	whole = string(b)
	for _, blk := range strings.SplitAfter(whole, "\n\n") {
		if blk != "" {
			blocks = append(blocks, blk)
		}
	}
	if !strings.HasPrefix(blocks[0], ": ") || !strings.Contains(blocks[0], "https://") {
		t.Fatalf("%s: the first block must cite its source: %q", f.file, blocks[0])
	}
	return whole, blocks[1:]
}

// checkContent checks what a record must hold whatever its timing.
func (f protoFixture) checkContent(t *testing.T, what string, rec Record) {
	t.Helper()
	if !rec.OK() || rec.Content != f.content || rec.TokenEvents != len(f.tokens) || rec.ToolCalls != f.toolCalls ||
		rec.PromptTokens != f.prompt || rec.CompletionTokens != f.output || !rec.UsageReported ||
		rec.CachedTokens != f.cached || rec.CachedReported != f.cachedRep || rec.ReasoningTokens != f.reasoning ||
		rec.Model != f.model || rec.FinishReason != f.finish || len(rec.Notes) != 0 || rec.HostedTools != f.hosted ||
		rec.decodeTokens() != f.decodeTokens() {
		t.Errorf("%s %s: record\n%+v\nwant content %q, %d token events, %d tool calls, %d hosted, usage %d/%d cached %d (%v) reasoning %d, model %q, finish %q, no notes, %d decode tokens (have %d)",
			f.file, what, rec, f.content, len(f.tokens), f.toolCalls, f.hosted, f.prompt, f.output, f.cached, f.cachedRep, f.reasoning, f.model, f.finish,
			f.decodeTokens(), rec.decodeTokens())
	}
}

// decodeTokens is the n of the fixture's decode rate: the output tokens,
// or the token events when the output counts an end-of-sequence token.
func (f protoFixture) decodeTokens() int {
	if f.eos {
		return len(f.tokens)
	}
	return f.output
}

// blockAt is when the fixture's block i arrives in the timed tests:
// uneven gaps, and a 2 s stall before block 5.
func blockAt(i int) time.Duration {
	d := 150*time.Millisecond + time.Duration(i*i)*3*time.Millisecond
	if i >= 5 {
		d += 2 * time.Second
	}
	return d
}

// checkTimes checks a record's clocks against the blocks' times.
func (f protoFixture) checkTimes(t *testing.T, what string, rec Record) {
	t.Helper()
	ttft, last := blockAt(f.tokens[0]), blockAt(f.tokens[len(f.tokens)-1])
	var gaps []time.Duration
	var maxGap time.Duration
	for i := 1; i < len(f.tokens); i++ {
		g := blockAt(f.tokens[i]) - blockAt(f.tokens[i-1])
		gaps, maxGap = append(gaps, g), max(maxGap, g)
	}
	var tool, args time.Duration
	if f.tool >= 0 {
		tool, args = blockAt(f.tool), blockAt(f.argsDone)
	}
	if rec.TTFT != ttft || rec.FirstAnswer != blockAt(f.answer) || rec.LastToken != last || rec.Total != blockAt(f.end) ||
		rec.MaxGap != maxGap || fmt.Sprint(rec.Gaps.All()) != fmt.Sprint(gaps) || rec.FirstToolCall != tool || rec.ToolArgsDone != args {
		t.Errorf("%s %s: times ttft %v answer %v last %v total %v maxgap %v gaps %v tool %v args %v\nwant ttft %v answer %v last %v total %v maxgap %v gaps %v tool %v args %v",
			f.file, what, rec.TTFT, rec.FirstAnswer, rec.LastToken, rec.Total, rec.MaxGap, rec.Gaps.All(), rec.FirstToolCall, rec.ToolArgsDone,
			ttft, blockAt(f.answer), last, blockAt(f.end), maxGap, gaps, tool, args)
	}
	if want := float64(f.decodeTokens()-1) / (last - ttft).Seconds(); rec.DecodeRate() != want {
		t.Errorf("%s %s: decode rate %v, want %v", f.file, what, rec.DecodeRate(), want)
	}
}

// replay is an in-memory server that writes the blocks at blockAt.
func replay(blocks []string) *http.Client {
	steps := make([]step, len(blocks))
	for i, b := range blocks {
		steps[i] = step{blockAt(i), b}
	}
	return scripted(steps, false, nil)
}

// protoProvider is the built-in provider of a protocol on client c.
func protoProvider(api *protocol.Protocol, c *http.Client, opts ...Option) *LLMProvider {
	opts = append([]Option{WithHTTPClient(c), WithAPIKey(key), WithModel("m-1")}, opts...)
	return NewLLM("http://fake/v1", api, opts...)
}

// Every fixture, its events at known virtual times: the built-in
// provider's record holds the content, usage and tool calls, and every
// clock to the nanosecond.
func TestProtocolFixturesTimed(t *testing.T) {
	for _, f := range protoFixtures {
		t.Run(f.file, func(t *testing.T) {
			_, blocks := f.read(t)
			synctest.Test(t, func(t *testing.T) {
				rec := protoProvider(f.api, replay(blocks)).Call(context.Background(), Request{ID: "p-1", TotalTimeout: time.Minute,
					Messages: []Message{{Role: "user", Content: "hi"}}})
				f.checkContent(t, "timed", rec)
				f.checkTimes(t, "timed", rec)
			})
		})
	}
}

// Every fixture fed to the stream timer whole, a byte at a time and cut
// in two at every byte (every 11th under -short), with LF and CRLF line
// ends: the same record.
func TestProtocolFixturesEveryByteSplit(t *testing.T) {
	step := 1
	if testing.Short() {
		step = 11
	}
	for _, f := range protoFixtures {
		whole, _ := f.read(t)
		for name, body := range map[string]string{"lf": whole, "crlf": strings.ReplaceAll(whole, "\n", "\r\n")} {
			s := []byte(body)
			splits := [][][]byte{{s}, ssetest.Pieces(s, 1)}
			for i := 0; i <= len(s); i += step {
				splits = append(splits, [][]byte{s[:i], s[i:]})
			}
			for _, chunks := range splits {
				rec := Record{TTFB: NotObserved, TTFT: NotObserved, FirstAnswer: NotObserved, LastToken: NotObserved}
				st := newStreamTimer(&rec, f.api, func(s string) string { return s }, nil)
				for _, c := range chunks {
					if err := st.feed(c, 0); err != nil {
						t.Fatal(err)
					}
				}
				st.end()
				st.finish()
				if class, detail := st.verdict(); class != "" {
					rec.Err, rec.Detail = class, detail
				}
				rec.Total = 0
				f.checkContent(t, fmt.Sprintf("%s in %d chunks (first %d bytes)", name, len(chunks), len(chunks[0])), rec)
				if t.Failed() {
					return
				}
			}
		}
	}
}

// pipeProto is a protocol's provider on srv, through the fast path or
// net/http only.
func pipeProto(t *testing.T, api *protocol.Protocol, srv *pipeServer, fast bool) *LLMProvider {
	t.Helper()
	opts := []Option{withDial(srv.dial), WithAPIKey(key), WithModel("m-1")}
	if !fast {
		opts = append(opts, WithoutFastPath())
	}
	o := NewLLM("http://127.0.0.1:9/v1", api, opts...)
	if fast != (o.h1req != nil) {
		t.Fatalf("fast path %v, want %v", o.h1req != nil, fast)
	}
	return o
}

// Every fixture through both HTTP paths (the own HTTP/1.1 client and
// net/http) in every framing, and cut into two chunks at every byte
// (every 13th under -short): the same record on both, and the fixture's.
func TestProtocolFixturesBothPaths(t *testing.T) {
	type framing struct {
		name     string
		head     string
		body     func(s string) string
		bytewise bool
		keep     bool
	}
	perEvent := func(s string) string {
		var cuts []int
		for i := 0; ; {
			j := strings.Index(s[i:], "\n\n")
			if j < 0 {
				break
			}
			i += j + 2
			cuts = append(cuts, i)
		}
		return chunked(s, cuts...)
	}
	framings := []framing{
		{"chunked whole", "Transfer-Encoding: chunked\r\n\r\n", func(s string) string { return chunked(s) }, false, true},
		{"chunked per event", "Transfer-Encoding: chunked\r\n\r\n", perEvent, false, true},
		{"chunked a byte per read", "Transfer-Encoding: chunked\r\n\r\n", func(s string) string { return chunked(s, len(s)/3) }, true, true},
		{"content-length", "", func(s string) string { return s }, false, true},
		{"to the close", "Connection: close\r\n\r\n", func(s string) string { return s }, false, false},
	}
	step := 1
	if testing.Short() {
		step = 13
	}
	for _, f := range protoFixtures {
		body, _ := f.read(t)
		both := func(what string, respond func(w io.Writer) bool) {
			t.Helper()
			var recs [2]Record
			for i, fast := range []bool{true, false} {
				srv := &pipeServer{respond: func(w io.Writer, req *http.Request, _ int) bool { return respond(w) }}
				o := pipeProto(t, f.api, srv, fast)
				recs[i] = o.Call(context.Background(), Request{ID: "t-1", Messages: []Message{{Role: "user", Content: "hi"}}})
				o.CloseIdleConnections()
				srv.close()
				if _, reqs := srv.counts(); reqs != 1 {
					t.Errorf("%s fast %v: %d requests", what, fast, reqs)
				}
			}
			for i := range recs { // clock readings the two paths cannot share
				recs[i].FirstToolCall, recs[i].ToolArgsDone = 0, 0
			}
			sameRecords(t, f.file+" "+what, recs[0], recs[1])
			f.checkContent(t, what, recs[0])
		}
		for _, fr := range framings {
			both(fr.name, func(w io.Writer) bool {
				head := sseHead + fr.head
				if fr.head == "" {
					head += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
				}
				return writeBytes(w, head+fr.body(body), fr.bytewise) && fr.keep
			})
		}
		for i := 1; i < len(body); i += step {
			both(fmt.Sprintf("cut at byte %d", i), func(w io.Writer) bool {
				return writeBytes(w, sseHead+"Transfer-Encoding: chunked\r\n\r\n"+chunked(body, i), false)
			})
			if t.Failed() {
				return
			}
		}
	}
}

// BenchmarkProtocolDecode: the client's cost per event of each fixture's
// stream, decoded by the stream timer (the work a read does between the
// socket and the record).
func BenchmarkProtocolDecode(b *testing.B) {
	for _, f := range protoFixtures {
		whole, blocks := f.read(b)
		data := []byte(whole)
		b.Run(f.file, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				rec := Record{TTFB: NotObserved, TTFT: NotObserved, FirstAnswer: NotObserved, LastToken: NotObserved}
				st := newStreamTimer(&rec, f.api, func(s string) string { return s }, nil)
				if err := st.feed(data, time.Millisecond); err != nil {
					b.Fatal(err)
				}
				st.finish()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(blocks)), "ns/event")
		})
	}
}
