//go:build !unix

package machine

import "time"

// CPUTime is the process's CPU time: unknown here (false).
func CPUTime() (time.Duration, bool) { return 0, false }
