package latencytest

import (
	"math"
	"time"
)

// cpuMeter measures the client's CPU seconds per wall second over a run.
// Above 0.7 the client is busy enough to be part of the tail it measures.
type cpuMeter struct {
	cpu0  time.Duration
	wall0 time.Time
	ok    bool
}

func startCPU() cpuMeter {
	c, ok := cpuTime()
	return cpuMeter{cpu0: c, wall0: time.Now(), ok: ok}
}

// perWall returns CPU/wall since start; NaN when unknown or no wall time
// passed (in a synctest bubble the wall clock is virtual: see Disclosure).
func (m cpuMeter) perWall() float64 {
	c, ok := cpuTime()
	wall := time.Since(m.wall0)
	if !m.ok || !ok || wall <= 0 {
		return math.NaN()
	}
	return (c - m.cpu0).Seconds() / wall.Seconds()
}

// BusyClient is the CPU/wall above which the client is part of the tail.
const BusyClient = 0.7
