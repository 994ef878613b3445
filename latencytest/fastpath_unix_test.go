//go:build unix

package latencytest

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A server that answers on a kept connection while it is idle (here a 408
// and a close, as some servers do before dropping an idle connection):
// the fast path must not read that as the next request's answer. The
// second request gets a new connection and succeeds. Over loopback, since
// the check looks at the socket.
func TestFastPathIdleConnectionThatSpoke(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ev := tok("a") + done
	answer := sseHead + "Content-Length: " + strconv.Itoa(len(ev)) + "\r\n\r\n" + ev
	firstDone := make(chan struct{}) // the client finished its first request
	go func() {
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				_, _ = io.WriteString(c, answer)
				if i == 0 {
					<-firstDone
					_, _ = io.WriteString(c, "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
				}
			}()
		}
	}()
	o := OpenAI("http://" + ln.Addr().String() + "/v1")
	defer o.CloseIdleConnections()
	call := func(id string) Record {
		return o.Call(context.Background(), Request{ID: id, Messages: []Message{{Role: "user", Content: "hi"}}})
	}
	if rec := call("first"); !rec.OK() {
		t.Fatalf("first request: %+v", rec)
	}
	// Wait (on the poller, no sleep) until the 408 has reached the idle
	// connection, so that the second request meets it there.
	o.mu.Lock()
	p := o.pools[0]
	o.mu.Unlock()
	idle := p.Idle()
	if len(idle) != 1 {
		t.Fatalf("%d idle connections after the first request, want 1", len(idle))
	}
	nc := idle[0]
	close(firstDone)
	waitReadable(t, nc)
	rec := call("second")
	if !rec.OK() {
		t.Fatalf("second request read the idle connection's 408 as its answer: %+v", rec)
	}
	if rec.Connect == 0 {
		t.Errorf("second request reused the connection that had spoken (no connect time)")
	}
}

// waitReadable blocks until nc has something to read (data or its end),
// for at most 10 s.
func waitReadable(t *testing.T, nc net.Conn) {
	t.Helper()
	rc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer nc.SetReadDeadline(time.Time{})
	var b [1]byte
	if err := rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
		return rerr != syscall.EAGAIN && rerr != syscall.EWOULDBLOCK
	}); err != nil {
		t.Fatalf("the idle connection never became readable: %v", err)
	}
}
