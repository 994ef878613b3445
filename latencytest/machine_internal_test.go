package latencytest

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/machine"
)

// cpuTime is the process's CPU time, for the package's tests.
func cpuTime() (time.Duration, bool) { return machine.CPUTime() }

// Box 13 and the result's JSON carry the machine's figures.
func TestMachineBoxAndJSON(t *testing.T) {
	m := &MachineLoad{Wall: time.Second, PSISome: 0.5, Load: math.NaN(), Runnable: math.NaN(), Cores: 2, Wakeups: 400,
		LateP50: time.Millisecond, LateP99: 30 * time.Millisecond, LateMax: 406 * time.Millisecond,
		Reads: 900, ReadLagP50: 50 * time.Microsecond, ReadLagP99: 3 * time.Millisecond, ReadLagMax: 12 * time.Millisecond}
	var d Disclosure
	d.Set(13, "0.00", false)
	noteMachine(&d, m)
	want := "0.00; machine: PSI cpu some 50.0% of the run; load average not available on 2 cores; " +
		"timer lateness p50 1.00ms p99 30.00ms max 406.00ms (400 wake-ups every 20ms); " +
		"socket read lag p50 0.05ms p99 3.00ms max 12.00ms (900 reads); " +
		"WARNING: the client read its events late against the socket: read lag p99 3.00ms (above 1.50ms), p50 0.05ms, up to 12.00ms over 900 reads; " +
		"its timings are late by as much: the run went past what the client can time; " +
		"the machine was busy: timings may include scheduling delay of the client (the probe woke up to 406.00ms late): " +
		"timer lateness p99 30.00ms (above 2.00ms); PSI cpu some 50% of the run (above 10%)"
	if got := d.Box(13).Answer; got != want {
		t.Errorf("box 13:\n got %s\nwant %s", got, want)
	}
	b, err := json.Marshal(&Result{Run: Run{Machine: m, CPUPerWall: math.NaN()}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"machine":{"wall_ns":1000000000,"psi_cpu_some":0.5,"load_avg_1m":null,"runnable":null,"cores":2,`) {
		t.Errorf("JSON: %s", b)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if g := back.Machine; g == nil || g.PSISome != 0.5 || !math.IsNaN(g.Load) || !math.IsNaN(g.Runnable) || g.LateMax != m.LateMax || g.Wakeups != 400 ||
		g.Reads != 900 || g.ReadLagP50 != m.ReadLagP50 || g.ReadLagP99 != m.ReadLagP99 || g.ReadLagMax != m.ReadLagMax {
		t.Errorf("round trip: %+v", g)
	}
}

// The summary (summary.json, the full text) keeps the figures, and the
// few lines Measure logs carry the warning.
func TestSummaryCarriesTheMachine(t *testing.T) {
	m := &MachineLoad{Wall: time.Second, PSISome: 0.5, Load: math.NaN(), Runnable: math.NaN(), Cores: 2, Wakeups: 200,
		LateP50: time.Millisecond, LateP99: 30 * time.Millisecond, LateMax: 406 * time.Millisecond}
	s := (&Result{Run: Run{Machine: m, CPUPerWall: 0.01}}).Summarize()
	if s.Machine != m {
		t.Fatalf("summary machine %v", s.Machine)
	}
	full, brief := s.String(), s.Brief("")
	if !strings.Contains(full, "\nmachine: PSI cpu some 50.0% of the run;") || !strings.Contains(full, "\nWARNING: the machine was busy") {
		t.Errorf("summary:\n%s", full)
	}
	if !strings.Contains(brief, "\n  WARNING: the machine was busy: timings may include scheduling delay of the client") {
		t.Errorf("brief:\n%s", brief)
	}
	quiet := (&Result{Run: Run{CPUPerWall: 0.01}}).Summarize()
	if strings.Contains(quiet.String(), "machine") || strings.Contains(quiet.Brief(""), "WARNING") {
		t.Errorf("no machine measured, yet:\n%s\n%s", quiet.String(), quiet.Brief(""))
	}
	b, err := json.Marshal(s)
	if err != nil || !strings.Contains(string(b), `"machine":{"wall_ns":1000000000,"psi_cpu_some":0.5,`) {
		t.Errorf("summary JSON %v: %s", err, b)
	}
}
