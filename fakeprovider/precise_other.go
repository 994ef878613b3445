//go:build !linux

package fakeprovider

import "time"

// nanosleep is time.Sleep here: the runtime's timers are already fine
// grained where its poller takes a timeout in nanoseconds (kqueue).
func nanosleep(d time.Duration) { time.Sleep(d) }
