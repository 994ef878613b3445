//go:build unix

package fakeprovider

import (
	"net"
	"net/http"
	"strconv"
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
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
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
