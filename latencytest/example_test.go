package latencytest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// Quantiles are fractions, computed by linear interpolation between closest
// ranks (numpy's default); the sample is never reordered.
func ExampleSample_Quantile() {
	s := latencytest.Sample{400 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond, 200 * time.Millisecond, 5 * time.Second}
	// sorted: 100 200 300 400 5000 ms; p99: h = 4×0.99 = 3.96: 400 + 0.96×4600 = 4816 ms
	fmt.Println(s.Quantile(0.5), s.Quantile(0.9), s.Quantile(0.99))
	fmt.Printf("CV %.0f%%, p99/p50 %.1f\n", s.CV(), s.TailRatio())
	fmt.Println(s[0]) // untouched
	// A failed request counts as infinitely slow: a quantile that reaches
	// it is Failed.
	s = append(s, latencytest.Failed)
	fmt.Println(s.Quantile(0.5), s.Quantile(0.99) == latencytest.Failed)
	// Output:
	// 300ms 3.16s 4.816s
	// CV 177%, p99/p50 16.1
	// 400ms
	// 350ms true
}

// A batch against the in-memory fake: warm-up discarded by trace ID, every
// request accounted for, failures counted by class.
func ExampleBatch_Run() {
	f := fakeprovider.New(fakeprovider.Profile{
		TTFT:         fakeprovider.Fixed(time.Duration(0)),
		ITL:          fakeprovider.Fixed(time.Duration(0)),
		OutputTokens: fakeprovider.Fixed(8),
		Script:       []fakeprovider.ScriptEntry{{ID: "c4-0005", Status: 529}, {ID: "c4-0011", Fault: fakeprovider.FaultEmpty}},
	})
	defer f.Close()
	p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
	r, err := latencytest.Batch{Requests: 20, Warmup: 2, Concurrency: 4, Load: latencytest.Load{MaxTokens: 8}}.Run(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", r.Counts())
	fmt.Println(r.Errors(), r.ErrorRate())
	fmt.Println(r.Records[0].ID, r.Records[0].Warmup, r.Records[2].ID, r.Records[2].Warmup)
	// Output:
	// {Planned:22 Sent:22 Kept:18 Discarded:2 Failed:2 Cancelled:0}
	// map[empty_stream:1 http_529:1] 0.1
	// c4-0000 true c4-0002 false
}

// quick is a fake model "m-1" that sends its first token after 1 ms and
// each of its 5 tokens 1 ms after the one before.
var quick = fakeprovider.Profile{
	Model:        "m-1",
	TTFT:         fakeprovider.Fixed(time.Millisecond),
	ITL:          fakeprovider.Fixed(time.Millisecond),
	OutputTokens: fakeprovider.Fixed(5),
}

// OpenAI measures a streamed chat completion at baseURL (the API's
// root, ".../v1"): one Call, one Record with every clock of the answer.
// Here against the in-memory fake, in real time (inside synctest.Test,
// the fake's clock is virtual and every figure exact).
func ExampleOpenAI() {
	f := fakeprovider.New(quick)
	defer f.Close()
	p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("m-1"))
	defer p.CloseIdleConnections()
	rec := p.Call(context.Background(), latencytest.Request{ID: "r-1", MaxTokens: 16,
		Messages: []latencytest.Message{{Role: "user", Content: "hi"}}})
	fmt.Println(p.Describe().Kind)
	fmt.Println(rec.ID, rec.OK(), rec.Status, rec.Model, rec.FinishReason)
	fmt.Println("tokens:", rec.TokenEvents, "events,", rec.CompletionTokens, "by usage")
	// The fake waits 1 ms for the first token and 1 ms between tokens.
	fmt.Println("ttft >= 1ms:", rec.TTFT >= time.Millisecond, "total >= 5ms:", rec.Total >= 5*time.Millisecond)
	// Output:
	// openai-chat-completions (streaming)
	// r-1 true 200 m-1 stop
	// tokens: 5 events, 5 by usage
	// ttft >= 1ms: true total >= 5ms: true
}

