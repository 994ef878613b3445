package latencytest

import "github.com/tailguard/tailguard/internal/machine"

// mergeMachine combines the sources' machine figures (the MachineLoad
// each summary.json holds: Measure writes it under "machine", a chain
// run's under "calls"; see machine.Merge); never nil for a merge (a
// source without figures is listed as not recorded).
func mergeMachine(srcs []*MergeSource) *MachineLoad {
	s := make([]SourceMachine, len(srcs))
	for i, src := range srcs {
		s[i] = SourceMachine{Source: src.name(), Machine: src.machine}
	}
	return machine.Merge(s)
}
