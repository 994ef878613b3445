package machine

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// The merged figures are the worst source's of each, a signal not
// available (NaN, no wake-up, no read) left out, wake-ups and reads
// summed, the fewest cores; a source in virtual time adds nothing to
// them; the warning is each source's own, with its name.
func TestMergeCombines(t *testing.T) {
	nan := math.NaN()
	a := &Load{Wall: 3 * time.Second, PSISome: 0.04, Load: nan, Runnable: 6.5, Cores: 8, Wakeups: 600,
		LateP50: 100 * time.Microsecond, LateP99: 1900 * time.Microsecond, LateMax: 5 * time.Millisecond}
	// b timed no wake-up: its LateP99 is left out.
	b := &Load{Wall: 9 * time.Second, PSISome: nan, Load: 1.5, Runnable: 1.1, Cores: 2, Wakeups: 0, LateP99: time.Hour,
		Reads: 50, ReadLagP50: 20 * time.Microsecond, ReadLagP99: 3 * time.Millisecond, ReadLagMax: 4 * time.Millisecond}
	v := &Load{Virtual: true, PSISome: 1, Load: nan, Runnable: nan, Cores: 64}
	m := Merge([]Source{{Source: "a.jsonl", Machine: a}, {Source: "b.jsonl", Machine: b}, {Source: "v.jsonl", Machine: v}, {Source: "old.jsonl"}})
	if m.Virtual || m.Wall != 9*time.Second || m.PSISome != 0.04 || m.Load != 1.5 || m.Runnable != 6.5 || m.Cores != 2 ||
		m.Wakeups != 600 || m.LateP99 != 1900*time.Microsecond || m.LateMax != 5*time.Millisecond ||
		m.Reads != 50 || m.ReadLagP99 != 3*time.Millisecond || len(m.Sources) != 4 || m.Sources[3].Machine != nil {
		t.Errorf("merged %+v", m)
	}
	// 6.5 runnable tasks on a's 8 cores do not warn, nor does b's 1.1 on
	// 2: only b's read lag does; the worst figures (6.5 on 2) would have.
	if w := m.Warning(); !strings.HasPrefix(w, "b.jsonl: the client read its events late against the socket: read lag p99 3.00ms") || strings.Contains(w, "a.jsonl") {
		t.Errorf("warning %q", w)
	}
	s := m.String()
	for _, want := range []string{
		"machine, worst of 2 source(s) measured in real time: PSI cpu some 4.0% of the run; load average 1.50 (1 min, highest), 6.5 runnable tasks (mean) on 2 cores;",
		"by source: a.jsonl: PSI 4.0%, load n/a, 6.5 runnable on 8 cores, lateness p99 1.90ms (max 5.00ms), read lag n/a; b.jsonl: PSI n/a, load 1.50, 1.1 runnable on 2 cores, lateness n/a, read lag p99 3.00ms",
		"; 1 source(s) ran in virtual time (nothing to measure)",
		"; machine signals not recorded for 1 of 4 source(s): old.jsonl (",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("String lacks %q:\n%s", want, s)
		}
	}
	// Every source in virtual time: virtual, no warning.
	vm := Merge([]Source{{Source: "v1", Machine: v}, {Source: "old"}, {Source: "v2", Machine: v}})
	if !vm.Virtual || vm.Warning() != "" || vm.Cores != 64 || !strings.HasPrefix(vm.String(), virtualMachine+"; machine signals not recorded for 1 of 3") {
		t.Errorf("virtual: %+v %q", vm, vm.String())
	}
	// JSON keeps each source's figures, a missing one as null.
	j, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(j), `"sources":[{"source":"a.jsonl","machine":{"wall_ns":3000000000,"psi_cpu_some":0.04,"load_avg_1m":null,`) ||
		!strings.Contains(string(j), `{"source":"old.jsonl","machine":null}`) {
		t.Errorf("JSON %s", j)
	}
	var back Load
	if err := json.Unmarshal(j, &back); err != nil || back.Warning() != m.Warning() || back.String() != m.String() {
		t.Errorf("round trip (%v):\n%s\n%s", err, back.String(), m.String())
	}
}
