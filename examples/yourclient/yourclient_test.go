// Package yourclient tests your own client code against the fake provider,
// and measures it with a Provider of your own.
package yourclient_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// newClient is how your code builds its client. In production hc is
// http.DefaultClient and base your provider's URL; in tests, the fake's
// in-memory client (any URL reaches it) or its loopback server.
func newClient(base string, hc *http.Client) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithAPIKey("test-key"), // the fake accepts any key
		option.WithMaxRetries(0),      // first-attempt truth: a retry would hide a 529
	)
}

// ask streams one answer with the official client, unchanged.
func ask(ctx context.Context, c openai.Client, question string) (string, error) {
	stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:    "fake-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(question)},
	})
	defer stream.Close()
	var answer strings.Builder
	for stream.Next() {
		for _, choice := range stream.Current().Choices {
			answer.WriteString(choice.Delta.Content)
		}
	}
	return answer.String(), stream.Err()
}

// The fake speaks OpenAI's streaming format, so openai-go parses it as it
// parses the real thing; inside synctest, the fake's latencies are exact.
func TestOfficialClientInMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := fakeprovider.New(fakeprovider.Profile{
			TTFT:         fakeprovider.Fixed(200 * time.Millisecond),
			ITL:          fakeprovider.Fixed(10 * time.Millisecond),
			OutputTokens: fakeprovider.Fixed(64),
		})
		t.Cleanup(fake.Close)
		c := newClient("http://fake/v1", fake.Client())

		start := time.Now()
		answer, err := ask(context.Background(), c, "Why do caches matter?")
		if err != nil {
			t.Fatal(err)
		}
		// The first token at 200 ms, then 63 more 10 ms apart: 830 ms,
		// to the nanosecond, in no real time.
		if took := time.Since(start); answer == "" || took != 830*time.Millisecond {
			t.Errorf("answer %q after %v, want text after 830ms", answer, took)
		}
	})
}

// The same client over a real socket: NewServer serves the fake on a
// loopback port (real time, so no latency is judged here).
func TestOfficialClientOverLoopback(t *testing.T) {
	fake := fakeprovider.New(fakeprovider.Profile{TTFT: fakeprovider.Fixed(time.Duration(0)), ITL: fakeprovider.Fixed(time.Duration(0))})
	t.Cleanup(fake.Close)
	srv := fakeprovider.NewServer(fake)
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)

	answer, err := ask(context.Background(), newClient(srv.URL+"/v1", &http.Client{Transport: tr}), "Hello?")
	if err != nil || answer == "" {
		t.Fatalf("answer %q, error %v", answer, err)
	}
}

// sdkProvider measures calls made with your own client. A
// latencytest.Provider is one method: make one call, return its Record
// (TTFT, Total, and Err when it failed; a failure is data, never a panic;
// the gaps between tokens when the call streams). Any Go call that takes
// a context can be wrapped the same way.
type sdkProvider struct {
	client openai.Client
	model  string
}

func (p sdkProvider) Call(ctx context.Context, req latencytest.Request) latencytest.Record {
	limit := req.HardCap // so that a stalled stream never hangs the test
	if limit <= 0 {
		limit = latencytest.DefaultHardCap
	}
	callCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	params := openai.ChatCompletionNewParams{Model: p.model}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
		} else {
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		}
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}

	rec := latencytest.Record{Start: time.Now(), TTFT: latencytest.NotObserved, FirstAnswer: latencytest.NotObserved}
	// The trace ID goes out as X-Request-ID: the fake keys each request's
	// randomness to it, and a real provider's logs can find the request.
	stream := p.client.Chat.Completions.NewStreaming(callCtx, params, option.WithHeader("X-Request-ID", req.ID))
	defer stream.Close()
	for stream.Next() {
		for _, choice := range stream.Current().Choices {
			if choice.Delta.Content == "" {
				continue
			}
			at := time.Since(rec.Start)
			if rec.TTFT == latencytest.NotObserved {
				rec.TTFT, rec.FirstAnswer = at, at
			} else { // the gaps between tokens: a stall shows in MaxGap
				rec.Gaps.Add(at - rec.LastToken)
				rec.MaxGap = max(rec.MaxGap, at-rec.LastToken)
			}
			rec.LastToken = at
		}
	}
	rec.Total = time.Since(rec.Start)

	var apiErr *openai.Error
	switch err := stream.Err(); {
	case err == nil && rec.TTFT == latencytest.NotObserved:
		rec.Status, rec.Err = http.StatusOK, latencytest.ClassEmptyStream
	case err == nil:
		rec.Status = http.StatusOK
	case errors.As(err, &apiErr):
		rec.Status, rec.Err, rec.Detail = apiErr.StatusCode, latencytest.HTTPClass(apiErr.StatusCode), err.Error()
	case ctx.Err() != nil: // the run ended (its deadline, a cancel)
		rec.Err, rec.Detail = latencytest.ClassCanceled, err.Error()
	case callCtx.Err() != nil: // this call's own limit
		rec.Err, rec.Detail = latencytest.ClassTotalTimeout, err.Error()
	default:
		rec.Err, rec.Detail = latencytest.ClassTransport, err.Error()
	}
	return rec
}

// Your provider under an SLO: the runner, the statistics and the failure
// report work as with the built-in one.
func TestYourProviderUnderAnSLO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := fakeprovider.New(fakeprovider.Profile{
			Seed:         1,
			TTFT:         fakeprovider.LogNormal(300*time.Millisecond, 900*time.Millisecond),
			ITL:          fakeprovider.Fixed(10 * time.Millisecond),
			OutputTokens: fakeprovider.Fixed(32),
			Script:       []fakeprovider.ScriptEntry{{ID: "c4-0042", Status: 529}}, // one overloaded answer
		})
		t.Cleanup(fake.Close)
		p := sdkProvider{client: newClient("http://fake/v1", fake.Client()), model: "fake-model"}

		r := latencytest.Batch{Requests: 100, Concurrency: 4}.Measure(t, p)
		sloassert.Check(t, r,
			sloassert.Q(sloassert.TTFT, 0.50, 400*time.Millisecond),
			sloassert.Q(sloassert.TTFT, 0.95, time.Second),
			sloassert.MaxErrorRate(0.02),
		)
		// The 529 reached the record as an error class, not a panic.
		if got := r.Errors(); got["http_529"] != 1 || len(got) != 1 {
			t.Errorf("errors %v, want one http_529", got)
		}
	})
}
