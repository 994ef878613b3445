package machine

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func fixture(name string) string { return filepath.Join("testdata", name) }

func TestParsePSIFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		want time.Duration
		ok   bool
		why  string
	}{
		{"psi_cpu", 3548741686 * time.Microsecond, true, "the some line's total, in microseconds"},
		{"psi_cpu_no_total", 0, false, "a some line without total= is not a reading"},
		{"psi_cpu_no_some", 0, false, "only a full line: the some total is absent, not 0"},
		{"psi_cpu_negative", 0, false, "a negative total is malformed"},
		{"psi_cpu_garbage", 0, false, "binary garbage"},
		{"absent", 0, false, "no such file (not Linux, PSI off, a container)"},
	} {
		got, ok := readPSISome(fixture(tc.file))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s (%s): got %v %v, want %v %v", tc.file, tc.why, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseLoadavgFixtures(t *testing.T) {
	for _, tc := range []struct {
		file     string
		load     float64
		runnable int
		ok       bool
		why      string
	}{
		{"loadavg", 24.97, 18, true, "1-minute average and the running count of 18/208"},
		{"loadavg_short", 0, 0, false, "no runnable/total field"},
		{"loadavg_bad_load", 0, 0, false, "the load is not a number"},
		{"loadavg_bad_runnable", 0, 0, false, "runnable/total without a slash"},
		{"loadavg_empty", 0, 0, false, "an empty file"},
		{"absent", 0, 0, false, "no such file"},
	} {
		load, run, ok := readLoadavg(fixture(tc.file))
		if load != tc.load || run != tc.runnable || ok != tc.ok {
			t.Errorf("%s (%s): got %v %d %v, want %v %d %v", tc.file, tc.why, load, run, ok, tc.load, tc.runnable, tc.ok)
		}
	}
}

// A probe whose files are absent or malformed says "not available" and
// never warns on those signals; one whose files read gives their figures.
func TestMachineProbeFromFixtures(t *testing.T) {
	for _, files := range [][2]string{{"absent", "absent"}, {"psi_cpu_garbage", "loadavg_bad_runnable"}, {"psi_cpu_no_some", "loadavg_empty"}} {
		m := startAt(fixture(files[0]), fixture(files[1])).Stop()
		if !math.IsNaN(m.PSISome) || !math.IsNaN(m.Load) || !math.IsNaN(m.Runnable) {
			t.Errorf("%v: PSI %v, load %v, runnable %v: want NaN (not available)", files, m.PSISome, m.Load, m.Runnable)
		}
		s := m.String()
		if !strings.Contains(s, "PSI cpu some not available") || !strings.Contains(s, "load average not available") {
			t.Errorf("%v: %s", files, s)
		}
		if w := m.Warning(); strings.Contains(w, "PSI") || strings.Contains(w, "runnable") || strings.Contains(w, "load") {
			t.Errorf("%v: an unavailable signal warned: %s", files, w)
		}
	}
	// The fixture files do not change during the run: PSI's total moved
	// by 0 (0% of the run, a reading), the load is the file's.
	m := startAt(fixture("psi_cpu"), fixture("loadavg")).Stop()
	if m.PSISome != 0 || m.Load != 24.97 || m.Runnable != 18 || m.Cores != runtime.NumCPU() || m.Wall <= 0 {
		t.Errorf("from fixtures: %+v", m)
	}
	if s := m.String(); !strings.Contains(s, "PSI cpu some 0.0% of the run") || !strings.Contains(s, "load average 24.97 (1 min, highest), 18.0 runnable tasks (mean)") {
		t.Errorf("from fixtures: %s", s)
	}
	if runtime.NumCPU() < 18 && !strings.Contains(m.Warning(), "18.0 runnable tasks on") {
		t.Errorf("18 runnable tasks on %d cores did not warn: %q", runtime.NumCPU(), m.Warning())
	}
}

func TestLatenessHistogram(t *testing.T) {
	var h lateHist
	if h.quantile(0.5) != 0 {
		t.Error("an empty histogram has a quantile")
	}
	for i := 1; i <= 100; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	h.add(-time.Millisecond) // a timer never fires early; counted as 0
	// n=101, q=0.5: rank ceil(50.5) = 51, the value 50ms (after the 0);
	// its bucket's upper bound is at most 5% above it.
	if q := h.quantile(0.5); q < 50*time.Millisecond || q > 52500*time.Microsecond {
		t.Errorf("p50 %v, want 50ms to 52.5ms", q)
	}
	// q=0.99: rank ceil(99.99) = 100, the value 99ms; capped at the max 100ms.
	if q := h.quantile(0.99); q < 99*time.Millisecond || q > 100*time.Millisecond {
		t.Errorf("p99 %v, want 99ms to 100ms", q)
	}
	if h.max != 100*time.Millisecond || h.n != 101 || h.counts[0] != 1 {
		t.Errorf("max %v, n %d, bucket 0 %d", h.max, h.n, h.counts[0])
	}
	// Past the last bucket's lower bound (~272 s) the quantile is the exact max.
	var big lateHist
	big.add(time.Hour)
	if q := big.quantile(0.99); q != time.Hour {
		t.Errorf("p99 of one hour: %v", q)
	}
}

