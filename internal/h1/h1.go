// Package h1 is a minimal HTTP/1.1 client for streamed answers: a
// [Pool] of kept connections to one address sends the bytes of a
// [Request] and returns a [Reply] whose body reads and stamps the socket
// directly. latencytest's OpenAI provider uses it for plain http://
// endpoints on its own transport, where [Supported] (unix: it can look at
// an idle connection before reusing it); elsewhere, and for https, a
// proxy or a client of the user's, net/http. Per SSE event it costs one
// read and one pass over the bytes, where net/http adds a body, a chunked
// reader, a buffered reader and a lock per read and two goroutine
// hand-offs per request. [ReplyOf], [DecodeBody] and [StampingDial] give
// net/http's answers the same shape and clocks, so both paths make the
// same records.
//
// It writes the bytes net/http writes for the same request (the same
// request line, Host, headers and their order, Content-Length and body)
// and follows net/http's rules: a request is sent again only when no byte
// of it was written (on a kept connection that the server had closed);
// after a write error it reads the answer that had already arrived (a
// 413 or 401 sent before the body was read) before failing. It reads the
// common shape of a streamed answer: an HTTP/1.1 or 1.0 response with a
// chunked, Content-Length or read-to-close body, after any 1xx
// informational answers (skipped, as net/http skips them; they never
// stamp TTFB). Anything else (a 101, a redirect, a transfer encoding
// other than chunked, a header it cannot parse) is read by net/http's own
// parser (http.ReadResponse) from the same connection: the server sees
// the request once, and the answer is what net/http would have made of
// it. The connection is not kept after such an answer.
//
// What it saves, from latencytest's BenchmarkLoopback (a fakellm in a
// child process over loopback, 200 ms TTFT, 64 tokens 10 ms apart, 50
// requests in flight, 500 measured; CPU is the client process's per
// request; 2 cores shared with other work, so the errors are the
// machine's; 3 runs each):
//
//	client                       CPU/request  TTFT error p50  p99
//	raw (hand-written reader)       1883 µs       1.8 ms     55 ms
//	latencytest on h1               2894 µs       1.3 ms     22 ms
//	latencytest on net/http         3286 µs       1.4 ms     29 ms
//
//	go test -run '^$' -bench 'Loopback' -benchtime 3x ./latencytest/
package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// errFallback says the answer's head is one for net/http's parser (see
// above); errInformational that it is a 1xx to skip.
var (
	errFallback      = errors.New("latencytest: answer left to net/http")
	errInformational = errors.New("latencytest: a 1xx informational answer")
)

// Limits of what a server may send, as net/http's.
const (
	maxHeadBytes     = 10 << 20 // the status line and headers (Transport's default)
	maxChunkLine     = 4096     // a chunk size line or a trailer line
	h1IdleTimeout    = 90 * time.Second
	h1ReadBufferSize = 16 << 10
)

// Pool is the keep-alive connections to one address: at most Limit
// open (0: no bound), as net/http's MaxConnsPerHost, and at most MaxIdle
// of them idle. A request that finds none idle and the bound reached
// waits for one to be returned or closed.
type Pool struct {
	Addr    string                                                            // host:port
	Limit   int                                                               // connections open at most; 0: no bound
	MaxIdle int                                                               // idle connections kept at most
	Dialer  func(ctx context.Context, network, addr string) (net.Conn, error) // nil: net.Dialer

	mu      sync.Mutex
	idle    []*h1Conn
	closing bool           // CloseIdle ran and no get since: close what is returned
	open    int            // connections open or being dialed
	waiters []chan *h1Conn // each gets a connection, or nil: a slot to dial
}

// h1Conn is one connection and its read buffer: buf[r:w] is unread.
type h1Conn struct {
	nc       net.Conn
	stamped  readStamper // nc, when it stamps its reads (else nil)
	buf      []byte
	r, w     int
	idleAt   time.Time
	lastRead time.Time // when the last read returned
	reused   bool
}

// ReadAt is when the connection's last read returned (for an answer read
// by net/http's parser: see viaNetHTTP).
func (c *h1Conn) ReadAt() time.Time { return c.lastRead }

// readStamper is a connection that notes when each read returned
// (machine.Dial's connections take that time for the read's lag): its
// stamp is the connection's, and a read costs no second clock reading.
type readStamper interface{ ReadAt() time.Time }

