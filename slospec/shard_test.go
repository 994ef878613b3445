package slospec_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/slospec"
)

// A spec run under TAILGUARD_SHARD measures one shard: it fails, saying
// to merge the shards first, though its objectives hold on the shard.
func TestRunFileUnderShardFails(t *testing.T) {
	dir := t.TempDir()
	profile, err := filepath.Abs("testdata/specs/fixed.profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec := writeSpec(t, dir, fmt.Sprintf(`
target: {profile: %q}
load: {requests: 40, concurrency: [2], max_tokens: 16}
objectives:
  ttft: {p50: 200ms}
`, profile))
	if ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) }); !ok {
		t.Fatalf("the spec should pass on the whole run:\n%s", out)
	}
	t.Setenv(latencytest.EnvShard, "0/2")
	ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
	if ok || !strings.Contains(out, "FAIL: shard 0 of 2: merge the shards, then judge") {
		t.Errorf("a shard's spec run should fail:\n%s", out)
	}
}

// writeShardArtifacts runs n shards of a batch at concurrency 3 against
// the fixed fake in virtual time and writes each one's records and
// summary (as Measure does) under dir/shard-i.
func writeShardArtifacts(t *testing.T, dir string, n int) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(fakeprovider.Profile{TTFT: fakeprovider.Fixed(200 * time.Millisecond),
			ITL: fakeprovider.Fixed(10 * time.Millisecond), OutputTokens: fakeprovider.Fixed(16), SlotsPerReplica: 64})
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r, err := latencytest.Batch{Requests: 62, Warmup: 4, Concurrency: 3, Load: latencytest.Load{MaxTokens: 16, Shard: latencytest.Shard{Index: i, Count: n}}}.Run(context.Background(), p)
				if err != nil {
					t.Error(err)
					return
				}
				d := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
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
				s := r.Summarize()
				s.Label = "c3"
				b, err := json.Marshal(s)
				if err == nil {
					err = os.WriteFile(filepath.Join(d, "summary.json"), b, 0o644)
				}
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	})
}

// A records target whose set is not the whole run (a shard's directory
// missing, a file cut) fails, naming the shard and what is missing.
func TestRunFileRecordsIncomplete(t *testing.T) {
	dir := t.TempDir()
	writeShardArtifacts(t, dir, 3)
	spec := writeSpec(t, dir, `
target: {records: "shard-*/records.jsonl"}
objectives:
  ttft: {p50: 200ms}
  error_rate: 0%
`)
	if ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) }); !ok {
		t.Fatalf("the whole set should pass:\n%s", out)
	}
	cut := filepath.Join(dir, "shard-1", "records.jsonl")
	b, err := os.ReadFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)-4], "")), 0o644); err != nil { // the end line and 2 records
		t.Fatal(err)
	}
	ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
	if ok || !strings.Contains(out, "the records are partial (shard 1/3 of c3 ("+cut+"): the records file holds 20 records; its summary says 22 were written") ||
		!strings.Contains(out, "partial run: ") {
		t.Errorf("a cut shard should fail the spec:\n%s", out)
	}
	if err := os.RemoveAll(filepath.Join(dir, "shard-1")); err != nil {
		t.Fatal(err)
	}
	ok, _, out = runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
	if ok || !strings.Contains(out, "shard 1/3 of c3 missing: no records file of it among those merged (2 of 3 shards read)") {
		t.Errorf("a missing shard should fail the spec:\n%s", out)
	}
}
