//go:build unix

package latencytest_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// Where a TTFT error comes from. BenchmarkFirstTokenLateness runs the raw
// reader and latencytest's client, in turn, against the loopback fake of
// BenchmarkLoopback served by a child whose connections note, on the wall
// clock that both processes read, when each request arrived (the read
// that returned it) and when the fake wrote the request's first token
// (just before the write). With the client's own send and first-read
// times, each measured request's TTFT error (TTFT - 200 ms) splits into
//
//	request  send -> the fake's read of the request (loopback, the fake's wake-up)
//	fake     that read + 200 ms -> the fake's write of the first token (its timer, its work)
//	client   that write -> the client's read of it (loopback, the client's wake-up and work before its clock reading)
//
// reported as p50 and p99 of each part per client, in microseconds:
//
//	go test -run '^$' -bench FirstTokenLateness -benchtime 2x ./latencytest/
func BenchmarkFirstTokenLateness(b *testing.B) {
	logPath := b.TempDir() + "/served.log"
	url, stop := startFakeChild(b, "trace:"+logPath)
	var raw, lt []clientRun
	for i := 0; b.Loop(); i++ {
		raw = append(raw, runRaw(b, url, "lraw"+strconv.Itoa(i)))
		lt = append(lt, runLatencytest(b, url, "llt"+strconv.Itoa(i)))
	}
	b.StopTimer()
	stop()
	served, err := readServed(logPath)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		runs []clientRun
	}{{"raw", raw}, {"latencytest", lt}} {
		var request, fake, client, total []time.Duration
		for _, r := range c.runs {
			for _, f := range r.firsts {
				s, ok := served[f.id]
				if !ok {
					b.Fatalf("%s: the fake noted no first token for %s", c.name, f.id)
				}
				request = append(request, s.read.Sub(f.sent))
				fake = append(fake, s.write.Sub(s.read)-loopbackTTFT)
				client = append(client, f.first.Sub(s.write))
				total = append(total, f.first.Sub(f.sent)-loopbackTTFT)
			}
		}
		for _, part := range []struct {
			name string
			d    []time.Duration
		}{{"request", request}, {"fake", fake}, {"client", client}, {"ttft-err", total}} {
			s := latencytest.Sample(part.d)
			b.ReportMetric(float64(s.Quantile(0.5))/1e3, c.name+"-"+part.name+"-p50-us")
			b.ReportMetric(float64(s.Quantile(0.99))/1e3, c.name+"-"+part.name+"-p99-us")
		}
	}
}

// served is what the traced fake noted of one request.
type served struct{ read, write time.Time }

// serveTraced serves f (in the child) on a listener whose connections
// note each request's arrival and first token, and writes the notes to
// path ("<id> <read ns> <write ns>" a line) when its standard input
// closes; then the child exits.
func serveTraced(f *fakeprovider.Fake, path string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	notes := &servedNotes{}
	srv := &http.Server{Handler: f}
	go srv.Serve(&tracedListener{Listener: ln, notes: notes})
	fmt.Println("http://" + ln.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Close()
	f.Close()
	notes.mu.Lock()
	var sb strings.Builder
	for _, n := range notes.lines {
		sb.WriteString(n)
	}
	notes.mu.Unlock()
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

type servedNotes struct {
	mu    sync.Mutex
	lines []string
}

type tracedListener struct {
	net.Listener
	notes *servedNotes
}

func (l *tracedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &tracedConn{Conn: c, notes: l.notes}, nil
}

// tracedConn notes, per request on it, the time of the read that
// returned its X-Request-Id and the time of the first write that carries
// a token.
type tracedConn struct {
	net.Conn
	notes *servedNotes
	id    string
	read  time.Time
	noted bool
}

func (c *tracedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	now := time.Now()
	if i := bytes.Index(bytes.ToLower(p[:n]), []byte("\r\nx-request-id: ")); i >= 0 {
		rest := p[i+len("\r\nx-request-id: ") : n]
		if j := bytes.IndexByte(rest, '\r'); j >= 0 {
			c.id, c.read, c.noted = string(rest[:j]), now, false
		}
	}
	return n, err
}

func (c *tracedConn) Write(p []byte) (int, error) {
	if !c.noted && c.id != "" && carriesToken(p) {
		c.noted = true
		line := fmt.Sprintf("%s %d %d\n", c.id, c.read.UnixNano(), time.Now().UnixNano())
		c.notes.mu.Lock()
		c.notes.lines = append(c.notes.lines, line)
		c.notes.mu.Unlock()
	}
	return c.Conn.Write(p)
}

// carriesToken reports whether p holds a non-empty "content" or a
// "reasoning_content" string (a write may hold the empty first chunk and
// the first token together).
func carriesToken(p []byte) bool {
	if bytes.Contains(p, []byte(`"reasoning_content":"`)) {
		return true
	}
	key := []byte(`"content":"`)
	for i := bytes.Index(p, key); i >= 0; i = bytes.Index(p, key) {
		p = p[i+len(key):]
		if len(p) > 0 && p[0] != '"' {
			return true
		}
	}
	return false
}

// readServed reads the child's notes, by request ID.
func readServed(path string) (map[string]served, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]served{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var id string
		var r, w int64
		if _, err := fmt.Sscanf(line, "%s %d %d", &id, &r, &w); err != nil {
			return nil, fmt.Errorf("served log line %q: %w", line, err)
		}
		out[id] = served{time.Unix(0, r), time.Unix(0, w)}
	}
	return out, nil
}
