package latencytest

import (
	"fmt"
	"math"
	"strings"
)

// A merge keeps each source's machine figures (the MachineLoad its
// summary.json holds: Measure writes it under "machine", a chain run's
// under "calls") and combines them without hiding a shard: the merged
// MachineLoad holds every source's figures (Sources), its own figures
// are the worst of them, and it warns with each source's own warning,
// naming the source, so the merged report warns whenever a shard's would
// have.

// mergeMachine combines the sources' machine figures; never nil for a
// merge (a source without figures is listed as not recorded).
func mergeMachine(srcs []*MergeSource) *MachineLoad {
	m := &MachineLoad{PSISome: math.NaN(), Load: math.NaN(), Runnable: math.NaN(), Sources: make([]SourceMachine, len(srcs))}
	virtual, real := 0, 0
	for i, src := range srcs {
		m.Sources[i] = SourceMachine{Source: src.name(), Machine: src.machine}
		s := src.machine
		switch {
		case s == nil:
			continue
		case s.Virtual:
			virtual++
			continue
		}
		real++
		m.Wall = max(m.Wall, s.Wall)
		m.PSISome = maxKnown(m.PSISome, s.PSISome)
		m.Load = maxKnown(m.Load, s.Load)
		m.Runnable = maxKnown(m.Runnable, s.Runnable)
		if s.Cores > 0 && (m.Cores == 0 || s.Cores < m.Cores) {
			m.Cores = s.Cores
		}
		if s.Wakeups > 0 {
			m.Wakeups += s.Wakeups
			m.LateP50, m.LateP99, m.LateMax = max(m.LateP50, s.LateP50), max(m.LateP99, s.LateP99), max(m.LateMax, s.LateMax)
		}
		if s.Reads > 0 {
			m.Reads += s.Reads
			m.ReadLagP50, m.ReadLagP99, m.ReadLagMax = max(m.ReadLagP50, s.ReadLagP50), max(m.ReadLagP99, s.ReadLagP99), max(m.ReadLagMax, s.ReadLagMax)
		}
	}
	m.Virtual = virtual > 0 && real == 0
	for _, src := range srcs {
		if m.Virtual && src.machine != nil {
			m.Cores = src.machine.Cores
			break
		}
	}
	return m
}

// maxKnown is the larger of a and b, a signal not available (NaN) left
// out.
func maxKnown(a, b float64) float64 {
	switch {
	case math.IsNaN(b):
		return a
	case math.IsNaN(a):
		return b
	}
	return max(a, b)
}

// sourcesWarning is Warning of a merged result: each source's own.
func (m *MachineLoad) sourcesWarning() string {
	var out []string
	for _, s := range m.Sources {
		if w := s.Machine.Warning(); w != "" {
			out = append(out, s.Source+": "+w)
		}
	}
	return strings.Join(out, "; ")
}

// sourcesString is String of a merged result: "machine, worst of 3
// sources: <figures>; by source: <name>: <brief>, ...; not recorded for
// <name> (...)".
func (m *MachineLoad) sourcesString() string {
	var real, missing []string
	virtual := 0
	for _, s := range m.Sources {
		switch {
		case s.Machine == nil:
			missing = append(missing, s.Source)
		case s.Machine.Virtual:
			virtual++
		default:
			real = append(real, s.Source+": "+s.Machine.brief())
		}
	}
	var parts []string
	switch {
	case len(real) > 0:
		parts = append(parts, fmt.Sprintf("machine, worst of %d source(s) measured in real time: %s; by source: %s",
			len(real), m.figures(), strings.Join(real, "; ")))
		if virtual > 0 {
			parts = append(parts, fmt.Sprintf("%d source(s) ran in virtual time (nothing to measure)", virtual))
		}
	case virtual > 0:
		parts = append(parts, virtualMachine)
	}
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("machine signals not recorded for %d of %d source(s): %s (no summary.json beside the records, or one written before summaries kept the machine's figures): whether their timings include scheduling delay of the client is not known",
			len(missing), len(m.Sources), strings.Join(missing, ", ")))
	}
	return strings.Join(parts, "; ")
}

// brief renders one source's figures for a merged result's String:
// "PSI 1.0%, 1.2 runnable on 2 cores, lateness p99 0.90ms (max 3.00ms),
// read lag p99 0.05ms", "n/a" for a signal not available.
func (m *MachineLoad) brief() string {
	psi := "PSI n/a"
	if !math.IsNaN(m.PSISome) {
		psi = fmt.Sprintf("PSI %.1f%%", m.PSISome*100)
	}
	load := "load n/a"
	if !math.IsNaN(m.Load) {
		load = fmt.Sprintf("load %.2f", m.Load)
	}
	if !math.IsNaN(m.Runnable) {
		load += fmt.Sprintf(", %.1f runnable", m.Runnable)
	}
	late := "lateness n/a"
	if m.Wakeups > 0 {
		late = fmt.Sprintf("lateness p99 %s (max %s)", fmtLate(m.LateP99), fmtLate(m.LateMax))
	}
	reads := "read lag n/a"
	if m.Reads > 0 {
		reads = "read lag p99 " + fmtLate(m.ReadLagP99)
	}
	return fmt.Sprintf("%s, %s on %d cores, %s, %s", psi, load, m.Cores, late, reads)
}

// noteMergedMachine adds the merged machine figures to box 13 (which
// mergeCPU filled), with the warning when any source's figures warn. When
// every source ran in virtual time the box already says so.
func (d *Disclosure) noteMergedMachine(m *MachineLoad) {
	b := d.Box(13)
	s := m.String()
	if s == "" || strings.Contains(b.Answer, s) {
		return
	}
	d.noteMachine(m)
}
