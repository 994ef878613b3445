package latencytest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/chathook"
	"github.com/tailguard/tailguard/protocol"

	"github.com/tailguard/tailguard/internal/chunkscan"
	"github.com/tailguard/tailguard/internal/sse"
	"github.com/tailguard/tailguard/internal/sse/ssetest"
)

// Every event the fast path decodes anywhere in this package's tests (the
// stream fixtures, the OpenAI and fake streams, the fuzz targets) is also
// decoded through encoding/json, and the two must agree: a disagreement
// panics with the event. The fake provider's chunks, which come from one
// code path by the hundred thousand, are checked one in 16 (checking them
// all tripled the seed protocol's test under -race). Not when benchmarks
// run (-bench), which would time both decoders: TestFastPathMatchesEncodingJSON
// and the fuzz target check the corpus either way.
func init() { chathook.Check = checkFastPath }

var fakeChunks atomic.Uint64

var benchmarking = sync.OnceValue(func() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
})

func checkFastPath(data []byte) {
	if benchmarking() {
		return
	}
	if bytes.HasPrefix(data, []byte(`{"id":"chatcmpl-fake-`)) && fakeChunks.Add(1)%16 != 1 {
		return
	}
	if msg := fastSlowDiff(data); msg != "" {
		panic("latencytest: the fast path and encoding/json disagree: " + msg)
	}
}

// decoded is what one event did to a fresh stream.
type decoded struct {
	Rec                Record
	Content, Refusal   string
	Bad                string
	Done, Stop, Others bool
	Token              bool
}

// freshStream is the state of a stream before its first event, a token
// already seen (so FirstAnswer may be set) or not.
func freshStream() (*stream, *Record) {
	rec := &Record{TTFB: NotObserved, TTFT: NotObserved, FirstAnswer: NotObserved, LastToken: NotObserved, Model: "requested-model"}
	return &stream{rec: rec, now: 7 * time.Millisecond}, rec
}

func outcome(s *stream, token bool) decoded {
	return decoded{Rec: *s.rec, Content: s.content.String(), Refusal: s.refusal.String(), Bad: s.bad,
		Done: s.done, Stop: s.stop, Token: token}
}

// fastSlowDiff decodes data both ways on fresh streams; "" when they agree
// or the fast path declined.
func fastSlowDiff(data []byte) string {
	fs, _ := freshStream()
	fast, _, fend := chathook.New()
	ftok, ok := fast(fs, data)
	if !ok {
		return ""
	}
	fend(fs)
	ss, _ := freshStream()
	_, slow, send := chathook.New()
	stok := slow(ss, data)
	send(ss)
	f, s := outcome(fs, ftok), outcome(ss, stok)
	if !reflect.DeepEqual(f, s) {
		return fmt.Sprintf("event %q\nfast: %+v\nslow: %+v", data, f, s)
	}
	return ""
}

