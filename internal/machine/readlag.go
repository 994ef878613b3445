package machine

import (
	"context"
	"math"
	"net"
	"sync/atomic"
	"time"
)

// Read lag: how late the client read its events against the socket. On
// Linux the provider's TCP connections (both its own HTTP/1.1 client and
// net/http's transport) ask the kernel to stamp each arrival
// (SO_TIMESTAMPNS) and read with recvmsg; a read's lag is the time from
// the kernel's stamp of the newest bytes it returned to the read's
// return. A client that keeps up reads each event tens of microseconds
// after it arrived; one that falls behind (its CPU, the machine's, the
// scheduler) reads it later, and every timing it takes is late by as
// much: the lag is the part of a timing error the client adds after the
// bytes reached the machine. It is a lower bound: a read that returns
// older bytes too is stamped by its newest. Bytes that arrive before the
// kernel has turned its stamps on (a moment after the first socket asks)
// carry none, and their reads are not counted. The counts are the
// process's, in fixed memory (log buckets 5% wide, as the timer probe's);
// a run reports the reads made while it ran (Load.Reads).

// readLags counts the process's read lags since it started.
var readLags lagCounts

// lagCounts is a histogram of lags with atomic counts (lateHist's buckets).
type lagCounts struct {
	counts [lateBuckets]atomic.Int64
}

func (c *lagCounts) add(d time.Duration) {
	c.counts[lateBucket(d)].Add(1)
}

// lagSnapshot is lagCounts at one instant.
type lagSnapshot [lateBuckets]int64

func (c *lagCounts) snapshot() *lagSnapshot {
	var s lagSnapshot
	for i := range s {
		s[i] = c.counts[i].Load()
	}
	return &s
}

// since is the histogram of the lags counted after s0 (nil: all), its max
// the upper bound of the highest bucket reached.
func (c *lagCounts) since(s0 *lagSnapshot) lateHist {
	var h lateHist
	for i := range h.counts {
		n := int(c.counts[i].Load())
		if s0 != nil {
			n -= int(s0[i])
		}
		if n <= 0 {
			continue
		}
		h.counts[i] = n
		h.n += n
		h.max = lateUpper(i)
	}
	return h
}

// lateUpper is the upper bound of lateHist bucket i.
func lateUpper(i int) time.Duration {
	if i == 0 {
		return time.Microsecond
	}
	return time.Duration(float64(time.Microsecond) * math.Pow(lateGrowth, float64(i)))
}

// Dial wraps a dialer (nil: net/http's default dialer settings) so
// that its TCP connections time their reads' lag (see watchReads).
func Dial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return watchReads(nc, &readLags), nil
	}
}
