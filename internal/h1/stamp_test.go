package h1

import (
	"net"
	"testing"
	"time"
)

// stampedConn is a connection that notes its reads' time, as
// machine.Dial's do; at is what it says.
type stampedConn struct {
	net.Conn
	at time.Time
}

func (c stampedConn) ReadAt() time.Time { return c.at }

// A connection that notes when its reads returned gives the read's time
// (no second clock reading); any other is stamped when its read returns.
func TestReadTakesTheConnectionsStamp(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() { _, _ = b.Write([]byte("xy")) }()
	at := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	c := newConn(stampedConn{a, at})
	p := make([]byte, 1)
	if _, err := c.Read(p); err != nil {
		t.Fatal(err)
	}
	if !c.ReadAt().Equal(at) {
		t.Errorf("ReadAt %v; want the connection's stamp %v", c.ReadAt(), at)
	}
	plain := newConn(a)
	before := time.Now()
	if _, err := plain.Read(p); err != nil {
		t.Fatal(err)
	}
	if got := plain.ReadAt(); got.Before(before) || got.After(time.Now()) {
		t.Errorf("ReadAt %v is not within the read (%v on)", got, before)
	}
}
