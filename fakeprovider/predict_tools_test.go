package fakeprovider_test

import (
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
)

// A tool call's times from Predictor are those the fake serves (the
// interop module's TestOpenAIChatToolCalls measures them with openai-go):
// 3 reasoning tokens, then the call's name with its first argument token
// at token 3 (200 ms + 3×10 ms), its last of 6 argument tokens at token 8,
// finish tool_calls.
func TestPredictToolCall(t *testing.T) {
	pr, err := fakeprovider.NewPredictor(fakeprovider.Profile{
		TTFT:            fakeprovider.Fixed(200 * time.Millisecond),
		ITL:             fakeprovider.Fixed(10 * time.Millisecond),
		ReasoningTokens: fakeprovider.Fixed(3),
		OutputTokens:    fakeprovider.Fixed(8),
		ToolCalls:       fakeprovider.ToolCalls{Probability: 1, ArgumentsTokens: fakeprovider.Fixed(6)},
	})
	if err != nil {
		t.Fatal(err)
	}
	// 37: the prompt tokens the fake counts in openai-go's request.
	if got := pr.Predict("tool-1", 37, 0); got.FirstAnswer != 230*time.Millisecond || got.Total != 280*time.Millisecond || got.Finish != "tool_calls" {
		t.Errorf("Predictor: first answer %v, total %v, finish %q; want 230ms, 280ms, tool_calls", got.FirstAnswer, got.Total, got.Finish)
	}
}
