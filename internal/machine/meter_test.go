package machine

import (
	"math"
	"testing"
	"time"
)

func TestMeter(t *testing.T) {
	m := StartMeter()
	defer m.Stop() // stops the machine probe
	// Burn CPU until the process has used some: the meter must see it.
	c0, ok := CPUTime()
	if !ok {
		t.Skip("no getrusage here")
	}
	x := 0.0
	for c, _ := CPUTime(); c-c0 < 20*time.Millisecond; c, _ = CPUTime() {
		for i := range 100000 {
			x += math.Sqrt(float64(i))
		}
	}
	if got := m.PerWall(); !(got > 0) {
		t.Errorf("CPU/wall %v after burning CPU (%v)", got, x > 0)
	}
}

// On synctest's fake clock (it starts in 2000) CPU/wall means nothing:
// NaN.
func TestVirtualClockHasNoCPUPerWall(t *testing.T) {
	if !VirtualClock(time.Date(2000, 1, 1, 0, 0, 5, 0, time.UTC)) || VirtualClock(time.Now()) {
		t.Fatal("VirtualClock")
	}
	m := Meter{cpu0: 0, wall0: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), ok: true}
	if got := m.PerWall(); !math.IsNaN(got) {
		t.Errorf("CPU/wall on the fake clock: %v, want NaN", got)
	}
}
