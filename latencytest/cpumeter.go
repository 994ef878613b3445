package latencytest

import (
	"time"

	"github.com/tailguard/tailguard/internal/machine"
)

// cpuMeter measures the client's CPU seconds per wall second over a run
// and samples the machine (see internal/machine).
type cpuMeter struct{ m machine.Meter }

// startCPU starts the meter and the machine probe; call machine once when
// the run ends, to stop the probe.
func startCPU() cpuMeter { return cpuMeter{machine.StartMeter()} }

// machine stops the machine probe and returns its figures.
func (m cpuMeter) machine() *MachineLoad { return m.m.Stop() }

// perWall returns CPU/wall since start; NaN when unknown or in virtual
// time.
func (m cpuMeter) perWall() float64 { return m.m.PerWall() }

// virtualClock reports whether t comes from synctest's fake clock.
func virtualClock(t time.Time) bool { return machine.VirtualClock(t) }
