package sloassert_test

import (
	"fmt"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// printT prints failures: it pins the exact failure text in an example.
type printT struct{}

func (printT) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }

// Too few samples for a p99 is a failure that says how many are needed.
func ExampleP99() {
	s := make(latencytest.Sample, 75)
	for i := range s {
		s[i] = time.Duration(100+i) * time.Millisecond
	}
	ok := sloassert.P99(printT{}, s, time.Second)
	fmt.Println(ok)
	// Output:
	// sample: FAIL
	//   objective        observed  interval 95%  budget    margin    verdict
	//   p99 <= 1000.0ms  173.3ms   [172.0ms, ?]  1000.0ms  +826.7ms  FAIL, inconclusive  (p99 needs n >= 100 (have 75))
	//   distribution       min       p50       p90       p95       p99       max     CV%  p99/p50
	//   sample         100.0ms   137.0ms   166.6ms   170.3ms   173.3ms   174.0ms      16     1.26
	//   n = 75 measured (75 kept, 0 failed), 0 warm-up discarded, 75 sent of 75 planned
	// false
}

// A 10-call task that must finish in 5 s for 95% of tasks: a per-call
// p99.488 within 500 ms is enough to plan with (sufficient, not required:
// judge the task on measured chain totals).
func ExampleTask_PerCall() {
	q, budget := sloassert.Task{Calls: 10, Budget: 5 * time.Second, TailTasks: 0.05}.PerCall()
	fmt.Printf("%.5f %v\n", q, budget)
	fmt.Printf("%.1f%% of 10-call tasks meet a 1%% tail\n", sloassert.TailProbability(0.01, 10)*100)
	// Output:
	// 0.99488 500ms
	// 9.6% of 10-call tasks meet a 1% tail
}
