// Package deadline is a run's deadline watcher: one goroutine and one timer that end every
// request of the run past its hard cap (or TotalTimeout, or
// FirstTokenTimeout, or the grace after [DONE]), in place of a timer per
// request.
//
// A timer per request costs more than its own time: a stopped timer
// stays in its timer heap until it would have fired when the heap is a
// synctest bubble's (only a P's heap drops stopped timers early), and
// with it the request's context. An open loop in virtual time at 10,000
// requests a second would hold 150 s of them (1.5M timers, ~0.55 GB)
// at the default hard cap.
//
// Every request of a run waits the same time (the run's limit), so its
// deadlines come in the order the requests start: a FIFO per wait time,
// with the one timer set for the earliest head, is enough. An entry is
// dropped from the FIFO when its request ends; a request past its
// deadline is ended by the same function at the same instant as its own
// timer would have ended it.
package deadline

import (
	"context"
	"sync"
	"time"
)

// maxLanes is how many distinct wait times one watcher keeps (a
// run has at most three: its limit, FirstTokenTimeout and doneGrace); a
// wait of another time gets a timer of its own.
const maxLanes = 4

// watcher is one run's watcher (see Watch).
type watcher struct {
	epoch  time.Time     // deadlines are offsets from it
	wake   chan struct{} // an earlier deadline than the timer's (1 buffered)
	stop   chan struct{} // closed when the run ends
	exited chan struct{} // closed when the goroutine has returned

	mu     sync.Mutex
	lanes  []*lane
	armed  bool                      // the goroutine waits for target
	target time.Duration             // the deadline its timer is set for
	closed bool                      // the run has ended: new waits get timers
	moved  map[movedWait]*time.Timer // waits pending at the end (close)
}

// movedWait names a wait that close moved to a timer of its own.
type movedWait struct {
	lane *lane
	seq  uint64
}

// lane is the FIFO of one wait time: entries in deadline order,
// entry q[i] has sequence number base+i, and q[:head] are gone.
type lane struct {
	after time.Duration
	q     []entry
	head  int
	base  uint64
}

// entry is one request's deadline; fire is nil once it ended.
type entry struct {
	at   time.Duration // offset from the watcher's epoch
	fire func()
}

type key struct{}

// Watch starts a deadline watcher for one run and returns ctx
// carrying it, for the providers' calls (AfterFunc). The runner calls
// stop when every request of the run has returned: the watcher's
// goroutine has returned when stop does, so a run inside a synctest
// bubble leaves nothing behind.
func Watch(ctx context.Context) (_ context.Context, stop func()) {
	w := &watcher{epoch: time.Now(), wake: make(chan struct{}, 1),
		stop: make(chan struct{}), exited: make(chan struct{})}
	go w.run()
	return context.WithValue(ctx, key{}, w), func() {
		close(w.stop)
		<-w.exited
	}
}

// Pending is a call's wait for a deadline (see AfterFunc): a timer
// of its own or an entry of the run's watcher. Its zero value waits for
// nothing.
type Pending struct {
	t    *time.Timer
	lane *lane
	w    *watcher
	seq  uint64
}

// Stop ends the wait: f is not called unless it already was (or is
// being called). It does nothing on the zero value, and twice is once.
func (p Pending) Stop() {
	switch {
	case p.t != nil:
		p.t.Stop()
	case p.w != nil:
		p.w.drop(p.lane, p.seq)
	}
}

// AfterFunc calls f (on another goroutine) after d, as time.AfterFunc
// does, unless the wait is stopped first: on the deadline watcher of the
// run ctx belongs to (Watch), or on a timer of its own outside
// a run. d must be > 0.
func AfterFunc(ctx context.Context, d time.Duration, f func()) Pending {
	if w, _ := ctx.Value(key{}).(*watcher); w != nil {
		if p, ok := w.add(d, f); ok {
			return p
		}
	}
	return Pending{t: time.AfterFunc(d, f)}
}

