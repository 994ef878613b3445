package machine

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Load is what the machine, rather than the client process, did to
// a run's timings: CPU contention from every process, sampled over the
// run. CPU/wall sees only the client's own CPU; a client that is idle on a
// machine whose cores are taken by others still reads its events late.
// A signal the platform does not give is NaN (PSISome, Load, Runnable) or
// has Wakeups 0, and is rendered "not available", never as 0.
type Load struct {
	// Virtual is set when the run used synctest's fake clock: nothing was
	// sampled, since scheduling delay cannot enter virtual timings.
	Virtual bool
	// Wall is the real time the signals cover (the run's).
	Wall time.Duration
	// PSISome is the share (a fraction, not percent: 1 is all) of Wall in
	// which at least one runnable task of the machine waited for a CPU:
	// the delta of the "some" line's total stall microseconds of Linux's
	// /proc/pressure/cpu over the run, divided by Wall. NaN when the file
	// is absent (not Linux, PSI disabled, some containers) or unreadable.
	PSISome float64
	// Load is the highest 1-minute load average read from /proc/loadavg
	// during the run; NaN when unavailable. It averages the last minute,
	// so a run shorter than that mostly sees what ran before it.
	Load float64
	// Runnable is the mean number of tasks running or waiting for a CPU
	// (the fourth field of /proc/loadavg, sampled about every 100 ms; the
	// reading thread counts itself); NaN when unavailable.
	Runnable float64
	// Cores is runtime.NumCPU() during the run.
	Cores int
	// Wakeups is how many wake-ups the client's timer probe timed: a
	// goroutine that sleeps 5 ms in a loop and records how late
	// each wake-up was. 0 when the probe did not run.
	Wakeups int
	// LateP50 and LateP99 are the probe's wake-up lateness quantiles
	// (read from a histogram with buckets 5% wide: at most 5% above the
	// exact figure); LateMax is exact. The client's own readings were
	// late by as much when they waited for a CPU.
	LateP50 time.Duration
	LateP99 time.Duration
	LateMax time.Duration
	// Reads is how many socket reads of the process's provider
	// connections were timed against the kernel's arrival stamps while
	// the run ran (Linux; see readlag.go); 0 when none was (another
	// platform, an in-memory transport, a client of your own).
	Reads int
	// ReadLagP50, ReadLagP99 and ReadLagMax are those reads' lag: from
	// the kernel's stamp of the newest bytes a read returned to the
	// read's return (buckets 5% wide; the max is its bucket's upper
	// bound). Every event a read brings is timed late by at least as
	// much.
	ReadLagP50 time.Duration
	ReadLagP99 time.Duration
	ReadLagMax time.Duration
	// Sources are, for a merged result (records.Merge, records.MergeLevels), each
	// source's own figures as its summary.json kept them, in the order
	// merged; nil for one run. The figures above are then the worst of
	// the sources' that were measured in real time: the highest PSI,
	// load, runnable tasks, lateness and read lag, the longest Wall, the
	// fewest Cores, Wakeups and Reads summed; Virtual only when every
	// source with figures ran in virtual time. Warning and String speak
	// per source, so one busy shard is named, never averaged away.
	Sources []Source
}

// Source is one source's machine figures in a merged result
// (Load.Sources).
type Source struct {
	// Source names the source as the merge does: "shard 1/4 of c8
	// (path/records.jsonl)" for a shard, else the records file's path.
	Source string `json:"source"`
	// Machine is the source's figures; nil (null in JSON) when its
	// summary.json holds none: there is no summary beside the records,
	// or it was written before summaries kept them. Then whether its
	// timings include scheduling delay is not known, and nothing warns.
	Machine *Load `json:"machine"`
}

