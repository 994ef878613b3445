//go:build unix

package h1

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A server that answers on a kept connection while it is idle (here a 408
// and a close, as some servers do before dropping an idle connection):
// the pool must not read that as the next request's answer. The second
// request gets a new connection and succeeds. Over loopback, since the
// check looks at the socket.
func TestPoolSkipsAnIdleConnectionThatSpoke(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ev := "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n"
	answer := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " + strconv.Itoa(len(ev)) + "\r\n\r\n" + ev
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
	u, _ := url.Parse("http://" + ln.Addr().String() + "/v1/chat/completions")
	r, ok := NewRequest(u, nil, func(h http.Header) { h.Set("Content-Type", "application/json") })
	if !ok {
		t.Fatalf("no request for %s", u)
	}
	p := &Pool{Addr: r.Addr, MaxIdle: 1}
	defer p.CloseIdle()
	var dials atomic.Int32
	trace := &httptrace.ClientTrace{ConnectDone: func(string, string, error) { dials.Add(1) }}
	call := func(id string) (int, string) {
		t.Helper()
		a, err := p.RoundTrip(context.Background(), r.Append(nil, id, []byte(`{}`)), trace)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		b, err := io.ReadAll(a.Body)
		a.Body.Close()
		if err != nil {
			t.Fatalf("%s: body: %v", id, err)
		}
		return a.Status, string(b)
	}
	if status, body := call("first"); status != 200 || body != ev {
		t.Fatalf("first request: %d %q", status, body)
	}
	// Wait (on the poller, no sleep) until the 408 has reached the idle
	// connection, so that the second request meets it there.
	idle := p.Idle()
	if len(idle) != 1 {
		t.Fatalf("%d idle connections after the first request, want 1", len(idle))
	}
	close(firstDone)
	waitReadable(t, idle[0])
	if status, body := call("second"); status != 200 || body != ev {
		t.Fatalf("second request read the idle connection's 408 as its answer: %d %q", status, body)
	}
	if n := dials.Load(); n != 2 {
		t.Errorf("%d connections dialed for 2 requests, want 2: the second reused the connection that had spoken", n)
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
