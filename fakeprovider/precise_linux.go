package fakeprovider

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// kernelTimer is a Linux timerfd on CLOCK_MONOTONIC (the clock Go's
// monotonic readings use), non-blocking, read through the runtime's
// poller.
type kernelTimer struct {
	f  *os.File
	fd uintptr
}

const (
	clockMonotonic = 1
	tfdNonblock    = syscall.O_NONBLOCK
	tfdCloexec     = syscall.O_CLOEXEC
)

func newKernelTimer() (*kernelTimer, error) {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil, errno
	}
	return &kernelTimer{f: os.NewFile(fd, "timerfd"), fd: fd}, nil
}

// arm sets the timer to expire after d (at once for d <= 0), replacing
// any earlier setting.
func (k *kernelTimer) arm(d time.Duration) {
	var spec struct{ interval, value syscall.Timespec }
	spec.value = syscall.NsecToTimespec(max(int64(d), 1))
	_, _, _ = syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, k.fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}

// wait blocks (in the runtime's poller) until the timer expires; false
// once the timer is closed.
func (k *kernelTimer) wait() bool {
	var b [8]byte
	for {
		_, err := k.f.Read(b[:])
		switch {
		case err == nil:
			return true
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
			continue
		default:
			return false
		}
	}
}

func (k *kernelTimer) close() { _ = k.f.Close() }

// rawWrites: the clock can write to sockets itself (see ahead.go).
const rawWrites = true

// rawWrite makes one attempt to write b to the (non-blocking) socket
// under rc: it never waits for room. It returns how much was written;
// an error when nothing could be (syscall.EAGAIN: the buffer is full).
func rawWrite(rc syscall.RawConn, b []byte) (int, error) {
	var n int
	var err error
	if cerr := rc.Write(func(fd uintptr) bool {
		for {
			n, err = syscall.Write(int(fd), b)
			if err != syscall.EINTR {
				return true
			}
		}
	}); cerr != nil {
		return 0, cerr
	}
	return max(n, 0), err
}
