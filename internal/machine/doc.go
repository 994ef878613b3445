// Package machine measures what the client's machine did to a run's
// timings: the client's own CPU per wall second ([Meter]), and what
// other work on the machine did to it ([Probe]; figures in [Load]).
//
// # Signals
//
// A [Probe] samples, over a run: Linux's PSI cpu "some" stall time
// (/proc/pressure/cpu, its delta over the run), the 1-minute load average
// and the runnable tasks (/proc/loadavg, every 100 ms), and the lateness
// of a timer that wakes every 20 ms. Connections dialled through [Dial]
// time each socket read against the kernel's arrival stamp
// (SO_TIMESTAMPNS, Linux): the read lag, a lower bound of the error the
// client adds to every timing. Counts live in fixed memory: log buckets
// 5% wide. A signal the platform does not give is NaN, or 0 wake-ups or
// reads, and renders "not available".
//
// # Verdict
//
// [Load.Warning] says why a run's timings may include delay of the
// client (read lag p99 above [LateReads], timer lateness p99 above 2 ms,
// PSI above 10% of the run, more runnable tasks than cores, a long run's
// load average above the cores); [Merge] keeps each source's figures and
// warning, so a busy shard is named, never averaged away.
//
// # Virtual time
//
// On synctest's fake clock ([VirtualClock]) nothing is sampled: virtual
// timings have no scheduling delay, and a sleeping probe would change
// when the bubble's clock advances.
package machine
