package latencytest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// The static credentials the SDK signs with (never sent: a signature is).
const (
	bedrockAKID   = "AKIAIOSFODNN7INTEROP"
	bedrockSecret = "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"
	bedrockToken  = "IQoJb3JpZ2luX2VjINTEROP-session-token-9876543210"
	bedrockModel  = "anthropic.claude-3-7-sonnet-20250219-v1:0"
)

// bedrockClient is aws-sdk-go-v2's Bedrock runtime client, unchanged,
// on hc, its endpoint the fake's, retries off.
func bedrockClient(hc *http.Client) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://fake"),
		HTTPClient:   hc,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: bedrockAKID, SecretAccessKey: bedrockSecret, SessionToken: bedrockToken}, nil
		}),
		RetryMaxAttempts: 1,
	})
}

// sdkRun is what the SDK gave an application of one ConverseStream.
type sdkRun struct {
	text, reasoning string
	tools           []string // name(input) per call
	stop            types.StopReason
	usage           *types.TokenUsage
	latencyMs       int64
	err             error
}

// converseStream streams one answer with the SDK, tools and reasoning
// asked for, reading every event as an application does.
func converseStream(ctx context.Context, c *bedrockruntime.Client, prompt string) sdkRun {
	var r sdkRun
	schema := document.NewLazyDocument(map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}})
	out, err := c.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{
		ModelId:         aws.String(bedrockModel),
		Messages:        []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: prompt}}}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(100)},
		ToolConfig: &types.ToolConfiguration{Tools: []types.Tool{
			&types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String("search"), InputSchema: &types.ToolInputSchemaMemberJson{Value: schema}}},
			&types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String("lookup"), InputSchema: &types.ToolInputSchemaMemberJson{Value: schema}}},
		}},
		AdditionalModelRequestFields: document.NewLazyDocument(map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}),
	})
	if err != nil {
		r.err = err
		return r
	}
	stream := out.GetStream()
	defer stream.Close()
	inputs := map[int32]*strings.Builder{}
	var names []string
	var order []int32
	for ev := range stream.Events() {
		switch e := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			if tu, ok := e.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
				names = append(names, aws.ToString(tu.Value.Name))
				order = append(order, aws.ToInt32(e.Value.ContentBlockIndex))
				inputs[aws.ToInt32(e.Value.ContentBlockIndex)] = &strings.Builder{}
			}
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := e.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				r.text += d.Value
			case *types.ContentBlockDeltaMemberReasoningContent:
				if t, ok := d.Value.(*types.ReasoningContentBlockDeltaMemberText); ok {
					r.reasoning += t.Value
				}
			case *types.ContentBlockDeltaMemberToolUse:
				inputs[aws.ToInt32(e.Value.ContentBlockIndex)].WriteString(aws.ToString(d.Value.Input))
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			r.stop = e.Value.StopReason
		case *types.ConverseStreamOutputMemberMetadata:
			r.usage = e.Value.Usage
			if e.Value.Metrics != nil {
				r.latencyMs = aws.ToInt64(e.Value.Metrics.LatencyMs)
			}
		}
	}
	for i, n := range names {
		r.tools = append(r.tools, n+"("+inputs[order[i]].String()+")")
	}
	r.err = stream.Err()
	return r
}

// bedrockProfile answers with 3 reasoning tokens, then (for trace IDs
// the script names "tool") two tool calls in parallel of 4 argument
// tokens each, else 8 answer tokens; "s429" is throttled up front, "err"
// fails mid-stream.
func bedrockProfile() fakeprovider.Profile {
	return fakeprovider.Profile{Model: bedrockModel, Seed: 5,
		TTFT: fakeprovider.Fixed(200 * time.Millisecond), ITL: fakeprovider.Fixed(10 * time.Millisecond),
		OutputTokens: fakeprovider.Fixed(8), ReasoningTokens: fakeprovider.Fixed(3),
		ToolCalls: fakeprovider.ToolCalls{ArgumentsTokens: fakeprovider.Fixed(4), Parallel: fakeprovider.Fixed(2)},
		Script:    []fakeprovider.ScriptEntry{{ID: "s429", Status: 429}, {ID: "err", Fault: "error_event", AfterToken: 5}}}
}