// newConn is a connection of the pool over nc.
func newConn(nc net.Conn) *h1Conn {
	c := &h1Conn{nc: nc, buf: make([]byte, h1ReadBufferSize)}
	c.stamped, _ = nc.(readStamper)
	return c
}

// Read reads from the connection, stamping lastRead.
func (c *h1Conn) Read(p []byte) (int, error) {
	n, err := c.nc.Read(p)
	if c.stamped != nil {
		c.lastRead = c.stamped.ReadAt()
	} else {
		c.lastRead = time.Now()
	}
	return n, err
}

// get returns an idle connection, or dials one (traced) when the bound
// allows, or waits.
func (p *Pool) get(ctx context.Context, trace *httptrace.ClientTrace) (*h1Conn, error) {
	p.mu.Lock()
	p.closing = false // a run uses the pool again: keep its connections
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if time.Since(c.idleAt) < h1IdleTimeout && idleUsable(c.nc) {
			p.mu.Unlock()
			c.reused = true
			return c, nil
		}
		c.nc.Close()
		p.open--
	}
	if p.Limit == 0 || p.open < p.Limit {
		p.open++
		p.mu.Unlock()
		return p.dial(ctx, trace)
	}
	w := make(chan *h1Conn, 1)
	p.waiters = append(p.waiters, w)
	p.mu.Unlock()
	select {
	case c := <-w:
		if c == nil {
			return p.dial(ctx, trace)
		}
		c.reused = true
		return c, nil
	case <-ctx.Done():
		p.mu.Lock()
		if i := slices.Index(p.waiters, w); i >= 0 {
			p.waiters = slices.Delete(p.waiters, i, i+1)
			p.mu.Unlock()
			return nil, ctx.Err()
		}
		p.mu.Unlock()
		// Handed a connection or a slot as the context ended: pass it on.
		if c := <-w; c != nil {
			p.put(c)
		} else {
			p.release()
		}
		return nil, ctx.Err()
	}
}

// dial opens a connection for a slot already counted in open, with
// net/http's dialer settings; the trace sees DNS and connect.
func (p *Pool) dial(ctx context.Context, trace *httptrace.ClientTrace) (*h1Conn, error) {
	dial := p.Dialer
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	nc, err := dial(httptrace.WithClientTrace(ctx, trace), "tcp", p.Addr)
	if err != nil {
		p.release()
		return nil, err
	}
	return newConn(nc), nil
}

// put returns a connection whose answer was read to its end: to a waiter,
// or idle.
func (p *Pool) put(c *h1Conn) {
	p.mu.Lock()
	if p.toWaiter(c) {
		return
	}
	if p.closing || len(p.idle) >= p.MaxIdle {
		p.open--
		p.mu.Unlock()
		c.nc.Close()
		return
	}
	c.idleAt = time.Now()
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// toWaiter hands c (nil: a slot to dial) to the first waiter and unlocks
// p.mu; with none waiting it returns false, p.mu still held.
func (p *Pool) toWaiter(c *h1Conn) bool {
	if len(p.waiters) == 0 {
		return false
	}
	w := p.waiters[0]
	p.waiters = p.waiters[1:]
	p.mu.Unlock()
	w <- c
	return true
}

// discard closes a connection that cannot be reused.
func (p *Pool) discard(c *h1Conn) {
	c.nc.Close()
	p.release()
}

// release frees the slot of a connection closed (or never opened): to a
// waiter, which dials, or off the count.
func (p *Pool) release() {
	p.mu.Lock()
	if p.toWaiter(nil) {
		return
	}
	p.open--
	p.mu.Unlock()
}

// Idle returns the pool's idle connections, for a caller (a test) that
// watches them; the pool keeps them.
func (p *Pool) Idle() []net.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]net.Conn, len(p.idle))
	for i, c := range p.idle {
		out[i] = c.nc
	}
	return out
}

// CloseIdle closes the idle connections, and those returned until the
// next get (as net/http's CloseIdleConnections): a run's last request may
// hand its connection back after the run's end closed the idle ones.
func (p *Pool) CloseIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closing = nil, true
	p.open -= len(idle)
	p.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
}

