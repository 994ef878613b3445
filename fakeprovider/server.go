package fakeprovider

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server is a real HTTP server for a Fake. Loopback sockets do not advance
// synctest's clock: use it for clients in other processes or languages, and
// the in-memory Transport for timing tests.
type Server struct {
	// URL is the base URL, e.g. "http://127.0.0.1:38421" (no trailing /v1).
	URL string

	srv    *http.Server
	ln     net.Listener
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// NewServer serves the fake on 127.0.0.1 at a random port. It panics if it
// cannot listen.
func NewServer(f *Fake) *Server {
	s, err := StartServer(f, "127.0.0.1:0")
	if err != nil {
		panic("fakeprovider: " + err.Error())
	}
	return s
}

// StartServer serves the fake on addr (host:port). Bind to loopback unless
// clients elsewhere must reach it.
func StartServer(f *Fake, addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakeprovider: listen on %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, cancel: cancel, done: make(chan struct{})}
	s.srv = &http.Server{
		Handler:           f,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // ends with http.ErrServerClosed, through Close
	}()
	return s, nil
}

// Close stops the server: open streams are ended (their clients see the
// connection close) and Close returns once every handler has returned.
func (s *Server) Close() {
	s.once.Do(func() {
		s.cancel() // every request's context ends: open streams stop
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(ctx) // waits for handlers to return
		_ = s.srv.Close()       // a handler blocked on a client that stopped reading
		<-s.done
	})
}