// aws-sdk-go-v2's bedrockruntime ConverseStream, with tools and
// reasoning, against the fake: the SDK parses every frame (text,
// reasoning, two toolUse calls with JSON inputs, stopReason, usage,
// metrics.latencyMs) and its errors (a 429 as a ThrottlingException, a
// mid-stream modelStreamErrorException); and Instrument around its HTTP
// client gives the records the built-in Bedrock provider gives on the
// same fake, to the nanosecond (virtual time): every clock, the tokens,
// the tool calls, the server's latency, the classes; the credentials
// never reach a record.
func TestBedrockSDKAndInstrument(t *testing.T) {
	for _, id := range []string{"text", "tool", "s429", "err"} {
		t.Run(id, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				prof := bedrockProfile()
				if id == "tool" {
					prof.ToolCalls.Probability = 1
				}
				f := fakeprovider.New(prof)
				defer f.Close()
				req := latencytest.Request{ID: id, TotalTimeout: time.Minute, MaxTokens: 100,
					Messages: []latencytest.Message{{Role: "user", Content: "how long is the tail"}}}
				want := latencytest.Bedrock("http://fake", bedrockModel, latencytest.WithHTTPClient(f.Client())).Call(context.Background(), req)

				var sent http.Header
				var run sdkRun
				hc := &http.Client{Transport: latencytest.Instrument(roundTrip(func(r *http.Request) (*http.Response, error) {
					sent = r.Header.Clone()
					return f.Transport().RoundTrip(r)
				}))}
				got := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error {
					run = converseStream(ctx, bedrockClient(hc), "how long is the tail")
					return run.err
				}).Call(context.Background(), req)

				if !strings.HasPrefix(sent.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+bedrockAKID+"/") || sent.Get("X-Amz-Security-Token") != bedrockToken {
					t.Errorf("the SDK did not sign: %v", sent)
				}
				switch id {
				case "text":
					if run.err != nil || run.text == "" || run.reasoning == "" || run.stop != types.StopReasonEndTurn ||
						aws.ToInt32(run.usage.OutputTokens) != 11 || run.latencyMs != 300 {
						t.Errorf("the SDK read %+v", run)
					}
				case "tool":
					if run.err != nil || len(run.tools) != 2 || !strings.HasPrefix(run.tools[0], "search({") || !strings.HasPrefix(run.tools[1], "lookup({") ||
						run.stop != types.StopReasonToolUse {
						t.Errorf("the SDK read %+v", run)
					}
					for _, call := range run.tools {
						in := call[strings.IndexByte(call, '(')+1 : len(call)-1]
						if !json.Valid([]byte(in)) {
							t.Errorf("tool input %q is not JSON", in)
						}
					}
				case "s429":
					var te *types.ThrottlingException
					if !errors.As(run.err, &te) {
						t.Errorf("the SDK's error %v, want a ThrottlingException", run.err)
					}
				case "err":
					var me *types.ModelStreamErrorException
					if !errors.As(run.err, &me) {
						t.Errorf("the SDK's error %v, want a ModelStreamErrorException", run.err)
					}
				}
				// The fake drew the same answer for both (same trace ID).
				for _, c := range []struct {
					field     string
					got, want any
				}{
					{"Err", got.Err, want.Err}, {"TTFB", got.TTFB, want.TTFB}, {"TTFT", got.TTFT, want.TTFT},
					{"FirstAnswer", got.FirstAnswer, want.FirstAnswer}, {"LastToken", got.LastToken, want.LastToken},
					{"MaxGap", got.MaxGap, want.MaxGap}, {"TokenEvents", got.TokenEvents, want.TokenEvents},
					{"ToolCalls", got.ToolCalls, want.ToolCalls}, {"FirstToolCall", got.FirstToolCall, want.FirstToolCall},
					{"ToolArgsDone", got.ToolArgsDone, want.ToolArgsDone}, {"PromptTokens", got.PromptTokens, want.PromptTokens},
					{"CompletionTokens", got.CompletionTokens, want.CompletionTokens}, {"CachedTokens", got.CachedTokens, want.CachedTokens},
					{"FinishReason", got.FinishReason, want.FinishReason}, {"ServerLatency", got.ServerLatency, want.ServerLatency},
					{"Status", got.Status, want.Status},
				} {
					if c.got != c.want {
						t.Errorf("%s: through Instrument %v, built-in %v (details %q / %q)", c.field, c.got, c.want, got.Detail, want.Detail)
					}
				}
				wantClass := map[string]string{"text": "", "tool": "", "s429": "http_429", "err": "http_424"}[id]
				if want.Err != wantClass {
					t.Errorf("class %q (%s), want %q", want.Err, want.Detail, wantClass)
				}
				if id == "tool" && (want.ToolCalls != 2 || want.FirstToolCall != 230*time.Millisecond) {
					t.Errorf("built-in tool calls %d, first at %v", want.ToolCalls, want.FirstToolCall)
				}
				for _, secret := range []string{bedrockAKID, bedrockToken, bedrockSecret} {
					if s := fmt.Sprintf("%+v", got); strings.Contains(s, secret) {
						t.Errorf("a credential reached the record: %s", s)
					}
				}
			})
		})
	}
}

// The SDK's Converse (not streamed) through Instrument reads as the
// built-in provider's WithoutStreaming: the path and the body tell
// Instrument it is Bedrock's whole answer (text, usage, the server's
// latency, the body's end as Total).
func TestBedrockSDKConverseWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(bedrockProfile())
		defer f.Close()
		req := latencytest.Request{ID: "whole", TotalTimeout: time.Minute, MaxTokens: 100,
			Messages: []latencytest.Message{{Role: "user", Content: "how long is the tail"}}}
		want := latencytest.Bedrock("http://fake", bedrockModel, latencytest.WithHTTPClient(f.Client()), latencytest.WithoutStreaming()).
			Call(context.Background(), req)
		hc := &http.Client{Transport: latencytest.Instrument(f.Transport())}
		var text string
		got := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error {
			out, err := bedrockClient(hc).Converse(ctx, &bedrockruntime.ConverseInput{
				ModelId:         aws.String(bedrockModel),
				Messages:        []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "how long is the tail"}}}},
				InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(100)},
			})
			if err != nil {
				return err
			}
			for _, c := range out.Output.(*types.ConverseOutputMemberMessage).Value.Content {
				if tb, ok := c.(*types.ContentBlockMemberText); ok {
					text += tb.Value
				}
			}
			return nil
		}).Call(context.Background(), req)
		if want.Err != "" || got.Err != "" || got.Content != want.Content || text != want.Content || got.Total != want.Total ||
			got.CompletionTokens != want.CompletionTokens || got.ServerLatency != want.ServerLatency || want.ServerLatency != 300*time.Millisecond {
			t.Errorf("through Instrument %+v\nbuilt-in %+v\nthe SDK's text %q", got, want, text)
		}
	})
}
