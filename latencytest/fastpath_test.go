package latencytest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/internal/h1"
	"github.com/tailguard/tailguard/internal/redact"
	"github.com/tailguard/tailguard/internal/sse/ssetest"
)

// pipeServer answers the provider's requests over in-memory connections
// (net.Pipe), with the exact bytes respond writes: each Write reaches the
// client as a read of its own, so an answer written a byte at a time is
// read a byte at a time. Both the fast path and net/http dial through it.
type pipeServer struct {
	respond func(w io.Writer, req *http.Request, n int) (keep bool) // n: the request's number, from 0

	mu       sync.Mutex
	dials    int
	requests int
	conns    []net.Conn
	wg       sync.WaitGroup
}

func (s *pipeServer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	client, server := net.Pipe()
	s.mu.Lock()
	s.dials++
	s.conns = append(s.conns, server)
	s.mu.Unlock()
	s.wg.Add(1)
	go s.serve(server)
	return client, nil
}

func (s *pipeServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		s.mu.Lock()
		n := s.requests
		s.requests++
		s.mu.Unlock()
		if !s.respond(c, req, n) {
			return
		}
	}
}

// close ends every connection and waits for the server's goroutines.
func (s *pipeServer) close() {
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// counts returns the connections dialed and the requests served.
func (s *pipeServer) counts() (dials, requests int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dials, s.requests
}

// withDial makes both paths dial through d.
func withDial(d func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return llmOnly("withDial", func(o *LLMProvider) { o.dial = d })
}

// pipeProvider is the OpenAI provider on srv: through the fast path, or
// with fast false through net/http only.
func pipeProvider(t *testing.T, srv *pipeServer, fast bool, opts ...Option) *LLMProvider {
	t.Helper()
	opts = append([]Option{withDial(srv.dial), WithAPIKey(key), WithModel("m-1")}, opts...)
	if !fast {
		opts = append(opts, WithoutFastPath())
	}
	if fast && !h1.Supported {
		t.Skip("the own HTTP/1.1 client does not run on this platform")
	}
	o := OpenAI("http://127.0.0.1:9/v1", opts...) // loopback: never proxied
	if fast != (o.h1req != nil) {
		t.Fatalf("fast path %v, want %v", o.h1req != nil, fast)
	}
	return o
}

// timeless is a record without its clock readings, which the two paths
// cannot share.
func timeless(r Record) Record {
	r.Start = time.Time{}
	r.DNS, r.Connect, r.TLS, r.TTFB, r.TTFT, r.FirstAnswer, r.LastToken, r.Total, r.MaxGap = 0, 0, 0, 0, 0, 0, 0, 0, 0
	n := r.Gaps.Len()
	r.Gaps = Gaps{}
	for range n {
		r.Gaps.Add(0) // the count stays; the readings go
	}
	return r
}

// bothPaths calls srv's answer through the fast path and through net/http
// and returns the two records.
func bothPaths(t *testing.T, respond func(w io.Writer, req *http.Request, n int) bool, req Request) (fast, slow Record) {
	t.Helper()
	for _, f := range []bool{true, false} {
		srv := &pipeServer{respond: respond}
		o := pipeProvider(t, srv, f)
		if req.ID == "" {
			req.ID = "t-1"
		}
		if req.Messages == nil {
			req.Messages = []Message{{Role: "user", Content: "hi"}}
		}
		rec := o.Call(context.Background(), req)
		o.CloseIdleConnections()
		srv.close()
		if _, reqs := srv.counts(); reqs != 1 {
			t.Errorf("fast path %v: the server got the request %d times, want once", f, reqs)
		}
		if f {
			fast = rec
		} else {
			slow = rec
		}
	}
	return fast, slow
}

// sameRecords fails unless the two records agree, timings excepted.
func sameRecords(t *testing.T, what string, fast, slow Record) {
	t.Helper()
	if f, s := timeless(fast), timeless(slow); !reflect.DeepEqual(f, s) {
		t.Errorf("%s: the two paths disagree\nfast path: %+v\nnet/http:  %+v", what, f, s)
	}
}

// writeBytes writes b a byte at a time, or whole when whole is set.
func writeBytes(w io.Writer, b string, bytewise bool) bool {
	if !bytewise {
		_, err := io.WriteString(w, b)
		return err == nil
	}
	for i := range len(b) {
		if _, err := io.WriteString(w, b[i:i+1]); err != nil {
			return false
		}
	}
	return true
}

// chunked frames body as chunks cut at the given offsets.
func chunked(body string, cuts ...int) string {
	var sb strings.Builder
	last := 0
	for _, c := range append(cuts, len(body)) {
		if c > last {
			fmt.Fprintf(&sb, "%x\r\n%s\r\n", c-last, body[last:c])
			last = c
		}
	}
	sb.WriteString("0\r\n\r\n")
	return sb.String()
}

const sseHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTailguard-Injected: none\r\n"

// Every SSE fixture, in every framing the fast path reads, gives the
// record net/http gives: chunked (whole, an event per chunk, cut in two
// at every byte for the plain stream), a byte per read, Content-Length,
// read to the close (HTTP/1.1 with Connection: close, and HTTP/1.0).
func TestFastPathAgreesWithNetHTTP(t *testing.T) {
	bodies := ssetest.Variants()
	bodies["stream parsing cases"] = `data: {"model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n" +
		tok("Hel") + tok("lo") + `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":3}}}` + "\n\n" + done
	bodies["no [DONE]"] = tok("a") + tok("b")
	bodies["error event"] = tok("a") + "event: error\ndata: {\"message\":\"overloaded\"}\n\n"
	bodies["byte-order mark"] = ssetest.BOM + tok("a") + done
	bodies["[DONE] without its blank line"] = tok("a") + "data: [DONE]"
	type framing struct {
		name     string
		head     string // after sseHead
		body     func(s string) string
		bytewise bool
		keep     bool
	}
	framings := []framing{
		{"chunked whole", "Transfer-Encoding: chunked\r\n\r\n", func(s string) string { return chunked(s) }, false, true},
		{"chunked per event", "Transfer-Encoding: chunked\r\n\r\n", func(s string) string {
			var cuts []int
			for i := 0; ; {
				j := strings.Index(s[i:], "\n\n")
				if j < 0 {
					break
				}
				i += j + 2
				cuts = append(cuts, i)
			}
			return chunked(s, cuts...)
		}, false, true},
		{"chunked a byte per read", "Transfer-Encoding: chunked\r\n\r\n", func(s string) string { return chunked(s, len(s)/3) }, true, true},
		{"content-length", "", func(s string) string { return s }, false, true},
		{"content-length a byte per read", "", func(s string) string { return s }, true, true},
		{"to the close", "Connection: close\r\n\r\n", func(s string) string { return s }, false, false},
	}
	for name, body := range bodies {
		for _, fr := range framings {
			t.Run(name+"/"+fr.name, func(t *testing.T) {
				fast, slow := bothPaths(t, func(w io.Writer, req *http.Request, _ int) bool {
					head := sseHead + fr.head
					if fr.head == "" {
						head += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
					}
					return writeBytes(w, head+fr.body(body), fr.bytewise) && fr.keep
				}, Request{})
				sameRecords(t, name+" "+fr.name, fast, slow)
				if fast.Status != 200 || fast.Injected != "none" {
					t.Errorf("status %d injected %q", fast.Status, fast.Injected)
				}
			})
		}
		t.Run(name+"/HTTP/1.0", func(t *testing.T) {
			fast, slow := bothPaths(t, func(w io.Writer, req *http.Request, _ int) bool {
				writeBytes(w, "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"+body, false)
				return false
			}, Request{})
			sameRecords(t, name+" HTTP/1.0", fast, slow)
		})
	}
	// The plain stream cut into two chunks at every byte.
	body := bodies["lf"]
	for i := 1; i < len(body); i++ {
		fast, slow := bothPaths(t, func(w io.Writer, req *http.Request, _ int) bool {
			return writeBytes(w, sseHead+"Transfer-Encoding: chunked\r\n\r\n"+chunked(body, i), false)
		}, Request{})
		sameRecords(t, fmt.Sprintf("cut at byte %d", i), fast, slow)
		if !fast.OK() {
			t.Fatalf("cut at byte %d: %+v", i, fast)
		}
	}
}

// Hostile and unusual answers: the same record (and so the same error
// class) from both paths, and the request sent once on each (bothPaths).
// What the fast path does not read itself (a redirect, an unknown
// transfer encoding, a head it cannot parse) net/http's parser
// reads from the same connection; redirects are answers on both paths.
func TestFastPathHostileServers(t *testing.T) {
	ev := tok("a") + tok("b") + done
	big := strings.Repeat("x", 256<<10)
	for _, tc := range []struct {
		name, why string
		answer    func(req *http.Request, n int) string
		keep      bool
		class     string // the class both must give
	}{
		{"closed mid-chunk", "a chunk of 256 bytes cut after 40 is truncated",
			func(*http.Request, int) string {
				return sseHead + "Transfer-Encoding: chunked\r\n\r\n" + "100\r\n" + ev[:40]
			}, false, ClassTruncated},
		{"closed between chunks", "the connection ends before the last chunk",
			func(*http.Request, int) string {
				return sseHead + "Transfer-Encoding: chunked\r\n\r\n" + strings.TrimSuffix(chunked(tok("a")), "0\r\n\r\n")
			}, false, ClassTruncated},
		{"closed mid-body", "fewer bytes than the Content-Length",
			func(*http.Request, int) string { return sseHead + "Content-Length: 1000\r\n\r\n" + tok("a") }, false, ClassTruncated},
		{"closed mid-head", "the head is cut", func(*http.Request, int) string { return "HTTP/1.1 200 OK\r\nContent-Ty" }, false, ClassTransport},
		{"closed mid-status line", "the status line is cut", func(*http.Request, int) string { return "HTTP/1.1 20" }, false, ClassTransport},
		{"closed before answering", "no byte of an answer", func(*http.Request, int) string { return "" }, false, ClassTransport},
		{"bad chunk size", "a chunk size that is not hex",
			func(*http.Request, int) string { return sseHead + "Transfer-Encoding: chunked\r\n\r\nzz\r\n" + ev }, false, ClassTransport},
		{"bad chunk end", "chunk data not followed by CRLF",
			func(*http.Request, int) string {
				return sseHead + "Transfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(tok("a"))), 16) + "\r\n" + tok("a") + "XX"
			}, false, ClassTransport},
		{"huge header", "a 256 KiB header is read (net/http allows 10 MiB)",
			func(*http.Request, int) string {
				return sseHead + "X-Big: " + big + "\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(ev)
			}, true, ""},
		{"header beyond the limit", "an 11 MiB head is refused by both",
			func(*http.Request, int) string {
				return sseHead + "X-Big: " + strings.Repeat("y", 11<<20) + "\r\n\r\n"
			}, false, ClassTransport},
		{"early hints", "a 103 before the answer: skipped, as net/http skips it",
			func(*http.Request, int) string {
				return "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" + sseHead + "Transfer-Encoding: chunked\r\n\r\n" + chunked(ev)
			}, true, ""},
		{"redirect", "a 307 to another path: an answer, not followed (it would time two requests as one)",
			func(req *http.Request, _ int) string {
				if req.URL.Path != "/v1/moved" {
					return "HTTP/1.1 307 Temporary Redirect\r\nLocation: /v1/moved?key=sk-secret-in-query\r\nContent-Length: 0\r\n\r\n"
				}
				return sseHead + "Transfer-Encoding: chunked\r\n\r\n" + chunked(ev)
			}, true, "http_307"},
		{"many early hints", "ten 1xx answers: skipped by both (each head is bounded, not their number)",
			func(*http.Request, int) string {
				return strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n", 10) + sseHead + "Transfer-Encoding: chunked\r\n\r\n" + chunked(ev)
			}, true, ""},
		{"switching protocols", "a 101: an answer that is no stream",
			func(*http.Request, int) string {
				return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
			}, false, "http_101"},
		{"folded header", "an obsolete folded header line: net/http's parser reads it",
			func(*http.Request, int) string {
				return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Folded: a\r\n b\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(ev)
			}, true, ""},
		{"unknown transfer encoding", "gzip, chunked: left to net/http",
			func(*http.Request, int) string {
				return sseHead + "Transfer-Encoding: gzip, chunked\r\n\r\n" + chunked(ev)
			}, false, ClassTransport},
		{"content encoding", "br, which neither decodes: a bad stream that says so, not a truncated one",
			func(*http.Request, int) string {
				return sseHead + "Content-Encoding: br\r\nContent-Length: 3\r\n\r\nabc"
			}, true, ClassBadStream},
		{"error status", "a 429 with a JSON body", func(*http.Request, int) string {
			b := `{"error":{"message":"slow down"}}`
			return "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(b)) + "\r\n\r\n" + b
		}, true, "http_429"},
		{"error status, chunked", "a 500 with a chunked text body", func(*http.Request, int) string {
			return "HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked("boom")
		}, true, "http_500"},
		{"no content", "a 204", func(*http.Request, int) string { return "HTTP/1.1 204 No Content\r\n\r\n" }, true, ClassTruncated},
		{"not an event stream", "a 200 HTML page", func(*http.Request, int) string {
			return "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 11\r\n\r\n<html>x</x>"
		}, true, ClassBadStream},
		{"malformed status line", "garbage instead of HTTP: left to net/http",
			func(*http.Request, int) string { return "SPDY/9 200 OK\r\n\r\n" }, false, ClassTransport},
		{"trailers", "a trailer after the last chunk",
			func(*http.Request, int) string {
				return sseHead + "Transfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n" + strings.TrimSuffix(chunked(ev), "\r\n") + "X-T: 1\r\n\r\n"
			}, true, ""},
		{"chunk extension", "a chunk size with an extension",
			func(*http.Request, int) string {
				return sseHead + "Transfer-Encoding: chunked\r\n\r\n" + strings.Replace(chunked(ev), "\r\n", ";ext=1\r\n", 1)
			}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast, slow := bothPaths(t, func(w io.Writer, req *http.Request, n int) bool {
				writeBytes(w, tc.answer(req, n), false)
				return tc.keep
			}, Request{})
			if fast.Err != tc.class || slow.Err != tc.class {
				t.Errorf("%s: classes %q (fast path) and %q (net/http), want %q\nfast path: %+v\nnet/http: %+v", tc.why, fast.Err, slow.Err, tc.class, fast, slow)
			}
			sameRecords(t, tc.why, fast, slow)
		})
	}
}

