package latencytest

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/internal/h1"
)

// wireServer serves the provider over in-memory connections (net.Pipe),
// handing each connection whole to conn, which may cut the request or
// the answer at any byte: a pipe's Write returns exactly the bytes the
// other end read, so a cut at byte k is at byte k. It counts the
// connections and the complete requests read, and keeps the bytes of
// every request as the server read them (a cut request's too).
type wireServer struct {
	conn func(w *wireConn, n int) // serves connection n (from 0)

	mu       sync.Mutex
	dials    int
	requests int
	raw      []string // each request's bytes, in the order read
	conns    []net.Conn
	wg       sync.WaitGroup
}

// wireConn is one server-side connection that records what it reads.
type wireConn struct {
	net.Conn
	s    *wireServer
	rec  bytes.Buffer
	br   *bufio.Reader
	used int // bytes of rec taken by earlier requests
}

func (w *wireConn) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	w.rec.Write(p[:n])
	return n, err
}

// request reads one whole request (its body too), counts it and keeps its
// bytes.
func (w *wireConn) request() (*http.Request, bool) {
	req, err := http.ReadRequest(w.br)
	if err != nil {
		return nil, false
	}
	if _, err := io.Copy(io.Discard, req.Body); err != nil {
		return nil, false
	}
	end := w.rec.Len() - w.br.Buffered()
	w.s.mu.Lock()
	w.s.requests++
	w.s.raw = append(w.s.raw, w.rec.String()[w.used:end])
	w.s.mu.Unlock()
	w.used = end
	return req, true
}

// cut reads k bytes of a request and keeps them, marked as cut; the
// caller then closes the connection.
func (w *wireConn) cut(k int) {
	if w.br.Buffered() != 0 {
		panic("wireConn.cut: bytes already buffered")
	}
	_, _ = io.ReadFull(w, make([]byte, k)) // not through br: exactly k bytes
	w.s.mu.Lock()
	w.s.raw = append(w.s.raw, "cut:"+w.rec.String()[w.used:])
	w.s.mu.Unlock()
	w.used = w.rec.Len()
}

func (s *wireServer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	client, server := net.Pipe()
	s.mu.Lock()
	n := s.dials
	s.dials++
	s.conns = append(s.conns, server)
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer server.Close()
		w := &wireConn{Conn: server, s: s}
		w.br = bufio.NewReader(w)
		s.conn(w, n)
	}()
	return client, nil
}

