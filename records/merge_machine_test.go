package records_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
)

// quietMachine and busyMachine are machine figures a shard's summary
// may hold: the first warns of nothing, the second of CPU pressure and
// a late timer (PSI 45%, lateness p99 30 ms).
func quietMachine() *latencytest.MachineLoad {
	return &latencytest.MachineLoad{Wall: 10 * time.Second, PSISome: 0.02, Load: 0.5, Runnable: 1.2, Cores: 2, Wakeups: 2000,
		LateP50: 80 * time.Microsecond, LateP99: 900 * time.Microsecond, LateMax: 3 * time.Millisecond}
}

func busyMachine() *latencytest.MachineLoad {
	m := quietMachine()
	m.PSISome, m.LateP99, m.LateMax = 0.45, 30*time.Millisecond, 406*time.Millisecond
	return m
}

// setMachine writes m as the "machine" key of a summary.json (nil
// removes it, as in a summary written before summaries kept it).
func setMachine(t *testing.T, path string, m *latencytest.MachineLoad) {
	t.Helper()
	if m == nil {
		editSummary(t, path, "machine", nil)
		return
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	editSummary(t, path, "machine", v)
}

// A merge keeps each shard's machine figures (from its summary.json):
// one busy shard makes the merged result warn, naming that shard and
// only it, in the Result's Machine, box 13, the summary and sloassert's
// report, for MergeRecords and MergeLevels alike, and after a JSON round
// trip. Clean shards warn of nothing; files without the figures (no
// summary, or one written before summaries kept them) merge as before,
// warn of nothing, and say which sources lack them.
func TestMergeKeepsTheMachineFigures(t *testing.T) {
	root := t.TempDir()
	// 3 shards of 12 requests at concurrency 3: 4 each, 1 in flight each.
	measureShards(t, filepath.Join(root, "whole"), latencytest.Batch{Requests: 12, NoWarmup: true, Concurrency: 3}, 3)
	rec := func(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("shard-%d", i), "records.jsonl") }
	sum := func(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("shard-%d", i), "summary.json") }
	name := func(dir string, i int) string { return fmt.Sprintf("shard %d/3 of c3 (%s)", i, rec(dir, i)) }
	const busy = "the machine was busy: timings may include scheduling delay of the client (the probe woke up to 406.00ms late): " +
		"timer lateness p99 30.00ms (above 2.00ms); PSI cpu some 45% of the run (above 10%)"
	notRecorded := func(n int) string { return fmt.Sprintf("machine signals not recorded for %d of 3 source(s): ", n) }
	for _, c := range []struct {
		name     string
		machines []*latencytest.MachineLoad // per shard; nil: no figures in its summary
		noSum    []int                      // shards whose summary.json is removed
		warn     []int                      // the shards the merged warning must name
		missing  int                        // sources said not recorded
	}{
		{"one busy shard", []*latencytest.MachineLoad{quietMachine(), busyMachine(), quietMachine()}, nil, []int{1}, 0},
		{"two busy shards", []*latencytest.MachineLoad{busyMachine(), quietMachine(), busyMachine()}, nil, []int{0, 2}, 0},
		{"clean shards", []*latencytest.MachineLoad{quietMachine(), quietMachine(), quietMachine()}, nil, nil, 0},
		{"old summaries without the figures", []*latencytest.MachineLoad{nil, nil, nil}, nil, nil, 3},
		{"no summaries", nil, []int{0, 1, 2}, nil, 3},
		{"a busy shard beside one without figures", []*latencytest.MachineLoad{busyMachine(), nil, quietMachine()}, nil, []int{0}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(root, strings.ReplaceAll(c.name, " ", "_"))
			if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "whole"))); err != nil {
				t.Fatal(err)
			}
			for i, m := range c.machines {
				setMachine(t, sum(dir, i), m)
			}
			for _, i := range c.noSum {
				if err := os.Remove(sum(dir, i)); err != nil {
					t.Fatal(err)
				}
			}
			glob := filepath.Join(dir, "**", "records*.jsonl")
			m, err := records.Merge(glob)
			if err != nil {
				t.Fatal(err)
			}
			levels, err := records.MergeLevels(glob)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var back latencytest.Result
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			for what, r := range map[string]*latencytest.Result{"MergeRecords": m, "MergeLevels": levels[3], "JSON round trip": &back} {
				if r == nil || r.Partial || r.Counts().Sent != 12 {
					t.Fatalf("%s: merged %+v", what, r)
				}
				if r.Machine == nil || len(r.Machine.Sources) != 3 {
					t.Fatalf("%s: machine %+v", what, r.Machine)
				}
				w := r.Machine.Warning()
				var want []string
				for _, i := range c.warn {
					want = append(want, name(dir, i)+": "+busy)
				}
				if w != strings.Join(want, "; ") {
					t.Errorf("%s: warning\n got %q\nwant %q", what, w, strings.Join(want, "; "))
				}
				box := r.Disclosure.Box(13).Answer
				if (len(c.warn) > 0) != strings.Contains(box, "WARNING: ") || len(c.warn) > 0 && !strings.Contains(box, "; WARNING: "+w) {
					t.Errorf("%s: box 13 %q", what, box)
				}
				s := r.Machine.String()
				if strings.Contains(s, notRecorded(c.missing)) != (c.missing > 0) || !strings.Contains(box, s) {
					t.Errorf("%s: %d source(s) without figures, yet\nString %q\nbox 13 %q", what, c.missing, s, box)
				}
				if recorded := 3 - c.missing; recorded > 0 && !strings.Contains(s, fmt.Sprintf("machine, worst of %d source(s) measured in real time: ", recorded)) {
					t.Errorf("%s: String %q", what, s)
				}
				rep := sloassert.Evaluate(r, sloassert.MaxErrorRate(0.5)).String()
				if len(c.warn) > 0 && !strings.Contains(rep, "WARNING: "+w) || len(c.warn) == 0 && strings.Contains(rep, "WARNING: shard") {
					t.Errorf("%s: report:\n%s", what, rep)
				}
				if sm := r.Summarize().String(); (len(c.warn) > 0) != strings.Contains(sm, "\nWARNING: shard ") {
					t.Errorf("%s: summary:\n%s", what, sm)
				}
			}
			// The worst figures: the busy shard's PSI and lateness, the sum of wake-ups.
			if len(c.warn) > 0 {
				if g := m.Machine; g.PSISome != 0.45 || g.LateP99 != 30*time.Millisecond || g.LateMax != 406*time.Millisecond || g.Wakeups != 2000*(3-c.missing) {
					t.Errorf("worst figures %+v", g)
				}
			}
			if c.missing == 3 && (m.Machine.Wakeups != 0 || !math.IsNaN(m.Machine.PSISome)) {
				t.Errorf("no figures, yet %+v", m.Machine)
			}
		})
	}
}

