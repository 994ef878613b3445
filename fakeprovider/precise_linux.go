package fakeprovider

import (
	"syscall"
	"time"
)

// nanosleep blocks the calling thread for d, to the microsecond (Linux's
// high-resolution timers), where a Go timer can take a millisecond.
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
