//go:build linux

package machine

import (
	"io"
	"net"
	"testing"
)

// BenchmarkReadLagCost: the cost of timing reads against the socket. A
// loopback ping-pong of 200-byte messages read through a plain TCP
// connection ("plain") and through one that reads with recvmsg and the
// kernel's arrival stamp ("stamped"), in process CPU ns per exchange (the
// echoing side is in the process too, and the same in both).
func BenchmarkReadLagCost(b *testing.B) {
	for _, stamped := range []bool{false, true} {
		name := "plain"
		if stamped {
			name = "stamped"
		}
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			var lags lagCounts
			c := nc
			if stamped {
				c = watchReads(nc, &lags)
			}
			defer c.Close()
			msg := make([]byte, 200)
			buf := make([]byte, 32<<10)
			before, _ := CPUTime()
			for b.Loop() {
				if _, err := c.Write(msg); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < len(msg); {
					n, err := c.Read(buf)
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
			}
			after, _ := CPUTime()
			b.ReportMetric(float64(after-before)/float64(b.N), "cpu-ns/op")
		})
	}
}
