package fakeprovider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

var errFakeClosed = errors.New("fakeprovider: fake is closed")

// pipeWriter is the http.ResponseWriter of an in-memory request.
type pipeWriter struct {
	header http.Header
	sent   http.Header // the header as it was at WriteHeader
	pw     *pipeEnd
	status int
	ready  chan struct{}
	once   sync.Once
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	w.sent, w.header = w.header, http.Header{}
	w.markReady()
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.pw.Write(b)
}

// Flush is a no-op: every Write reaches the reader directly.
func (w *pipeWriter) Flush() {}

func (w *pipeWriter) markReady() { w.once.Do(func() { close(w.ready) }) }

// pipeBody is the response body: closing it ends the handler.
type pipeBody struct {
	pr     *pipeEnd
	cancel context.CancelFunc
}

func (b *pipeBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *pipeBody) Close() error {
	b.cancel()
	return b.pr.Close()
}

// pipeBuffer is how many bytes a handler may write ahead of its reader
// before a write waits, as a socket's send buffer would hold them.
const pipeBuffer = 64 << 10

// pipeBuffers holds pipes' buffers between requests: the reader's Close
// returns one (no write can reach it after).
var pipeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// pipe is io.Pipe with a buffer: a write returns once its bytes are
// buffered instead of waiting for the reader to take them, which halves the
// goroutine switches of a stream (one event each: the reader's). Writes
// wait on a channel, never while holding the mutex, so a blocked writer or
// reader is durably blocked for synctest.
type pipe struct {
	mu       sync.Mutex
	buf      []byte
	werr     error         // the writer closed: the reader gets it after the buffer (io.EOF for nil)
	rclosed  bool          // the reader closed: writes fail
	wwait    bool          // a writer waits for room: the next read signals writable
	readable chan struct{} // capacity 1: data or werr arrived
	writable chan struct{} // capacity 1: room or rclosed arrived
}

// pipeEnd is one end of a pipe: the reader's or the writer's.
type pipeEnd struct{ p *pipe }

func newPipe() (r, w *pipeEnd) {
	p := &pipe{readable: make(chan struct{}, 1), writable: make(chan struct{}, 1)}
	return &pipeEnd{p}, &pipeEnd{p}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Write buffers b, waiting while the buffer is full: a write larger than
// the room left is taken in parts, as a socket takes it.
func (e *pipeEnd) Write(b []byte) (int, error) {
	p := e.p
	written := 0
	for {
		p.mu.Lock()
		switch {
		case p.rclosed, p.werr != nil:
			p.mu.Unlock()
			return written, io.ErrClosedPipe
		case len(p.buf) < pipeBuffer:
			if p.buf == nil {
				p.buf = (*pipeBuffers.Get().(*[]byte))[:0]
			}
			n := min(len(b)-written, pipeBuffer-len(p.buf))
			p.buf = append(p.buf, b[written:written+n]...)
			written += n
			if written == len(b) {
				p.mu.Unlock()
				signal(p.readable)
				return written, nil
			}
			p.wwait = true
			p.mu.Unlock()
			signal(p.readable)
			<-p.writable
			continue
		}
		p.wwait = true
		p.mu.Unlock()
		<-p.writable
	}
}

// CloseWithError ends the writes: the reader gets err (io.EOF for nil) once
// it has read what is buffered. Only the first close counts.
func (e *pipeEnd) CloseWithError(err error) error {
	p := e.p
	if err == nil {
		err = io.EOF
	}
	p.mu.Lock()
	if p.werr == nil {
		p.werr = err
	}
	p.mu.Unlock()
	signal(p.readable)
	signal(p.writable)
	return nil
}

// Read takes buffered bytes, waiting for some or for the writer's close.
func (e *pipeEnd) Read(b []byte) (int, error) {
	p := e.p
	for {
		p.mu.Lock()
		switch {
		case p.rclosed:
			p.mu.Unlock()
			return 0, io.ErrClosedPipe
		case len(p.buf) > 0:
			n := copy(b, p.buf)
			p.buf = p.buf[:copy(p.buf, p.buf[n:])]
			wake := p.wwait
			p.wwait = false
			p.mu.Unlock()
			if wake {
				signal(p.writable)
			}
			return n, nil
		case p.werr != nil:
			err := p.werr
			p.mu.Unlock()
			return 0, err
		}
		p.mu.Unlock()
		<-p.readable
	}
}

// Close ends the reads: later writes fail, and a waiting writer wakes.
func (e *pipeEnd) Close() error {
	p := e.p
	p.mu.Lock()
	p.rclosed = true
	if p.buf != nil {
		b := p.buf[:0]
		pipeBuffers.Put(&b)
	}
	p.buf = nil
	p.mu.Unlock()
	signal(p.writable)
	signal(p.readable)
	return nil
}
