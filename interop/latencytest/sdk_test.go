package latencytest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/tailguard/tailguard/latencytest"
)

// sdkStream streams one answer with the official SDK of api through hc,
// reading every event as an application would.
func sdkStream(ctx context.Context, api protocol, hc *http.Client) error {
	switch api {
	case responsesAPI:
		c := openai.NewClient(option.WithBaseURL("http://fake/v1/"), option.WithHTTPClient(hc),
			option.WithAPIKey(key), option.WithMaxRetries(0))
		s := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "m-1",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
		defer s.Close()
		for s.Next() {
			_ = s.Current().Type
		}
		return s.Err()
	case messagesAPI:
		c := anthropic.NewClient(aoption.WithBaseURL("http://fake/"), aoption.WithHTTPClient(hc),
			aoption.WithAPIKey(key), aoption.WithMaxRetries(0))
		s := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: "m-1", MaxTokens: 100,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
		defer s.Close()
		var msg anthropic.Message
		for s.Next() {
			if err := msg.Accumulate(s.Current()); err != nil {
				return err
			}
		}
		return s.Err()
	case geminiAPI:
		c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI, HTTPClient: hc,
			HTTPOptions: genai.HTTPOptions{BaseURL: "http://fake/", APIVersion: "v1beta"}})
		if err != nil {
			return err
		}
		for _, err := range c.Models.GenerateContentStream(ctx, "m-1", genai.Text("hi"), nil) {
			if err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("no SDK for %s", api)
}

// openai-go's Responses stream and anthropic-sdk-go's Messages stream,
// measured through Instrument, give the built-in providers' records to
// the nanosecond (virtual time): every clock, the usage, the tool calls,
// the answer. The path tells Instrument the protocol; on a gateway's path
// that names none, the events do.
func TestInstrumentMatchesProtocolProviders(t *testing.T) {
	for _, f := range protoFixtures {
		for _, path := range []string{"", "/gateway/llm"} {
			t.Run(f.file+path, func(t *testing.T) {
				blocks := f.read(t)
				synctest.Test(t, func(t *testing.T) {
					req := latencytest.Request{ID: "p-1", TotalTimeout: time.Minute, Messages: []latencytest.Message{{Role: "user", Content: "hi"}}}
					want := builtIn(f.api, replay(blocks)).Call(context.Background(), req)
					rt := replay(blocks).Transport
					if path != "" { // the SDK's request goes to a path that names no protocol
						inner := rt
						rt = roundTrip(func(r *http.Request) (*http.Response, error) {
							r = r.Clone(r.Context())
							r.URL.Path = path
							return inner.RoundTrip(r)
						})
					}
					var sent http.Header
					hc := &http.Client{Transport: latencytest.Instrument(roundTrip(func(r *http.Request) (*http.Response, error) {
						sent = r.Header.Clone()
						return rt.RoundTrip(r)
					}))}
					got := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error { return sdkStream(ctx, f.api, hc) }).Call(context.Background(), req)
					f.checkContent(t, "built-in", want)
					f.checkTimes(t, "built-in", want)
					f.checkContent(t, "through Instrument", got)
					f.checkTimes(t, "through Instrument", got)
					if got.TTFB != want.TTFB || got.Total != want.Total || len(got.Attempts) != 1 || got.Attempts[0].TTFT != want.TTFT {
						t.Errorf("instrumented ttfb %v total %v attempts %+v; built-in ttfb %v total %v ttft %v",
							got.TTFB, got.Total, got.Attempts, want.TTFB, want.Total, want.TTFT)
					}
					// anthropic-sdk-go v2 sends the key as a bearer token (the
					// API takes either header); Instrument redacts both.
					if f.api == messagesAPI && (sent.Get("X-Api-Key") != key && sent.Get("Authorization") != "Bearer "+key || sent.Get("Anthropic-Version") == "") {
						t.Errorf("the SDK sent %v", sent)
					}
					if strings.Contains(fmt.Sprintf("%+v", got), key) {
						t.Errorf("the key reached the record: %+v", got)
					}
				})
			})
		}
	}
}

// anthropic-sdk-go retrying a 529 overloaded_error through Instrument:
// two attempts, the first http_529 (the SDK closes its body unread, so it
// has no detail), the record's stream figures from the second, timed from the
// call's start (backoff included), as the user waited.
func TestInstrumentAnthropicRetry(t *testing.T) {
	f := protoFixtures[2] // messages_text.sse
	blocks := f.read(t)
	synctest.Test(t, func(t *testing.T) {
		n := 0
		stream := replay(blocks).Transport
		hc := &http.Client{Transport: latencytest.Instrument(roundTrip(func(r *http.Request) (*http.Response, error) {
			n++
			if n == 1 {
				time.Sleep(40 * time.Millisecond)
				return &http.Response{StatusCode: 529, Header: http.Header{"Content-Type": {"application/json"}, "X-Should-Retry": {"true"}},
					Body:    io.NopCloser(strings.NewReader(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
					Request: r}, nil
			}
			return stream.RoundTrip(r)
		}))}
		rec := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error {
			c := anthropic.NewClient(aoption.WithBaseURL("http://fake/"), aoption.WithHTTPClient(hc), aoption.WithAPIKey(key), aoption.WithMaxRetries(1))
			s := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: "m-1", MaxTokens: 100,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
			defer s.Close()
			for s.Next() {
			}
			return s.Err()
		}).Call(context.Background(), latencytest.Request{ID: "r-1", TotalTimeout: time.Minute})
		if len(rec.Attempts) != 2 || rec.Attempts[0].Err != latencytest.HTTPClass(529) ||
			rec.Attempts[0].ID != "r-1" || rec.Attempts[1].ID != "r-1-a2" || !rec.Attempts[1].OK() {
			t.Fatalf("attempts %+v", rec.Attempts)
		}
		off := rec.Attempts[1].Start
		if off < 40*time.Millisecond || !rec.OK() || rec.TTFT != off+blockAt(f.tokens[0]) || rec.Total != off+blockAt(f.end) || rec.Content != f.content {
			t.Errorf("record %+v: want the second attempt's figures from %v", rec, off)
		}
	})
}
