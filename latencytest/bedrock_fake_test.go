package latencytest

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/protocol"
)

// bedrockFake is a fake with reasoning, tools on request and a script of
// faults, for the Bedrock tests.
func bedrockFakeProfile() fakeprovider.Profile {
	return fakeprovider.Profile{Model: "anthropic.claude-3-5-sonnet-20240620-v1:0", Seed: 3,
		TTFT: fakeprovider.Fixed(200 * time.Millisecond), ITL: fakeprovider.Fixed(10 * time.Millisecond),
		OutputTokens: fakeprovider.Fixed(8), ReasoningTokens: fakeprovider.Fixed(3), SlotsPerReplica: 1,
		Script: []fakeprovider.ScriptEntry{
			{ID: "cold", ColdStart: 30 * time.Second},
			{ID: "tool", Tokens: 6},
			{ID: "s429", Status: 429},
			{ID: "s529", Status: 529},
			{ID: "err", Fault: "error_event", AfterToken: 5},
			{ID: "bad", Fault: "malformed", AfterToken: 5},
			{ID: "cut", Fault: "disconnect", AfterToken: 5},
			{ID: "stall", Stall: &fakeprovider.ScriptStall{AfterToken: 4, Duration: 20 * time.Second}},
		}}
}

// The fake's ConverseStream answer, decoded by the built-in provider on
// synctest's clock, in memory: exact times (first token at 200 ms, the
// 3 reasoning tokens first, the answer from 230 ms, 11 tokens 10 ms
// apart), usage, the server's latencyMs beside the client's Total, the
// injected faults each in its class (throttling http_429, 529 as sent,
// the mid-stream modelStreamErrorException http_424, a bad CRC
// bad_stream, a cut stream truncated), cold starts and stalls timed and
// named by Tailguard-Injected; and the whole answer (/converse).
func TestBedrockFakeTimed(t *testing.T) {
	for _, stream := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			prof := bedrockFakeProfile()
			f := fakeprovider.New(prof)
			defer f.Close()
			opts := []Option{WithHTTPClient(f.Client())}
			if !stream {
				opts = append(opts, WithoutStreaming())
			}
			p := Bedrock("http://fake", prof.Model, opts...)
			call := func(id string) Record {
				return p.Call(context.Background(), Request{ID: id, MaxTokens: 100, Messages: []Message{{Role: "user", Content: "hello there"}}})
			}
			rec := call("plain")
			if !stream {
				if rec.Err != "" || rec.Total != 200*time.Millisecond+10*time.Millisecond*10 || rec.ServerLatency != rec.Total ||
					rec.Content == "" || rec.CompletionTokens != 11 || rec.FinishReason != "end_turn" {
					t.Fatalf("whole answer: %+v", rec)
				}
				return
			}
			if rec.Err != "" || rec.TTFT != 200*time.Millisecond || rec.FirstAnswer != 230*time.Millisecond ||
				rec.LastToken != 300*time.Millisecond || rec.TokenEvents != 11 || rec.MaxGap != 10*time.Millisecond {
				t.Fatalf("plain: %+v", rec)
			}
			if rec.CompletionTokens != 11 || !rec.UsageReported || rec.PromptTokens == 0 || rec.FinishReason != "end_turn" ||
				rec.Content != " The tail is where users live; measure it" && rec.Content == "" {
				t.Errorf("plain: usage and answer %+v", rec)
			}
			if rec.ServerLatency != 300*time.Millisecond {
				t.Errorf("the server's latencyMs is kept beside Total: %v (Total %v)", rec.ServerLatency, rec.Total)
			}
			if got := f.Served()[0].Protocol; got != fakeprovider.ProtocolBedrock {
				t.Errorf("served as %q", got)
			}
			if rec := call("cold"); rec.TTFT != 30*time.Second+200*time.Millisecond || rec.Injected != "cold_start=30s" {
				t.Errorf("cold start: TTFT %v, injected %q", rec.TTFT, rec.Injected)
			}
			if rec := call("stall"); rec.MaxGap != 20*time.Second+10*time.Millisecond || rec.Injected != "stall" || rec.Err != "" {
				t.Errorf("stall: MaxGap %v, injected %q, err %q", rec.MaxGap, rec.Injected, rec.Err)
			}
			for id, class := range map[string]string{"s429": "http_429", "s529": "http_529", "err": "http_424",
				"bad": ClassBadStream, "cut": ClassTruncated} {
				if rec := call(id); rec.Err != class {
					t.Errorf("%s: class %q (%s), want %q", id, rec.Err, rec.Detail, class)
				}
			}
		})
	}
}

