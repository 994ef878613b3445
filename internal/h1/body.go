// The body reader of the client (see h1.go).

package h1

import (
	"bytes"
	"errors"
	"io"
	"time"
)

// Chunked body states.
const (
	chunkSize    = iota // a chunk size line
	chunkData           // chunk data (left bytes)
	chunkDataEnd        // the CRLF after a chunk's data
	chunkTrailer        // trailer lines to a blank one
)

// h1Body is an answer's body: Content-Length (length bytes), chunked, or
// to the connection's close (length -1). At its end the connection goes
// back to the pool when it may be kept; a body closed before its end
// closes it.
type h1Body struct {
	p       *Pool
	c       *h1Conn
	stop    func() bool // stops the context's deadline on the connection
	length  int64       // bytes left: of the body, or of the chunk
	chunked bool
	state   int
	keep    bool // the connection may be kept after the body's end
	done    bool // the body's end was read
	err     error
	freed   bool      // the connection went back or was closed
	at      time.Time // when the read that brought the bytes last returned left the socket
}

// ReadAt is when the read that brought the bytes Read last returned left
// the socket.
func (b *h1Body) ReadAt() time.Time { return b.at }

// Read reads the body's bytes, the chunked framing taken off; it blocks
// only when no byte is buffered. Afterwards at is when the bytes it
// returned were read from the connection: an event is timed when it
// arrived, not after the work the caller did between its reads (for the
// first events, which come with the head, that is the head's parsing and
// the stream's setup).
func (b *h1Body) Read(p []byte) (int, error) {
	switch {
	case b.err != nil:
		return 0, b.err
	case b.done:
		return 0, io.EOF
	case b.freed:
		return 0, errors.New("read on a closed body")
	}
	n := 0
	for b.err == nil && !b.done && n < len(p) {
		c := b.c
		progress, err := b.step(p[n:], &n)
		if err != nil {
			b.err = err
			break
		}
		if progress {
			continue
		}
		if n > 0 {
			break // what is here, without blocking for more
		}
		if c.r == c.w {
			c.r, c.w = 0, 0
		} else if c.w == len(c.buf) {
			c.grow()
		}
		k, rerr := c.Read(c.buf[c.w:])
		b.at = c.lastRead
		c.w += k
		if rerr != nil {
			switch {
			case rerr == io.EOF && !b.chunked && b.length < 0:
				b.done = true
			case rerr == io.EOF:
				b.err = io.ErrUnexpectedEOF
			default:
				b.err = rerr
			}
		}
	}
	if b.done {
		b.finish()
		return n, io.EOF
	}
	if b.err != nil && n == 0 {
		b.free()
		return 0, b.err
	}
	return n, nil
}

// step consumes buffered bytes into p (n counting what p holds); it
// reports whether it made progress.
func (b *h1Body) step(p []byte, n *int) (bool, error) {
	c := b.c
	buf := c.buf[c.r:c.w]
	if len(buf) == 0 {
		return false, nil
	}
	switch {
	case !b.chunked || b.state == chunkData:
		k := min(len(buf), len(p))
		if b.length >= 0 {
			k = min(k, int(min(b.length, int64(len(p)))))
		}
		copy(p, buf[:k])
		c.r += k
		*n += k
		if b.length >= 0 {
			b.length -= int64(k)
			if b.length == 0 {
				if b.chunked {
					b.state = chunkDataEnd
				} else {
					b.done = true
				}
			}
		}
		return k > 0, nil
	case b.state == chunkDataEnd:
		if len(buf) < 2 {
			return false, nil
		}
		if buf[0] != '\r' || buf[1] != '\n' {
			return false, errors.New("malformed chunked encoding")
		}
		c.r += 2
		b.state = chunkSize
		return true, nil
	}
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		if len(buf) >= maxChunkLine {
			return false, errors.New("header line too long")
		}
		return false, nil
	}
	line := buf[:i]
	c.r += i + 1
	if b.state == chunkTrailer {
		if len(bytes.TrimSuffix(line, []byte("\r"))) == 0 {
			b.done = true
		}
		return true, nil
	}
	size, err := chunkSizeOf(line)
	if err != nil {
		return false, err
	}
	if size == 0 {
		b.state = chunkTrailer
	} else {
		b.state, b.length = chunkData, int64(size)
	}
	return true, nil
}

// chunkSizeOf parses a chunk size line (its LF gone) as net/http does:
// trailing whitespace and an extension after ";" are ignored.
func chunkSizeOf(line []byte) (uint64, error) {
	line = bytes.TrimRight(line, " \t\r")
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = bytes.TrimRight(line[:i], " \t")
	}
	if len(line) == 0 || len(line) > 16 {
		return 0, errors.New("invalid byte in chunk length")
	}
	var n uint64
	for _, d := range line {
		switch {
		case '0' <= d && d <= '9':
			d -= '0'
		case 'a' <= d && d <= 'f':
			d -= 'a' - 10
		case 'A' <= d && d <= 'F':
			d -= 'A' - 10
		default:
			return 0, errors.New("invalid byte in chunk length")
		}
		n = n<<4 | uint64(d)
	}
	if n > 1<<62 {
		return 0, errors.New("http chunk length too large")
	}
	return n, nil
}

// finish returns the connection of a body read to its end to the pool,
// or closes it (one that may not be kept, or whose context ended).
func (b *h1Body) finish() {
	if b.freed || b.p == nil {
		return
	}
	b.freed = true
	if b.stop() && b.keep && b.c.r == b.c.w {
		b.p.put(b.c)
		return
	}
	b.p.discard(b.c)
}

// free closes the connection of a body that failed or was abandoned.
func (b *h1Body) free() {
	if b.freed {
		return
	}
	b.freed = true
	b.stop()
	b.p.discard(b.c)
}

// Close ends the body: a body not read to its end closes its connection.
func (b *h1Body) Close() error {
	if b.done {
		b.finish()
	} else {
		b.free()
	}
	return nil
}
