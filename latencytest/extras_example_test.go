package latencytest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

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
