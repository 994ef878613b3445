package latencytest

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"
)

// encodingError is an answer body that cannot be decoded: an encoding
// tailguard does not know, or corrupt gzip or deflate data. The call
// fails as bad_stream (never truncated: the bytes arrived, they are not
// the stream).
type encodingError struct {
	encoding string
	err      error
}

func (e *encodingError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("the answer is encoded as %q, which tailguard does not decode (it asks for identity)", e.encoding)
	}
	return fmt.Sprintf("the answer's %s encoding is corrupt: %v", e.encoding, e.err)
}

func (e *encodingError) Unwrap() error { return e.err }

// decodeBody decodes an answer's Content-Encoding, on both paths alike:
// identity (or none) as it is; gzip (x-gzip) and deflate (zlib-wrapped,
// as RFC 9110 says, or raw, as some servers send it) decoded as the body
// is read; anything else (br, zstd, compress, two encodings) fails the
// first read with an encodingError. The decoder is made at the first
// read, so a gzip header that is slow to come is waited for under the
// call's timeouts, not before them.
func decodeBody(a reply) reply {
	enc := strings.ToLower(strings.TrimSpace(a.encoding))
	var kept []string
	for _, e := range strings.Split(enc, ",") {
		if e = strings.TrimSpace(e); e != "" && e != "identity" {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return a
	}
	d := &decodingBody{src: errTap{r: a.body}, body: a.body, encoding: strings.Join(kept, ", ")}
	if len(kept) > 1 || (kept[0] != "gzip" && kept[0] != "x-gzip" && kept[0] != "deflate") {
		d.err = &encodingError{encoding: d.encoding}
	}
	a.body = d
	return a
}

// decodingBody is a body decoded as it is read (see decodeBody).
type decodingBody struct {
	src      errTap
	body     io.Closer
	encoding string
	dec      io.Reader // made at the first read
	err      error
}

// errTap remembers the last error its reader returned, so that a
// decoder's error can be told from the body's (a cut connection, a
// deadline).
type errTap struct {
	r   io.Reader
	err error
}

func (t *errTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil {
		t.err = err
	}
	return n, err
}

func (d *decodingBody) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.dec == nil {
		var err error
		switch d.encoding {
		case "gzip", "x-gzip":
			d.dec, err = gzip.NewReader(&d.src)
		default: // deflate: zlib-wrapped or raw
			var head [2]byte
			var n int
			n, err = io.ReadFull(&d.src, head[:])
			r := io.MultiReader(bytes.NewReader(head[:n]), &d.src)
			if err == nil && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
				d.dec, err = zlib.NewReader(r)
			} else if err == nil {
				d.dec = flate.NewReader(r)
			}
		}
		if err != nil {
			return 0, d.fail(err)
		}
	}
	n, err := d.dec.Read(p)
	if err == io.EOF {
		// The encoded stream's end: read the body's (zlib and flate stop
		// at their own), so that its connection is kept; what follows the
		// stream is discarded.
		if _, cerr := io.Copy(io.Discard, &d.src); cerr != nil {
			err = d.fail(cerr)
		}
	}
	if err != nil && err != io.EOF {
		err = d.fail(err)
	}
	return n, err
}

// fail keeps the error that ends the body: the body's own as it is (an
// io.EOF before the decoder's first bytes as io.ErrUnexpectedEOF: the
// answer was cut), the decoder's as an encodingError.
func (d *decodingBody) fail(err error) error {
	switch {
	case d.src.err != nil && d.src.err != io.EOF:
		d.err = d.src.err
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		d.err = io.ErrUnexpectedEOF
	default:
		d.err = &encodingError{encoding: d.encoding, err: err}
	}
	return d.err
}

func (d *decodingBody) Close() error { return d.body.Close() }

// clockBase is the origin of stampConn's stamps (a monotonic reading).
var clockBase = time.Now()

// stampConn is a connection of the provider's net/http transport that
// stamps each read as it returns, so that the net/http path, like the
// fast path, times an event at the socket read that brought it, for
// http:// and under TLS for https:// (the stamp is the TCP read's; TLS
// decrypts on top of it). Under HTTP/2, where one connection carries
// several streams, the stamp is the last read of any of them: still
// never before the event's bytes arrived nor after the body's Read
// returned them.
type stampConn struct {
	net.Conn
	last atomic.Int64 // time.Since(clockBase) at the last read's return
}

func (c *stampConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.last.Store(int64(time.Since(clockBase)))
	return n, err
}

// readAt is when the last read returned.
func (c *stampConn) readAt() time.Time { return clockBase.Add(time.Duration(c.last.Load())) }

// stampingDial wraps a dialer's connections in stampConn.
func stampingDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &stampConn{Conn: nc}, nil
	}
}

// stampOf is the stampConn under a connection net/http reports (through
// TLS), or nil.
func stampOf(nc net.Conn) *stampConn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, _ := nc.(*stampConn)
	return sc
}
