package fakeprovider

import (
	"container/heap"
	"context"
	"runtime"
	"sync"
	"time"
)

// A fake serving real sockets (a Server, or the Fake as the handler of any
// http.Server) times its events with a preciseClock.
// A Go timer fires up to a millisecond late on Linux when the process is
// otherwise idle: the runtime then sleeps in epoll_wait, whose timeout is
// whole milliseconds, so a wait of 0.3 ms takes 1 ms. A fake whose
// "200 ms" first token comes at 200.6 ms would put its own lateness into
// every client's measurement (seed protocol's TTFT error). The clock keeps
// one goroutine on its own OS thread: it sleeps on a timer until about a
// millisecond before the next deadline, then in nanosleep (to the
// microsecond; see nanosleep) in slices of at most preciseSlice, and wakes
// every session whose deadline has come. Requests through the in-memory
// transport (Fake.Client, synctest's bubble) use plain timers on the
// bubble's clock instead: a thread in nanosleep would not be durably
// blocked, and virtual time would not advance.

// preciseSlice bounds one nanosleep, so that a deadline registered during
// it is not missed by more than that.
const preciseSlice = 200 * time.Microsecond

// preciseLead is how long before a deadline the clock stops trusting Go
// timers.
const preciseLead = 2 * time.Millisecond

// inMemoryKey marks the context of a request through the in-memory
// transport (see Fake.respond).
type inMemoryKey struct{}

// preciseClock wakes waiters at their deadlines.
type preciseClock struct {
	mu      sync.Mutex
	waiters waiterHeap
	kick    chan struct{} // a new earliest deadline, or stop
	stop    chan struct{}
	done    chan struct{}
}

// waiter is one session's wait: ch (buffered, 1) gets a value at t.
type waiter struct {
	t  time.Time
	ch chan struct{}
}

type waiterHeap []waiter

func (h waiterHeap) Len() int           { return len(h) }
func (h waiterHeap) Less(i, j int) bool { return h[i].t.Before(h[j].t) }
func (h waiterHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *waiterHeap) Push(x any)        { *h = append(*h, x.(waiter)) }
func (h *waiterHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	return w
}

func newPreciseClock() *preciseClock {
	c := &preciseClock{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// close stops the clock's goroutine; waiters not yet woken stay asleep
// (their sessions end with their requests' contexts).
func (c *preciseClock) close() {
	close(c.stop)
	<-c.done
}

// at arranges for ch to receive a value at t.
func (c *preciseClock) at(t time.Time, ch chan struct{}) {
	c.mu.Lock()
	heap.Push(&c.waiters, waiter{t: t, ch: ch})
	first := c.waiters[0].t.Equal(t)
	c.mu.Unlock()
	if first {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// run wakes the waiters whose deadlines have come, sleeping coarsely on a
// timer far from the next deadline and finely near it.
func (c *preciseClock) run() {
	defer close(c.done)
	runtime.LockOSThread() // nanosleep blocks this thread, not another goroutine's
	defer runtime.UnlockOSThread()
	coarse := time.NewTimer(time.Hour)
	defer coarse.Stop()
	for {
		c.mu.Lock()
		now := time.Now()
		for len(c.waiters) > 0 && !c.waiters[0].t.After(now) {
			w := heap.Pop(&c.waiters).(waiter)
			select {
			case w.ch <- struct{}{}:
			default:
			}
		}
		var next time.Time
		if len(c.waiters) > 0 {
			next = c.waiters[0].t
		}
		c.mu.Unlock()
		select {
		case <-c.stop:
			return
		default:
		}
		switch d := time.Until(next); {
		case next.IsZero():
			select {
			case <-c.kick:
			case <-c.stop:
				return
			}
		case d > preciseLead:
			coarse.Reset(d - preciseLead) // a timer may fire a millisecond late: still before t
			select {
			case <-coarse.C:
			case <-c.kick:
				coarse.Stop()
			case <-c.stop:
				return
			}
		default:
			nanosleep(min(d, preciseSlice))
		}
	}
}

// sleepPrecise is session.sleep on a Server's clock.
func (s *session) sleepPrecise(ctx context.Context, c *preciseClock, t time.Time) bool {
	if s.tick == nil {
		s.tick = make(chan struct{}, 1)
	}
	select {
	case <-s.tick: // a wake-up left by a wait that ended otherwise
	default:
	}
	c.at(t, s.tick)
	select {
	case <-s.tick:
		return true
	case <-ctx.Done():
		s.sv.Canceled = true
		return false
	}
}