// close ends every connection and waits for the server's goroutines.
func (s *wireServer) close() {
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// wireRun is what one path made of a server: the records and what the
// server saw.
type wireRun struct {
	recs            []Record
	dials, requests int
	raw             []string
}

// runWire makes calls requests to a fresh wireServer through one path.
func runWire(t *testing.T, conn func(w *wireConn, n int), calls int, fast bool, opts ...Option) wireRun {
	t.Helper()
	if fast && !h1.Supported {
		t.Skip("the own HTTP/1.1 client does not run on this platform")
	}
	srv := &wireServer{conn: conn}
	opts = append([]Option{withDial(srv.dial), WithAPIKey(key), WithModel("m-1"), WithHeader("X-Org", "org-0123456789")}, opts...)
	if !fast {
		opts = append(opts, WithNetHTTP())
	}
	o := OpenAI("http://127.0.0.1:9/v1", opts...) // loopback: never proxied
	if fast != (o.h1req != nil) {
		t.Fatalf("fast path %v, want %v", o.h1req != nil, fast)
	}
	var run wireRun
	for i := range calls {
		run.recs = append(run.recs, o.Call(context.Background(), Request{ID: fmt.Sprint("w-", i), MaxTokens: 5,
			HardCap: 20 * time.Second, Messages: []Message{{Role: "user", Content: "hi"}}}))
	}
	o.CloseIdleConnections()
	srv.close()
	run.dials, run.requests, run.raw = srv.dials, srv.requests, srv.raw
	return run
}

// sameWire fails unless the two paths made the same records (timings
// aside; with racy, a transport failure's text may differ, as net/http's
// own does between its writer and its reader) and the server saw the
// same connections, requests and request bytes.
func sameWire(t *testing.T, what string, fast, slow wireRun, racy bool) {
	t.Helper()
	norm := func(recs []Record) []Record {
		out := make([]Record, len(recs))
		for i, r := range recs {
			out[i] = timeless(r)
			if racy && r.Err == ClassTransport {
				if !strings.HasPrefix(r.Detail, "Post http://127.0.0.1:9/v1/chat/completions: ") {
					t.Errorf("%s: a transport failure that does not name the endpoint: %q", what, r.Detail)
				}
				out[i].Detail = "(a transport failure)"
			}
		}
		return out
	}
	if f, s := norm(fast.recs), norm(slow.recs); !reflect.DeepEqual(f, s) {
		t.Errorf("%s: the two paths made different records\nfast path: %+v\nnet/http:  %+v", what, f, s)
	}
	if fast.dials != slow.dials || fast.requests != slow.requests {
		t.Errorf("%s: fast path %d connection(s) and %d request(s), net/http %d and %d", what, fast.dials, fast.requests, slow.dials, slow.requests)
	}
	if !reflect.DeepEqual(fast.raw, slow.raw) {
		t.Errorf("%s: the server read different request bytes\nfast path: %q\nnet/http:  %q", what, fast.raw, slow.raw)
	}
}

// gzipped and deflated encode s.
func gzipped(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.String()
}

func deflated(s string, wrapped bool) string {
	var b bytes.Buffer
	if wrapped {
		zw := zlib.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
	} else {
		fw, _ := flate.NewWriter(&b, flate.DefaultCompression)
		fw.Write([]byte(s))
		fw.Close()
	}
	return b.String()
}

// answerWith is a 200 event stream with a Content-Length body, headers
// added.
func answerWith(headers, body string) string {
	return sseHead + headers + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// Hostile servers through both paths: the same records, the same
// connections, the same requests counted and the same request bytes
// (headers included) as the server read them. Encodings, 1xx floods,
// cuts of the request and of the answer at every byte (every seventh
// under -short), on a new and on a kept connection, idle closes racing
// the next request, a server that reads the POST and closes.
func TestWireDifferential(t *testing.T) {
	stream := tok("Hel") + tok("lo") + `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}}` + "\n\n" + done
	answer := sseHead + "Transfer-Encoding: chunked\r\n\r\n" + chunked(stream, 20, 50)
	// serve answers each request on the connection with the answer for it.
	serve := func(answers ...string) func(w *wireConn, n int) {
		return func(w *wireConn, _ int) {
			for i := 0; ; i++ {
				if _, ok := w.request(); !ok {
					return
				}
				a := answers[min(i, len(answers)-1)]
				if !writeBytes(w, a, false) {
					return
				}
			}
		}
	}
	type tc struct {
		name  string
		conn  func(w *wireConn, n int)
		calls int
		racy  bool
		class []string // each call's class on both paths
	}
	cases := []tc{
		{"gzip", serve(answerWith("Content-Encoding: gzip\r\n", gzipped(stream))), 2, false, []string{"", ""}},
		{"x-gzip, chunked", serve(sseHead + "Content-Encoding: x-gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(gzipped(stream), 10, 30)), 1, false, []string{""}},
		{"deflate (zlib)", serve(answerWith("Content-Encoding: deflate\r\n", deflated(stream, true))), 2, false, []string{"", ""}},
		{"deflate (raw)", serve(answerWith("Content-Encoding: deflate\r\n", deflated(stream, false))), 2, false, []string{"", ""}},
		{"deflate, chunked, the body's end apart", func(w *wireConn, _ int) {
			for {
				if _, ok := w.request(); !ok {
					return
				}
				body := chunked(deflated(stream, true))
				if !writeBytes(w, sseHead+"Content-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n\r\n"+strings.TrimSuffix(body, "0\r\n\r\n"), false) ||
					!writeBytes(w, "0\r\n\r\n", false) {
					return
				}
			}
		}, 2, false, []string{"", ""}},
		{"identity named", serve(answerWith("Content-Encoding: identity\r\n", stream)), 1, false, []string{""}},
		{"br", serve(answerWith("Content-Encoding: br\r\n", "\x1b\x00\x00")), 1, false, []string{ClassBadStream}},
		{"zstd", serve(answerWith("Content-Encoding: zstd\r\n", "\x28\xb5\x2f\xfd")), 1, false, []string{ClassBadStream}},
		{"gzip then br", serve(answerWith("Content-Encoding: gzip, br\r\n", gzipped(stream))), 1, false, []string{ClassBadStream}},
		{"gzip, corrupt header", serve(answerWith("Content-Encoding: gzip\r\n", "not gzip at all")), 1, false, []string{ClassBadStream}},
		{"gzip, corrupt data", serve(answerWith("Content-Encoding: gzip\r\n", gzipped(stream)[:10]+strings.Repeat("\xff", 40))), 1, false, []string{ClassBadStream}},
		{"gzip, cut", serve(answerWith("Content-Encoding: gzip\r\n", gzipped(stream)[:30])), 1, false, []string{ClassTruncated}},
		{"gzip error answer", serve("HTTP/1.1 503 Service Unavailable\r\nContent-Encoding: gzip\r\nContent-Length: " +
			strconv.Itoa(len(gzipped(`{"error":{"message":"overloaded"}}`))) + "\r\n\r\n" + gzipped(`{"error":{"message":"overloaded"}}`)), 1, false, []string{"http_503"}},
		{"1xx flood", serve(strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n", 2000) + answer), 2, false, []string{"", ""}},
		{"100 Continue unasked", serve("HTTP/1.1 100 Continue\r\n\r\n" + answer), 1, false, []string{""}},
		// net/http reads the missing final head as an unexpected EOF: the
		// answer was cut, truncated on both.
		{"1xx then the close", func(w *wireConn, _ int) {
			if _, ok := w.request(); ok {
				writeBytes(w, "HTTP/1.1 103 Early Hints\r\n\r\n", false)
			}
		}, 1, false, []string{ClassTruncated}},
		{"idle close before the next request", func(w *wireConn, _ int) {
			if _, ok := w.request(); ok {
				writeBytes(w, answer, false)
			}
		}, 3, false, []string{"", "", ""}},
		{"reads the POST and closes (new connection)", func(w *wireConn, _ int) { w.request() }, 1, true, []string{ClassTransport}},
		{"reads the second POST and closes (kept connection)", func(w *wireConn, n int) {
			if _, ok := w.request(); ok && writeBytes(w, answer, false) {
				w.request()
			}
		}, 2, true, []string{"", ClassTransport}},
	}
	// Probe the request's length, then cut it at every byte, on a new and
	// on a kept connection, and the answer likewise.
	probe := runWire(t, serve(answer), 1, false)
	if len(probe.raw) != 1 || !probe.recs[0].OK() {
		t.Fatalf("probe: %+v", probe)
	}
	step := 1
	if testing.Short() {
		step = 7
	}
	for k := 1; k < len(probe.raw[0]); k += step {
		cases = append(cases,
			tc{fmt.Sprintf("request cut at byte %d", k), func(w *wireConn, _ int) { w.cut(k) }, 1, true, []string{ClassTransport}},
			tc{fmt.Sprintf("second request cut at byte %d", k), func(w *wireConn, n int) {
				if n == 0 {
					if _, ok := w.request(); ok && writeBytes(w, answer, false) {
						w.cut(k)
					}
					return
				}
				serve(answer)(w, n)
			}, 2, true, []string{"", ClassTransport}})
	}
	gz := answerWith("Content-Encoding: gzip\r\n", gzipped(stream))
	for _, full := range []string{answer, gz} {
		for k := 0; k < len(full); k += step {
			cases = append(cases, tc{fmt.Sprintf("answer cut at byte %d of %d", k, len(full)), func(w *wireConn, _ int) {
				if _, ok := w.request(); ok {
					writeBytes(w, full[:k], false)
				}
			}, 1, false, nil})
		}
	}
	for _, c := range cases {
		fast := runWire(t, c.conn, c.calls, true)
		slow := runWire(t, c.conn, c.calls, false)
		sameWire(t, c.name, fast, slow, c.racy)
		for i, class := range c.class {
			if i < len(fast.recs) && fast.recs[i].Err != class {
				t.Errorf("%s: call %d: class %q, want %q (%s)", c.name, i, fast.recs[i].Err, class, fast.recs[i].Detail)
			}
		}
		for i, r := range fast.recs {
			if r.Err == ClassTruncated && strings.Contains(r.Detail, "encod") {
				t.Errorf("%s: call %d: an encoding read as truncated: %s", c.name, i, r.Detail)
			}
			if r.OK() && r.Content != "Hello" {
				t.Errorf("%s: call %d: content %q", c.name, i, r.Content)
			}
		}
		if fast.requests > c.calls {
			t.Errorf("%s: %d requests for %d calls: one was sent twice", c.name, fast.requests, c.calls)
		}
		if strings.Contains(c.name, "gzip") || strings.Contains(c.name, "deflate") {
			if ok := fast.recs[len(fast.recs)-1].OK(); ok && fast.dials != 1 {
				t.Errorf("%s: %d connections for %d calls: a decoded answer's connection was not kept", c.name, fast.dials, c.calls)
			}
		}
	}
}

// A POST that the server read is never sent again (item 1): a server that
// answers the first request, then reads the second whole and closes the
// connection. The second record fails (transport), and the server saw two
// requests on one connection, on both paths. Before, the own client sent
// the second again on a new connection and recorded a success timed on
// that second attempt.
func TestWireNoResendAfterWrite(t *testing.T) {
	ev := tok("a") + done
	answer := sseHead + "Content-Length: " + strconv.Itoa(len(ev)) + "\r\n\r\n" + ev
	for _, fast := range []bool{true, false} {
		run := runWire(t, func(w *wireConn, n int) {
			if n > 0 {
				for {
					if _, ok := w.request(); !ok || !writeBytes(w, answer, false) {
						return
					}
				}
			}
			if _, ok := w.request(); ok && writeBytes(w, answer, false) {
				w.request() // read, worked on, dropped
			}
		}, 2, fast)
		if !run.recs[0].OK() || run.recs[1].Err != ClassTransport {
			t.Errorf("fast path %v: records %q and %q (%s), want a success then transport", fast, run.recs[0].Err, run.recs[1].Err, run.recs[1].Detail)
		}
		if run.requests != 2 || run.dials != 1 {
			t.Errorf("fast path %v: the server read %d requests on %d connections, want 2 on 1", fast, run.requests, run.dials)
		}
	}
}

// Both paths send the same bytes, Accept-Encoding: identity included: the
// escaped path (%2F stays), the Host header as net/http writes it (no
// empty port, no IPv6 zone), headers in net/http's order; a whole answer
// (WithoutStreaming) too.
func TestWireSameRequestBytes(t *testing.T) {
	ev := tok("a") + done
	streamed := sseHead + "Content-Length: " + strconv.Itoa(len(ev)) + "\r\n\r\n" + ev
	completion := `{"object":"chat.completion","model":"m-1","choices":[{"index":0,"message":{"role":"assistant","content":"a"},"finish_reason":"stop"}]}`
	whole := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(completion)) + "\r\n\r\n" + completion
	for _, tc := range []struct {
		base, uri, host string
		whole           bool
	}{
		{"http://127.0.0.1:9/v1", "/v1/chat/completions", "127.0.0.1:9", true},
		{"http://127.0.0.1:9/v1?api-version=2024-10-21", "/v1/chat/completions?api-version=2024-10-21", "127.0.0.1:9", false},
		{"http://127.0.0.1:9/openai/deployments/a%2Fb/", "/openai/deployments/a%2Fb/chat/completions", "127.0.0.1:9", false},
		{"http://127.0.0.1:/v1", "/v1/chat/completions", "127.0.0.1", false},
		{"http://[fe80::1%25eth0]:8080/v1", "/v1/chat/completions", "[fe80::1]:8080", false},
		{"http://[::1]:/v1/", "/v1/chat/completions", "[::1]", false},
	} {
		answer := streamed
		if tc.whole {
			answer = whole
		}
		var raws []string
		for _, fast := range []bool{true, false} {
			srv := &wireServer{conn: func(w *wireConn, _ int) {
				for {
					if _, ok := w.request(); !ok || !writeBytes(w, answer, false) {
						return
					}
				}
			}}
			opts := []Option{withDial(srv.dial), WithAPIKey(key), WithModel("m-1"), WithHeader("X-Org", " org-1 "),
				WithHeader("X-Two", "a"), WithHeader("X-Two", "b"), WithHeader("Authorization", "ignored: the key's wins"),
				WithHeader("Zz-After", "after the trace ID"), WithHeader("User-Agent", "tester/1")}
			if !fast {
				opts = append(opts, WithNetHTTP())
			}
			if tc.whole {
				opts = append(opts, WithoutStreaming())
			}
			o := OpenAI(tc.base, opts...)
			if fast && h1.Supported && o.h1req == nil {
				t.Fatalf("%s: no fast path", tc.base)
			}
			temp := 0.5
			if rec := o.Call(context.Background(), Request{ID: "send-1", MaxTokens: 9, Temperature: &temp,
				Messages: []Message{{Role: "user", Content: "hi \"there\""}}}); !rec.OK() {
				t.Fatalf("%s, fast path %v: %+v", tc.base, fast, rec)
			}
			o.CloseIdleConnections()
			srv.close()
			if len(srv.raw) != 1 {
				t.Fatalf("%s: %d requests", tc.base, len(srv.raw))
			}
			raws = append(raws, srv.raw[0])
		}
		if raws[0] != raws[1] {
			t.Errorf("%s: the paths sent different bytes\nfast path: %q\nnet/http:  %q", tc.base, raws[0], raws[1])
		}
		head := "POST " + tc.uri + " HTTP/1.1\r\nHost: " + tc.host + "\r\nUser-Agent: tester/1\r\n"
		if !strings.HasPrefix(raws[1], head) || !strings.Contains(raws[1], "\r\nAccept-Encoding: identity\r\n") {
			t.Errorf("%s: sent %q, want it to start %q and ask for identity", tc.base, raws[1], head)
		}
		if tc.whole != strings.Contains(raws[1], `"stream":false`) || tc.whole == strings.Contains(raws[1], "Accept: text/event-stream") {
			t.Errorf("%s, whole %v: sent %q", tc.base, tc.whole, raws[1])
		}
	}
}

// A 1xx answer never stamps TTFB, on either path: a 103 at once, the
// final head 100 ms later, the first token 50 ms after it.
func TestWireEarlyHintsDoNotStampTTFB(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, fast := range []bool{true, false} {
			srv := &wireServer{conn: func(w *wireConn, _ int) {
				if _, ok := w.request(); !ok {
					return
				}
				writeBytes(w, "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n", false)
				time.Sleep(100 * time.Millisecond)
				writeBytes(w, sseHead+"Transfer-Encoding: chunked\r\n\r\n", false)
				time.Sleep(50 * time.Millisecond)
				writeBytes(w, chunked(tok("a")+done), false)
			}}
			opts := []Option{withDial(srv.dial)}
			if !fast {
				opts = append(opts, WithNetHTTP())
			}
			o := OpenAI("http://127.0.0.1:9/v1", opts...)
			rec := o.Call(context.Background(), Request{ID: "hints", Messages: []Message{{Role: "user", Content: "hi"}}})
			if !rec.OK() || rec.TTFB != 100*time.Millisecond || rec.TTFT != 150*time.Millisecond {
				t.Errorf("fast path %v: TTFB %v TTFT %v (%s %s), want 100ms and 150ms", fast, rec.TTFB, rec.TTFT, rec.Err, rec.Detail)
			}
			o.CloseIdleConnections()
			srv.close()
		}
	})
}

// After [DONE] the call reads to the body's end, so that a server that
// ends the body 500 ms after [DONE] keeps its connection for the next
// request (one connection for two requests, on both paths); one that
// never ends it costs the call doneGrace (unmeasured: Total is the
// stream's end) and its connection.
func TestWireDrainAfterDone(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after time.Duration // when the body ends after [DONE]; 0: never
		dials int
	}{
		{"ends late", 500 * time.Millisecond, 1},
		{"never ends", 0, 2},
	} {
		synctest.Test(t, func(t *testing.T) {
			for _, fast := range []bool{true, false} {
				srv := &wireServer{conn: func(w *wireConn, _ int) {
					for {
						if _, ok := w.request(); !ok {
							return
						}
						body := chunked(tok("a") + done)
						writeBytes(w, sseHead+"Transfer-Encoding: chunked\r\n\r\n"+strings.TrimSuffix(body, "0\r\n\r\n"), false)
						if tc.after == 0 {
							time.Sleep(time.Hour) // the client gives up first
							return
						}
						time.Sleep(tc.after)
						if !writeBytes(w, "0\r\n\r\n", false) {
							return
						}
					}
				}}
				opts := []Option{withDial(srv.dial)}
				if !fast {
					opts = append(opts, WithNetHTTP())
				}
				o := OpenAI("http://127.0.0.1:9/v1", opts...)
				for i := range 2 {
					began := time.Now()
					rec := o.Call(context.Background(), Request{ID: fmt.Sprint("d-", i), Messages: []Message{{Role: "user", Content: "hi"}}})
					if !rec.OK() || rec.Total != 0 {
						t.Errorf("%s, fast path %v: %s %s, total %v (want 0: the stream ended at [DONE])", tc.name, fast, rec.Err, rec.Detail, rec.Total)
					}
					want := tc.after
					if want == 0 {
						want = doneGrace
					}
					if took := time.Since(began); took != want {
						t.Errorf("%s, fast path %v: the call took %v, want %v", tc.name, fast, took, want)
					}
				}
				o.CloseIdleConnections()
				srv.close()
				if srv.dials != tc.dials {
					t.Errorf("%s, fast path %v: %d connections for 2 requests, want %d", tc.name, fast, srv.dials, tc.dials)
				}
			}
		})
	}
}

// Which client measures: the own one only for http:// on unix, net/http
// with WithNetHTTP, for https and elsewhere, the user's with
// WithHTTPClient; Description.Client and disclosure box 1 say which.
func TestWireClientDisclosed(t *testing.T) {
	for _, tc := range []struct {
		url  string
		opts []Option
		want string
	}{
		{"http://127.0.0.1:8000/v1", nil, "net/http"},
		{"http://127.0.0.1:8000/v1", []Option{WithNetHTTP()}, "net/http, as WithNetHTTP asks"},
		{"https://api.example.test/v1", nil, "net/http ("},
		{"http://127.0.0.1:8000/v1", []Option{WithHTTPClient(http.DefaultClient)}, "your http.Client"},
	} {
		if h1.Supported && tc.opts == nil && strings.HasPrefix(tc.url, "http:") {
			tc.want = "tailguard's HTTP/1.1 client"
		}
		o := OpenAI(tc.url, tc.opts...)
		d := o.Describe()
		if !strings.HasPrefix(d.Client, tc.want) {
			t.Errorf("%s %d option(s): client %q, want %q…", tc.url, len(tc.opts), d.Client, tc.want)
		}
		var disc Disclosure
		common(&disc, d, nil, time.Now(), time.Now(), 0.1, "here", alignment{})
		if b := disc.Box(1); !strings.Contains(b.Answer, "client: "+d.Client) {
			t.Errorf("%s: box 1 does not name the client: %q", tc.url, b.Answer)
		}
	}
	if o := OpenAI("http://127.0.0.1:8000/v1", WithNetHTTP()); o.h1req != nil {
		t.Errorf("WithNetHTTP: the own client still speaks")
	}
}

// loopbackServer serves each accepted connection with conn over real
// loopback TCP (kernel buffers: an answer can arrive while the client is
// still writing) and counts the connections and the requests conn reports.
type loopbackServer struct {
	ln       net.Listener
	mu       sync.Mutex
	accepted int
	requests int
	wg       sync.WaitGroup
}

func newLoopbackServer(t *testing.T, conn func(c *net.TCPConn, br *bufio.Reader, count func())) *loopbackServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &loopbackServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.accepted++
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				conn(c.(*net.TCPConn), bufio.NewReader(c), func() { s.mu.Lock(); s.requests++; s.mu.Unlock() })
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *loopbackServer) counts() (accepted, requests int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted, s.requests
}

// A server that answers 413 after reading only the head of an 8 MiB
// request, then closes (the unread body makes its kernel reset the
// connection): the answer had arrived before the client's write failed,
// and the own client records it, every time, with the server's message.
// Before, it failed on the write ("broken pipe") in about half the calls.
// net/http, which reads while it writes, gets the 413 too, but not always:
// when its writer's error and its reader's answer are both ready, its
// select picks either (seen here in 1 call of 5), so only the class of
// each of its records is checked.
func TestWireEarlyAnswerBeforeTheBodyIsRead(t *testing.T) {
	msg := `{"error":{"message":"request too large"}}`
	srv := newLoopbackServer(t, func(c *net.TCPConn, br *bufio.Reader, count func()) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		count()
		io.WriteString(c, "HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "+strconv.Itoa(len(msg))+"\r\n\r\n"+msg)
	})
	big := strings.Repeat("x", 8<<20)
	calls := 5
	if testing.Short() {
		calls = 1
	}
	want := 0
	for _, fast := range []bool{true, false} {
		if fast && !h1.Supported {
			continue
		}
		opts := []Option{}
		if !fast {
			opts = append(opts, WithNetHTTP())
		}
		o := OpenAI("http://"+srv.ln.Addr().String()+"/v1", opts...)
		for i := range calls {
			want++
			rec := o.Call(context.Background(), Request{ID: fmt.Sprint("big-", i), Messages: []Message{{Role: "user", Content: big}}})
			switch {
			case rec.Err == "http_413" && rec.Detail == "request too large":
			case !fast && rec.Err == ClassTransport:
			default:
				t.Errorf("fast path %v, call %d: %q %q, want http_413 with the server's message", fast, i, rec.Err, rec.Detail)
			}
		}
		o.CloseIdleConnections()
	}
	if acc, reqs := srv.counts(); reqs != want || acc != want {
		t.Errorf("the server read %d request heads on %d connections, want %d on %d", reqs, acc, want, want)
	}
}