// HeaderInjected is the response header in which a server that injects
// faults or waits into its answers (a chaos proxy, a fake such as
// tailguard's fakeprovider) names them ("stall,cold_start=30s"): any
// server may set it, and a record keeps it (Reply.Injected).
const HeaderInjected = "Tailguard-Injected"

// Reply is a response as a caller reads it, from net/http (ReplyOf) or
// from a Pool: the status, the headers a record keeps (and a
// redirect's Location, for its error; the content encoding, for
// DecodeBody), and the body.
type Reply struct {
	Status                                    int
	ContentType, Injected, Location, Encoding string
	Body                                      io.ReadCloser
	// HeadAt is when the read that brought the answer's head returned: its
	// first byte, or after 1xx answers the read that completed the final
	// head (a 1xx never stamps TTFB). Zero: not known (the trace's
	// first-byte time stands).
	HeadAt time.Time
	// Clock tells when the body's latest bytes were read from the socket;
	// nil: not known (an event is timed when the body's Read returns).
	Clock ReadClock
}

// ReadClock is a body or connection that stamps its socket reads: ReadAt
// is when the read that brought the bytes last returned left the socket.
// It is never before those bytes arrived and never after the caller's
// Read returned.
type ReadClock interface{ ReadAt() time.Time }

// nothingWritten is a write error before any byte of the request was
// written: the one failure after which net/http sends a POST again (on a
// kept connection; see roundTrip).
type nothingWritten struct{ err error }

func (e nothingWritten) Error() string { return e.err.Error() }
func (e nothingWritten) Unwrap() error { return e.err }

// aLongTimeAgo is a deadline in the past: set on a connection, it ends a
// blocked read or write at once.
var aLongTimeAgo = time.Unix(1, 0)

// RoundTrip sends req (the whole request, written at once) and reads the
// answer's head (with net/http's parser when the fast path does not read
// it: see errFallback). trace sees the dial. As in net/http, a request is
// sent again, on another connection, only when not one byte of it was
// written on a kept connection: any later failure is the request's (the
// server may have read it and worked on it).
func (p *Pool) RoundTrip(ctx context.Context, req []byte, trace *httptrace.ClientTrace) (Reply, error) {
	for {
		c, err := p.get(ctx, trace)
		if err != nil {
			return Reply{}, err
		}
		stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(aLongTimeAgo) })
		a, body, err := c.exchange(ctx, req)
		if err == errFallback {
			a, err = c.viaNetHTTP(a, func() { stop(); p.discard(c) })
			if err == nil {
				return a, nil
			}
		}
		if err == nil {
			body.p, body.c, body.stop, body.at = p, c, stop, c.lastRead
			if body.done {
				body.finish()
			}
			a.Body, a.Clock = body, body
			return a, nil
		}
		stop()
		p.discard(c)
		var nw nothingWritten
		if errors.As(err, &nw) {
			if c.reused && ctx.Err() == nil {
				continue
			}
			err = nw.err
		}
		return Reply{}, err
	}
}

// exchange writes req and reads the answer's head, skipping 1xx
// informational answers. On errFallback the head is left unread in the
// buffer, for net/http's parser (a.HeadAt says when it arrived). After a
// write error that wrote some of req, the answer that already arrived is
// read (the connection is then not kept); when none did, the error is
// the write's.
func (c *h1Conn) exchange(ctx context.Context, req []byte) (a Reply, body *h1Body, err error) {
	c.r, c.w = 0, 0 // put keeps only a connection with nothing unread
	n, werr := c.write(ctx, req)
	if werr != nil && n == 0 {
		return a, nil, nothingWritten{werr}
	}
	a, body, err = c.readHead()
	if werr != nil {
		switch {
		case err == errFallback:
		case err != nil:
			return a, nil, brokenHead(werr)
		default:
			body.keep = false // the rest of the request is still unsent
		}
	}
	return a, body, err
}

// Writing a large request (see write).
const (
	inlineWrite = 64 << 10              // a request up to this size fits the socket's buffers: written at once
	writePoll   = 10 * time.Millisecond // how often a blocked write looks for an early answer
)

// errAnsweredEarly ends a write that the server stopped reading after it
// answered (or closed): the answer is read as after a write error.
var errAnsweredEarly = errors.New("the server answered or closed before the whole request was written")

