package fakeprovider

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// Lateness is how late a fake wrote the events it streamed over real
// sockets: for each event, the instant its bytes were handed to the
// connection minus the instant the profile said it was due. It is the
// fake's own error, which every client measuring through a socket sees
// added to the profile's latencies. Streams through the in-memory
// transport are exact by construction and are not counted.
type Lateness struct {
	// Events is the number of streamed events measured.
	Events int64
	// P50 and P99 are quantiles of the events' lateness, to within 1/16
	// of the value (the upper edge of a log-linear histogram's bucket:
	// never understated); Max is the largest, exactly. Zero without events.
	P50, P99, Max time.Duration
}

// latenessSub is the number of buckets per power of two: a bucket spans
// 1/16 of its lower edge or less.
const latenessSub = 16

// latenessHist counts lateness in log-linear buckets: durations below
// latenessSub ns have a bucket each; above, each power of two is split in
// latenessSub equal buckets. Safe for concurrent use; adding is one atomic
// increment (and a compare-and-swap when the maximum grows).
type latenessHist struct {
	n       atomic.Int64
	max     atomic.Int64
	buckets [64 * latenessSub]atomic.Int64
}

// latenessBucket is the bucket of ns (>= 0).
func latenessBucket(ns int64) int {
	if ns < latenessSub {
		return int(ns)
	}
	e := bits.Len64(uint64(ns)) - 1 // 2^e <= ns < 2^(e+1), e >= 4
	sub := int(ns>>(e-4)) - latenessSub
	return (e-3)*latenessSub + sub
}

// latenessUpper is the largest value in bucket i.
func latenessUpper(i int) int64 {
	if i < latenessSub {
		return int64(i)
	}
	e := i/latenessSub + 3
	sub := int64(i % latenessSub)
	return (latenessSub+sub+1)<<(e-4) - 1
}

// add counts one event written d after it was due (an early one counts
// as 0: the scheduler never writes one, see TestSchedulerNeverEarly).
func (h *latenessHist) add(d time.Duration) {
	ns := max(int64(d), 0)
	h.buckets[latenessBucket(ns)].Add(1)
	h.n.Add(1)
	for {
		m := h.max.Load()
		if ns <= m || h.max.CompareAndSwap(m, ns) {
			return
		}
	}
}

// reset forgets every event counted (for benchmarks measuring a window).
func (h *latenessHist) reset() {
	for i := range h.buckets {
		h.buckets[i].Store(0)
	}
	h.n.Store(0)
	h.max.Store(0)
}

func (h *latenessHist) snapshot() Lateness {
	var counts [len(h.buckets)]int64
	var n int64
	for i := range h.buckets {
		counts[i] = h.buckets[i].Load()
		n += counts[i]
	}
	l := Lateness{Events: n, Max: time.Duration(h.max.Load())}
	if n == 0 {
		return Lateness{}
	}
	// q-quantile: the smallest value with at least ceil(q·n) events at or
	// below it, as the upper edge of its bucket (capped by the maximum).
	quantile := func(q float64) time.Duration {
		rank := min(max(int64(math.Ceil(q*float64(n))), 1), n)
		var seen int64
		for i, c := range counts {
			seen += c
			if seen >= rank {
				return min(time.Duration(latenessUpper(i)), l.Max)
			}
		}
		return l.Max
	}
	l.P50, l.P99 = quantile(0.50), quantile(0.99)
	return l
}
