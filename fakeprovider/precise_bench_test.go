//go:build unix

package fakeprovider

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkClockStreams is the precise clock alone, without sockets: n
// goroutines each wait for 100 deadlines 10 ms apart (random phases, as
// n streams' events), through the clock the fake times real sockets
// with. It reports the process's CPU per wait (the clock's wake-ups and
// the goroutines' own) and how late the goroutines woke, p50 and p99.
func BenchmarkClockStreams(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(strconv.Itoa(n)+"-waiters", func(b *testing.B) {
			c := newPreciseClock()
			if c == nil {
				b.Skip("no kernel timer here")
			}
			defer c.close()
			var cpu time.Duration
			var late Lateness
			for b.Loop() {
				var h latenessHist
				r := rand.New(rand.NewPCG(uint64(n), 9))
				start := time.Now().Add(20 * time.Millisecond)
				cpu0 := processCPU()
				var wg sync.WaitGroup
				for range n {
					t := start.Add(time.Duration(r.Int64N(int64(10 * time.Millisecond))))
					wg.Go(func() {
						ch := make(chan struct{}, 1)
						for range 100 {
							c.at(t, ch)
							<-ch
							h.add(time.Since(t))
							t = t.Add(10 * time.Millisecond)
						}
					})
				}
				wg.Wait()
				cpu, late = processCPU()-cpu0, h.snapshot()
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(late.Events)/1e3, "cpu-us/wait")
			b.ReportMetric(float64(late.P50.Nanoseconds())/1e3, "late-p50-us")
			b.ReportMetric(float64(late.P99.Nanoseconds())/1e3, "late-p99-us")
		})
	}
}
