//go:build linux

package machine

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// lagConn is a TCP connection whose reads go through recvmsg with the
// kernel's receive timestamp, each read's lag counted in lags.
type lagConn struct {
	*net.TCPConn
	rc   syscall.RawConn
	lags *lagCounts
	oob  [64]byte
	// One read's state, for recv (made once: a closure per read would
	// allocate), under mu: reads are one at a time, as net's own are.
	// msg and iov are recvmsg's arguments, built in place each read (no
	// source address is asked for: the connection has one peer).
	mu      sync.Mutex
	p       []byte
	msg     syscall.Msghdr
	iov     syscall.Iovec
	n, oobn int
	rerr    error
	recv    func(fd uintptr) bool
	at      time.Time // when the last read returned (see ReadAt)
}

// readLateForTest, when set, runs inside a read that found bytes waiting,
// before it takes them: tests make reads late with it.
var readLateForTest atomic.Pointer[func()]

// DelayReadsForTest makes every read of a watched connection that finds
// bytes waiting take them d later, until restore is called: for tests
// that show a late reader is reported.
func DelayReadsForTest(d time.Duration) (restore func()) {
	f := func() { time.Sleep(d) }
	readLateForTest.Store(&f)
	return func() { readLateForTest.Store(nil) }
}

// watchReads returns nc timing its reads' lag into lags, when nc is a TCP
// connection whose kernel stamps arrivals; else nc as it is.
func watchReads(nc net.Conn, lags *lagCounts) net.Conn {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nc
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		// Reads are raw syscalls (see recvmsg), which only a non-blocking
		// socket allows: the runtime's sockets are; any other is left as
		// it is.
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		if errno != 0 || flags&syscall.O_NONBLOCK == 0 {
			serr = errors.New("a blocking socket")
			return
		}
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nc
	}
	c := &lagConn{TCPConn: tc, rc: rc, lags: lags}
	c.recv = c.recvmsg
	return c
}

// recvmsg is one attempt of a read; false when it must wait for bytes.
func (c *lagConn) recvmsg(fd uintptr) bool {
	if late := readLateForTest.Load(); late != nil {
		var b [1]byte
		if k, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT); err == nil && k > 0 {
			(*late)()
		}
	}
	c.iov.Base = &c.p[0]
	c.iov.SetLen(len(c.p))
	c.msg.Iov = &c.iov
	c.msg.Iovlen = 1
	c.msg.Control = &c.oob[0]
	c.msg.SetControllen(len(c.oob))
	for {
		// A raw syscall: the socket is non-blocking (the runtime's
		// poller waits), so the call returns at once, and it spares the
		// runtime's bookkeeping of a blocking one, whose wake-up of the
		// scheduler's monitor thread cost as much as the read itself.
		n, errno := rawRecvmsg(fd, &c.msg)
		switch errno {
		case 0:
			c.n, c.oobn, c.rerr = int(n), int(c.msg.Controllen), nil
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.n, c.oobn, c.rerr = 0, 0, errno
		return true
	}
}

// Read reads as net.TCPConn's Read does (the same errors), through
// recvmsg, and counts the read's lag.
func (c *lagConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		c.at = time.Now()
		return 0, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.p = p
	err := c.rc.Read(c.recv)
	now := time.Now()
	c.at = now
	n, oobn := c.n, c.oobn
	c.p, c.iov.Base, c.msg.Iov, c.msg.Control = nil, nil, nil, nil // keep no caller's buffer
	if err == nil {
		err = c.rerr
	}
	if err != nil {
		if errno, ok := err.(syscall.Errno); ok {
			err = os.NewSyscallError("read", errno)
		}
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if n == 0 {
		return 0, io.EOF
	}
	if at, ok := arrival(c.oob[:oobn]); ok {
		c.lags.add(now.Sub(at))
	}
	return n, nil
}

// ReadAt is when the last read returned, on the clock its lag was
// taken on: a caller that times the bytes takes it instead of reading the
// clock again. Read it from the goroutine that reads.
func (c *lagConn) ReadAt() time.Time { return c.at }

// arrival finds the SCM_TIMESTAMPNS stamp in a control message buffer.
func arrival(oob []byte) (time.Time, bool) {
	hdr := syscall.SizeofCmsghdr
	for len(oob) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return time.Time{}, false
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && l-syscall.CmsgLen(0) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&oob[syscall.CmsgLen(0)]))
			if ts.Sec == 0 && ts.Nsec == 0 {
				return time.Time{}, false
			}
			return time.Unix(int64(ts.Sec), int64(ts.Nsec)), true
		}
		oob = oob[min(syscall.CmsgSpace(l-syscall.CmsgLen(0)), len(oob)):]
	}
	return time.Time{}, false
}