// write writes req. A request larger than inlineWrite may block when the
// server stops reading it (a 413 or 401 sent after the head, the
// connection held open): every writePoll, a blocked write looks whether
// anything has arrived (see answered) and if so stops, as net/http,
// which reads while it writes, returns the answer. A canceled context
// ends the write within writePoll.
func (c *h1Conn) write(ctx context.Context, req []byte) (int, error) {
	if len(req) <= inlineWrite {
		return c.nc.Write(req)
	}
	n := 0
	for {
		c.nc.SetWriteDeadline(time.Now().Add(writePoll))
		k, err := c.nc.Write(req[n:])
		n += k
		switch {
		case err == nil:
			// A deadline of a context ended meanwhile is the reads' too:
			// clearing the write's loses nothing.
			c.nc.SetWriteDeadline(time.Time{})
			return n, nil
		case !errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil:
			return n, err
		case answered(c.nc):
			return n, errAnsweredEarly
		}
	}
}

// readHead reads the answer's head (see exchange). Each head, 1xx or
// final, may take up to maxHeadBytes, and any number of 1xx heads may
// come: as in net/http when a trace watches 1xx answers, as the
// provider's does (a flood of them ends at the run's timeouts).
func (c *h1Conn) readHead() (a Reply, body *h1Body, err error) {
	var first time.Time
	informational := false
	// The head: up to its blank line.
	scan := 0 // bytes of buf[r:w] known to hold no blank line
	for {
		i := headEnd(c.buf[c.r+scan : c.w])
		if i >= 0 && scan+i <= maxHeadBytes {
			end := c.r + scan + i
			a, body, err := parseHead(c.buf[c.r:end])
			if err == errInformational {
				c.r, scan = end, 0
				informational = true
				continue
			}
			a.HeadAt = first
			if informational {
				a.HeadAt = c.lastRead
			}
			if err == nil {
				c.r = end
			}
			return a, body, err
		}
		if i >= 0 || c.w-c.r >= maxHeadBytes {
			return a, nil, brokenHead(errors.New("net/http: server response headers exceeded " + strconv.Itoa(maxHeadBytes) + " bytes; aborted"))
		}
		scan = max(0, c.w-c.r-3)
		if c.w == len(c.buf) {
			c.grow()
		}
		n, err := c.Read(c.buf[c.w:])
		if n > 0 && first.IsZero() {
			first = c.lastRead
		}
		c.w += n
		if err != nil {
			if c.w > 0 && err == io.EOF {
				// A head cut short: the error net/http's parser gives.
				if _, perr := http.ReadResponse(bufio.NewReader(bytes.NewReader(c.buf[c.r:c.w])), nil); perr != nil {
					err = perr
				}
				err = brokenHead(err)
			}
			return a, nil, err
		}
	}
}

// viaNetHTTP reads the answer whose head is at buf[r:] with net/http's
// parser, from the buffered bytes and then the connection (skipping 1xx
// answers), for a head the fast path does not read (see errFallback); a
// carries when the head arrived. The connection is closed when the body
// is.
func (c *h1Conn) viaNetHTTP(a Reply, done func()) (Reply, error) {
	br := bufio.NewReader(io.MultiReader(bytes.NewReader(slices.Clone(c.buf[c.r:c.w])), c))
	headAt := a.HeadAt
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return Reply{}, brokenHead(err)
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			a := ReplyOf(resp)
			a.Body = &closingBody{ReadCloser: resp.Body, done: done}
			a.HeadAt, a.Clock = headAt, c
			return a, nil
		}
		// A 1xx after a head the fast path could not read: skipped (the
		// run's timeouts end a server that sends them forever); TTFB is
		// the final head's.
		headAt = c.lastRead
	}
}

// closingBody is a body read by net/http's parser from a fast-path
// connection: closing it closes the connection (once).
type closingBody struct {
	io.ReadCloser
	done func()
	once sync.Once
}

func (b *closingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

// ReplyOf is a net/http response as a Reply.
func ReplyOf(resp *http.Response) Reply {
	return Reply{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
		Injected: resp.Header.Get(HeaderInjected), Location: resp.Header.Get("Location"),
		Encoding: strings.Join(resp.Header.Values("Content-Encoding"), ","), Body: resp.Body}
}

// brokenHead says, as net/http's transport does, that the server broke
// the connection while sending the head.
func brokenHead(err error) error {
	return fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", err)
}

// grow makes room at the end of buf: moves the unread bytes to the start,
// or doubles it.
func (c *h1Conn) grow() {
	if c.r > 0 {
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.r = 0
		return
	}
	c.buf = append(c.buf, make([]byte, len(c.buf))...)
}

// headEnd returns the index just past the blank line that ends a head in
// b, or -1.
func headEnd(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		if i < len(b) && b[i] == '\n' {
			return i + 1
		}
		if i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n' {
			return i + 2
		}
	}
}

