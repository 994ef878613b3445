//go:build linux

package latencytest

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
)

// delayReads makes every read that finds bytes waiting take them d later,
// until the test ends.
func delayReads(t *testing.T, d time.Duration) {
	f := func() { time.Sleep(d) }
	readLateForTest.Store(&f)
	t.Cleanup(func() { readLateForTest.Store(nil) })
}

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
		if _, err := io.ReadFull(c, b); err != nil || b[0] != 'w' {
			t.Fatalf("echo %q, %v", b, err)
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

// loopbackRun runs a small Batch over loopback against a fake whose
// events are 20 ms apart (a read that waits 5 ms finds no newer bytes).
func loopbackRun(t *testing.T, opts ...Option) *Result {
	t.Helper()
	f := fakeprovider.New(fakeprovider.Profile{
		TTFT:         fakeprovider.Fixed(5 * time.Millisecond),
		ITL:          fakeprovider.Fixed(20 * time.Millisecond),
		OutputTokens: fakeprovider.Fixed(6),
		PrefixCache:  fakeprovider.PrefixCache{Disabled: true},
	})
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()
	p := OpenAI(srv.URL+"/v1", opts...)
	defer p.CloseIdleConnections()
	r, err := Batch{NoWarmup: true, Requests: 6, Concurrency: 2, Load: Load{MaxTokens: 6, Prompt: "Say six words."}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range r.Records {
		if !rec.OK() {
			t.Fatalf("%s: %s %s", rec.ID, rec.Err, rec.Detail)
		}
	}
	return r
}

// A run whose client reads its events 5 ms after they arrived says so in
// box 13, with the figures; a run that reads them as they come does not
// (unless the machine itself made its reads late: then the test says why
// it cannot tell).
func TestReadLagWarning(t *testing.T) {
	const warn = "the client read its events late against the socket"
	clean := loopbackRun(t)
	t.Logf("clean run: %s", clean.Machine)
	if m := clean.Machine; m.Reads == 0 {
		t.Fatalf("the clean run timed no read: %s", m)
	} else if box := clean.Disclosure.Box(13).Answer; strings.Contains(box, warn) {
		if m.LateP99 < lateReads {
			t.Errorf("a clean run on a quiet machine (timer lateness p99 %v) warns: %s", m.LateP99, box)
		} else {
			t.Logf("the machine made the clean run's reads late (timer lateness p99 %v): %s", m.LateP99, box)
		}
	}
	delayReads(t, 5*time.Millisecond)
	late := loopbackRun(t)
	m := late.Machine
	box := late.Disclosure.Box(13).Answer
	if m.Reads == 0 || m.ReadLagP99 < 5*time.Millisecond || !strings.Contains(box, warn) || !strings.Contains(box, "socket read lag p50") {
		t.Errorf("reads 5 ms late: %d reads, lag p99 %v; box 13: %s", m.Reads, m.ReadLagP99, box)
	}
	if m.ReadLagP50 < 5*time.Millisecond {
		t.Errorf("reads 5 ms late: lag p50 %v", m.ReadLagP50)
	}
	// net/http's transport's connections are timed too.
	nh := loopbackRun(t, WithNetHTTP()).Machine
	if nh.Reads == 0 || nh.ReadLagP50 < 5*time.Millisecond {
		t.Errorf("net/http, reads 5 ms late: %d reads, lag p50 %v", nh.Reads, nh.ReadLagP50)
	}
}