// A server that reads the second POST on a kept connection whole, then
// resets the connection (SO_LINGER 0): the record fails (transport) and
// the request is not sent again, on both paths.
func TestWireResetAfterThePOSTIsRead(t *testing.T) {
	ev := tok("a") + done
	answer := sseHead + "Content-Length: " + strconv.Itoa(len(ev)) + "\r\n\r\n" + ev
	srv := newLoopbackServer(t, func(c *net.TCPConn, br *bufio.Reader, count func()) {
		for i := 0; ; i++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			count()
			if i == 1 {
				c.SetLinger(0)
				return // reset
			}
			io.WriteString(c, answer)
		}
	})
	paths := 0
	for _, fast := range []bool{true, false} {
		if fast && !h1.Supported {
			continue
		}
		paths++
		opts := []Option{}
		if !fast {
			opts = append(opts, WithNetHTTP())
		}
		o := OpenAI("http://"+srv.ln.Addr().String()+"/v1", opts...)
		for i := range 2 {
			rec := o.Call(context.Background(), Request{ID: fmt.Sprint("r-", i), Messages: []Message{{Role: "user", Content: "hi"}}})
			if want := []string{"", ClassTransport}[i]; rec.Err != want {
				t.Errorf("fast path %v, call %d: %q (%s), want %q", fast, i, rec.Err, rec.Detail, want)
			}
		}
		o.CloseIdleConnections()
	}
	if acc, reqs := srv.counts(); reqs != 2*paths || acc != paths {
		t.Errorf("the server read %d requests on %d connections, want %d on %d (none sent twice)", reqs, acc, 2*paths, paths)
	}
}

