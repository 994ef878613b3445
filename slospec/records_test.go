package slospec_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/slospec"
)

// writeShards runs two shards of a sweep (levels 2 and 4) at once against
// a fixed fake (TTFT 200ms, ITL 10ms, 16 tokens: total 350ms) in virtual
// time, and writes each shard's records as dir/shard-i/<level>/records.jsonl,
// the way go test -artifacts lays out one test per shard.
func writeShards(t *testing.T, dir string) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(fakeprovider.Profile{TTFT: fakeprovider.Fixed(200 * time.Millisecond),
			ITL: fakeprovider.Fixed(10 * time.Millisecond), OutputTokens: fakeprovider.Fixed(16), SlotsPerReplica: 64})
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				sw := latencytest.Sweep{Batch: latencytest.Batch{Requests: 120, Warmup: 4, Load: latencytest.Load{MaxTokens: 16, Shard: latencytest.Shard{Index: i, Count: 2}}}, Levels: []int{2, 4}}
				sr, err := sw.Run(context.Background(), p)
				if err != nil {
					t.Error(err)
					return
				}
				for k, r := range sr.Results {
					d := filepath.Join(dir, "shard-"+strconv.Itoa(i), "c"+strconv.Itoa(sr.Levels[k]))
					if err := os.MkdirAll(d, 0o755); err != nil {
						t.Error(err)
						return
					}
					fh, err := os.Create(filepath.Join(d, "records.jsonl"))
					if err != nil {
						t.Error(err)
						return
					}
					if err := latencytest.WriteRecords(fh, r.Records); err != nil {
						t.Error(err)
					}
					fh.Close()
				}
			})
		}
		wg.Wait()
	})
}

func writeSpec(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "judge.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A records target judges the shards' merged records level by level, with
// the spec's objectives: exact figures, so the budgets sit right on them.
func TestRunFileRecords(t *testing.T) {
	dir := t.TempDir()
	writeShards(t, dir)
	spec := writeSpec(t, dir, `
target: {records: "shard-*/**/records.jsonl"}   # relative to the spec
objectives:
  ttft: {p50: 200ms, p99: 200ms}
  total: {p95: 350ms}
  error_rate: 0%
`)
	ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
	if !ok {
		t.Fatalf("the merged records should pass:\n%s", out)
	}
	// The budgets are the exact figures: 1ns less fails, at both levels.
	spec = writeSpec(t, dir, `
target: {records: "shard-*/**/records.jsonl"}
objectives:
  total: {p95: 349.999999ms}
`)
	ok, _, out = runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
	if got := failedTestNames(out); ok || !slices.Equal(got, []string{"inner", "inner/c2", "inner/c2/total_p95", "inner/c4", "inner/c4/total_p95"}) {
		t.Errorf("failed %v:\n%s", got, out)
	}
	if !strings.Contains(out, "records "+filepath.Join(dir, "shard-*/**/records.jsonl")+", merged") {
		t.Errorf("the failure should name the records:\n%s", out)
	}
}

// load.concurrency names the levels to judge: a level without records
// fails, levels not named are logged and not judged.
func TestRunFileRecordsLevels(t *testing.T) {
	dir := t.TempDir()
	writeShards(t, dir)
	spec := writeSpec(t, dir, `
target: {records: "shard-*/*/records.jsonl"}
load: {concurrency: [4, 8]}
objectives: {error_rate: 0%}
`)
	ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
	if got := failedTestNames(out); ok || !slices.Equal(got, []string{"inner", "inner/c8"}) {
		t.Errorf("failed %v:\n%s", got, out)
	}
	if !strings.Contains(out, "no records at concurrency 8 (the records hold [2 4])") {
		t.Errorf("output:\n%s", out)
	}
	// Records from the same shard twice overlap: the spec fails and says so.
	if err := os.CopyFS(filepath.Join(dir, "shard-2"), os.DirFS(filepath.Join(dir, "shard-0"))); err != nil {
		t.Fatal(err)
	}
	ok, _, out = runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
	if ok || !strings.Contains(out, "target records: records: merge: ") || !strings.Contains(out, "overlap in") {
		t.Errorf("overlapping records should fail the spec:\n%s", out)
	}
	spec = writeSpec(t, dir, `
target: {records: "nothing/*.jsonl"}
objectives: {error_rate: 0%}
`)
	ok, _, out = runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
	if ok || !strings.Contains(out, "no records file matches") {
		t.Errorf("a glob that matches nothing should fail the spec:\n%s", out)
	}
}

func TestParseSpecRecords(t *testing.T) {
	s, err := slospec.ParseSpec([]byte("target: {records: \"a/**/records*.jsonl\"}\nload: {concurrency: [8]}\nobjectives: {ttft: {p99: 1s}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Target.Records != "a/**/records*.jsonl" || !slices.Equal(s.Load.Concurrency, []int{8}) {
		t.Errorf("spec %+v", s)
	}
	// p99 from the default 75 requests would be an error for a live
	// target; the merged sample's size is checked when it is judged.
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"load is not run", "target: {records: a.jsonl}\nload: {requests: 300, concurrency: [8]}\nobjectives: {error_rate: 1%}\n",
			"slospec: line 2: load.requests: the load is not run with a records target (the records were measured already): only load.concurrency applies"},
		{"seed", "target: {records: a.jsonl, seed: 3}\nobjectives: {error_rate: 1%}\n",
			"slospec: line 1: target.seed: a seed applies to fake targets (preset, profile), not to records"},
		{"two kinds", "target: {records: a.jsonl, preset: llama-4-maverick}\nobjectives: {error_rate: 1%}\n",
			"conflicting: records and preset (a target is one of preset, profile, endpoint or records)"},
		{"bad glob", "target: {records: \"a/[\"}\nobjectives: {error_rate: 1%}\n",
			`slospec: line 1: target.records: "a/[" is not a glob`},
		{"chains", "target: {records: a.jsonl}\nobjectives: {error_rate: 1%}\nchains: {error_rate: 5%}\n",
			"slospec: line 3: chains: chains need a live target (preset, profile or endpoint) under chains.target: records hold each call, not the measured chain totals"},
		{"chains records", "target: {preset: llama-4-maverick}\nchains: {error_rate: 5%, target: {records: a.jsonl}}\n",
			"chains need a live target"},
	} {
		if _, err := slospec.ParseSpec([]byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
	}
}

// LoadSpec makes a relative glob relative to the spec's directory.
func TestLoadSpecRecordsRelative(t *testing.T) {
	dir := t.TempDir()
	s, err := slospec.LoadSpec(writeSpec(t, dir, "target: {records: \"shards/**/records.jsonl\"}\nobjectives: {error_rate: 1%}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "shards/**/records.jsonl"); s.Target.Records != want {
		t.Errorf("records %q, want %q", s.Target.Records, want)
	}
}
