package servermetrics_test

import (
	"fmt"

	"github.com/tailguard/tailguard/servermetrics"
)

// Two scrapes of a vLLM server, a minute apart: the interval holds the
// 40 requests it finished in between, and their queue p99 is known to
// its bucket.
func ExampleDelta() {
	before := "# TYPE vllm:request_queue_time_seconds histogram\n" +
		`vllm:request_queue_time_seconds_bucket{le="0.3"} 10` + "\n" +
		`vllm:request_queue_time_seconds_bucket{le="1.0"} 10` + "\n" +
		`vllm:request_queue_time_seconds_bucket{le="2.5"} 10` + "\n" +
		`vllm:request_queue_time_seconds_bucket{le="+Inf"} 10` + "\n" +
		"vllm:request_queue_time_seconds_count 10\nvllm:request_queue_time_seconds_sum 1\n"
	after := "# TYPE vllm:request_queue_time_seconds histogram\n" +
		`vllm:request_queue_time_seconds_bucket{le="0.3"} 30` + "\n" +
		`vllm:request_queue_time_seconds_bucket{le="1.0"} 38` + "\n" +
		`vllm:request_queue_time_seconds_bucket{le="2.5"} 50` + "\n" +
		`vllm:request_queue_time_seconds_bucket{le="+Inf"} 50` + "\n" +
		"vllm:request_queue_time_seconds_count 50\nvllm:request_queue_time_seconds_sum 25\n"
	b, err := servermetrics.Parse([]byte(before), "", servermetrics.Auto)
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := servermetrics.Parse([]byte(after), "", servermetrics.Auto)
	if err != nil {
		fmt.Println(err)
		return
	}
	iv, err := servermetrics.Delta(b, a)
	if err != nil {
		fmt.Println(err)
		return
	}
	q, _ := iv.Stage(servermetrics.Queue)
	fmt.Println(iv.Server, q.N, q.Counts, q.Mean())
	fmt.Println("p50", q.Quantile(0.5))
	fmt.Println("p99", q.Quantile(0.99))
	// Output:
	// vllm 40 [20 8 12 0] 600ms
	// p50 300.0ms (bucket 0s-300ms)
	// p99 2450.0ms (bucket 1s-2.5s)
}

// One server, two models: the measured model's series are read when the
// series carry a model label; Labels picks others.
func ExampleSource_Parse() {
	text := "# TYPE vllm:num_requests_waiting gauge\n" +
		`vllm:num_requests_waiting{model_name="small"} 1` + "\n" +
		`vllm:num_requests_waiting{model_name="large"} 7` + "\n"
	for _, src := range []servermetrics.Source{
		{},
		{Model: "small"},
		{Labels: map[string]string{"model_name": "large"}},
	} {
		s, err := src.Parse([]byte(text), "")
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(s.Gauges[servermetrics.Waiting], s.Series)
	}
	// Output:
	// 8 all series summed (no model named; model_name: "large", "small")
	// 1 model_name="small" (the measured model)
	// 7 model_name="large"
}
