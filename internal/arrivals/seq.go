package arrivals

import (
	"math"
	randv2 "math/rand/v2"
	"time"
)

// stream is the constant PCG stream word of the Poisson gaps
// ("openloop"), so that the gaps of seed s never equal another draw's.
const stream = 0x6f70656e6c6f6f70

// Rand is the source of the Poisson gaps of seed.
func Rand(seed uint64) *randv2.Rand { return randv2.New(randv2.NewPCG(seed, stream)) }

// Seq yields the scheduled offsets of an open loop, in order: given ones
// (Given), or generated ones (Constant, else Poisson from Rng). It is
// used up as it yields: make a new one to go through them again.
type Seq struct {
	// Limit is how many requests to yield (0: no limit); Until the
	// offset before which they must fall (0: none).
	Limit int
	Until time.Duration
	// Given, when not nil, gives the offset of request i, ok false past
	// the last one.
	Given func(i int) (at time.Duration, ok bool)
	// Constant starts request i at exactly i/Rate seconds; otherwise the
	// gaps are exponential of mean 1/Rate, drawn from Rng.
	Constant bool
	Rate     float64
	Rng      *randv2.Rand

	n  int           // requests yielded so far
	at time.Duration // the last offset
}

// Take returns the offset of the next request (and its index); ok is
// false when the run has sent everything.
func (a *Seq) Take() (i int, at time.Duration, ok bool) {
	i = a.n
	if a.Limit > 0 && i >= a.Limit {
		return i, 0, false
	}
	switch {
	case a.Given != nil:
		if at, ok = a.Given(i); !ok {
			return i, 0, false
		}
	case a.Constant:
		at = offsetAt(float64(i) * 1e9 / a.Rate)
	case i > 0:
		at = a.at + min(offsetAt(a.Rng.ExpFloat64()*1e9/a.Rate), math.MaxInt64-a.at)
	}
	if a.Until > 0 && at >= a.Until {
		return i, 0, false
	}
	a.at = at
	a.n++
	return i, at, true
}

// Count is how many requests a will yield, counting no further than upTo
// (it consumes them).
func (a *Seq) Count(upTo int) int {
	n := 0
	for n < upTo {
		if _, _, ok := a.Take(); !ok {
			break
		}
		n++
	}
	return n
}

// offsetAt rounds nanoseconds to a Duration, saturating instead of
// wrapping.
func offsetAt(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Round(ns))
}
