package sloassert_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
)

// sharded is streamed(n) measured as shard i of n.
func sharded(n int, sh latencytest.Shard) *latencytest.Result {
	r := streamed(n)
	r.Shard = sh
	return r
}

// A shard's result fails every objective ("shard i of n: merge the
// shards, then judge") unless the objective allows judging a shard; the
// report's first line names the shard either way.
func TestShardFailsUnlessAllowed(t *testing.T) {
	sh := latencytest.Shard{Index: 1, Count: 4}
	ttft := sloassert.Q(sloassert.TTFT, 0.99, time.Hour)
	if rep := sloassert.Evaluate(streamed(300), ttft); !rep.OK() || rep.Shard != "" || strings.Contains(rep.String(), "shard") {
		t.Fatalf("the whole run should pass:\n%s", rep)
	}
	rep := sloassert.Evaluate(sharded(300, sh), ttft, sloassert.MaxErrorRate(0.01))
	if rep.OK() || rep.Shard != "shard 1 of 4" {
		t.Errorf("a shard passed:\n%s", rep)
	}
	for _, o := range rep.Outcomes {
		if o.OK || o.Verdict != sloassert.Fail || !strings.Contains(o.Note, "shard 1 of 4: merge the shards, then judge") {
			t.Errorf("%s: %+v", o.Objective, o)
		}
	}
	if first, _, _ := strings.Cut(rep.String(), "\n"); first != "result: FAIL: shard 1 of 4: merge the shards, then judge" {
		t.Errorf("first line %q", first)
	}
	if md := sloassert.Markdown(rep); !strings.HasPrefix(md, "## result: FAIL: shard 1 of 4: merge the shards, then judge\n") {
		t.Errorf("markdown:\n%.200s", md)
	}
	ft := &fakeT{}
	if sloassert.Check(ft, sharded(300, sh), ttft) || !strings.Contains(ft.text(), "shard 1 of 4: merge the shards, then judge") {
		t.Errorf("Check on a shard: %s", ft.text())
	}
	// Allowed per objective: that objective is judged, the others still fail.
	rep = sloassert.Evaluate(sharded(300, sh), ttft.With(sloassert.AllowShard()))
	if !rep.OK() || !strings.Contains(rep.Outcomes[0].Note, "shard 1 of 4 judged alone (AllowShard)") {
		t.Errorf("an allowed shard failed:\n%s", rep)
	}
	if first, _, _ := strings.Cut(rep.String(), "\n"); first != "result: PASS (shard 1 of 4 judged alone)" {
		t.Errorf("first line %q", first)
	}
	if rep := sloassert.Evaluate(sharded(300, sh), ttft.With(sloassert.AllowShard()), sloassert.MaxErrorRate(0.01)); rep.OK() || rep.Outcomes[1].OK {
		t.Errorf("an objective that does not allow a shard passed:\n%s", rep)
	}
	// Allowing a shard does not make a failing objective pass.
	if rep := sloassert.Evaluate(sharded(300, sh), sloassert.Q(sloassert.TTFT, 0.99, time.Millisecond, sloassert.AllowShard())); rep.OK() {
		t.Errorf("over budget passed:\n%s", rep)
	}
	// Chains alike.
	cr := &latencytest.ChainResult{
		Run: latencytest.Run{Planned: 1, Shard: sh},
		Chains: []latencytest.ChainRun{{ID: "chain-0001", Total: time.Second,
			Calls: []latencytest.Record{{ID: "chain-0001-00", TTFT: time.Millisecond, Total: time.Second, TokenEvents: 1}}}},
	}
	if rep := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, time.Hour, sloassert.AllowSmallSample())); rep.OK() || !strings.HasPrefix(rep.String(), "chains: FAIL: shard 1 of 4: merge the shards, then judge\n") {
		t.Errorf("chains of a shard:\n%s", rep)
	}
	if rep := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, time.Hour, sloassert.AllowSmallSample(), sloassert.AllowShard())); !rep.OK() {
		t.Errorf("chains of a shard, allowed:\n%s", rep)
	}
}

// Under TAILGUARD_SHARD, a batch measures one shard and Check fails it,
// though the same objective passes on the shard's own figures.
func TestCheckUnderShardEnvFails(t *testing.T) {
	t.Setenv(latencytest.EnvShard, "0/2")
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(fakeprovider.Profile{TTFT: fakeprovider.Fixed(200 * time.Millisecond),
			ITL: fakeprovider.Fixed(10 * time.Millisecond), OutputTokens: fakeprovider.Fixed(8), SlotsPerReplica: 64})
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
		load, err := latencytest.Load{}.FromEnv() // what Measure does
		if err != nil {
			t.Fatal(err)
		}
		r, err := latencytest.Batch{Requests: 40, Concurrency: 2, Load: load}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		ttft := sloassert.Q(sloassert.TTFT, 0.5, time.Second)
		ft := &fakeT{}
		if sloassert.Check(ft, r, ttft) || !strings.Contains(ft.text(), "result: FAIL: shard 0 of 2: merge the shards, then judge") {
			t.Errorf("Check of shard 0/2:\n%s", ft.text())
		}
		if rep := sloassert.Evaluate(r, ttft.With(sloassert.AllowShard())); !rep.OK() {
			t.Errorf("the shard's own figures should pass:\n%s", rep)
		}
	})
}

// vacuousInput is a row of TestNothingPassesVacuously's inputs.
type vacuousInput = struct {
	name string
	r    func() *latencytest.Result
	skip []string
}

