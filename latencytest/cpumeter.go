package latencytest

import (
	"math"
	"time"
)

// cpuMeter measures the client's CPU seconds per wall second over a run.
// Above 0.7 the client is busy enough to be part of the tail it measures.
// It also samples the machine (machine.go): what other processes did to
// the client's timings.
type cpuMeter struct {
	cpu0  time.Duration
	wall0 time.Time
	ok    bool
	probe *machineProbe // nil in virtual time
}

// startCPU starts the meter and the machine probe; call machine once when
// the run ends, to stop the probe.
func startCPU() cpuMeter {
	c, ok := cpuTime()
	return cpuMeter{cpu0: c, wall0: time.Now(), ok: ok, probe: startMachine()}
}

// machine stops the machine probe and returns its figures.
func (m cpuMeter) machine() *MachineLoad { return m.probe.stop() }

// perWall returns CPU/wall since start; NaN when unknown, when no wall time
// passed, or on synctest's fake clock (CPU time is real, the wall clock is
// not: the ratio would mean nothing).
func (m cpuMeter) perWall() float64 {
	c, ok := cpuTime()
	wall := time.Since(m.wall0)
	if !m.ok || !ok || wall <= 0 || virtualClock(m.wall0) {
		return math.NaN()
	}
	return (c - m.cpu0).Seconds() / wall.Seconds()
}

// virtualClock reports whether t comes from synctest's fake clock, which
// starts at midnight UTC 2000-01-01: no real run starts before 2001.
func virtualClock(t time.Time) bool { return t.Year() < 2001 }
