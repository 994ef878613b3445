package h1

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

// EncodingError is an answer body that cannot be decoded: an encoding
// tailguard does not know, or corrupt gzip or deflate data. The call
// fails as bad_stream (never truncated: the bytes arrived, they are not
// the stream).
type EncodingError struct {
	encoding string
	err      error
}

func (e *EncodingError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("the answer is encoded as %q, which tailguard does not decode (it asks for identity)", e.encoding)
	}
	return fmt.Sprintf("the answer's %s encoding is corrupt: %v", e.encoding, e.err)
}

func (e *EncodingError) Unwrap() error { return e.err }

// DecodeBody decodes an answer's Content-Encoding, on both paths alike:
// identity (or none) as it is; gzip (x-gzip) and deflate (zlib-wrapped,
// as RFC 9110 says, or raw, as some servers send it) decoded as the body
// is read; anything else (br, zstd, compress, two encodings) fails the
// first read with an EncodingError. The decoder is made at the first
// read, so a gzip header that is slow to come is waited for under the
// call's timeouts, not before them.
func DecodeBody(a Reply) Reply {
	enc := strings.ToLower(strings.TrimSpace(a.Encoding))
	var kept []string
	for _, e := range strings.Split(enc, ",") {
		if e = strings.TrimSpace(e); e != "" && e != "identity" {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return a
	}
	d := &decodingBody{src: errTap{r: a.Body}, body: a.Body, encoding: strings.Join(kept, ", ")}
	if len(kept) > 1 || (kept[0] != "gzip" && kept[0] != "x-gzip" && kept[0] != "deflate") {
		d.err = &EncodingError{encoding: d.encoding}
	}
	a.Body = d
	return a
}

// decodingBody is a body decoded as it is read (see DecodeBody).
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
// answer was cut), the decoder's as an EncodingError.
func (d *decodingBody) fail(err error) error {
	switch {
	case d.src.err != nil && d.src.err != io.EOF:
		d.err = d.src.err
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		d.err = io.ErrUnexpectedEOF
	default:
		d.err = &EncodingError{encoding: d.encoding, err: err}
	}
	return d.err
}

func (d *decodingBody) Close() error { return d.body.Close() }

// clockBase is the origin of StampConn's stamps (a monotonic reading).
var clockBase = time.Now()

// StampConn is a connection of a net/http transport (see StampingDial) that
// stamps each read as it returns, so that the net/http path, like the
// fast path, times an event at the socket read that brought it, for
// http:// and under TLS for https:// (the stamp is the TCP read's; TLS
// decrypts on top of it). Under HTTP/2, where one connection carries
// several streams, the stamp is the last read of any of them: still
// never before the event's bytes arrived nor after the body's Read
// returned them.
type StampConn struct {
	net.Conn
	last atomic.Int64 // time.Since(clockBase) at the last read's return
}

func (c *StampConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.last.Store(int64(time.Since(clockBase)))
	return n, err
}

// ReadAt is when the last read returned.
func (c *StampConn) ReadAt() time.Time { return clockBase.Add(time.Duration(c.last.Load())) }

// StampingDial wraps a dialer's connections in StampConn.
func StampingDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &StampConn{Conn: nc}, nil
	}
}

// StampOf is the StampConn under a connection net/http reports (through
// TLS), or nil.
func StampOf(nc net.Conn) *StampConn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, _ := nc.(*StampConn)
	return sc
}