// Connections: kept across requests on both paths, a new one after
// Connection: close or HTTP/1.0, and one that the server closed while
// idle replaced without a failure.
func TestFastPathConnections(t *testing.T) {
	ev := tok("a") + done
	for _, tc := range []struct {
		name, head string
		keep       bool
		dials      int
	}{
		{"keep-alive", sseHead + "Transfer-Encoding: chunked\r\n\r\n" + chunked(ev), true, 1},
		{"Connection: close", sseHead + "Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(ev), false, 5},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + ev, false, 5},
		{"HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Type: text/event-stream\r\nContent-Length: " + strconv.Itoa(len(ev)) + "\r\n\r\n" + ev, true, 1},
		{"closed while idle", sseHead + "Transfer-Encoding: chunked\r\n\r\n" + chunked(ev), false, 5},
	} {
		// In a bubble, synctest.Wait lets the server's close reach the
		// client (net/http's read loop, the fast path's peek) before the
		// next request, as an idle close long before reuse does; without
		// it, net/http may pick the connection first and fail the POST
		// (which it never resends), a race of the test, not of the client.
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				for _, fast := range []bool{true, false} {
					srv := &pipeServer{respond: func(w io.Writer, _ *http.Request, _ int) bool {
						writeBytes(w, tc.head, false)
						return tc.keep
					}}
					o := pipeProvider(t, srv, fast)
					for i := range 5 {
						if rec := o.Call(context.Background(), Request{ID: fmt.Sprint("r-", i), Messages: []Message{{Role: "user", Content: "hi"}}}); !rec.OK() {
							t.Fatalf("fast path %v, request %d: %+v", fast, i, rec)
						}
						synctest.Wait()
					}
					o.CloseIdleConnections()
					srv.close()
					if dials, reqs := srv.counts(); dials != tc.dials || reqs != 5 {
						t.Errorf("fast path %v: %d connections for %d requests, want %d for 5", fast, dials, reqs, tc.dials)
					}
				}
			})
		})
	}
}

