package latencytest_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// key is the API key the tests send; no record may hold it.
const key = "sk-test-SECRET-0123456789abcdef"

// roundTrip is an http.RoundTripper made of a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// protocol is a wire protocol the SDKs speak, as the built-in providers
// name it.
type protocol string

const (
	responsesAPI protocol = "responses"
	messagesAPI  protocol = "messages"
	geminiAPI    protocol = "gemini"
)

// builtIn is the library's own provider of api on client c: the record
// an SDK's call through Instrument must match.
func builtIn(api protocol, c *http.Client) *latencytest.LLMProvider {
	if api == messagesAPI {
		return latencytest.Anthropic("http://fake/v1", latencytest.WithHTTPClient(c), latencytest.WithAPIKey(key), latencytest.WithModel("m-1"))
	}
	if api == geminiAPI {
		return latencytest.Gemini("http://fake/v1beta", latencytest.WithHTTPClient(c), latencytest.WithAPIKey(key), latencytest.WithModel("m-1"))
	}
	return latencytest.Responses("http://fake/v1", latencytest.WithHTTPClient(c), latencytest.WithAPIKey(key), latencytest.WithModel("m-1"))
}

// protoFixture is a captured stream of one protocol (latencytest's
// testdata/protocols) and what its record must hold. Blocks are the
// fixture's events, numbered from 0 without the leading comment that
// cites the source.
type protoFixture struct {
	file      string
	api       protocol
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
}

var protoFixtures = []protoFixture{
	{file: "responses_text.sse", api: responsesAPI, tokens: []int{4, 5}, answer: 4, tool: -1, end: 9,
		content: "Hi there!", prompt: 37, output: 11, cached: 12, cachedRep: true, model: "gpt-4.1-2025-04-14", finish: "completed"},
	{file: "responses_tool.sse", api: responsesAPI, tokens: []int{3, 7, 8, 9}, answer: 7, tool: 7, argsDone: 9, end: 12,
		toolCalls: 1, prompt: 291, output: 23, cachedRep: true, reasoning: 64, model: "o4-mini-2025-04-16", finish: "completed"},
	{file: "messages_text.sse", api: messagesAPI, tokens: []int{3, 4}, answer: 3, tool: -1, end: 7,
		content: "Hello!", prompt: 25 + 2048, output: 15, cached: 2048, cachedRep: true, model: "claude-sonnet-4-20250514", finish: "end_turn"},
	{file: "messages_tool.sse", api: messagesAPI, tokens: []int{2, 6, 9, 11, 12}, answer: 6, tool: 9, argsDone: 12, end: 15,
		content: "Okay, let's check", toolCalls: 1, prompt: 472, output: 89, model: "claude-sonnet-4-20250514", finish: "tool_use"},
	{file: "gemini_text.sse", api: geminiAPI, tokens: []int{0, 1, 2, 3}, answer: 2, tool: -1, end: 3,
		content: "The sky is blue because of Rayleigh scattering.", prompt: 10, output: 12 + 76, cached: 4, cachedRep: true,
		reasoning: 76, model: "gemini-2.5-flash", finish: "STOP"},
	{file: "gemini_tool.sse", api: geminiAPI, tokens: []int{0, 1, 2}, answer: 1, tool: 2, argsDone: 2, end: 2,
		content: "Let me check both cities.", toolCalls: 2, prompt: 120, output: 40 + 30, reasoning: 30, model: "gemini-2.5-pro", finish: "STOP"},
}

// read returns the fixture's event blocks (each with its blank line),
// without the first one, the comment that cites the source.
func (f protoFixture) read(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "latencytest", "testdata", "protocols", f.file))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, blk := range strings.SplitAfter(string(b), "\n\n") {
		if blk != "" {
			blocks = append(blocks, blk)
		}
	}
	if !strings.HasPrefix(blocks[0], ": ") || !strings.Contains(blocks[0], "https://") {
		t.Fatalf("%s: the first block must cite its source: %q", f.file, blocks[0])
	}
	return blocks[1:]
}

// checkContent checks what a record must hold whatever its timing.
func (f protoFixture) checkContent(t *testing.T, what string, rec latencytest.Record) {
	t.Helper()
	if !rec.OK() || rec.Content != f.content || rec.TokenEvents != len(f.tokens) || rec.ToolCalls != f.toolCalls ||
		rec.PromptTokens != f.prompt || rec.CompletionTokens != f.output || !rec.UsageReported ||
		rec.CachedTokens != f.cached || rec.CachedReported != f.cachedRep || rec.ReasoningTokens != f.reasoning ||
		rec.Model != f.model || rec.FinishReason != f.finish || len(rec.Notes) != 0 {
		t.Errorf("%s %s: record\n%+v\nwant content %q, %d token events, %d tool calls, usage %d/%d cached %d (%v) reasoning %d, model %q, finish %q, no notes",
			f.file, what, rec, f.content, len(f.tokens), f.toolCalls, f.prompt, f.output, f.cached, f.cachedRep, f.reasoning, f.model, f.finish)
	}
}

// blockAt is when the fixture's block i arrives: uneven gaps, and a 2 s
// stall before block 5.
func blockAt(i int) time.Duration {
	d := 150*time.Millisecond + time.Duration(i*i)*3*time.Millisecond
	if i >= 5 {
		d += 2 * time.Second
	}
	return d
}

// checkTimes checks a record's clocks against the blocks' times.
func (f protoFixture) checkTimes(t *testing.T, what string, rec latencytest.Record) {
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
}

// replay is an in-memory server (run it inside a synctest bubble) that
// answers every request with the blocks, block i at blockAt(i) after the
// request, and stops writing when the caller closes the body or cancels.
func replay(blocks []string) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		pr, pw := io.Pipe()
		start := time.Now()
		go func() {
			defer pw.Close()
			for i, b := range blocks {
				tm := time.NewTimer(time.Until(start.Add(blockAt(i))))
				select {
				case <-tm.C:
				case <-r.Context().Done():
					tm.Stop()
					return
				}
				if _, err := io.WriteString(pw, b); err != nil {
					return // the reader closed the body
				}
			}
		}()
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr, Request: r}, nil
	})}
}

// jsonAnswer is an in-memory server that sends the head at once and the
// JSON body in two halves, at 300 ms and at 700 ms.
func jsonAnswer(status int, body string) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		_, _ = io.Copy(io.Discard, r.Body)
		pr, pw := io.Pipe()
		go func() {
			time.Sleep(300 * time.Millisecond)
			io.WriteString(pw, body[:len(body)/2])
			time.Sleep(400 * time.Millisecond)
			io.WriteString(pw, body[len(body)/2:])
			pw.Close()
		}()
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: pr, Request: r}, nil
	})}
}
