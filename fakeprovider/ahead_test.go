//go:build unix

package fakeprovider

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSlowReaderStallsNoOne: a client sends a streaming request and never
// reads. Its socket fills; the clock, which writes every stream's events
// itself, must not wait for it: it gives the stream back to its own
// goroutine and goes on serving the others. Twenty streams started after
// the socket filled must each end within a generous bound of their 3 ms
// (a clock stuck in the slow client's write would never serve them).
func TestSlowReaderStallsNoOne(t *testing.T) {
	if c := newPreciseClock(); c == nil {
		t.Skip("no kernel timer here: the clock writes no socket")
	} else {
		c.close()
	}
	f := mustNew(t, Profile{
		TTFT:         Fixed(time.Millisecond),
		ITL:          Fixed(20 * time.Microsecond),
		OutputTokens: Fixed(1_000_000),
		PrefixCache:  PrefixCache{Disabled: true},
	})
	srv := NewServer(f)
	defer srv.Close()

	// The slow client: a small receive buffer, a request, no reads.
	addr, err := net.ResolveTCPAddr("tcp", srv.URL[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	fd, err := tcpSocket()
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	closeSlow := func() {
		if !closed {
			closed = true
			_ = syscall.Close(fd)
		}
	}
	defer closeSlow()
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
	sa := &syscall.SockaddrInet4{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To4())
	if err := syscall.Connect(fd, sa); err != nil {
		t.Fatal(err)
	}
	body := chatBody(reqOpts{id: "slow"})
	req := "POST /v1/chat/completions HTTP/1.1\r\nHost: fake\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if _, err := syscall.Write(fd, []byte(req)); err != nil {
		t.Fatal(err)
	}
	start, backs := time.Now(), aheadHandBacks.Load()
	for deadline := time.Now().Add(10 * time.Second); aheadHandBacks.Load() == backs && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	filled := aheadHandBacks.Load() > backs
	t.Logf("the slow client's stream left the clock: %v, after %v", filled, time.Since(start))

	written := aheadWritten.Load()
	var wg sync.WaitGroup
	results := make([]streamResult, 20)
	client := &http.Client{Timeout: 10 * time.Second}
	for i := range results {
		wg.Go(func() {
			results[i] = do(t, client, srv.URL, reqOpts{id: "good" + strconv.Itoa(i), maxTokens: 100})
		})
	}
	wg.Wait()
	for i, r := range results {
		if r.status != http.StatusOK || !r.sawDone || r.tokens != 100 || r.readErr != nil {
			t.Fatalf("stream %d beside a client that stopped reading: status %d, %d tokens, [DONE] %v, %v",
				i, r.status, r.tokens, r.sawDone, r.readErr)
		}
		// Planned: 1 ms + 99 x 20 µs. The bound is generous: a clock
		// stuck on the slow client never ends them at all.
		if r.lastTok > 5*time.Second {
			t.Errorf("stream %d: last token at %v (planned 3 ms)", i, r.lastTok)
		}
	}
	if !filled {
		t.Errorf("the slow client's stream never left the clock in 10 s: its socket never filled, or the clock waited on it")
	}
	if n := aheadWritten.Load() - written; n < 20*100 {
		t.Errorf("the clock wrote %d events of the 20 streams' 2,000: the streams were not written by it", n)
	}
	closeSlow()
	client.CloseIdleConnections()
}

// TestClockWritesWhatNetHTTPWould: streams whose events the clock writes
// (a Server) carry the same bytes as streams written by net/http (the
// fake as another server's handler), for every protocol, with a stall
// and with each fault that breaks a stream midway: the clock's chunks, the
// goroutine's writes after them and the end of the body keep their order.
func TestClockWritesWhatNetHTTPWould(t *testing.T) {
	if c := newPreciseClock(); c == nil {
		t.Skip("no kernel timer here: the clock writes no socket")
	} else {
		c.close()
	}
	protocols := []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`},
		{"/v1/responses", `{"model":"fake-model","input":"hi","stream":true}`},
		{"/v1/messages", `{"model":"fake-model","max_tokens":64,"messages":[{"role":"user","content":"hi"}],"stream":true}`},
	}
	scripts := map[string]ScriptEntry{
		"plain":       {Fault: "none"},
		"stall":       {Fault: "none", Stall: &ScriptStall{AfterToken: 4, Duration: 5 * time.Millisecond}},
		"malformed":   {Fault: FaultMalformed, AfterToken: 5},
		"error_event": {Fault: FaultErrorEvent, AfterToken: 5},
		"disconnect":  {Fault: FaultDisconnect, AfterToken: 5},
	}
	created := regexp.MustCompile(`"created(_at)?":\d+`)
	get := func(base, path, body string) string {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body) // a disconnect ends it with an error
		return created.ReplaceAllString(string(b), `"created$1":0`)
	}
	for _, p := range protocols {
		for name, sc := range scripts {
			profile := Profile{
				TTFT: Fixed(time.Millisecond), ITL: Fixed(time.Millisecond), OutputTokens: Fixed(12),
				Script: []ScriptEntry{sc},
			}
			clocked := mustNew(t, profile)
			srv := NewServer(clocked)
			written := aheadWritten.Load()
			got := get(srv.URL, p.path, p.body)
			byClock := aheadWritten.Load() - written
			srv.Close()
			plain := mustNew(t, profile)
			hs := httptest.NewServer(plain)
			want := get(hs.URL, p.path, p.body)
			hs.Close()
			if got != want {
				t.Errorf("%s %s: the clock's stream differs from net/http's:\n%s\nwant:\n%s", p.path, name, got, want)
			}
			if byClock < 4 {
				t.Errorf("%s %s: the clock wrote %d events", p.path, name, byClock)
			}
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestClockCountsWhatWasWritten: a stream formats its events ahead of
// the clock; when its client goes away, its record counts the tokens the
// clock wrote, not those formatted ahead (at 100 ms ITL, 16 events
// ahead would be 1.6 s of tokens the client never got).
func TestClockCountsWhatWasWritten(t *testing.T) {
	if c := newPreciseClock(); c == nil {
		t.Skip("no kernel timer here: the clock writes no socket")
	} else {
		c.close()
	}
	f := mustNew(t, Profile{TTFT: Fixed(time.Millisecond), ITL: Fixed(100 * time.Millisecond), OutputTokens: Fixed(100)})
	srv := NewServer(f)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(reqOpts{})))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for seen := 0; seen < 4; { // the role chunk, then three tokens' chunks
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			seen++
		}
	}
	resp.Body.Close() // the connection closes: the body was not read to its end
	var sv Served
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if s := f.Served(); len(s) == 1 {
			sv = s[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stream was never recorded")
		}
	}
	// Three events read; one more may have been written before the fake
	// saw the connection close (100 ms later at the latest).
	if !sv.Canceled || sv.Tokens < 3 || sv.Tokens > 5 {
		t.Errorf("canceled %v with %d tokens counted; the client read 3 and closed", sv.Canceled, sv.Tokens)
	}
}