// probeInterval is how long the client's timer probe sleeps between
// wake-ups: 20 ms, 50 wake-ups a second. A wake-up of an otherwise idle
// Go process costs it far more than the probe's own work: the scheduler
// wakes a second thread that spins and sleeps again, ~5 context switches
// and 0.1-0.2 ms of CPU on a 2-core VM (BenchmarkMachineProbe). At 5 ms
// the probe took 10-15% of the CPU of latencytest's loopback client
// (BenchmarkLoopback: 3.7-4.1 ms a request against 2.8-3.5 ms without
// it; 3.3-3.4 ms at 20 ms, a quarter of the wake-ups). On Linux the read
// lag times every socket read as well.
const probeInterval = 20 * time.Millisecond

// The thresholds above which Load.Warning warns. A wake-up 2 ms
// late is more than a timer's own resolution explains (the probe's p50
// was 0.3-0.5 ms even on a 2-core VM with a load of 25); a task waiting
// for a CPU during 10% of the run, or more runnable tasks than cores,
// means the client's reads queued behind other work. The 1-minute load
// average only counts for runs of a minute or more (shorter runs see
// mostly the minute before them).
//
// A read lag p99 above LateReads means the client read its events late
// against the socket: past what it can time to the 2 ms the loopback
// ceiling benchmark (BenchmarkCeiling) asks of TTFT errors (a lag is a
// lower bound of the error the client adds). Over 68 rungs of five such
// runs on a loaded 2-core machine, 1.5 ms warned at 23 of the 29 whose
// TTFT error p99 was over 2 ms and at 9 of the 39 under it (1 ms: the
// same 23, and 16 of 39; 2 ms: 21, and 8).
const (
	LateReads    = 1500 * time.Microsecond
	busyLateness = 2 * time.Millisecond
	busyPSISome  = 0.10
	loadMinWall  = time.Minute
)

// Warning says, with the figures, why the run's timings may include
// delay of the client: its socket reads' lag p99 above 1.5 ms (it read
// its events late: the run went past what it can time), the probe's
// lateness p99 above 2 ms, PSI cpu "some" above 10% of the run, mean
// runnable tasks above the cores, or (for a run of a minute or more) the
// 1-minute load average above the cores. "" when none holds, when m is nil (not measured) and
// in virtual time; a signal that is not available never warns.
//
// For a merged result it is every source's own warning, each after the
// source's name ("shard 1/4 of c8 (path): the machine was busy: ..."),
// joined by "; ": it warns when any source's would, and names it.
func (m *Load) Warning() string {
	if m != nil && len(m.Sources) > 0 {
		return m.sourcesWarning()
	}
	if m == nil || m.Virtual {
		return ""
	}
	var why []string
	if m.Wakeups > 0 && m.LateP99 > busyLateness {
		why = append(why, fmt.Sprintf("timer lateness p99 %s (above %s)", fmtLate(m.LateP99), fmtLate(busyLateness)))
	}
	if m.PSISome > busyPSISome {
		why = append(why, fmt.Sprintf("PSI cpu some %.0f%% of the run (above %.0f%%)", m.PSISome*100, busyPSISome*100))
	}
	if m.Cores > 0 && m.Runnable > float64(m.Cores) {
		why = append(why, fmt.Sprintf("%.1f runnable tasks on %d cores", m.Runnable, m.Cores))
	}
	if m.Cores > 0 && m.Load > float64(m.Cores) && m.Wall >= loadMinWall {
		why = append(why, fmt.Sprintf("load average %.2f on %d cores", m.Load, m.Cores))
	}
	var out []string
	if m.Reads > 0 && m.ReadLagP99 > LateReads {
		out = append(out, fmt.Sprintf("the client read its events late against the socket: read lag p99 %s (above %s), p50 %s, up to %s over %d reads; its timings are late by as much: the run went past what the client can time",
			fmtLate(m.ReadLagP99), fmtLate(LateReads), fmtLate(m.ReadLagP50), fmtLate(m.ReadLagMax), m.Reads))
	}
	if len(why) > 0 {
		worst := ""
		if m.Wakeups > 0 {
			worst = fmt.Sprintf(" (the probe woke up to %s late)", fmtLate(m.LateMax))
		}
		out = append(out, "the machine was busy: timings may include scheduling delay of the client"+worst+": "+strings.Join(why, "; "))
	}
	return strings.Join(out, "; ")
}

