package machine

import (
	"math"
	"time"
)

// Meter measures the client's CPU seconds per wall second over a run.
// Above 0.7 the client is busy enough to be part of the tail it measures.
// It also samples the machine (see Probe): what other processes did to
// the client's timings.
type Meter struct {
	cpu0  time.Duration
	wall0 time.Time
	ok    bool
	probe *Probe // nil in virtual time
}

// StartMeter starts the meter and the machine probe; call Stop once when
// the run ends, to stop the probe.
func StartMeter() Meter {
	c, ok := CPUTime()
	return Meter{cpu0: c, wall0: time.Now(), ok: ok, probe: Start()}
}

// Stop stops the machine probe and returns its figures.
func (m Meter) Stop() *Load { return m.probe.Stop() }

// PerWall returns CPU/wall since start; NaN when unknown, when no wall time
// passed, or on synctest's fake clock (CPU time is real, the wall clock is
// not: the ratio would mean nothing).
func (m Meter) PerWall() float64 {
	c, ok := CPUTime()
	wall := time.Since(m.wall0)
	if !m.ok || !ok || wall <= 0 || VirtualClock(m.wall0) {
		return math.NaN()
	}
	return (c - m.cpu0).Seconds() / wall.Seconds()
}

// VirtualClock reports whether t comes from synctest's fake clock, which
// starts at midnight UTC 2000-01-01: no real run starts before 2001.
func VirtualClock(t time.Time) bool { return t.Year() < 2001 }