// parseHead parses a status line and headers (ending in a blank line)
// into a Reply and its body's framing, or returns errFallback for one
// left to net/http.
func parseHead(head []byte) (a Reply, b *h1Body, err error) {
	line, rest := nextLine(head)
	var minor byte
	switch {
	case bytes.HasPrefix(line, []byte("HTTP/1.1 ")):
		minor = 1
	case bytes.HasPrefix(line, []byte("HTTP/1.0 ")):
	default:
		return a, nil, errFallback
	}
	code := line[len("HTTP/1.1 "):]
	if len(code) > 3 && code[3] != ' ' || len(code) < 3 {
		return a, nil, errFallback
	}
	status := 0
	for _, d := range code[:3] {
		if d < '0' || d > '9' {
			return a, nil, errFallback
		}
		status = status*10 + int(d-'0')
	}
	switch {
	case status == http.StatusSwitchingProtocols:
		return a, nil, errFallback
	case status < 200:
		return a, nil, errInformational
	}
	a.Status = status
	b = &h1Body{length: -1, keep: minor == 1}
	var te, location, sawType, sawInjected bool
	var keepAlive bool
	for len(rest) > 0 {
		line, rest = nextLine(rest)
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || line[0] == ' ' || line[0] == '\t' || !isToken(line[:colon]) {
			return a, nil, errFallback
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		switch {
		case equalFoldBytes(name, "Content-Type"):
			if !sawType {
				a.ContentType, sawType = string(value), true
			}
		case equalFoldBytes(name, HeaderInjected):
			if !sawInjected {
				a.Injected, sawInjected = string(value), true
			}
		case equalFoldBytes(name, "Content-Length"):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if b.length >= 0 || err != nil || n < 0 || value[0] == '+' {
				return a, nil, errFallback
			}
			b.length = n
		case equalFoldBytes(name, "Transfer-Encoding"):
			if te || minor == 0 || !equalFoldBytes(value, "chunked") {
				return a, nil, errFallback
			}
			te = true
		case equalFoldBytes(name, "Content-Encoding"):
			if a.Encoding != "" {
				a.Encoding += ","
			}
			a.Encoding += string(value)
		case equalFoldBytes(name, "Connection"):
			for _, tok := range bytes.Split(value, []byte(",")) {
				tok = bytes.Trim(tok, " \t")
				switch {
				case equalFoldBytes(tok, "close"):
					b.keep, keepAlive = false, false
				case equalFoldBytes(tok, "keep-alive"):
					keepAlive = true
				case equalFoldBytes(tok, "upgrade"):
					return a, nil, errFallback
				}
			}
		case equalFoldBytes(name, "Location"):
			location = true
		}
	}
	if location && (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
		return a, nil, errFallback // a redirect the client follows
	}
	if minor == 0 {
		b.keep = keepAlive && b.length >= 0
	}
	switch {
	case status == 204 || status == 304:
		b.length, b.done = 0, true
	case te:
		b.chunked, b.length = true, -1
	case b.length == 0:
		b.done = true
	case b.length < 0:
		b.keep = false // to the close
	}
	if b.chunked {
		b.state = chunkSize
	}
	return a, b, nil
}

// nextLine cuts the first line (its CRLF or LF dropped) from b.
func nextLine(b []byte) (line, rest []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil
	}
	line, rest = b[:i], b[i+1:]
	return bytes.TrimSuffix(line, []byte("\r")), rest
}

// isToken reports whether b is an HTTP token (a header name).
func isToken(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7F || bytes.IndexByte([]byte(`"(),/:;<=>?@[\]{}`), c) >= 0 {
			return false
		}
	}
	return true
}

// equalFoldBytes reports whether b equals s when both have bit 0x20 set
// in every byte (ASCII letters compared without case).
func equalFoldBytes(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(s) {
		if b[i]|0x20 != s[i]|0x20 {
			return false
		}
	}
	return true
}
