package machine

import (
	"syscall"
	"unsafe"
)

// sysRecvmsg is recvmsg's call number for socketcall(2) (linux/net.h),
// through which 386 reaches the socket calls.
const sysRecvmsg = 17

// rawRecvmsg is recvmsg(2) on fd as a raw syscall (see lagConn.recvmsg).
func rawRecvmsg(fd uintptr, msg *syscall.Msghdr) (uintptr, syscall.Errno) {
	args := [3]uintptr{fd, uintptr(unsafe.Pointer(msg)), 0}
	n, _, errno := syscall.RawSyscall(syscall.SYS_SOCKETCALL, sysRecvmsg, uintptr(unsafe.Pointer(&args)), 0)
	return n, errno
}
