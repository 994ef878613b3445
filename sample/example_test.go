package sample_test

import (
	"fmt"
	"time"

	"github.com/tailguard/tailguard/sample"
)

// A failed request is infinitely slow: one failure in five moves p90 to
// Failed, and the figures without it are read beside the error rate.
func ExampleSample() {
	ms := time.Millisecond
	s := sample.Sample{120 * ms, 80 * ms, 100 * ms, 90 * ms, sample.Failed}
	fmt.Println("p50:", s.Quantile(0.5))
	fmt.Println("p90 failed:", s.Quantile(0.9) == sample.Failed)
	ok := s.Finite()
	fmt.Printf("without the failure: n=%d p90 %v mean %v\n", ok.Len(), ok.Quantile(0.9), ok.Mean())
	// Output:
	// p50: 100ms
	// p90 failed: true
	// without the failure: n=4 p90 114ms mean 97.5ms
}
