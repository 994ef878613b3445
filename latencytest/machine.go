package latencytest

import "github.com/tailguard/tailguard/internal/machine"

// MachineLoad is what the machine, rather than the client process, did to
// a run's timings (Result.Machine): CPU contention from every process
// (PSI, load average, runnable tasks), the lateness of a timer probe and
// the lag of the client's socket reads, sampled over the run. Its
// Warning says why the run's timings may include delay of the client,
// "" when nothing does; String renders every figure, "not available" for
// a signal the platform does not give (NaN, or Wakeups/Reads 0). In
// virtual time (synctest) nothing is sampled and Virtual is set. For a
// merged result its figures are the worst of the sources' and Sources
// holds each one's, so one busy shard is named, never averaged away.
type MachineLoad = machine.Load
