package cost_test

import (
	"fmt"

	"github.com/tailguard/tailguard/cost"
	"github.com/tailguard/tailguard/latencytest"
)

// Calls prices a run from the usage its answers reported, and says what a
// useful answer costs once the failed ones are paid for.
func ExampleCalls() {
	ok := latencytest.Record{UsageReported: true, PromptTokens: 1000, CompletionTokens: 200}
	failed := latencytest.Record{Err: "empty_answer", UsageReported: true, PromptTokens: 1000}
	r := &latencytest.Result{Records: []latencytest.Record{ok, ok, ok, failed}}
	c := cost.Calls(r, cost.Prices{InputPerMillion: 0.5, OutputPerMillion: 1.5})
	fmt.Printf("%d calls, %d useful: $%.4f in all, $%.4f wasted, $%.6f per useful answer\n",
		c.Calls, c.Useful, c.Total, c.Wasted, c.PerUseful)
	// Output: 4 calls, 3 useful: $0.0029 in all, $0.0005 wasted, $0.000967 per useful answer
}