// String renders the figures on one line, "not available" for a signal
// the platform does not give. For a merged result: the worst figures,
// then each source's in brief, then the sources whose figures were not
// recorded.
func (m *Load) String() string {
	if m == nil {
		return "machine signals not recorded"
	}
	if len(m.Sources) > 0 {
		return m.sourcesString()
	}
	if m.Virtual {
		return virtualMachine
	}
	return "machine: " + m.figures()
}

// virtualMachine is String in virtual time.
const virtualMachine = "machine signals and timer lateness not measured (virtual time)"

// figures renders the figures of a run measured in real time.
func (m *Load) figures() string {
	psi := "PSI cpu some not available"
	if !math.IsNaN(m.PSISome) {
		psi = fmt.Sprintf("PSI cpu some %.1f%% of the run", m.PSISome*100)
	}
	load := "load average not available"
	if !math.IsNaN(m.Load) {
		load = fmt.Sprintf("load average %.2f (1 min, highest)", m.Load)
	}
	if !math.IsNaN(m.Runnable) {
		load += fmt.Sprintf(", %.1f runnable tasks (mean)", m.Runnable)
	}
	late := "timer lateness not available (no wake-up timed)"
	if m.Wakeups > 0 {
		late = fmt.Sprintf("timer lateness p50 %s p99 %s max %s (%d wake-ups every %s)",
			fmtLate(m.LateP50), fmtLate(m.LateP99), fmtLate(m.LateMax), m.Wakeups, probeInterval)
	}
	reads := "socket read lag not available (no read timed)"
	if m.Reads > 0 {
		reads = fmt.Sprintf("socket read lag p50 %s p99 %s max %s (%d reads)", fmtLate(m.ReadLagP50), fmtLate(m.ReadLagP99), fmtLate(m.ReadLagMax), m.Reads)
	}
	return fmt.Sprintf("%s; %s on %d cores; %s; %s", psi, load, m.Cores, late, reads)
}

// fmtLate renders a lateness in milliseconds with two decimals.
func fmtLate(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
}

// MarshalJSON writes an unavailable (NaN) signal as null.
func (m Load) MarshalJSON() ([]byte, error) {
	return json.Marshal(machineJSON{
		Virtual: m.Virtual, Wall: m.Wall, PSISome: finite(m.PSISome), Load: finite(m.Load), Runnable: finite(m.Runnable),
		Cores: m.Cores, Wakeups: m.Wakeups, LateP50: m.LateP50, LateP99: m.LateP99, LateMax: m.LateMax,
		Reads: m.Reads, ReadLagP50: m.ReadLagP50, ReadLagP99: m.ReadLagP99, ReadLagMax: m.ReadLagMax,
		Sources: m.Sources,
	})
}

// UnmarshalJSON reads a null signal as NaN (not available).
func (m *Load) UnmarshalJSON(b []byte) error {
	var v machineJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	nan := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*m = Load{Virtual: v.Virtual, Wall: v.Wall, PSISome: nan(v.PSISome), Load: nan(v.Load), Runnable: nan(v.Runnable),
		Cores: v.Cores, Wakeups: v.Wakeups, LateP50: v.LateP50, LateP99: v.LateP99, LateMax: v.LateMax,
		Reads: v.Reads, ReadLagP50: v.ReadLagP50, ReadLagP99: v.ReadLagP99, ReadLagMax: v.ReadLagMax, Sources: v.Sources}
	return nil
}

