//go:build !linux

package fakeprovider

import (
	"errors"
	"syscall"
	"time"
)

// kernelTimer is Linux's timerfd; elsewhere the runtime's timers are
// already fine grained and the fake uses them.
type kernelTimer struct{}

func newKernelTimer() (*kernelTimer, error) {
	return nil, errors.New("fakeprovider: no kernel timer here")
}

func (*kernelTimer) arm(time.Duration) {}
func (*kernelTimer) wait() bool        { return false }
func (*kernelTimer) close()            {}

// rawWrites: the clock writes to no socket here (there is no clock).
const rawWrites = false

func rawWrite(syscall.RawConn, []byte) (int, error) {
	return 0, errors.New("fakeprovider: no raw writes here")
}
