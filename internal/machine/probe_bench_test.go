package machine

import (
	"testing"
	"time"
)

// BenchmarkMachineProbe runs the machine probe alone for 500 ms per
// iteration and reports its CPU per wake-up (the process's CPU time, so
// run it with nothing else in the process) and the lateness it saw.
func BenchmarkMachineProbe(b *testing.B) {
	if _, ok := CPUTime(); !ok {
		b.Skip("no process CPU time here")
	}
	var cpu time.Duration
	var wakeups int
	var p50, p99, worst time.Duration
	for b.Loop() {
		c0, _ := CPUTime()
		p := Start()
		time.Sleep(500 * time.Millisecond)
		m := p.Stop()
		c1, _ := CPUTime()
		cpu += c1 - c0
		wakeups += m.Wakeups
		p50, p99, worst = max(p50, m.LateP50), max(p99, m.LateP99), max(worst, m.LateMax)
	}
	if wakeups > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(wakeups), "cpu-ns/wakeup")
	}
	b.ReportMetric(float64(wakeups)/float64(b.N), "wakeups/op")
	b.ReportMetric(float64(p50.Microseconds()), "late-p50-us")
	b.ReportMetric(float64(p99.Microseconds()), "late-p99-us")
	b.ReportMetric(float64(worst.Microseconds()), "late-max-us")
}