type machineJSON struct {
	Virtual    bool          `json:"virtual,omitempty"`
	Wall       time.Duration `json:"wall_ns"`
	PSISome    *float64      `json:"psi_cpu_some"`
	Load       *float64      `json:"load_avg_1m"`
	Runnable   *float64      `json:"runnable"`
	Cores      int           `json:"cores"`
	Wakeups    int           `json:"probe_wakeups"`
	LateP50    time.Duration `json:"late_p50_ns"`
	LateP99    time.Duration `json:"late_p99_ns"`
	LateMax    time.Duration `json:"late_max_ns"`
	Reads      int           `json:"socket_reads,omitempty"`
	ReadLagP50 time.Duration `json:"read_lag_p50_ns,omitempty"`
	ReadLagP99 time.Duration `json:"read_lag_p99_ns,omitempty"`
	ReadLagMax time.Duration `json:"read_lag_max_ns,omitempty"`
	Sources    []Source      `json:"sources,omitempty"`
}

// The files the signals are read from on Linux; elsewhere they are absent
// and the signals not available.
const (
	psiPath     = "/proc/pressure/cpu"
	loadavgPath = "/proc/loadavg"
)

// readPSISome reads the "some" line's total stall time; false when the
// file is absent or not in the expected form.
func readPSISome(path string) (time.Duration, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	return parsePSISome(string(b))
}

// parsePSISome parses /proc/pressure/cpu:
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=12345
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//
// and returns the "some" total (microseconds) as a duration.
func parsePSISome(s string) (time.Duration, bool) {
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				us, err := strconv.ParseUint(v, 10, 63)
				if err != nil || us > math.MaxInt64/1000 {
					return 0, false
				}
				return time.Duration(us) * time.Microsecond, true
			}
		}
		return 0, false
	}
	return 0, false
}

// readLoadavg reads /proc/loadavg; ok false when absent or malformed.
func readLoadavg(path string) (load1 float64, runnable int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	return parseLoadavg(string(b))
}

// parseLoadavg parses /proc/loadavg, "0.20 0.18 0.12 1/80 11206": the
// 1-minute load average and the number of runnable tasks.
func parseLoadavg(s string) (load1 float64, runnable int, ok bool) {
	f := strings.Fields(s)
	if len(f) < 4 {
		return 0, 0, false
	}
	load1, err := strconv.ParseFloat(f[0], 64)
	if err != nil || load1 < 0 || math.IsNaN(load1) || math.IsInf(load1, 0) {
		return 0, 0, false
	}
	run, total, found := strings.Cut(f[3], "/")
	if !found {
		return 0, 0, false
	}
	runnable, err = strconv.Atoi(run)
	if err != nil || runnable < 0 {
		return 0, 0, false
	}
	if _, err := strconv.Atoi(total); err != nil {
		return 0, 0, false
	}
	return load1, runnable, true
}

// lateHist counts lateness in log buckets 5% wide: bucket 0 holds [0,
// 1µs), bucket i >= 1 holds [1µs·1.05^(i-1), 1µs·1.05^i). 400 buckets
// reach past 4 minutes; memory stays fixed however long the run.
type lateHist struct {
	n      int
	max    time.Duration
	counts [lateBuckets]int
}

const (
	lateBuckets = 400
	lateGrowth  = 1.05
)

func (h *lateHist) add(d time.Duration) {
	d = max(d, 0)
	h.n++
	h.max = max(h.max, d)
	h.counts[lateBucket(d)]++
}

// lateBucket is the bucket of lateness d.
func lateBucket(d time.Duration) int {
	i := 0
	if d >= time.Microsecond {
		i = 1 + int(math.Log(float64(d)/float64(time.Microsecond))/math.Log(lateGrowth))
	}
	return min(i, lateBuckets-1)
}

// quantile returns the upper bound of the bucket that holds the value of
// rank ceil(q·n) (nearest rank), capped at the exact max; the exact max
// when that value is in the last, open-ended bucket; 0 when empty.
func (h *lateHist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := max(int(math.Ceil(q*float64(h.n))), 1)
	seen := 0
	for i, c := range h.counts[:lateBuckets-1] {
		seen += c
		if seen >= rank {
			upper := time.Duration(float64(time.Microsecond) * math.Pow(lateGrowth, float64(i)))
			return min(upper, h.max)
		}
	}
	return h.max
}