// Tool calls from the fake, one and parallel, in both shapes: each
// toolUse block's start is a tool call with its name, its input deltas
// the arguments; the answer is a success (stopReason tool_use).
func TestBedrockFakeToolCalls(t *testing.T) {
	for _, parallel := range []int{1, 3} {
		synctest.Test(t, func(t *testing.T) {
			prof := fakeprovider.Profile{Model: "m", TTFT: fakeprovider.Fixed(100 * time.Millisecond),
				ITL: fakeprovider.Fixed(10 * time.Millisecond), OutputTokens: fakeprovider.Fixed(8),
				ToolCalls: fakeprovider.ToolCalls{Probability: 1, ArgumentsTokens: fakeprovider.Fixed(4), Parallel: fakeprovider.Fixed(parallel)}}
			f := fakeprovider.New(prof)
			defer f.Close()
			p := Bedrock("http://fake", "m", WithHTTPClient(f.Client()))
			rec := p.Call(context.Background(), Request{ID: "t-1", Messages: []Message{{Role: "user", Content: "call"}}})
			// The first call's name at 100 ms, its 4 argument tokens to
			// 130 ms; the calls together 4*parallel tokens.
			if rec.Err != "" || rec.ToolCalls != parallel || rec.FirstToolCall != 100*time.Millisecond ||
				rec.ToolArgsDone != 130*time.Millisecond || rec.FinishReason != "tool_use" || rec.Content != "" {
				t.Fatalf("parallel %d: %+v", parallel, rec)
			}
			if rec.CompletionTokens != 4*parallel {
				t.Errorf("completion tokens %d, want %d", rec.CompletionTokens, 4*parallel)
			}
			if p.Describe().Kind != "bedrock-converse (streaming)" || protocol.Lookup("bedrock") != protocol.Bedrock {
				t.Errorf("kind %q", p.Describe().Kind)
			}
		})
	}
}

// Queueing on the fake, in Bedrock's protocol: with one slot, the second
// of two requests sent together waits for the first (300 ms) and says so
// in Tailguard-Injected; a Batch over the fake runs as over the others.
func TestBedrockFakeQueueing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := bedrockFakeProfile()
		prof.ReasoningTokens = fakeprovider.Fixed(0)
		f := fakeprovider.New(prof)
		defer f.Close()
		p := Bedrock("http://fake", prof.Model, WithHTTPClient(f.Client()))
		res, err := Batch{Requests: 2, Concurrency: 2, NoWarmup: true}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		ttfts := map[time.Duration]string{}
		for _, r := range res.Records {
			ttfts[r.TTFT] = r.Injected
		}
		// 200 ms TTFT, 7 gaps of 10 ms: the first ends at 270 ms.
		if len(ttfts) != 2 || ttfts[200*time.Millisecond] != "" || ttfts[470*time.Millisecond] != "queued=270ms" {
			t.Errorf("TTFTs and injections %v", ttfts)
		}
	})
}

// A protocol of the user's own that frames its stream (NewFramer) and
// names its stream's Content-Type (StreamType) is measured as a built-in
// one is: the answer's Content-Type is checked against its StreamType,
// not looked up in the built-in table (which does not hold it).
func TestOwnFramedProtocol(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := bedrockFakeProfile()
		f := fakeprovider.New(prof)
		defer f.Close()
		own := *protocol.Bedrock
		own.Name, own.Title = "converse-own", "Converse (own)"
		p := NewLLM("http://fake", &own, WithHTTPClient(f.Client()), WithModel(prof.Model))
		rec := p.Call(context.Background(), Request{ID: "own", MaxTokens: 100, Messages: []Message{{Role: "user", Content: "hello there"}}})
		if rec.Err != "" || rec.TTFT != 200*time.Millisecond || rec.TokenEvents != 11 {
			t.Fatalf("own framed protocol: %s %s %+v", rec.Err, rec.Detail, rec)
		}
	})
}
