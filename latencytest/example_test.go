package latencytest_test

import (
	"context"
	"fmt"
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
	// {Planned:22 Sent:22 Kept:18 Discarded:2 Failed:2}
	// map[empty_stream:1 http_529:1] 0.1
	// c4-0000 true c4-0002 false
}
