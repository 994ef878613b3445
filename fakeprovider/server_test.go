package fakeprovider

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestServerClientCancelFreesTheSlot: over a real socket, a client that
// gives up during a 20 min stall ends that stream, so the only slot serves
// the next request at once. A leaked stream would hold the slot for 20 min
// and the second request would hit its 30 s timeout: no flaky margin.
func TestServerClientCancelFreesTheSlot(t *testing.T) {
	f := mustNew(t, Profile{TTFT: Fixed(time.Millisecond), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(8), SlotsPerReplica: 1,
		Script: []ScriptEntry{{ID: "stuck", Stall: &ScriptStall{AfterToken: 2, Duration: 20 * time.Minute}}}})
	srv := NewServer(f)
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("server URL %s is not loopback", srv.URL)
	}

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions", strings.NewReader(chatBody(reqOpts{})))
	req.Header.Set("X-Request-ID", "stuck")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil { // the stream has started
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()

	c := &http.Client{Timeout: 30 * time.Second}
	r := do(t, c, srv.URL, reqOpts{id: "next"})
	if r.readErr != nil || r.tokens != 8 || !r.sawDone {
		t.Fatalf("next request: %d tokens, done %v, err %v", r.tokens, r.sawDone, r.readErr)
	}
	srv.Close()
	s := servedByID(f)
	// The client cancels after reading the first event; over a socket the
	// second may or may not have been written by then, but not the third.
	if st := s["stuck"]; !st.Canceled || st.Tokens < 1 || st.Tokens > 2 {
		t.Errorf("stuck: %+v, want canceled after 1 or 2 tokens", st)
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestServerCloseEndsOpenStreams: Close returns although a stream is in a
// 20 min stall, and the client sees the connection end.
func TestServerCloseEndsOpenStreams(t *testing.T) {
	f := mustNew(t, Profile{TTFT: Fixed(time.Millisecond), ITL: Fixed(time.Duration(0)),
		Stall: Stall{Probability: 1, AfterToken: 1, Duration: Fixed(20 * time.Minute)}})
	srv := NewServer(f)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(chatBody(reqOpts{})))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && strings.Contains(string(b), "[DONE]") {
		t.Errorf("stream completed after Close: %q", b)
	}
	resp.Body.Close()
}

func TestServedEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(100 * time.Millisecond), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(3),
			Script: []ScriptEntry{{Request: 1, Status: 529}}})
		do(t, f.Client(), "http://fake", reqOpts{id: "a"})
		do(t, f.Client(), "http://fake", reqOpts{id: "b"})
		resp, err := f.Client().Get("http://fake/fake/served")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got []Served
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		want := f.Served()
		if len(got) != 2 || len(want) != 2 {
			t.Fatalf("served %d over HTTP, %d in Go", len(got), len(want))
		}
		for i := range want {
			if !got[i].Arrival.Equal(want[i].Arrival) {
				t.Errorf("arrival %d: %v vs %v", i, got[i].Arrival, want[i].Arrival)
			}
			got[i].Arrival = want[i].Arrival
			if got[i] != want[i] {
				t.Errorf("served %d over HTTP %+v, in Go %+v", i, got[i], want[i])
			}
		}
		if want[0].ID != "a" || want[0].TTFT != 100*time.Millisecond || want[0].Tokens != 3 || want[0].FinishReason != "stop" {
			t.Errorf("a: %+v", want[0])
		}
		if want[1].ID != "b" || want[1].Status != 529 || want[1].Fault != FaultHTTP529 || want[1].Index != 1 {
			t.Errorf("b: %+v", want[1])
		}
	})
}

// A Server gives a client bodyTimeout to send its body (then 408), and
// lifts that deadline once the body is in: a stream may last far longer.
// Real sockets run on the real clock; the timeout is 100 ms here (30 s in
// StartServer).
func TestServerBodyTimeout(t *testing.T) {
	f := mustNew(t, Profile{TTFT: Fixed(time.Duration(0)), ITL: Fixed(50 * time.Millisecond), OutputTokens: Fixed(6)})
	srv, err := startServer(f, "127.0.0.1:0", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	t.Run("slow body gets 408", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Headers promise 100 bytes; one arrives, the rest never do.
		_, err = io.WriteString(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: fake\r\nContent-Length: 100\r\n\r\n{")
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // only a guard against a hang
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer to a stalled body: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "did not arrive in time") {
			t.Errorf("status %d body %s, want 408 saying the body did not arrive in time", resp.StatusCode, b)
		}
	})
	t.Run("stream outlives the body deadline", func(t *testing.T) {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		// 6 tokens 50 ms apart: 250 ms of stream, past the 100 ms deadline.
		r := do(t, &http.Client{Transport: tr}, srv.URL, reqOpts{id: "long"})
		if r.readErr != nil || r.tokens != 6 || !r.sawDone {
			t.Errorf("%d tokens, done %v, err %v; want all 6 and [DONE]", r.tokens, r.sawDone, r.readErr)
		}
	})
}