func TestMachineWarningFromFigures(t *testing.T) {
	nan := math.NaN()
	quiet := Load{Wall: 10 * time.Second, PSISome: 0.02, Load: 0.5, Runnable: 1.2, Cores: 2, Wakeups: 5000,
		LateP50: 80 * time.Microsecond, LateP99: 900 * time.Microsecond, LateMax: 3 * time.Millisecond}
	for _, tc := range []struct {
		name string
		edit func(m *Load)
		want []string // "" alone: no warning
	}{
		{"quiet", func(*Load) {}, nil},
		{"late timer", func(m *Load) { m.LateP99, m.LateMax = 12300*time.Microsecond, 406*time.Millisecond },
			[]string{"timer lateness p99 12.30ms (above 2.00ms)", "woke up to 406.00ms late"}},
		{"p99 at the threshold", func(m *Load) { m.LateP99 = 2 * time.Millisecond }, nil},
		{"PSI", func(m *Load) { m.PSISome = 0.45 }, []string{"PSI cpu some 45% of the run (above 10%)"}},
		{"runnable", func(m *Load) { m.Runnable = 4.2 }, []string{"4.2 runnable tasks on 2 cores"}},
		{"load on a short run", func(m *Load) { m.Load = 3.9 }, nil},
		{"load on a long run", func(m *Load) { m.Load, m.Wall = 3.9, 2*time.Minute }, []string{"load average 3.90 on 2 cores"}},
		{"nothing available", func(m *Load) { m.PSISome, m.Load, m.Runnable, m.Wakeups = nan, nan, nan, 0 }, nil},
		{"lateness without wake-ups", func(m *Load) { m.Wakeups, m.LateP99 = 0, time.Second }, nil},
		{"virtual", func(m *Load) { m.Virtual, m.PSISome = true, 1 }, nil},
	} {
		m := quiet
		tc.edit(&m)
		w := m.Warning()
		if (w == "") != (len(tc.want) == 0) {
			t.Errorf("%s: warning %q, want one: %v", tc.name, w, len(tc.want) > 0)
		}
		for _, s := range tc.want {
			if !strings.Contains(w, s) || !strings.HasPrefix(w, "the machine was busy: timings may include scheduling delay of the client") {
				t.Errorf("%s: %q lacks %q", tc.name, w, s)
			}
		}
	}
	var none *Load
	if none.Warning() != "" || none.String() != "machine signals not recorded" {
		t.Errorf("nil: %q %q", none.Warning(), none.String())
	}
	v := (*Probe)(nil).Stop()
	if !v.Virtual || v.String() != "machine signals and timer lateness not measured (virtual time)" {
		t.Errorf("virtual: %+v %s", v, v)
	}
}

// A Load's JSON writes an unavailable signal as null and reads it back as
// NaN; every figure survives the round trip.
func TestLoadJSON(t *testing.T) {
	m := &Load{Wall: time.Second, PSISome: 0.5, Load: math.NaN(), Runnable: math.NaN(), Cores: 2, Wakeups: 400,
		LateP50: time.Millisecond, LateP99: 30 * time.Millisecond, LateMax: 406 * time.Millisecond,
		Reads: 900, ReadLagP50: 50 * time.Microsecond, ReadLagP99: 3 * time.Millisecond, ReadLagMax: 12 * time.Millisecond}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"wall_ns":1000000000,"psi_cpu_some":0.5,"load_avg_1m":null,"runnable":null,"cores":2,`) {
		t.Errorf("JSON: %s", b)
	}
	var g Load
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if g.PSISome != 0.5 || !math.IsNaN(g.Load) || !math.IsNaN(g.Runnable) || g.LateMax != m.LateMax || g.Wakeups != 400 ||
		g.Reads != 900 || g.ReadLagP50 != m.ReadLagP50 || g.ReadLagP99 != m.ReadLagP99 || g.ReadLagMax != m.ReadLagMax || g.String() != m.String() {
		t.Errorf("round trip: %+v", g)
	}
}

// FuzzParseMachineFiles: whatever /proc holds, the parsers never panic
// and a reading they accept is a possible one.
func FuzzParseMachineFiles(f *testing.F) {
	for _, name := range []string{"psi_cpu", "psi_cpu_no_total", "psi_cpu_garbage", "loadavg", "loadavg_bad_runnable"} {
		b, err := os.ReadFile(fixture(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, ok := parsePSISome(s); ok && d < 0 || !ok && d != 0 {
			t.Errorf("PSI %q: %v %v", s, d, ok)
		}
		load, run, ok := parseLoadavg(s)
		if ok && (load < 0 || math.IsNaN(load) || math.IsInf(load, 0) || run < 0) || !ok && (load != 0 || run != 0) {
			t.Errorf("loadavg %q: %v %d %v", s, load, run, ok)
		}
	})
}
