package stats_test

import (
	"fmt"

	"github.com/tailguard/tailguard/internal/stats"
)

// The p90 of five sorted latencies, by linear interpolation: h = 4·0.9 =
// 3.6, 60% of the way from 40 to 50.
func ExampleQuantile() {
	fmt.Println(stats.Quantile([]float64{10, 20, 30, 40, 50}, 0.9))
	// Output: 46
}

// At most 1 failure in 20 requests that each fail 5% of the time: 0.95^20
// + 20·0.05·0.95^19.
func ExampleBinomCDF() {
	fmt.Printf("%.4f\n", stats.BinomCDF(1, 20, 0.05))
	// Output: 0.7358
}

// Tied values share their mean rank.
func ExampleSpearman() {
	fmt.Printf("%.4f\n", stats.Spearman([]float64{1, 2, 2, 3}, []float64{1, 2, 3, 4}))
	// Output: 0.9487
}
