//go:build linux

package machine

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// delayReads makes every read that finds bytes waiting take them d later,
// until the test ends.
func delayReads(t *testing.T, d time.Duration) { t.Cleanup(DelayReadsForTest(d)) }

// A read that takes bytes 20 ms after they arrived counts a lag of at
// least 20 ms; the bytes, the end of the stream and a read after close
// are as a TCP connection's.
func TestReadLagOfALateRead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // echoes each byte, then answers "event one" to '!'
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 1)
		for {
			if _, err := c.Read(b); err != nil {
				return
			}
			if b[0] == '!' {
				_, _ = c.Write([]byte("event one"))
				return
			}
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var warm lagCounts
	c := watchReads(nc, &warm)
	defer c.Close()
	lc, ok := c.(*lagConn)
	if !ok {
		t.Fatalf("a TCP connection is not watched: %T", c)
	}
	// The kernel turns its arrival stamps on a moment after the first
	// socket asks for them: echo until a read is stamped.
	b := make([]byte, 1)
	for i := 0; warm.since(nil).n == 0; i++ {
		if i == 1000 {
			t.Fatal("no read stamped after 1,000 echoes")
		}
		if _, err := c.Write([]byte("w")); err != nil {
			t.Fatal(err)
		}
		before := time.Now()
		if _, err := io.ReadFull(c, b); err != nil || b[0] != 'w' {
			t.Fatalf("echo %q, %v", b, err)
		}
		// ReadAt is the read's return, on the clock the lag is taken on.
		if at := lc.ReadAt(); at.Before(before) || at.After(time.Now()) {
			t.Fatalf("ReadAt %v is not within the read (%v on)", at, before)
		}
	}
	var lags lagCounts
	lc.lags = &lags
	delayReads(t, 20*time.Millisecond)
	if _, err := c.Write([]byte("!")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "event one" {
		t.Fatalf("read %q, %v", got, err)
	}
	h := lags.since(nil)
	if h.n < 1 || h.quantile(1) < 20*time.Millisecond {
		t.Errorf("%d reads timed, largest lag %v; want one of at least 20ms", h.n, h.quantile(1))
	}
	c.Close()
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a read after close: %v; want net.ErrClosed", err)
	}
	var p fakeConn
	if watchReads(p, &lags) != net.Conn(p) {
		t.Error("a connection that is not TCP is wrapped")
	}
}

type fakeConn struct{ net.Conn }

// A watched connection's reads wait in the runtime's poller: a read with
// nothing to take ends at its deadline with a timeout, and a byte that
// comes later is read by the next one. A socket in blocking mode, whose
// reads could not be raw syscalls that return at once, is left as it is.
func TestReadLagWaitsAndLeavesBlockingSockets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var lags lagCounts
	c := watchReads(nc, &lags)
	defer c.Close()
	if _, ok := c.(*lagConn); !ok {
		t.Fatalf("a TCP connection is not watched: %T", c)
	}
	peer := <-accepted
	defer peer.Close()
	if err := c.SetReadDeadline(time.Now().Add(30 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if n, err := c.Read(b); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read with nothing to take: %d, %v; want a timeout", n, err)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = peer.Write([]byte("x")) }() // the read below waits for it, or finds it
	if n, err := c.Read(b); n != 1 || err != nil || b[0] != 'x' {
		t.Fatalf("read %q, %v", b[:n], err)
	}

	blocking, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer blocking.Close()
	rc, err := blocking.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Control(func(fd uintptr) { err = syscall.SetNonblock(int(fd), false) }); err != nil {
		t.Fatal(err)
	}
	if got := watchReads(blocking, &lags); got != blocking {
		t.Errorf("a blocking socket is wrapped: %T", got)
	}
}
