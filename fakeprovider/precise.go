package fakeprovider

import (
	"container/heap"
	"runtime"
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
// wakes every session whose deadline has come, and each writes all its
// due events in one write and flush.
//
// One wake-up per event would cost more than writing the events: each
// wakes the clock's goroutine and the runtime's threads. So the clock
// never wakes sooner than clockWindow (250 µs) after its last wake-up: a
// wake-up serves every event due by then, across all streams, and the
// wake-ups stay under 4,000 a second however many streams there are. An
// event due later than a window after the last wake-up (a fake serving a
// few streams) leaves to the microsecond; under load an event waits at
// most a window more. On a Server the wake-up also writes the events
// itself, straight to the sockets (see ahead.go), so a stream's goroutine
// wakes once per few events, not once per event. What remains per event
// is mostly the socket write, whose kernel side (delivering the bytes to
// the client) is charged to the fake. BenchmarkFakeScale measures it
// (64-token streams at 10 ms ITL over loopback, the fake in a process of
// its own; Fake.Lateness is the fake's write time minus due time); its
// figures are in docs/fakeprovider.md.
//
// Requests through the in-memory transport (Fake.Client, synctest's
// bubble) use plain timers on the bubble's clock instead, exact to the
// nanosecond, and so does every request where the kernel timer is not
// available (other systems, where the runtime's timers are already fine
// grained: kqueue takes nanoseconds).

// inMemoryKey marks the context of a request through the in-memory
// transport (see Fake.respond).
type inMemoryKey struct{}

// preciseClock wakes waiters at their deadlines, never before.
type preciseClock struct {
	hw *kernelTimer

	mu     sync.Mutex // guards sched and the timer's setting
	sched  schedule
	closed bool
	batch  []chan struct{} // run's wake-ups, reused
	done   chan struct{}

	// A wake-up with many streams to write shares them with a helper
	// goroutine (where there is more than one CPU): helpIn takes its
	// share, helpOut gives back the streams to come back for.
	helpIn  chan []*aheadWriter
	helpOut chan []again
}

// again is a stream the clock must come back to at t.
type again struct {
	t time.Time
	w *aheadWriter
}

// helpAbove is the number of streams to write in one wake-up above which
// the clock shares them with its helper: two threads write at once. (A
// loopback write costs 3 to 10 µs: 32 of them fill half a window.)
const helpAbove = 32

// clockWindow is the shortest time between two of the clock's wake-ups:
// waits that end within it of a wake-up are served by the next one,
// together. It bounds the wake-ups to 4,000 a second however many streams
// there are, and adds nothing to a wait that ends later than that after
// the last wake-up (a fake serving a few streams times each event to the
// microsecond).
const clockWindow = 250 * time.Microsecond

// schedule is the clock's bookkeeping, apart from the kernel timer and
// the wall clock, so that it can be tested with made-up instants.
type schedule struct {
	window  time.Duration
	waiters waiterHeap
	last    time.Time      // the last wake-up
	armed   time.Time      // the instant the timer is set for; zero when it is not
	writers []*aheadWriter // the last wake-up's streams to write (see ahead.go)
}

// add registers a wait until t and reports the instant the timer must be
// set for, if that changed: the deadline, or one window after the last
// wake-up if that is later.
func (s *schedule) add(t time.Time, ch chan struct{}) (arm time.Time, ok bool) {
	return s.push(waiter{t: t, ch: ch})
}

// push registers a wait, as add does.
func (s *schedule) push(w waiter) (arm time.Time, ok bool) {
	heap.Push(&s.waiters, w)
	when := w.t
	if w := s.last.Add(s.window); when.Before(w) {
		when = w
	}
	if s.armed.IsZero() || when.Before(s.armed) {
		s.armed = when
		return when, true
	}
	return time.Time{}, false
}

// wake is a wake-up at now: it appends the channels of every wait due by
// now to batch and the streams whose events are due to s.writers (both
// earliest deadline first), and reports when the timer must be set for
// next (ok false: no wait left).
func (s *schedule) wake(now time.Time, batch []chan struct{}) (_ []chan struct{}, arm time.Time, ok bool) {
	s.last = now
	s.armed = time.Time{}
	clear(s.writers)
	s.writers = s.writers[:0]
	for len(s.waiters) > 0 && !s.waiters[0].t.After(now) {
		w := heap.Pop(&s.waiters).(waiter)
		if w.w != nil {
			s.writers = append(s.writers, w.w)
		} else {
			batch = append(batch, w.ch)
		}
	}
	if len(s.waiters) == 0 {
		return batch, time.Time{}, false
	}
	s.armed = s.waiters[0].t
	if w := now.Add(s.window); s.armed.Before(w) {
		s.armed = w
	}
	return batch, s.armed, true
}

// waiter is one session's wait: ch (buffered, 1) gets a value at t, or
// w's events due by then are written.
type waiter struct {
	t  time.Time
	ch chan struct{}
	w  *aheadWriter
}

type waiterHeap []waiter

func (h waiterHeap) Len() int           { return len(h) }
func (h waiterHeap) Less(i, j int) bool { return h[i].t.Before(h[j].t) }
func (h waiterHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *waiterHeap) Push(x any)        { *h = append(*h, x.(waiter)) }
func (h *waiterHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = waiter{}
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
	c := &preciseClock{hw: hw, sched: schedule{window: clockWindow}, done: make(chan struct{})}
	if runtime.GOMAXPROCS(0) > 1 {
		c.helpIn, c.helpOut = make(chan []*aheadWriter), make(chan []again)
		go c.help()
	}
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

// at arranges for ch to receive a value at t or at most one window
// later (see clockWindow).
func (c *preciseClock) at(t time.Time, ch chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if arm, ok := c.sched.add(t, ch); ok && !c.closed {
		c.hw.arm(time.Until(arm))
	}
}

// atWriter arranges for a's events due by t to be written at t or at
// most one window later.
func (c *preciseClock) atWriter(t time.Time, a *aheadWriter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if arm, ok := c.sched.push(waiter{t: t, w: a}); ok && !c.closed {
		c.hw.arm(time.Until(arm))
	}
}

// run waits for the timer and wakes the waiters whose deadlines have
// come, then writes the events due of the streams handed to it (see
// ahead.go), then arms the timer for the next. The wake-ups are sent and
// the events written after the lock is released, so that the sessions
// can register their next waits at once; only run touches
// c.sched.writers.
func (c *preciseClock) run() {
	defer close(c.done)
	if c.helpIn != nil {
		defer close(c.helpIn)
	}
	var next []again
	for c.hw.wait() {
		c.mu.Lock()
		batch, arm, ok := c.sched.wake(time.Now(), c.batch[:0])
		if ok && !c.closed {
			c.hw.arm(time.Until(arm))
		}
		writers := c.sched.writers
		c.mu.Unlock()
		for i, ch := range batch {
			select {
			case ch <- struct{}{}:
			default:
			}
			batch[i] = nil
		}
		c.batch = batch
		if len(writers) == 0 {
			continue
		}
		next = next[:0]
		if c.helpIn != nil && len(writers) > helpAbove {
			half := len(writers) / 2
			c.helpIn <- writers[half:]
			next = writeDue(writers[:half], next)
			next = append(next, <-c.helpOut...)
		} else {
			next = writeDue(writers, next)
		}
		if len(next) == 0 {
			continue
		}
		c.mu.Lock()
		for _, n := range next {
			if arm, ok := c.sched.push(waiter{t: n.t, w: n.w}); ok && !c.closed {
				c.hw.arm(time.Until(arm))
			}
		}
		c.mu.Unlock()
		clear(next)
	}
}

// help writes the streams run shares with it.
func (c *preciseClock) help() {
	var next []again
	for ws := range c.helpIn {
		clear(next)
		next = writeDue(ws, next[:0])
		c.helpOut <- next
	}
}

// writeDue writes the due events of the streams ws and appends those the
// clock must come back for to next.
func writeDue(ws []*aheadWriter, next []again) []again {
	for _, w := range ws {
		if t, ok := w.writeDue(time.Now()); ok {
			next = append(next, again{t, w})
		}
	}
	for _, w := range ws {
		if w.wake.Load() && w.wake.Swap(false) {
			w.signal()
		}
	}
	return next
}
