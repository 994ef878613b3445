//go:build linux && !386

package machine

import (
	"syscall"
	"unsafe"
)

// rawRecvmsg is recvmsg(2) on fd as a raw syscall (see lagConn.recvmsg).
func rawRecvmsg(fd uintptr, msg *syscall.Msghdr) (uintptr, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(msg)), 0)
	return n, errno
}
