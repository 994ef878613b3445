package fakeprovider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// Transport returns an in-memory http.RoundTripper that serves every URL
// with the fake (built on httpmock). The body streams through an io.Pipe, so
// inside synctest.Test a 30 s cold start or a 20 min stall costs no real
// time and is measured exactly. Closing a response body or canceling the
// request's context ends that request's goroutine at once.
func (f *Fake) Transport() http.RoundTripper { return f.transport }

// Client returns an *http.Client that uses Transport.
func (f *Fake) Client() *http.Client { return &http.Client{Transport: f.transport} }

// respond runs the handler in its own goroutine, writing into a pipe, and
// returns the response as soon as the handler has written its header.
func (f *Fake) respond(req *http.Request) (*http.Response, error) {
	if !f.track() {
		return nil, errFakeClosed
	}
	ctx, cancel := context.WithCancel(req.Context())
	pr, pw := io.Pipe()
	// A canceled request unblocks a handler stuck writing to a reader that
	// no longer reads.
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	// So does Close: a client that never reads nor closes its body must not
	// hold Close forever.
	stopClose := context.AfterFunc(f.ctx, func() { pw.CloseWithError(errFakeClosed) })
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		defer f.wg.Done()
		defer stop()
		defer stopClose()
		defer func() {
			if v := recover(); v != nil {
				if v != http.ErrAbortHandler {
					_ = pw.CloseWithError(errors.New("fakeprovider: handler panic"))
					w.markReady()
					panic(v)
				}
				// A disconnect fault: the client sees the body end early.
				_ = pw.CloseWithError(io.ErrUnexpectedEOF)
			} else {
				// A canceled request or a closed fake must not look like
				// a clean end.
				err := ctx.Err()
				if err == nil && f.ctx.Err() != nil {
					err = errFakeClosed
				}
				_ = pw.CloseWithError(err) // nil: EOF
			}
			w.markReady()
		}()
		f.ServeHTTP(w, req.WithContext(ctx))
	}()
	select {
	case <-w.ready:
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
	if w.status == 0 { // the handler ended without a header: connection dropped
		cancel()
		return nil, io.ErrUnexpectedEOF
	}
	resp := &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.header.Clone(),
		Body:          &pipeBody{pr: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}
	return resp, nil
}

var errFakeClosed = errors.New("fakeprovider: fake is closed")

// pipeWriter is the http.ResponseWriter of an in-memory request.
type pipeWriter struct {
	header http.Header
	pw     *io.PipeWriter
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
	pr     *io.PipeReader
	cancel context.CancelFunc
}

func (b *pipeBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *pipeBody) Close() error {
	b.cancel()
	return b.pr.Close()
}
