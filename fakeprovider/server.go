package fakeprovider

import (
	"context"
	"fmt"
	"io"
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

// Limits of a Server's connections. There is no write timeout: a stream may
// rightly stay open for a 20-minute stall.
const (
	// headerTimeout bounds the time to send a request's headers.
	headerTimeout = 10 * time.Second
	// bodyTimeout bounds the time to send a request's body, from the end
	// of its headers; a slower client gets 408. The deadline is lifted once
	// the body has been read, so the answer's stream is never cut by it.
	bodyTimeout = 30 * time.Second
	// idleTimeout closes a keep-alive connection with no request.
	idleTimeout = 2 * time.Minute
)

// StartServer serves the fake on addr (host:port). Bind to loopback unless
// clients elsewhere must reach it. Headers must arrive within 10 s and a
// body within 30 s (then 408); bodies over 8 MiB get 413; idle keep-alive
// connections close after 2 min.
func StartServer(f *Fake, addr string) (*Server, error) {
	return startServer(f, addr, bodyTimeout)
}

func startServer(f *Fake, addr string, bodyTimeout time.Duration) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakeprovider: listen on %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, cancel: cancel, done: make(chan struct{})}
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ProtoMajor != 1 || r.ProtoMinor < 1 || r.Method == http.MethodHead {
				// Not a chunked stream: the clock must not write to it.
				r = r.WithContext(context.WithValue(r.Context(), rawConnKey{}, nil))
			}
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(bodyTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
			f.ServeHTTP(w, r)
		}),
		BaseContext: func(net.Listener) context.Context { return ctx },
		// The connection, for the clock to write streams' events to (see
		// ahead.go).
		ConnContext:       func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, rawConnKey{}, c) },
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       idleTimeout,
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // ends with http.ErrServerClosed, through Close
	}()
	return s, nil
}

// deadlineBody lifts the connection's read deadline when the body has been
// read: past that point the connection is only watched for the client
// going away, which a deadline would fake. After a failed read the
// deadline stays, so the server gives up on the rest of that body at once.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
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
