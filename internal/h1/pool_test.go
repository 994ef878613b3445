package h1

import (
	"context"
	"net"
	"net/http/httptrace"
	"testing"
)

// A connection handed back after CloseIdle (a run's last request
// finishing after its end) is closed, not kept; the next get keeps
// connections again, as net/http's CloseIdleConnections.
func TestPoolClosesWhatReturnsAfterCloseIdle(t *testing.T) {
	p := &Pool{Limit: 2, MaxIdle: 2, open: 2}
	a, a2 := net.Pipe()
	defer a2.Close()
	b, b2 := net.Pipe()
	defer b2.Close()
	p.put(&h1Conn{nc: a})
	p.CloseIdle()
	if _, err := a.Write([]byte("x")); err == nil {
		t.Fatal("idle connection not closed")
	}
	p.put(&h1Conn{nc: b})
	if _, err := b.Write([]byte("x")); err == nil || len(p.idle) != 0 || p.open != 0 {
		t.Fatalf("returned after CloseIdle: write err %v, idle %d, open %d", err, len(p.idle), p.open)
	}
	c, c2 := net.Pipe()
	defer c2.Close()
	p.Dialer = func(context.Context, string, string) (net.Conn, error) { return c, nil }
	got, err := p.get(context.Background(), &httptrace.ClientTrace{})
	if err != nil {
		t.Fatal(err)
	}
	p.put(got)
	if len(p.idle) != 1 {
		t.Errorf("%d idle after a get, want 1", len(p.idle))
	}
	p.CloseIdle()
}
