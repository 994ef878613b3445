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
	"sync"
	"testing"
	"testing/synctest"
)

// pipeServer dials in-memory connections (net.Pipe, so in a synctest
// bubble) served by conn, and counts dials and the requests conn read.
type pipeServer struct {
	conn     func(c net.Conn, br *bufio.Reader, read func() bool)
	mu       sync.Mutex
	dials    int
	requests int
	wg       sync.WaitGroup
}

func (s *pipeServer) dial(context.Context, string, string) (net.Conn, error) {
	client, server := net.Pipe()
	s.mu.Lock()
	s.dials++
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer server.Close()
		br := bufio.NewReader(server)
		s.conn(server, br, func() bool { // reads one whole request
			req, err := http.ReadRequest(br)
			if err != nil {
				return false
			}
			if _, err := io.Copy(io.Discard, req.Body); err != nil {
				return false
			}
			s.mu.Lock()
			s.requests++
			s.mu.Unlock()
			return true
		})
	}()
	return client, nil
}

func (s *pipeServer) counts() (dials, requests int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dials, s.requests
}

const pipeAnswerBody = "data: [DONE]\n\n"

var pipeAnswer = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " +
	strconv.Itoa(len(pipeAnswerBody)) + "\r\n\r\n" + pipeAnswerBody

// pipeRoundTrip sends one request through p and reads its answer whole.
func pipeRoundTrip(p *Pool, id string) (status int, body string, err error) {
	u, _ := url.Parse("http://127.0.0.1:9/v1/chat/completions")
	r, ok := NewRequest(u, nil, func(h http.Header) { h.Set("Content-Type", "application/json") })
	if !ok {
		panic("h1: no request for " + u.String())
	}
	a, err := p.RoundTrip(context.Background(), r.Append(nil, id, []byte(`{}`)), &httptrace.ClientTrace{})
	if err != nil {
		return 0, "", err
	}
	defer a.Body.Close()
	b, err := io.ReadAll(a.Body)
	return a.Status, string(b), err
}

// A POST the server read is never sent again: a server that answers the
// first request, then reads the second whole and closes the connection.
// The second round trip fails, and the server read two requests on one
// connection (net/http's rule: the server may have worked on it).
func TestPoolNeverResendsARequestTheServerRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &pipeServer{conn: func(c net.Conn, _ *bufio.Reader, read func() bool) {
			if read() && writeAll(c, pipeAnswer) {
				read() // read, worked on, dropped
			}
		}}
		p := &Pool{Addr: "127.0.0.1:9", MaxIdle: 1, Dialer: srv.dial}
		if status, body, err := pipeRoundTrip(p, "r-0"); err != nil || status != 200 || body != pipeAnswerBody {
			t.Fatalf("first: %d %q %v", status, body, err)
		}
		if _, _, err := pipeRoundTrip(p, "r-1"); err == nil {
			t.Errorf("second: no error from a connection closed after the request was read")
		}
		p.CloseIdle()
		srv.wg.Wait()
		if dials, reqs := srv.counts(); dials != 1 || reqs != 2 {
			t.Errorf("the server read %d requests on %d connections, want 2 on 1 (none sent twice)", reqs, dials)
		}
	})
}

// A kept connection that the server closed while idle, found closed when
// not one byte of the request could be written, is replaced: the request
// goes, once, on a new connection and succeeds.
func TestPoolResendsWhatWasNeverWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &pipeServer{conn: func(c net.Conn, _ *bufio.Reader, read func() bool) {
			if read() {
				writeAll(c, pipeAnswer) // then close, while the connection is idle
			}
		}}
		p := &Pool{Addr: "127.0.0.1:9", MaxIdle: 1, Dialer: srv.dial}
		for i := range 3 {
			if status, body, err := pipeRoundTrip(p, "r-"+strconv.Itoa(i)); err != nil || status != 200 || body != pipeAnswerBody {
				t.Fatalf("request %d: %d %q %v", i, status, body, err)
			}
			synctest.Wait() // the server's close reaches the idle connection
		}
		p.CloseIdle()
		srv.wg.Wait()
		if dials, reqs := srv.counts(); dials != 3 || reqs != 3 {
			t.Errorf("the server read %d requests on %d connections, want 3 on 3", reqs, dials)
		}
	})
}

// writeAll writes s to w and reports whether all of it went.
func writeAll(w io.Writer, s string) bool {
	_, err := io.WriteString(w, s)
	return err == nil
}
