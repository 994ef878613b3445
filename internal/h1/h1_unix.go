//go:build unix

package h1

import (
	"net"
	"syscall"
)

// Supported says that the provider's own HTTP/1.1 client runs here: it
// can look at an idle connection before reusing it (idleUsable).
const Supported = true

// idleUsable reports whether a kept connection may carry the next
// request: nothing has arrived on it while it was idle. A server that
// closed it, or sent something unasked (a 408 before closing, as some
// do), would otherwise have that read as the next request's answer;
// net/http's transport watches idle connections with a reader for the
// same reason. One non-blocking peek (Go's sockets are non-blocking); a
// connection that is not a socket is assumed usable.
func idleUsable(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	usable := true
	var b [1]byte
	if err := rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
		usable = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true // never wait
	}); err != nil {
		return false
	}
	return usable
}

// answered reports whether anything (bytes or the end) has arrived on a
// connection in use: one non-blocking peek, as in idleUsable.
func answered(nc net.Conn) bool { return !idleUsable(nc) }
