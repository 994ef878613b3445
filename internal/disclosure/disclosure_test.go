package disclosure

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// Set keeps the boxes in box order and replaces a box set twice; Box
// gives an unset box as missing with its question; Missing lists the
// empty ones; String marks them and ends with the warnings.
func TestSetBoxMissingString(t *testing.T) {
	var d Disclosure
	d.Set(9, "a window", false)
	d.Set(3, "not written", true)
	d.Set(1, Measurement, false)
	d.Set(3, "records.jsonl", false) // replaces, keeps one box 3
	if len(d.Boxes) != 3 || d.Boxes[0].N != 1 || d.Boxes[1].N != 3 || d.Boxes[2].N != 9 {
		t.Fatalf("boxes %+v, want 1, 3, 9 in order", d.Boxes)
	}
	if b := d.Box(3); b.Answer != "records.jsonl" || b.Missing || b.Question != "raw records" {
		t.Errorf("box 3: %+v", b)
	}
	if b := d.Box(14); !b.Missing || b.Answer != "not recorded" || b.Question != "client location" {
		t.Errorf("unset box 14: %+v", b)
	}
	d.Set(14, "", true)
	if m := d.Missing(); len(m) != 1 || m[0].N != 14 {
		t.Errorf("missing %+v, want box 14 only", m)
	}
	d.Warnings = []string{"windows do not overlap"}
	want := " 1. what was timed, and where: " + Measurement + "\n" +
		" 3. raw records: records.jsonl\n" +
		" 9. run window: a window\n" +
		"14. client location: MISSING: \n" +
		"WARNING: windows do not overlap\n"
	if got := d.String(); got != want {
		t.Errorf("String:\n%s\nwant\n%s", got, want)
	}
}

// A source's unknown CPU/wall (NaN) is null in JSON and NaN again when
// read back; a known one round-trips.
func TestSourceJSON(t *testing.T) {
	for _, cpu := range []float64{math.NaN(), 0.25} {
		b, err := json.Marshal(Source{Path: "a/records.jsonl", CPUPerWall: cpu, Counts: Counts{Planned: 3, Sent: 3, Kept: 3}})
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(cpu) != strings.Contains(string(b), `"cpu_per_wall":null`) {
			t.Errorf("CPU/wall %v: %s", cpu, b)
		}
		var s Source
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if s.Path != "a/records.jsonl" || s.Counts.Kept != 3 || !(s.CPUPerWall == cpu || math.IsNaN(cpu) && math.IsNaN(s.CPUPerWall)) {
			t.Errorf("read back %+v from %s", s, b)
		}
	}
}

// A repeat gap's infinite Gap and Failed run quantile (JSON has neither)
// are null.
func TestRepeatGapJSON(t *testing.T) {
	b, err := json.Marshal(RepeatGap{Metric: "ttft", Q: 0.99, Runs: []time.Duration{1, time.Duration(math.MaxInt64)}, Gap: math.Inf(1)})
	if err != nil || string(b) != `{"metric":"ttft","q":0.99,"runs_ns":[1,null],"gap":null}` {
		t.Errorf("repeat gap JSON %s, %v", b, err)
	}
}
