package fakeprovider

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestPreciseClockNeverEarly: 200 waits registered out of order over the
// next 5 ms, many of them earlier than the one the timer is armed for,
// all wake, none before its deadline. (How late they wake is a benchmark's
// business: BenchmarkFirstTokenLateness in latencytest.)
func TestPreciseClockNeverEarly(t *testing.T) {
	c := newPreciseClock()
	if c == nil {
		t.Skip("no kernel timer here: the fake uses the runtime's timers")
	}
	defer c.close()
	r := rand.New(rand.NewPCG(1, 2))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var early []time.Duration
	for range 200 {
		at := time.Now().Add(time.Duration(r.Int64N(int64(5 * time.Millisecond))))
		ch := make(chan struct{}, 1)
		c.at(at, ch)
		wg.Go(func() {
			<-ch
			if d := time.Until(at); d > 0 {
				mu.Lock()
				early = append(early, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(early) > 0 {
		t.Errorf("%d of 200 waits woke before their deadline, by up to %v", len(early), early)
	}
}