// add queues f for d from now; ok is false when the watcher cannot take
// it (the run has ended, or too many wait times).
func (w *watcher) add(d time.Duration, f func()) (_ Pending, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Pending{}, false
	}
	var l *lane
	for _, x := range w.lanes {
		if x.after == d {
			l = x
			break
		}
	}
	if l == nil {
		if len(w.lanes) == maxLanes {
			return Pending{}, false
		}
		l = &lane{after: d}
		w.lanes = append(w.lanes, l)
	}
	// Now is read under the lock, so a lane's deadlines never decrease.
	at := time.Since(w.epoch) + d
	seq := l.base + uint64(len(l.q))
	l.q = append(l.q, entry{at: at, fire: f})
	if !w.armed || at < w.target {
		w.armed, w.target = true, at
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	return Pending{w: w, lane: l, seq: seq}, true
}

// drop ends entry seq of lane l (nothing when it is gone).
func (w *watcher) drop(l *lane, seq uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		if t := w.moved[movedWait{l, seq}]; t != nil {
			t.Stop()
			delete(w.moved, movedWait{l, seq})
		}
		return
	}
	if seq < l.base+uint64(l.head) || seq >= l.base+uint64(len(l.q)) {
		return
	}
	l.q[seq-l.base].fire = nil
	l.trim()
}

// trim drops the ended entries at the head, and reuses the space they
// took once they are half the queue.
func (l *lane) trim() {
	for l.head < len(l.q) && l.q[l.head].fire == nil {
		l.head++
	}
	if l.head == len(l.q) {
		l.base += uint64(l.head)
		l.q, l.head = l.q[:0], 0
		return
	}
	if l.head >= 64 && l.head >= len(l.q)/2 {
		n := copy(l.q, l.q[l.head:])
		clear(l.q[n:])
		l.base += uint64(l.head)
		l.q, l.head = l.q[:n], 0
	}
}

// due takes the entries due by now off their lanes, appending their
// functions to fs, and returns the earliest deadline left (ok false when
// none is).
func (w *watcher) due(now time.Duration, fs []func()) (_ []func(), next time.Duration, ok bool) {
	for _, l := range w.lanes {
		for l.head < len(l.q) && l.q[l.head].at <= now {
			if f := l.q[l.head].fire; f != nil {
				fs = append(fs, f)
			}
			l.q[l.head].fire = nil
			l.head++
		}
		l.trim()
		if l.head < len(l.q) && (!ok || l.q[l.head].at < next) {
			next, ok = l.q[l.head].at, true
		}
	}
	return fs, next, ok
}

// run is the watcher's goroutine: it calls the functions whose deadline
// has come, then sleeps until the next deadline, an earlier one (wake)
// or the run's end.
func (w *watcher) run() {
	defer close(w.exited)
	t := time.NewTimer(time.Hour)
	t.Stop()
	var fs []func()
	for {
		w.mu.Lock()
		var next time.Duration
		var armed bool
		fs, next, armed = w.due(time.Since(w.epoch), fs[:0])
		w.armed, w.target = armed, next
		w.mu.Unlock()
		for i, f := range fs {
			f()
			fs[i] = nil
		}
		if armed {
			d := next - time.Since(w.epoch)
			if d <= 0 {
				continue
			}
			t.Reset(d)
		}
		select {
		case <-t.C:
		case <-w.wake:
			t.Stop()
		case <-w.stop:
			t.Stop()
			w.close()
			return
		}
	}
}

// close ends the watcher at the run's end: a wait still pending (a call
// that outlived its run) moves to a timer of its own, due at the same
// instant, which its Stop stops.
func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	now := time.Since(w.epoch)
	for _, l := range w.lanes {
		for i, e := range l.q[l.head:] {
			if e.fire == nil {
				continue
			}
			if w.moved == nil {
				w.moved = map[movedWait]*time.Timer{}
			}
			w.moved[movedWait{l, l.base + uint64(l.head+i)}] = time.AfterFunc(max(e.at-now, 0), e.fire)
		}
		l.q, l.head = nil, 0
	}
}
