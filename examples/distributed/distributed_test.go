// Package distributed runs one load from several machines (shards) and
// judges it once, on every raw record: a GitHub Actions matrix or a
// Kubernetes Indexed Job runs TestShardWorker with TAILGUARD_SHARD=i/n,
// and one job after them runs TestJudge on the merged records.
package distributed_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/slospec"
)

// load is the whole run every shard takes its share of: 10 warm-up and
// 120 measured requests at concurrency 4 (so 1, 2 or 4 shards: each keeps
// 4/n in flight).
var load = latencytest.Batch{
	Requests:    120,
	Concurrency: 4,
	Load:        latencytest.Load{MaxTokens: 16, FirstTokenTimeout: 30 * time.Second, TotalTimeout: 60 * time.Second},
}

// TestShardWorker is one shard: it sends its share of the load to the
// endpoint in OPENAI_BASE_URL (the key in OPENAI_API_KEY, the model in
// OPENAI_MODEL), starting at TAILGUARD_START_AT, and writes its records
// with go test -artifacts. It judges nothing: a shard's share is too small
// to judge on its own, and TestJudge judges them all at once. It skips
// unless TAILGUARD_SHARD and the endpoint are set.
func TestShardWorker(t *testing.T) {
	if os.Getenv(latencytest.EnvShard) == "" {
		t.Skip("not a shard: set TAILGUARD_SHARD=i/n (and the endpoint) to run one")
	}
	p, err := latencytest.OpenAIFromEnv()
	if err != nil {
		t.Skip(err)
	}
	load.Measure(t, p)
}

// TestJudge judges the shards' records, merged, with judge.yaml (target
// records: "shards/**/records*.jsonl"). The judge job downloads the
// shards' artifacts into shards/ first; without them it skips.
func TestJudge(t *testing.T) {
	if _, err := os.Stat("shards"); err != nil {
		t.Skip("no shards/ here: download the shards' artifacts into examples/distributed/shards first")
	}
	slospec.RunFile(t, "judge.yaml")
}

// TestTwoShardsOverLoopback runs the recipe on this machine: one fake
// server on loopback, two shards in two processes (this test binary run
// again as TestShardWorker, with TAILGUARD_SHARD=0/2 and 1/2 and one
// TAILGUARD_START_AT), then the merge and the judge, as the workflow does.
//
// Over real sockets a measured time jitters by microseconds, so the
// merged figures cannot equal a single run's to the nanosecond here (that
// is checked in virtual time, in latencytest's
// TestMergeOfShardsEqualsTheWholeRun). What must hold exactly here: the
// shards together sent the whole run's trace IDs (warm-up marks
// included), each once; the fake served each once; no request came in
// under the fake's fixed TTFT; and the shards' windows overlap.
func TestTwoShardsOverLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two test processes against a loopback server (a few seconds); not with -short")
	}
	prof, err := fakeprovider.LoadProfile("fake.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := fakeprovider.New(prof)
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()

	dir := t.TempDir()
	start := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano) // time for both processes to start
	cmds := make([]*exec.Cmd, 2)
	outs := make([]*bytes.Buffer, 2)
	for i := range cmds {
		out := filepath.Join(dir, "shards", fmt.Sprintf("shard-%d", i))
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestShardWorker$", "-test.v", "-test.count=1", "-test.artifacts", "-test.outputdir="+out)
		cmd.Env = append(os.Environ(),
			latencytest.EnvShard+fmt.Sprintf("=%d/2", i),
			latencytest.EnvStartAt+"="+start,
			latencytest.EnvLocation+fmt.Sprintf("=loopback, shard %d", i),
			latencytest.EnvBaseURL+"="+srv.URL+"/v1",
			latencytest.EnvAPIKey+"=",
			latencytest.EnvModel+"="+prof.Model,
		)
		outs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %d/2: %v\n%s", i, err, outs[i])
		}
		if !strings.Contains(outs[i].String(), "--- PASS: TestShardWorker") {
			t.Fatalf("shard %d/2 did not run:\n%s", i, outs[i])
		}
	}

	merged, err := records.Merge(filepath.Join(dir, "shards", "**", "records*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var want, got, served []string
	for i := range 130 { // 10 warm-up + 120 measured: c4-0000 … c4-0129
		want = append(want, fmt.Sprintf("c4-%04d warm-up %v", i, i < 10))
	}
	for _, rec := range merged.Records {
		got = append(got, fmt.Sprintf("%s warm-up %v", rec.ID, rec.Warmup))
		if !rec.OK() || rec.TTFT < 20*time.Millisecond || rec.Total < 27*time.Millisecond {
			t.Errorf("%s: err %q, ttft %v, total %v: the fake takes 20ms to the first token, 7ms more to the last", rec.ID, rec.Err, rec.TTFT, rec.Total)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("merged trace IDs:\n%v\nwant the whole run's:\n%v", got, want)
	}
	for _, s := range f.Served() {
		served = append(served, s.ID)
	}
	slices.Sort(served)
	if once := slices.Compact(slices.Clone(served)); len(served) != 130 || len(once) != 130 || served[0] != "c4-0000" || served[129] != "c4-0129" {
		t.Errorf("the fake served %d requests (%d trace IDs), want c4-0000 … c4-0129 once each", len(served), len(once))
	}
	if c := merged.Counts(); c != (latencytest.Counts{Planned: 130, Sent: 130, Kept: 120, Discarded: 10}) {
		t.Errorf("counts %+v", c)
	}
	d := merged.Disclosure
	if len(d.Sources) != 2 || d.Sources[0].Counts.Sent != 65 || d.Sources[1].Counts.Sent != 65 || d.Sources[0].Location != "loopback, shard 0" {
		t.Errorf("sources %+v", d.Sources)
	}
	if len(d.Warnings) > 0 {
		t.Errorf("TAILGUARD_START_AT aligned the shards, yet: %v", d.Warnings)
	}

	// The judge job: judge.yaml next to the downloaded shards.
	spec, err := os.ReadFile("judge.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "judge.yaml"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	slospec.RunFile(t, filepath.Join(dir, "judge.yaml"))
}
