package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// BootstrapSums returns n sums of length values drawn from xs with
// replacement, each draw independent (seeded: the same seed gives the
// same sums). A value of math.MaxInt64 (a failure, infinitely slow) makes
// its sum math.MaxInt64, as does a sum that would overflow. It panics when
// xs is empty or length or n is below 1.
func BootstrapSums(xs []time.Duration, length, n int, seed uint64) []time.Duration {
	if len(xs) == 0 || length < 1 || n < 1 {
		panic(fmt.Sprintf("stats: BootstrapSums: %d values, length %d, n %d (want values, length >= 1, n >= 1)", len(xs), length, n))
	}
	const inf = time.Duration(math.MaxInt64)
	rng := rand.New(rand.NewPCG(seed, 0xb007))
	out := make([]time.Duration, n)
	for i := range out {
		var sum time.Duration
		for range length {
			d := xs[rng.IntN(len(xs))]
			if d == inf || sum > inf-d {
				sum = inf
				break
			}
			sum += d
		}
		out[i] = sum
	}
	return out
}