// Over https the provider's net/http transport stamps the socket reads
// under TLS: the reply carries the connection's read clock and the
// head's read time, and the record's clocks are in order.
func TestWireStampsReadsUnderTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, tok("a"))
		w.(http.Flusher).Flush()
		io.WriteString(w, done)
	}))
	defer srv.Close()
	o := OpenAI(srv.URL + "/v1")
	if o.h1req != nil {
		t.Fatal("the own client speaks https")
	}
	tr := o.client.Transport.(*http.Transport)
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	defer o.CloseIdleConnections()
	a, err := o.send(context.Background(), context.Background(), "tls-1", []byte(`{}`), &httptrace.ClientTrace{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, a.Body)
	a.Body.Close()
	if _, ok := a.Clock.(*h1.StampConn); !ok || a.HeadAt.IsZero() || a.Clock.ReadAt().Before(a.HeadAt) {
		t.Errorf("clock %T, head at %v, last read at %v: want the stamped TLS connection's", a.Clock, a.HeadAt, a.Clock)
	}
	rec := o.Call(context.Background(), Request{ID: "tls-2", Messages: []Message{{Role: "user", Content: "hi"}}})
	if !rec.OK() || rec.TTFB <= 0 || rec.TTFT < rec.TTFB || rec.Total < rec.TTFT {
		t.Errorf("record %s %s: TTFB %v TTFT %v total %v", rec.Err, rec.Detail, rec.TTFB, rec.TTFT, rec.Total)
	}
}

