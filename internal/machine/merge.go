package machine

import "math"

// Merge combines the sources' figures without hiding one: the merged Load
// holds every source's figures (Sources), its own figures are the worst
// of them, and it warns with each source's own warning, naming the
// source, so the merged report warns whenever a source's would have. A
// source without figures (Machine nil) is listed as not recorded. Never
// nil.
func Merge(srcs []Source) *Load {
	m := &Load{PSISome: math.NaN(), Load: math.NaN(), Runnable: math.NaN(), Sources: make([]Source, len(srcs))}
	virtual, real := 0, 0
	for i, src := range srcs {
		m.Sources[i] = src
		s := src.Machine
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
		if m.Virtual && src.Machine != nil {
			m.Cores = src.Machine.Cores
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