// chunkCorpus is every event data of the SSE fixtures and fuzz seeds, the
// fake's chunk shapes, and chunks built to trip a scanner.
func chunkCorpus(t testing.TB) []string {
	var out []string
	addStream := func(stream []byte) {
		var p sse.Parser
		emit := func(_ string, data []byte, _ string) { out = append(out, string(data)) }
		_ = p.Feed(stream, emit)
		p.End(emit)
	}
	for _, s := range ssetest.Variants() {
		addStream([]byte(s))
	}
	for _, s := range []string{
		"data: a\r", "data: a\r\ndata: b\r\r\n:c\nevent: e\nid: 1\ndata:\n\n",
		"data: {\"x\":\r\ndata: 1}\r\n\r\n", "\xEF\xBB\xBFdata: a\n\n",
		"data: {\"choices\":[{\"delta\":\r\ndata: {\"content\":\"Hi\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n",
		tok("plain"), tok("quote \" and \\ and \n and <tag> & é and \u2028"), tok(""),
	} {
		addStream([]byte(s))
	}
	// The stream fixtures of other providers' dialects (tool calls,
	// Azure, Groq, Gemini, Ollama: see dialect_test.go).
	for _, s := range streamFixtures(t) {
		addStream([]byte(s))
	}
	// Corpus files of the fuzz targets that read SSE streams or chunks.
	for _, dir := range []string{"FuzzSSESplit", "FuzzChunkFastPath"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", dir, "*"))
		for _, name := range files {
			for _, v := range fuzzCorpusValues(t, name) {
				if dir == "FuzzSSESplit" {
					addStream(v)
				} else {
					out = append(out, string(v))
				}
			}
		}
	}
	prefix := `{"id":"chatcmpl-fake-3","object":"chat.completion.chunk","created":1727000000,"model":"fake-model","choices":[`
	out = append(out,
		prefix+`{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`,
		prefix+`{"index":0,"delta":{"content":" The"},"logprobs":null,"finish_reason":null}],"usage":null}`,
		prefix+`{"index":0,"delta":{"reasoning_content":" Let"},"logprobs":null,"finish_reason":null}],"usage":null}`,
		prefix+`{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}],"usage":null}`,
		prefix+`],"usage":{"prompt_tokens":12,"completion_tokens":64,"total_tokens":76,"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":5}}}`,
		// Shapes that must agree whichever path takes them.
		`{"choices":[{"delta":{"content":"no index"}}]}`,
		`{"choices":[{"index":1,"delta":{"content":"second choice"}},{"index":0,"delta":{"content":"first"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":0,"delta":{"content":"b"}}]}`,
		`{"choices":[null,{"index":0,"delta":{"content":"after null"}}]}`,
		`{"choices":[{"index":0,"delta":{"Content":"case folded key"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"dup","content":"last wins"}}]}`,
		`{"CHOICES":[{"index":0,"delta":{"content":"x"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"parts"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"content":7}}]}`,
		`{"choices":[{"index":"0","delta":{"content":"string index"}}]}`,
		`{"choices":[{"index":-0,"delta":{"content":"minus zero"}}]}`,
		`{"choices":[{"index":1e0,"delta":{"content":"exp index"}}]}`,
		`{"choices":[{"index":0,"delta":{"refusal":"I can't"}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"hm"}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"","reasoning":""}}]}`,
		`{"choices":[{"index":0,"finish_reason":""}]}`,
		`{"choices":[{"index":0,"finish_reason":7}]}`,
		`{"choices":{"index":0}}`,
		`{"choices":[1,2]}`,
		`{"model":"","choices":[]}`,
		`{"model":7}`,
		`{"model":"m\u00e9\ud83d\ude00"}`,
		`{"model":"lone \ud800 surrogate"}`,
		"{\"model\":\"bad utf8 \xff\xfe\"}",
		"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"bad \xc3 utf8\"}}]}",
		"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"raw é utf8\"}}]}",
		"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ctl \x01\"}}]}",
		`{"choices":[{"index":0,"delta":{"content":"escapes \" \\ \/ \b \f \n \r \t \u0041 \u00e9"}}]}`,
		`{"usage":{"prompt_tokens":1.0,"completion_tokens":2}}`,
		`{"usage":{"prompt_tokens":-1}}`,
		`{"usage":{"prompt_tokens":2147483648}}`,
		`{"usage":{"prompt_tokens":2147483647,"completion_tokens":0}}`,
		`{"usage":{"prompt_tokens":null,"completion_tokens":null,"prompt_tokens_details":null}}`,
		`{"usage":{"prompt_tokens_details":{"cached_tokens":4,"reasoning_tokens":9},"completion_tokens_details":{"cached_tokens":1,"reasoning_tokens":2}}}`,
		`{"usage":{"prompt_tokens_details":{"Cached_tokens":4}}}`,
		`{"usage":{"prompt_tokens_details":[]}}`,
		`{"usage":[]}`,
		`{"usage":{"prompt_tokens":"5"}}`,
		`{"error":null,"choices":[]}`,
		`{"error":{"message":"boom"}}`,
		`{"object":"error","message":"boom"}`,
		`{"object":"\u0065rror","message":"boom"}`,
		`{"object":7,"choices":[]}`,
		`{"message":{"deep":[1,{"a":[true,false,null]}]},"choices":[]}`,
		`{"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		`{"x":01}`, `{"x":1.}`, `{"x":.5}`, `{"x":1e}`, `{"x":-}`, `{"x":tru}`, `{"x":nul}`,
		`{"x":"\x"}`, `{"x":"\u12"}`, `{"x":"unterminated}`, `{"x":1,}`, `{,}`, `{"x" 1}`,
		`{} {}`, `{}  `, ` {} `, `null`, `[]`, `"str"`, `7`, ``, ` `, `{"\u0063hoices":[]}`,
		`{"choices":[{"index":0,"delta":{"content":"x"}}],"choices":[]}`,
		// Tool calls: every shape either path may take.
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c\u0032","function":{"name":"g"}},{"index":2,"id":"c3","function":{"name":"h","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0},{"index":1,"id":""},{"index":2,"function":null},{"index":3,"function":{"name":"","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a"},{"index":1,"id":"b"},{"index":2,"id":"c"},{"index":3,"id":"d"},{"index":4,"id":"e"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"no index","function":{"name":"f"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":null,"id":null,"type":null,"function":{"name":null,"arguments":null}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[null]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":null,"content":"x"}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":{"index":0}}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[7,{"index":0,"id":"x"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":"0","id":"x"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"id":"x"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1.5,"id":"x"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":99999999999999999999,"id":"x"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":7}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":"f"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":7,"arguments":{}}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"ID":"x","Function":{"Name":"f"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","id":"y"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","name":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"Tool_calls":[{"index":0,"id":"x"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x"}],"tool_calls":[]}}]}`,
		`{"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"id":"other choice"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"both","tool_calls":[{"index":0,"id":"x","function":{"name":"f","arguments":"\u0000"}}]},"finish_reason":"tool_calls"}]}`,
		"{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"bad \xff\",\"function\":{\"arguments\":\"\xc3\"}}]}}]}",
		// The legacy function_call.
		`{"choices":[{"index":0,"delta":{"function_call":{"name":"f","arguments":""}}}]}`,
		`{"choices":[{"index":0,"delta":{"function_call":null,"content":"x"}}]}`,
		`{"choices":[{"index":0,"delta":{"function_call":{"arguments":7}}}]}`,
		`{"choices":[{"index":0,"delta":{"function_call":"f"}}]}`,
		`{"choices":[{"index":0,"delta":{"function_call":{"name":"f"},"tool_calls":[{"index":0,"id":"c","function":{"name":"g"}}]}}]}`,
		// Groq's x_groq: an id (the fast way), usage (the slow way).
		`{"x_groq":{"id":"req_1"},"choices":[{"index":0,"delta":{"content":"a"}}]}`,
		`{"x_groq":{"id":"req_1","usage":{"prompt_tokens":3,"completion_tokens":4}},"choices":[]}`,
		`{"x_groq":{"usage":null}}`,
		`{"x_groq":{"Usage":{"prompt_tokens":3}}}`,
		`{"x_groq":null}`,
		`{"x_groq":"req_1"}`,
		`{"x_groq":{"usage":[]}}`,
		`{"usage":{"completion_tokens":5},"x_groq":{"usage":{"completion_tokens":9}}}`,
	)
	return out
}

// fuzzCorpusValues reads the []byte values of a 'go test fuzz v1' file.
func fuzzCorpusValues(t testing.TB, name string) [][]byte {
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if lit, ok := strings.CutPrefix(line, "[]byte("); ok {
			if v, err := strconv.Unquote(strings.TrimSuffix(lit, ")")); err == nil {
				out = append(out, []byte(v))
			}
		}
	}
	return out
}

// TestFastPathMatchesEncodingJSON: on every event of the corpus, the fast
// path either declines or gives exactly what encoding/json gives; and it
// takes the common shapes (OpenAI's and the fake's chunks), or it would
// be no faster.
func TestFastPathMatchesEncodingJSON(t *testing.T) {
	took := map[string]bool{}
	for _, data := range chunkCorpus(t) {
		if msg := fastSlowDiff([]byte(data)); msg != "" {
			t.Error(msg)
		}
		fs, _ := freshStream()
		fast, _, _ := chathook.New()
		_, took[data] = fast(fs, []byte(data))
	}
	for _, data := range append(ssetest.OpenAIStreamData()[:5],
		// OpenAI's tool-call chunks (testdata/stream/openai_tool_call.sse).
		`{"id":"chatcmpl-tc1","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_tc","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"id":"chatcmpl-tc1","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_tc","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"location"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"id":"chatcmpl-tc1","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_tc","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"id":"chatcmpl-fake-3","object":"chat.completion.chunk","created":1727000000,"model":"fake-model","choices":[{"index":0,"delta":{"content":" The"},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"choices":[{"index":0,"delta":{"content":"escapes \" \\ \/ \b \f \n \r \t \u0041 \u00e9"}}]}`,
	) {
		if !took[data] {
			t.Errorf("the fast path declined a common chunk: %s", data)
		}
	}
}

// FuzzChunkFastPath: on any event data the fast path declines or agrees
// with encoding/json.
func FuzzChunkFastPath(f *testing.F) {
	for _, data := range chunkCorpus(f) {
		f.Add([]byte(data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if msg := fastSlowDiff(data); msg != "" {
			t.Fatal(msg)
		}
	})
}

// The request body is what json.Marshal makes of the map it replaced.
func TestPayloadMatchesMap(t *testing.T) {
	temp := 0.7
	zero := 0.0
	for _, tc := range []struct {
		name string
		req  Request
	}{
		{"plain", Request{Messages: []Message{{Role: "user", Content: "Say four words."}}}},
		{"capped", Request{MaxTokens: 64, Temperature: &temp, Messages: []Message{{Role: "user", Content: "x"}}}},
		{"zero temperature", Request{Temperature: &zero, Messages: []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}}},
		{"escapes", Request{Messages: []Message{{Role: "user", Content: "quote \" \\ <b> & é \u2028 \x01 \x7f \xff"}}}},
		{"no messages", Request{}},
	} {
		for _, model := range []string{"fake-model", "odd \"model\" <&>"} {
			for _, opts := range []bool{true, false} {
				o := OpenAI("http://fake/v1", WithModel(model))
				got, err := o.payload(tc.req, opts)
				if err != nil {
					t.Fatal(err)
				}
				body := map[string]any{"model": model, "messages": tc.req.Messages, "stream": true}
				if opts {
					body["stream_options"] = map[string]bool{"include_usage": true}
				}
				if tc.req.MaxTokens > 0 {
					body["max_tokens"] = tc.req.MaxTokens
				}
				if tc.req.Temperature != nil {
					body["temperature"] = *tc.req.Temperature
				}
				want, _ := json.Marshal(body)
				if !bytes.Equal(got, want) {
					t.Errorf("%s, model %q, stream_options %v:\n got %s\nwant %s", tc.name, model, opts, got, want)
				}
			}
		}
	}
}

// BenchmarkStreamDecode times the stream timer on a fake-shaped answer of
// 64 token events fed in one read per event, as over a socket: the SSE
// parser and the chunk decoder, fast path (default) and encoding/json.
func BenchmarkStreamDecode(b *testing.B) {
	prefix := `data: {"id":"chatcmpl-fake-3","object":"chat.completion.chunk","created":1727000000,"model":"fake-model","choices":[`
	var events [][]byte
	events = append(events, []byte(prefix+`{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n"))
	for i := range 64 {
		events = append(events, []byte(prefix+`{"index":0,"delta":{"content":" w`+strconv.Itoa(i)+`"},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n"))
	}
	events = append(events, []byte(prefix+`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`+"\n\n"+
		prefix+`],"usage":{"prompt_tokens":12,"completion_tokens":64,"total_tokens":76,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`+"\n\n"+
		"data: [DONE]\n\n"))
	for _, mode := range []string{"fast", "encoding-json"} {
		b.Run(mode, func(b *testing.B) {
			id := func(s string) string { return s }
			for b.Loop() {
				rec := Record{TTFT: NotObserved, FirstAnswer: NotObserved, LastToken: NotObserved}
				st := newStreamTimer(&rec, protocol.Chat, id, nil)
				if mode != "fast" {
					_, slow, _ := chathook.New()
					st.emit = func(typ string, data []byte, evID string) {
						st.st.now++
						if tok := slow(&st.st, data); tok {
							rec.TokenEvents++
						}
					}
				}
				for i, ev := range events {
					if err := st.feed(ev, time.Duration(i)*time.Millisecond); err != nil {
						b.Fatal(err)
					}
				}
				st.finish()
				if rec.TokenEvents != 64 || !st.st.done {
					b.Fatalf("%d token events, done %v", rec.TokenEvents, st.st.done)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)+2), "ns/event")
		})
	}
}

// The template (chunkscan.Template) reads a chunk as the whole scan does: with
// every chunk of the corpus as the template, every corpus chunk and the
// template with other texts in place of its own (escapes, raw UTF-8,
// invalid bytes, quotes that would end the string early, an empty text)
// give either no match or exactly the facts chunkscan.Scan finds.
func TestChunkTemplateAgreesWithTheWholeScan(t *testing.T) {
	corpus := chunkCorpus(t)
	texts := []string{"", "x", " The", `\"q\"`, `\u00e9`, `\ud83d\ude00`, "é", "\xff", "\x01", `\`, `"`, `a","x":"b`, `\u12`, `a\`, "a\"}}]}"}
	templates, matched := 0, 0
	for _, a := range corpus {
		var fa chunkscan.Facts
		if !chunkscan.Scan([]byte(a), &fa) {
			continue
		}
		var tpl chunkscan.Template
		tpl.Keep([]byte(a), &fa)
		if !tpl.Held() {
			continue
		}
		templates++
		candidates := append([]string{}, corpus...)
		for _, text := range texts {
			candidates = append(candidates, a[:fa.Content.Start]+text+a[fa.Content.End:])
		}
		for _, b := range candidates {
			var fm, ff chunkscan.Facts
			if !tpl.Match([]byte(b), &fm) {
				continue
			}
			matched++
			if !chunkscan.Scan([]byte(b), &ff) || fm != ff {
				t.Errorf("template %q\nchunk %q\nmatch: %+v\nwhole scan (ok %v): %+v", a, b, fm, chunkscan.Scan([]byte(b), &ff), ff)
			}
		}
	}
	if templates < 5 || matched < templates*len(texts)/2 {
		t.Errorf("%d corpus chunks make a template, %d chunks matched one: the test proves little", templates, matched)
	}
	t.Logf("%d templates, %d chunks matched", templates, matched)
}
