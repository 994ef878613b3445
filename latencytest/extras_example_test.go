package latencytest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// Cost prices a run from the usage its answers reported, and says what a
// useful answer costs once the failed ones are paid for.
func ExampleResult_Cost() {
	ok := latencytest.Record{UsageReported: true, PromptTokens: 1000, CompletionTokens: 200}
	failed := latencytest.Record{Err: "empty_answer", UsageReported: true, PromptTokens: 1000}
	r := &latencytest.Result{Records: []latencytest.Record{ok, ok, ok, failed}}
	c := r.Cost(latencytest.Prices{InputPerMillion: 0.5, OutputPerMillion: 1.5})
	fmt.Printf("%d calls, %d useful: $%.4f in all, $%.4f wasted, $%.6f per useful answer\n",
		c.Calls, c.Useful, c.Total, c.Wasted, c.PerUseful)
	// Output: 4 calls, 3 useful: $0.0029 in all, $0.0005 wasted, $0.000967 per useful answer
}

// CheckPrediction sets measured chain totals beside a prediction from the
// same calls drawn independently: chains whose calls are all slow or all
// fast (correlated) have a heavier tail than the prediction.
func ExampleChainResult_CheckPrediction() {
	cr := &latencytest.ChainResult{}
	for i := range 100 {
		d := 100 * time.Millisecond
		if i%10 == 0 {
			d = time.Second // a slow conversation stays slow
		}
		ch := latencytest.ChainRun{Total: 5 * d}
		for range 5 {
			ch.Calls = append(ch.Calls, latencytest.Record{TTFT: d, FirstAnswer: d, Total: d, TokenEvents: 1})
		}
		cr.Chains = append(cr.Chains, ch)
	}
	pc, ok := cr.CheckPrediction(1)
	fmt.Println(ok, pc.Length, pc.Measured.P95, pc.CorrelationWarning != "")
	// Output: true 5 5s true
}

// ReportMetrics puts a batch's latency figures beside ns/op, for
// benchstat to compare across commits.
func ExampleReportMetrics() {
	res := testing.Benchmark(func(b *testing.B) {
		r := &latencytest.Result{}
		for i := range 100 {
			d := time.Duration(100+i) * time.Millisecond
			r.Records = append(r.Records, latencytest.Record{TTFT: d, FirstAnswer: d, Total: 2 * d, TokenEvents: 1})
		}
		for b.Loop() {
		}
		latencytest.ReportMetrics(b, r)
	})
	fmt.Println(time.Duration(res.Extra["ttft-p50-ns"]), res.Extra["failed-requests"])
	// Output: 149.5ms 0
}
