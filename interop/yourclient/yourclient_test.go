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
		limit = 150 * time.Second // latencytest's default hard cap
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

// instrumented is the other way to measure your own client: wrap its
// transport with latencytest.Instrument and make the call inside
// latencytest.Func. Every request the client makes in the call (a retry
// included) is timed as the OpenAI provider times its own: headers, each
// SSE event as your client reads it, usage, end of body. retries is
// openai-go's own retry budget (option.WithMaxRetries).
func instrumented(fake *fakeprovider.Fake, retries int) latencytest.Provider {
	c := openai.NewClient(
		option.WithBaseURL("http://fake/v1"),
		option.WithHTTPClient(&http.Client{Transport: latencytest.Instrument(fake.Transport())}),
		option.WithAPIKey("test-key"),
		option.WithMaxRetries(retries),
	)
	return latencytest.Func(func(ctx context.Context, req latencytest.Request) error {
		params := openai.ChatCompletionNewParams{
			Model:         "fake-model",
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		}
		for _, m := range req.Messages {
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		}
		if req.MaxTokens > 0 {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
		stream := c.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()
		for stream.Next() {
		}
		return stream.Err()
	})
}

// openAIProvider is the library's own provider against the same fake.
func openAIProvider(fake *fakeprovider.Fake) latencytest.Provider {
	return latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(fake.Client()))
}

// Instrument around openai-go measures what the library's own OpenAI
// provider measures, to the nanosecond: same profile (a scripted 2 s stall
// included), same trace IDs, in virtual time.
func TestInstrumentedClientMatchesOpenAIProvider(t *testing.T) {
	profile := fakeprovider.Profile{
		Seed:         5,
		TTFT:         fakeprovider.LogNormal(250*time.Millisecond, time.Second),
		ITL:          fakeprovider.Fixed(10 * time.Millisecond),
		OutputTokens: fakeprovider.Fixed(48),
		Script:       []fakeprovider.ScriptEntry{{ID: "c2-0007", Stall: &fakeprovider.ScriptStall{AfterToken: 20, Duration: 2 * time.Second}}},
	}
	run := func(p func(*fakeprovider.Fake) latencytest.Provider) *latencytest.Result {
		var r *latencytest.Result
		synctest.Test(t, func(t *testing.T) {
			fake := fakeprovider.New(profile)
			defer fake.Close()
			var err error
			if r, err = (latencytest.Batch{NoWarmup: true, Requests: 30, Concurrency: 2}).Run(context.Background(), p(fake)); err != nil {
				t.Fatal(err)
			}
		})
		return r
	}
	want := run(openAIProvider)
	got := run(func(f *fakeprovider.Fake) latencytest.Provider { return instrumented(f, 0) })
	if len(got.Records) != len(want.Records) || len(want.Records) < 30 {
		t.Fatalf("%d and %d records", len(got.Records), len(want.Records))
	}
	stalls := 0
	for i, w := range want.Records {
		g := got.Records[i]
		if g.ID != w.ID || g.Err != "" || w.Err != "" || g.TTFT != w.TTFT || g.FirstAnswer != w.FirstAnswer || g.Total != w.Total ||
			g.MaxGap != w.MaxGap || g.TokenEvents != w.TokenEvents || g.CompletionTokens != w.CompletionTokens || g.PromptTokens != w.PromptTokens {
			t.Errorf("%s: openai-go through Instrument %+v\nthe OpenAI provider %+v", w.ID, g, w)
		}
		if g.MaxGap == 2*time.Second+10*time.Millisecond {
			stalls++
		}
	}
	if stalls != 1 {
		t.Errorf("%d records show the 2 s stall, want 1", stalls)
	}
	if got.TTFT().Quantile(0.99) != want.TTFT().Quantile(0.99) || got.Total().Quantile(0.5) != want.Total().Quantile(0.5) {
		t.Error("the quantiles differ")
	}
}