// The timeouts and the run's end cut the fast path as they cut net/http:
// the same class, at the same time (on synctest's clock).
func TestFastPathTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   Request
		class string
		at    time.Duration
	}{
		{"total timeout", Request{TotalTimeout: 300 * time.Millisecond}, ClassTotalTimeout, 300 * time.Millisecond},
		{"first-token timeout", Request{FirstTokenTimeout: 50 * time.Millisecond}, ClassFirstTokenTimeout, 50 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				for _, fast := range []bool{true, false} {
					srv := &pipeServer{respond: func(w io.Writer, _ *http.Request, _ int) bool {
						w.Write([]byte(sseHead + "Transfer-Encoding: chunked\r\n\r\n"))
						if tc.class == ClassTotalTimeout {
							time.Sleep(100 * time.Millisecond)
							w.Write([]byte(chunked(tok("a"))[:len(chunked(tok("a")))-5]))
						}
						time.Sleep(time.Hour) // the client gives up first
						return false
					}}
					o := pipeProvider(t, srv, fast)
					tc.req.ID, tc.req.Messages = "slow", []Message{{Role: "user", Content: "hi"}}
					rec := o.Call(context.Background(), tc.req)
					if rec.Err != tc.class || rec.Total != tc.at {
						t.Errorf("fast path %v: class %q at %v, want %q at %v (%s)", fast, rec.Err, rec.Total, tc.class, tc.at, rec.Detail)
					}
					o.CloseIdleConnections()
					srv.close()
				}
			})
		})
	}
	// The run's end (the parent context) is canceled.
	synctest.Test(t, func(t *testing.T) {
		for _, fast := range []bool{true, false} {
			srv := &pipeServer{respond: func(w io.Writer, _ *http.Request, _ int) bool {
				time.Sleep(time.Hour)
				return false
			}}
			o := pipeProvider(t, srv, fast)
			ctx, cancel := context.WithTimeout(context.Background(), 70*time.Millisecond)
			rec := o.Call(ctx, Request{ID: "c", Messages: []Message{{Role: "user", Content: "hi"}}})
			cancel()
			if rec.Err != ClassCanceled || rec.Total != 70*time.Millisecond {
				t.Errorf("fast path %v: class %q at %v, want canceled at 70ms (%s)", fast, rec.Err, rec.Total, rec.Detail)
			}
			o.CloseIdleConnections()
			srv.close()
		}
	})
}

