package latencytest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/genai"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// geminiSDKCall is one call of Google's genai SDK through hc, streamed or
// whole, read as an application reads it; with tools it offers two
// functions, and maxOut caps the answer (0: no cap).
func geminiSDKCall(ctx context.Context, hc *http.Client, stream, tools bool, maxOut int32) error {
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI, HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: "http://fake/", APIVersion: "v1beta"}})
	if err != nil {
		return err
	}
	cfg := &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true}, MaxOutputTokens: maxOut}
	if tools {
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "get_weather"}, {Name: "get_time"}}}}
	}
	if !stream {
		_, err := c.Models.GenerateContent(ctx, "fake-model", genai.Text("hello there"), cfg)
		return err
	}
	for resp, err := range c.Models.GenerateContentStream(ctx, "fake-model", genai.Text("hello there"), cfg) {
		if err != nil {
			return err
		}
		_ = resp.Text()
	}
	return nil
}

// geminiView is what a Gemini record must share, built-in or through
// Instrument: every clock, the counts, the answer and the class.
func geminiView(r latencytest.Record) string {
	return fmt.Sprintf("ttft %v answer %v last %v total %v maxgap %v gaps %v tool %v args %v | events %d calls %d | "+
		"usage %d/%d reasoning %d cached %d (%v) | content %q finish %q model %q | err %q status %d injected %q",
		r.TTFT, r.FirstAnswer, r.LastToken, r.Total, r.MaxGap, r.Gaps.All(), r.FirstToolCall, r.ToolArgsDone,
		r.TokenEvents, r.ToolCalls, r.PromptTokens, r.CompletionTokens, r.ReasoningTokens, r.CachedTokens, r.CachedReported,
		r.Content, r.FinishReason, r.Model, r.Err, r.Status, r.Injected)
}

// Google's genai SDK on the fake, measured through Instrument, gives the
// built-in Gemini provider's record on the same fake to the nanosecond:
// streamed with thoughts, parallel function calls, capped (MAX_TOKENS),
// whole (generateContent), a 429 up front, an error chunk mid-stream and
// a dropped connection each give the same clocks, counts and class.
func TestGeminiSDKMatchesBuiltIn(t *testing.T) {
	for _, tc := range []struct {
		name          string
		stream, tools bool
		maxOut        int32
		script        fakeprovider.ScriptEntry
		class         string
	}{
		{name: "streamed with thoughts", stream: true},
		{name: "parallel function calls", stream: true, tools: true},
		{name: "capped", stream: true, maxOut: 5},
		{name: "whole", tools: true},
		{name: "429", stream: true, script: fakeprovider.ScriptEntry{Status: 429}, class: latencytest.HTTPClass(429)},
		{name: "error chunk", stream: true, script: fakeprovider.ScriptEntry{Fault: fakeprovider.FaultErrorEvent, AfterToken: 4}, class: latencytest.ClassBadStream},
		{name: "dropped", stream: true, script: fakeprovider.ScriptEntry{Fault: fakeprovider.FaultDisconnect, AfterToken: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				prof := fakeprovider.Profile{TTFT: fakeprovider.Fixed(200 * time.Millisecond), ITL: fakeprovider.Fixed(10 * time.Millisecond),
					ReasoningTokens: fakeprovider.Fixed(3), OutputTokens: fakeprovider.Fixed(8)}
				if tc.tools {
					prof.ToolCalls = fakeprovider.ToolCalls{Probability: 1, ArgumentsTokens: fakeprovider.Fixed(4), Parallel: fakeprovider.Fixed(2)}
				}
				for _, id := range []string{"b-1", "s-1"} {
					e := tc.script
					if e.Status != 0 || e.Fault != "" {
						e.ID = id
						prof.Script = append(prof.Script, e)
					}
				}
				f := fakeprovider.New(prof)
				t.Cleanup(f.Close)
				opts := []latencytest.Option{latencytest.WithHTTPClient(f.Client()), latencytest.WithAPIKey(key), latencytest.WithModel("fake-model")}
				if !tc.stream {
					opts = append(opts, latencytest.WithoutStreaming())
				}
				req := latencytest.Request{ID: "b-1", MaxTokens: int(tc.maxOut), Messages: []latencytest.Message{{Role: "user", Content: "hello there"}}}
				want := latencytest.Gemini("http://fake/v1beta", opts...).Call(context.Background(), req)
				hc := &http.Client{Transport: latencytest.Instrument(f.Client().Transport)}
				got := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error {
					return geminiSDKCall(ctx, hc, tc.stream, tc.tools, tc.maxOut)
				}).Call(context.Background(), latencytest.Request{ID: "s-1"})
				if geminiView(got) != geminiView(want) {
					t.Errorf("through Instrument around genai:\n%s\nthe built-in provider:\n%s", geminiView(got), geminiView(want))
				}
				if tc.class != "" && want.Err != tc.class || tc.script.Fault == "" && tc.script.Status == 0 && !want.OK() || tc.script.Fault != "" && want.OK() {
					t.Errorf("class %q (%s), want %q", want.Err, want.Detail, tc.class)
				}
				if tc.tools && want.ToolCalls != 2 || tc.name == "capped" && want.FinishReason != "MAX_TOKENS" {
					t.Errorf("record %s", geminiView(want))
				}
			})
		})
	}
}