// Shards measured in virtual time have nothing to measure: the merged
// box 13 says so once, and nothing warns. A chain run's summary keeps
// its figures under "calls", and the merge reads them there.
func TestMergeMachineVirtualAndChains(t *testing.T) {
	root := t.TempDir()
	copyArtifacts := func(t *testing.T, dst string) {
		ad, ok := any(t).(interface{ ArtifactDir() string })
		if !ok {
			t.Skip("no t.ArtifactDir before Go 1.26: Measure writes no records")
		}
		if err := os.CopyFS(dst, os.DirFS(ad.ArtifactDir())); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		t.Run(fmt.Sprintf("shard-%d", i), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, p := fake(t, spread(t))
				latencytest.Batch{Requests: 6, NoWarmup: true, Concurrency: 2, Load: latencytest.Load{Shard: latencytest.Shard{Index: i, Count: 2}}}.Measure(t, p)
				copyArtifacts(t, filepath.Join(root, "virtual", fmt.Sprintf("shard-%d", i)))
			})
		})
	}
	m, err := records.Merge(filepath.Join(root, "virtual", "**", "records*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	box := m.Disclosure.Box(13).Answer
	const virtual = "machine signals and timer lateness not measured (virtual time)"
	if m.Machine == nil || !m.Machine.Virtual || m.Machine.Warning() != "" || strings.Count(box, virtual) != 1 {
		t.Errorf("virtual shards: machine %+v\nbox 13 %q", m.Machine, box)
	}

	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	t.Run("chain", func(t *testing.T) {
		latencytest.Chain{Chains: 2, Length: 2}.Measure(t, nop)
		copyArtifacts(t, filepath.Join(root, "chain"))
	})
	path := filepath.Join(root, "chain", "summary.json")
	editFile(t, path, func(b []byte) []byte {
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		var busy map[string]any
		mb, _ := json.Marshal(busyMachine())
		if err := json.Unmarshal(mb, &busy); err != nil {
			t.Fatal(err)
		}
		v["calls"].(map[string]any)["machine"] = busy
		out, _ := json.Marshal(v)
		return out
	})
	cm, err := records.Merge(filepath.Join(root, "chain", "records*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if w := cm.Machine.Warning(); !strings.HasPrefix(w, filepath.Join(root, "chain", "records.jsonl")+": the machine was busy") {
		t.Errorf("chain: warning %q", w)
	}
}