// The fast path is used only where it can say what net/http would: not
// for https, credentials in the URL, a header net/http treats specially,
// or a client of the user's.
func TestFastPathApplies(t *testing.T) {
	for _, tc := range []struct {
		url  string
		opts []Option
		fast bool
	}{
		{"http://127.0.0.1:8000/v1", nil, true},
		{"http://localhost/v1?api-version=1", []Option{WithHeader("X-Org", "o")}, true},
		{"https://api.example.test/v1", nil, false},
		{"http://user:pw@127.0.0.1/v1", nil, false},
		{"http://127.0.0.1/v1", []Option{WithHeader("Connection", "close")}, false},
		{"http://127.0.0.1/v1", []Option{WithHeader("X-Bad", "a\r\nInjected: 1")}, false},
		{"http://127.0.0.1/v1", []Option{WithAPIKey("k\ney")}, false},
		{"http://127.0.0.1/v1", []Option{WithHTTPClient(http.DefaultClient)}, false},
		{"http://127.0.0.1/v1", []Option{WithNetHTTP()}, false},
		{"http://127.0.0.1/v1", []Option{WithHeader("Idempotency-Key", "k-1")}, false}, // net/http would resend it after a read error
		{"http://127.0.0.1/v1", []Option{WithHeader("Accept-Encoding", "gzip")}, true}, // decoded on both paths
		{"http://127.0.0.1/v1", []Option{WithHeader("User-Agent", "me/1")}, true},
		{"http://127.0.0.1:/v1", nil, true},
		{"http://[fe80::1%25eth0]:80/v1", nil, true},
	} {
		tc.fast = tc.fast && h1.Supported
		if o := OpenAI(tc.url, tc.opts...); (o.h1req != nil) != tc.fast {
			t.Errorf("%s: fast path %v, want %v", redact.URL(tc.url), o.h1req != nil, tc.fast)
		}
	}
}