// A server that answers 413 after reading only the head of an 8 MiB
// request and then holds the connection open, reading nothing more: the
// own client's blocked write sees the answer (see h1Conn.write) and both
// paths record the 413, the connection not kept.
func TestWireEarlyAnswerConnectionHeldOpen(t *testing.T) {
	msg := `{"error":{"message":"request too large"}}`
	release := make(chan struct{})
	srv := newLoopbackServer(t, func(c *net.TCPConn, br *bufio.Reader, count func()) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		count()
		io.WriteString(c, "HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(msg))+"\r\n\r\n"+msg)
		<-release
	})
	defer close(release)
	big := strings.Repeat("x", 8<<20)
	want := 0
	for _, fast := range []bool{true, false} {
		if fast && !h1.Supported {
			continue
		}
		opts := []Option{}
		if !fast {
			opts = append(opts, WithNetHTTP())
		}
		o := OpenAI("http://"+srv.ln.Addr().String()+"/v1", opts...)
		want++
		rec := o.Call(context.Background(), Request{ID: "held", TotalTimeout: 20 * time.Second, Messages: []Message{{Role: "user", Content: big}}})
		if rec.Err != "http_413" || rec.Detail != "request too large" {
			t.Errorf("fast path %v: %q %q, want http_413 with the server's message", fast, rec.Err, rec.Detail)
		}
		o.CloseIdleConnections()
	}
	if acc, reqs := srv.counts(); reqs != want || acc != want {
		t.Errorf("the server read %d request heads on %d connections, want %d on %d", reqs, acc, want, want)
	}
}