// incompleteMerges merges sets of records files that are not a whole
// run (each otherwise a passing result: streamed(300)), keyed by what
// they lack; "whole" is the complete set, for contrast.
func incompleteMerges(t *testing.T) map[string]*latencytest.Result {
	t.Helper()
	root := t.TempDir()
	write := func(dir string, r *latencytest.Result, endLine, summary bool) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "records.jsonl")
		fh, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := latencytest.WriteRecords(fh, r.Records); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		if !endLine {
			b, _ := os.ReadFile(path)
			b = b[:strings.LastIndex(strings.TrimSuffix(string(b), "\n"), "\n")+1]
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if summary {
			s := r.Summarize()
			s.Label = "c1"
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// split is streamed(300) as 3 shards: request i to shard i mod 3.
	split := func() []*latencytest.Result {
		whole := streamed(300)
		out := make([]*latencytest.Result, 3)
		for i := range out {
			out[i] = &latencytest.Result{Run: latencytest.Run{Shard: latencytest.Shard{Index: i, Count: 3}}}
		}
		for i, rec := range whole.Records {
			out[i%3].Records = append(out[i%3].Records, rec)
			out[i%3].Planned++
		}
		return out
	}
	out := map[string]*latencytest.Result{}
	merge := func(name string) {
		m, err := records.Merge(filepath.Join(root, name, "**", "records.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = m
	}
	for i, r := range split() {
		write(filepath.Join(root, "whole", fmt.Sprint(i)), r, true, true)
	}
	merge("whole")
	for i, r := range split()[:2] {
		write(filepath.Join(root, "missing shard", fmt.Sprint(i)), r, true, true)
	}
	merge("missing shard")
	for i, r := range split() {
		write(filepath.Join(root, "cut file", fmt.Sprint(i)), r, i != 1, i != 1)
	}
	merge("cut file")
	for i, r := range split() {
		if i == 2 {
			r.Planned = 310
		}
		write(filepath.Join(root, "short of plan", fmt.Sprint(i)), r, true, true)
	}
	merge("short of plan")
	return out
}

// shardAndMergeInputs extends TestNothingPassesVacuously's inputs: a
// shard's result and merges of incomplete sets (a shard missing, a file
// cut, a summary planning more than was sent) pass no objective.
func shardAndMergeInputs(t *testing.T) []vacuousInput {
	ms := incompleteMerges(t)
	in := []vacuousInput{{"shard", func() *latencytest.Result { return sharded(300, latencytest.Shard{Index: 0, Count: 2}) }, nil}}
	for _, name := range []string{"missing shard", "cut file", "short of plan"} {
		in = append(in, vacuousInput{"merge, " + name, func() *latencytest.Result { return ms[name] }, nil})
	}
	return in
}

// The incomplete merges fail because they are incomplete: the whole set
// passes, and AllowPartial judges what the incomplete ones hold.
func TestIncompleteMergeFailsUnlessAllowPartial(t *testing.T) {
	ms := incompleteMerges(t)
	ttft := sloassert.Q(sloassert.TTFT, 0.99, time.Hour)
	if rep := sloassert.Evaluate(ms["whole"], ttft); !rep.OK() || ms["whole"].Partial {
		t.Fatalf("the whole set:\n%s", rep)
	}
	for name, want := range map[string]string{
		"missing shard": "shard 2/3 of c1 missing",
		"cut file":      "no end line and no summary.json",
		"short of plan": "100 sent of 310 planned",
	} {
		rep := sloassert.Evaluate(ms[name], ttft)
		if rep.OK() || !strings.Contains(rep.String(), want) {
			t.Errorf("%s:\n%s", name, rep)
		}
		if rep := sloassert.Evaluate(ms[name], ttft.With(sloassert.AllowPartial())); !rep.OK() {
			t.Errorf("%s, AllowPartial:\n%s", name, rep)
		}
	}
}

// A baseline comparison refuses a shard on either side unless
// AllowShard(), and a shard is never saved as a baseline.
func TestCompareRefusesAShard(t *testing.T) {
	sh := latencytest.Shard{Index: 0, Count: 2}
	whole, part := streamed(300), sharded(300, sh)
	if rep := (sloassert.Compare{}).Evaluate(whole, whole); rep.Problem != "" {
		t.Fatalf("whole against whole: %s", rep.Problem)
	}
	for _, tc := range []struct {
		name      string
		base, cur *latencytest.Result
		want      string
	}{
		{"current", whole, part, "the current run is shard 0 of 2: merge the shards"},
		{"baseline", part, whole, "the baseline is shard 0 of 2: merge the shards"},
	} {
		rep := (sloassert.Compare{}).Evaluate(tc.base, tc.cur)
		if rep.OK() || !strings.Contains(rep.Problem, tc.want) {
			t.Errorf("%s: OK %v, problem %q; want a failure saying %q", tc.name, rep.OK(), rep.Problem, tc.want)
		}
		if rep := (sloassert.Compare{}).Evaluate(tc.base, tc.cur, sloassert.AllowShard()); rep.Problem != "" {
			t.Errorf("%s with AllowShard: %s", tc.name, rep.Problem)
		}
	}
	err := sloassert.SaveBaseline(filepath.Join(t.TempDir(), "b.json"), part)
	if err == nil || !strings.Contains(err.Error(), "shard 0 of 2") {
		t.Errorf("SaveBaseline of a shard: %v", err)
	}
}