// The fast path sends what net/http sends: the same method, target, Host,
// headers (Accept-Encoding: identity on both) and body, parsed (see
// TestWireSameRequestBytes for the bytes).
func TestFastPathSendsWhatNetHTTPSends(t *testing.T) {
	type seen struct {
		method, uri, host, body string
		header                  http.Header
	}
	var got []seen
	for _, fast := range []bool{true, false} {
		var mu sync.Mutex
		srv := &pipeServer{}
		srv.respond = func(w io.Writer, req *http.Request, _ int) bool {
			return writeBytes(w, sseHead+"Transfer-Encoding: chunked\r\n\r\n"+chunked(tok("a")+done), false)
		}
		o := OpenAI("http://127.0.0.1:9/v1?api-version=2024-10-21", withDial(func(ctx context.Context, network, addr string) (net.Conn, error) {
			client, server := net.Pipe()
			go func() {
				defer server.Close()
				req, err := http.ReadRequest(bufio.NewReader(server))
				if err != nil {
					return
				}
				b, _ := io.ReadAll(req.Body)
				h := req.Header.Clone()
				mu.Lock()
				got = append(got, seen{req.Method, req.RequestURI, req.Host, string(b), h})
				mu.Unlock()
				srv.respond(server, req, 0)
			}()
			return client, nil
		}), WithAPIKey(key), WithModel("m-1"), WithHeader("X-Org", " org-1 "), WithHeader("X-Two", "a"), WithHeader("X-Two", "b"),
			WithHeader("Authorization", "ignored: the key's wins"))
		if !fast {
			o.h1req = nil
		}
		temp := 0.5
		if rec := o.Call(context.Background(), Request{ID: "send-1", MaxTokens: 9, Temperature: &temp,
			Messages: []Message{{Role: "user", Content: "hi \"there\""}}}); !rec.OK() {
			t.Fatalf("fast path %v: %+v", fast, rec)
		}
		o.CloseIdleConnections()
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("fast path and net/http sent different requests:\n%+v", got)
	}
}
