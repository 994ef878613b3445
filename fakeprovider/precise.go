package fakeprovider

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// A fake serving real sockets (a Server, or the Fake as the handler of any
// http.Server) times its events with a preciseClock on Linux. A Go timer
// fires up to a millisecond late there when the process is otherwise
// idle: the runtime then sleeps in epoll_wait, whose timeout is whole
// milliseconds, so a wait of 0.3 ms takes 1 ms. A fake whose "200 ms"
// first token comes at 200.6 ms would put its own lateness into every
// client's measurement. The clock arms one kernel timer (a timerfd, on
// the kernel's high-resolution timers) for the earliest deadline and reads
// it through the runtime's poller, so the runtime wakes when it expires,
// to the microsecond, with no thread of its own and no busy wait; then it
// wakes every session whose deadline has come. Requests through the
// in-memory transport (Fake.Client, synctest's bubble) use plain timers on
// the bubble's clock instead, and so does every request where the kernel
// timer is not available (other systems, where the runtime's timers are
// already fine grained: kqueue takes nanoseconds).

// inMemoryKey marks the context of a request through the in-memory
// transport (see Fake.respond).
type inMemoryKey struct{}

// preciseClock wakes waiters at their deadlines.
type preciseClock struct {
	hw *kernelTimer

	mu      sync.Mutex // guards waiters and the timer's setting
	waiters waiterHeap
	closed  bool
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

// newPreciseClock starts a clock, or returns nil where the kernel timer
// is not available.
func newPreciseClock() *preciseClock {
	hw, err := newKernelTimer()
	if err != nil {
		return nil
	}
	c := &preciseClock{hw: hw, done: make(chan struct{})}
	go c.run()
	return c
}

// close stops the clock; waiters not yet woken stay asleep (their
// sessions end with their requests' contexts).
func (c *preciseClock) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.hw.close() // ends run's read
	<-c.done
}

// at arranges for ch to receive a value at t.
func (c *preciseClock) at(t time.Time, ch chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	heap.Push(&c.waiters, waiter{t: t, ch: ch})
	if c.waiters[0].t.Equal(t) && !c.closed {
		c.hw.arm(time.Until(t))
	}
}

// run waits for the timer and wakes the waiters whose deadlines have
// come, then arms the timer for the next.
func (c *preciseClock) run() {
	defer close(c.done)
	for c.hw.wait() {
		c.mu.Lock()
		now := time.Now()
		for len(c.waiters) > 0 && !c.waiters[0].t.After(now) {
			w := heap.Pop(&c.waiters).(waiter)
			select {
			case w.ch <- struct{}{}:
			default:
			}
		}
		if len(c.waiters) > 0 && !c.closed {
			c.hw.arm(time.Until(c.waiters[0].t))
		}
		c.mu.Unlock()
	}
}

// sleepPrecise is session.sleep on the fake's clock.
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