// Anthropic measures a streamed Messages API answer at baseURL (the API's
// root, ".../v1"). The record has the same fields as any protocol's,
// finish reasons in the protocol's own words.
func ExampleAnthropic() {
	f := fakeprovider.New(quick)
	defer f.Close()
	p := latencytest.Anthropic("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("m-1"))
	defer p.CloseIdleConnections()
	rec := p.Call(context.Background(), latencytest.Request{ID: "a-1", MaxTokens: 16,
		Messages: []latencytest.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}})
	fmt.Println(p.Describe().Kind, p.Describe().Endpoint)
	fmt.Println(rec.ID, rec.OK(), rec.Status, rec.Model, rec.FinishReason, rec.TokenEvents)
	fmt.Println("served as:", f.Served()[0].Protocol)
	// Output:
	// anthropic-messages (streaming) http://fake/v1/messages
	// a-1 true 200 m-1 end_turn 5
	// served as: messages
}

// Gemini measures a streamed Gemini API answer at baseURL (the API's
// root with its version, ".../v1beta"): the model is in the path, the
// finish reason in Gemini's words.
func ExampleGemini() {
	f := fakeprovider.New(quick)
	defer f.Close()
	p := latencytest.Gemini("http://fake/v1beta", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("m-1"))
	defer p.CloseIdleConnections()
	rec := p.Call(context.Background(), latencytest.Request{ID: "g-1", MaxTokens: 16,
		Messages: []latencytest.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}})
	fmt.Println(p.Describe().Kind, p.Describe().Endpoint)
	fmt.Println(rec.ID, rec.OK(), rec.Status, rec.Model, rec.FinishReason, rec.TokenEvents)
	fmt.Println("served as:", f.Served()[0].Protocol)
	// Output:
	// gemini-generate-content (streaming) http://fake/v1beta/models/m-1:streamGenerateContent
	// g-1 true 200 m-1 STOP 5
	// served as: gemini
}

// Instrument measures the client you ship: wrap its transport, make the
// call inside Func, and every request the call makes is an attempt of the
// record, a retry included. Here "your client" is a plain POST that
// retries once on an error status; the fake answers the first attempt
// with a 529.
func ExampleInstrument() {
	f := fakeprovider.New(fakeprovider.Profile{
		TTFT:         fakeprovider.Fixed(time.Millisecond),
		ITL:          fakeprovider.Fixed(time.Duration(0)),
		OutputTokens: fakeprovider.Fixed(3),
		Script:       []fakeprovider.ScriptEntry{{ID: "y-1", Status: 529, Attempts: 1}},
	})
	defer f.Close()
	client := &http.Client{Transport: latencytest.Instrument(f.Transport())}
	ask := func(ctx context.Context) error { // your code, unchanged but for the transport
		for try := 0; ; try++ {
			req, _ := http.NewRequestWithContext(ctx, "POST", "http://fake/v1/chat/completions",
				strings.NewReader(`{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode < 300 || try == 1 {
				return err
			}
		}
	}
	rec := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error { return ask(ctx) }).
		Call(context.Background(), latencytest.Request{ID: "y-1"})
	for _, a := range rec.Attempts {
		fmt.Printf("attempt %s: status %d, ok %v, class %q\n", a.ID, a.Status, a.OK(), a.Err)
	}
	fmt.Println("record:", rec.OK(), rec.TokenEvents, "token events")
	// Output:
	// attempt y-1: status 529, ok false, class "http_529"
	// attempt y-1-a2: status 200, ok true, class ""
	// record: true 3 token events
}

// Sweep runs one batch at several concurrency levels, a Result per
// level, each with its own warm-up; each level's trace IDs say its
// concurrency.
func ExampleSweep() {
	f := fakeprovider.New(fakeprovider.Profile{
		TTFT:         fakeprovider.Fixed(time.Duration(0)),
		ITL:          fakeprovider.Fixed(time.Duration(0)),
		OutputTokens: fakeprovider.Fixed(4),
	})
	defer f.Close()
	p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
	sr, err := latencytest.Sweep{Batch: latencytest.Batch{Requests: 12, Warmup: 1}, Levels: []int{1, 4}}.Run(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, r := range sr.Results {
		last := r.Records[len(r.Records)-1]
		fmt.Printf("level %d: %+v, last %s\n", sr.Levels[i], r.Counts(), last.ID)
	}
	fmt.Println("served:", len(f.Served()))
	// Output:
	// level 1: {Planned:13 Sent:13 Kept:12 Discarded:1 Failed:0 Cancelled:0}, last c1-0012
	// level 4: {Planned:13 Sent:13 Kept:12 Discarded:1 Failed:0 Cancelled:0}, last c4-0012
	// served: 26
}
