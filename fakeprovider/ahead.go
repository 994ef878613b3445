package fakeprovider

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Events written by the clock. A stream served by a Server over HTTP/1.1
// formats its events ahead of time and hands each to the fake's clock with
// its due instant; the clock's wake-up writes every event due, across all
// streams, straight to the connections' sockets (one write per stream,
// framed as the chunks net/http would frame them). The stream's goroutine
// wakes once every few events to format more, instead of once per event,
// and no event waits for a goroutine to be scheduled before it is written.
//
// A write from the clock never blocks: it is one attempt on the
// non-blocking socket. If the client has stopped reading and the socket's
// buffer is full, the stream leaves the clock: its own goroutine writes
// what is left, blocking as any stream of net/http does, and the clock
// goes on serving every other stream on time (TestSlowReaderStallsNoOne).
//
// Everything else goes through net/http as before: the header, errors and
// faults, the last event and the end of the body. Before any of those the
// goroutine waits for the clock to have written every event it was
// handed, so the bytes keep their order.

// aheadMax is how many events a stream may have handed to the clock and
// not yet seen written (160 ms at 10 ms ITL); the goroutine is woken to
// format more when half of them are.
const aheadMax = 16

// aheadEntry is one event handed to the clock: its bytes end at end in
// aheadWriter.buf; tokens, reasoning and calls are the stream's counts
// once it is written.
type aheadEntry struct {
	due                     time.Time
	end                     int
	tokens, reasoning, tool int
}

// aheadWriter is a stream's queue of events for the clock to write.
type aheadWriter struct {
	conn net.Conn
	rc   syscall.RawConn
	late *latenessHist
	q    *aheadQueue // buf's and ents's storage, back to aheadQueues when the stream ends

	mu      sync.Mutex // guards the fields below; held by the clock while it writes
	buf     []byte     // framed chunks; buf[off:] not written yet
	off     int
	ents    []aheadEntry // ents[head:] not written yet
	head    int
	queued  bool          // in the clock's schedule
	blocked bool          // the socket was full (or the write failed): the goroutine writes the rest
	dead    bool          // the stream ended: write nothing more
	written aheadEntry    // counts as of the last event written
	room    chan struct{} // the clock wrote events or gave the stream back
	wake    atomic.Bool   // room is to be signalled once the clock's writes are done
}

// aheadWritten counts the events the clock has written and aheadHandBacks
// the streams it gave back to their goroutines, for tests.
var aheadWritten, aheadHandBacks atomic.Int64

// rawConnKey is the context key of a Server's connection (see
// startServer); absent when the fake is another server's handler or the
// request is not HTTP/1.1.
type rawConnKey struct{}

// newAheadWriter returns the stream's queue when its connection can be
// written by the clock: a Server's TCP connection, HTTP/1.1 (chunked), with
// the precise clock running; nil otherwise.
func newAheadWriter(ctx context.Context, s *session) *aheadWriter {
	if s.clock == nil || s.late == nil || !s.req.Stream || s.pl.keep { // keep: the session drops what the client left
		return nil
	}
	conn, _ := ctx.Value(rawConnKey{}).(net.Conn)
	sc, ok := conn.(syscall.Conn)
	if !ok || !rawWrites {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	q := aheadQueues.Get().(*aheadQueue)
	return &aheadWriter{conn: conn, rc: rc, late: s.late, room: make(chan struct{}, 1), q: q, buf: q.buf[:0], ents: q.ents[:0]}
}

// aheadQueue is an aheadWriter's storage, reused across streams.
type aheadQueue struct {
	buf  []byte
	ents []aheadEntry
}

var aheadQueues = sync.Pool{New: func() any {
	return &aheadQueue{buf: make([]byte, 0, 8<<10), ents: make([]aheadEntry, 0, aheadMax+1)}
}}

// pending is the number of events not written yet (a.mu held).
func (a *aheadWriter) pending() int { return len(a.ents) - a.head }

// signal wakes the stream's goroutine if it waits.
func (a *aheadWriter) signal() {
	select {
	case a.room <- struct{}{}:
	default:
	}
}

// compact moves the events not written yet to the front of the storage
// (a.mu held).
func (a *aheadWriter) compact() {
	n := copy(a.ents, a.ents[a.head:])
	clear(a.ents[n:])
	a.ents = a.ents[:n]
	for i := range a.ents {
		a.ents[i].end -= a.off
	}
	a.buf = a.buf[:copy(a.buf, a.buf[a.off:])]
	a.off, a.head = 0, 0
}

// writeDue writes a's events due by now in one non-blocking write; it
// reports the next event's due instant if the clock must come back for
// it. It sets a.wake when the goroutine is to be woken: the clock wakes
// goroutines after its writes, so that they do not compete with them.
func (a *aheadWriter) writeDue(now time.Time) (next time.Time, again bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dead || a.blocked {
		a.queued = false
		return time.Time{}, false
	}
	j := a.head
	for j < len(a.ents) && !a.ents[j].due.After(now) {
		j++
	}
	if j > a.head {
		b := a.buf[a.off:a.ents[j-1].end]
		at := time.Now()
		n, err := rawWrite(a.rc, b)
		h := a.head
		for a.head < j && a.ents[a.head].end <= a.off+n {
			a.late.add(at.Sub(a.ents[a.head].due))
			a.written = a.ents[a.head]
			a.head++
		}
		aheadWritten.Add(int64(a.head - h))
		a.off += n
		if err != nil || n < len(b) {
			aheadHandBacks.Add(1)
			// The socket is full (or gone): the goroutine takes over,
			// with the rest of the bytes.
			a.blocked, a.queued = true, false
			a.wake.Store(true)
			return time.Time{}, false
		}
		if a.pending() <= aheadMax/2 {
			a.wake.Store(true)
		}
	}
	if a.pending() == 0 {
		a.queued = false
		return time.Time{}, false
	}
	return a.ents[a.head].due, true
}