// Probe samples the machine's signals over a run: PSI at its start
// and end, /proc/loadavg every loadEvery wake-ups, and the lateness of
// every wake-up of its timer. Its goroutine owns the figures until done
// is closed.
type Probe struct {
	psiPath  string
	loadPath string
	start    time.Time
	psi0     time.Duration
	psiOK    bool
	stopc    chan struct{}
	done     chan struct{}
	hist     lateHist
	load     float64 // highest 1-minute load average; NaN when unavailable
	runSum   int
	runN     int
	interval time.Duration
	reads0   *lagSnapshot // readLags at the start
}

// loadEvery is how many wake-ups pass between reads of /proc/loadavg
// (every 100 ms at probeInterval).
const loadEvery = 5

// Start starts the probe; nil on synctest's fake clock, where it
// must not run (virtual time has no lateness, and a sleeping goroutine
// would change when the bubble's clock advances).
func Start() *Probe {
	if VirtualClock(time.Now()) {
		return nil
	}
	return startAt(psiPath, loadavgPath)
}

// startAt starts a probe that reads the given files.
func startAt(psi, loadavg string) *Probe {
	p := &Probe{psiPath: psi, loadPath: loadavg, start: time.Now(), stopc: make(chan struct{}), done: make(chan struct{}),
		load: math.NaN(), interval: probeInterval}
	p.psi0, p.psiOK = readPSISome(psi)
	p.reads0 = readLags.snapshot()
	p.sampleLoad()
	go p.loop()
	return p
}

func (p *Probe) sampleLoad() {
	load1, run, ok := readLoadavg(p.loadPath)
	if !ok {
		return
	}
	if math.IsNaN(p.load) || load1 > p.load {
		p.load = load1
	}
	p.runSum += run
	p.runN++
}

func (p *Probe) loop() {
	defer close(p.done)
	t := time.NewTimer(p.interval)
	defer t.Stop()
	due := time.Now().Add(p.interval)
	for i := 1; ; i++ {
		select {
		case <-p.stopc:
			return
		case <-t.C:
		}
		p.hist.add(time.Since(due))
		if i%loadEvery == 0 {
			p.sampleLoad()
		}
		due = time.Now().Add(p.interval)
		t.Reset(p.interval)
	}
}

// stop ends the probe, waits for its goroutine and returns the figures;
// for a nil probe (virtual time), a Load marked Virtual. Call once.
func (p *Probe) Stop() *Load {
	if p == nil {
		return &Load{Virtual: true, PSISome: math.NaN(), Load: math.NaN(), Runnable: math.NaN(), Cores: runtime.NumCPU()}
	}
	close(p.stopc)
	<-p.done
	wall := time.Since(p.start)
	p.sampleLoad()
	m := &Load{Wall: wall, PSISome: math.NaN(), Load: p.load, Runnable: math.NaN(), Cores: runtime.NumCPU(),
		Wakeups: p.hist.n, LateP50: p.hist.quantile(0.50), LateP99: p.hist.quantile(0.99), LateMax: p.hist.max}
	if psi1, ok := readPSISome(p.psiPath); ok && p.psiOK && psi1 >= p.psi0 && wall > 0 {
		m.PSISome = float64(psi1-p.psi0) / float64(wall)
	}
	if p.runN > 0 {
		m.Runnable = float64(p.runSum) / float64(p.runN)
	}
	if reads := readLags.since(p.reads0); reads.n > 0 {
		m.Reads, m.ReadLagP50, m.ReadLagP99, m.ReadLagMax = reads.n, reads.quantile(0.50), reads.quantile(0.99), reads.max
	}
	return m
}

// sourcesWarning is Warning of a merged result: each source's own.
func (m *Load) sourcesWarning() string {
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
func (m *Load) sourcesString() string {
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
func (m *Load) brief() string {
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

// finite is f, or nil (JSON null) when f is NaN or infinite.
func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}