// openai-go retries a 529 by itself (its backoff: 0.5 s less up to 25%
// jitter, on real timers that synctest makes virtual). Measured through
// Instrument, the retry is not hidden: the first attempt fails, the call
// succeeds, and the result sets first-attempt and with-retry latency side
// by side. The retry is sent as "<trace ID>-a2", so the fake draws its
// fate anew instead of failing it again.
func TestRetriesAreMeasuredNotHidden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := fakeprovider.New(fakeprovider.Profile{
			TTFT:         fakeprovider.Fixed(200 * time.Millisecond),
			ITL:          fakeprovider.Fixed(10 * time.Millisecond),
			OutputTokens: fakeprovider.Fixed(64),
			Script: []fakeprovider.ScriptEntry{
				{ID: "c1-0003", Status: 529},
				{ID: "c1-0011", Status: 529}, {ID: "c1-0011-a2", Status: 529}, // fails twice
			},
		})
		t.Cleanup(fake.Close)

		r, err := latencytest.Batch{NoWarmup: true, Requests: 20}.Run(context.Background(), instrumented(fake, 2))
		if err != nil {
			t.Fatal(err)
		}
		if got := r.ErrorRate(); got != 0 {
			t.Errorf("with retries the error rate is %v, want 0", got)
		}
		calls, attempts := r.Attempts()
		if calls != 20 || attempts != 23 || r.Retried() != 2 {
			t.Errorf("calls %d, attempts %d, retried %d; want 20, 23, 2", calls, attempts, r.Retried())
		}
		if n := r.FirstAttempt().Failures(); n != 2 {
			t.Errorf("%d first attempts failed, want 2", n)
		}
		for _, rec := range r.Records {
			switch rec.ID {
			case "c1-0003":
				a := rec.Attempts
				if len(a) != 2 || a[0].Err != "http_529" || a[0].ID != "c1-0003" || !a[1].OK() || a[1].ID != "c1-0003-a2" {
					t.Fatalf("attempts %+v", a)
				}
				// The backoff is jittered; what follows from it is exact: the
				// answer's first token 200 ms and its end 830 ms after the retry.
				if back := a[1].Start; back <= 375*time.Millisecond || back > 500*time.Millisecond {
					t.Errorf("backoff %v, want (375ms, 500ms]", back)
				}
				if rec.TTFT != a[1].Start+200*time.Millisecond || rec.Total != a[1].Start+830*time.Millisecond || a[1].Total != 830*time.Millisecond {
					t.Errorf("TTFT %v, total %v after a retry at %v", rec.TTFT, rec.Total, a[1].Start)
				}
			case "c1-0011":
				if len(rec.Attempts) != 3 || rec.Attempts[1].Err != "http_529" || !rec.Attempts[2].OK() || rec.Attempts[2].ID != "c1-0011-a3" {
					t.Errorf("attempts %+v", rec.Attempts)
				}
			default:
				if len(rec.Attempts) != 1 || rec.Total != 830*time.Millisecond || rec.TTFT != 200*time.Millisecond {
					t.Errorf("%s: %+v", rec.ID, rec)
				}
			}
		}
		// First-attempt p99 counts the 529s as failures; with-retry p99
		// is a success, slower by the backoff.
		if got := r.FirstAttempt().Quantile(0.99); got != latencytest.Failed {
			t.Errorf("first-attempt p99 %v, want failed", got)
		}
		if with := r.Total().Quantile(0.99); with <= 830*time.Millisecond || with == latencytest.Failed {
			t.Errorf("with-retry p99 %v", with)
		}
		if box := r.Disclosure.Box(2).Answer; !strings.Contains(box, "retries: 2 of 20 calls retried, 23 attempts in all; first-attempt p99 failed vs with-retry p99 ") {
			t.Errorf("disclosure box 2: %s", box)
		}

	})
}

// Without retries (first-attempt truth, the library's default) the same
// script fails the same two calls, and the two samples agree.
func TestWithoutRetriesTheFirstAttemptIsTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := fakeprovider.New(fakeprovider.Profile{
			TTFT:   fakeprovider.Fixed(200 * time.Millisecond),
			Script: []fakeprovider.ScriptEntry{{ID: "c1-0003", Status: 529}, {ID: "c1-0011", Status: 529}},
		})
		t.Cleanup(fake.Close)
		r, err := latencytest.Batch{NoWarmup: true, Requests: 20}.Run(context.Background(), instrumented(fake, 0))
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Errors(); got["http_529"] != 2 || len(got) != 1 || r.Retried() != 0 {
			t.Errorf("errors %v, retried %d; want two http_529 and no retry", got, r.Retried())
		}
		first, with := r.FirstAttempt(), r.Total()
		for i := range first {
			if first[i] != with[i] {
				t.Errorf("call %d: first attempt %v, total %v", i, first[i], with[i])
			}
		}
	})
}
