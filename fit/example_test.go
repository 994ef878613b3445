package fit_test

import (
	"fmt"

	"github.com/tailguard/tailguard/fit"
)

// The two-sample Kolmogorov-Smirnov test: ten values shifted by half
// their range are not evidence of a different distribution at 5%
// (scipy's ks_2samp agrees: p = 0.17); shifted clear of each other, they
// are.
func ExampleKolmogorovSmirnov() {
	a := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	b := []float64{6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	ks := fit.KolmogorovSmirnov(a, b)
	fmt.Printf("D = %.2f, p < 0.05: %v\n", ks.D, ks.P < 0.05)
	c := []float64{11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	ks = fit.KolmogorovSmirnov(a, c)
	fmt.Printf("D = %.2f, p < 0.05: %v\n", ks.D, ks.P < 0.05)
	// Output:
	// D = 0.50, p < 0.05: false
	// D = 1.00, p < 0.05: true
}
