package slospec

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

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// writeTasks writes every copy with its task, stage, branch and the
// critical path to tasks.json, answers left out, and leaves the result
// it was given as it was.
func TestWriteTasks(t *testing.T) {
	rec := &latencytest.Record{ID: "task00-plan", Total: time.Second, Content: "the secret plan"}
	res := &agent.Result{Tasks: []agent.TaskRun{{ID: "task00", Total: time.Second, Critical: []int{0},
		Steps: []agent.StepRun{{ID: "task00-plan", Path: "plan", Step: "plan", Kind: agent.KindModel, Stage: 0, End: time.Second, Record: rec}}}}}
	where := writeTasks(t, res)
	path := filepath.Join(t.ArtifactDir(), "tasks.json")
	if !strings.HasPrefix(where, path) {
		t.Errorf("raw records %q, want %s", where, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Tasks []agent.TaskRun }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Tasks) != 1 || got.Tasks[0].Steps[0].Record.Total != time.Second || got.Tasks[0].Critical[0] != 0 || strings.Contains(string(b), "secret") {
		t.Errorf("tasks.json: %s", b)
	}
	if rec.Content != "the secret plan" {
		t.Error("writeTasks changed the result's record")
	}
}

// judgeSpec is an agent spec: 40 tasks of a plan, three searches at
// once and an answer, judged on the task total's p90 and, on the tasks'
// calls, TTFT's p50.
const judgeSpec = `target: {preset: mistral-3-14b}
agent:
  tasks: 40
  concurrency: 2
  steps:
    - {name: plan}
    - {name: search, after: [plan], fan_out: 3}
    - {name: answer, after: [search]}
  task: {budget: %s, tail_tasks: 10%%}
objectives:
  ttft: {p50: 5s}
`

// Judge reads back the tasks.json a spec's run wrote and judges it as
// the run did: the same report (its title and raw records aside) and
// verdict on the task totals, pass and fail, and the spec's call
// objectives on the tasks' calls.
func TestJudgeTasksFile(t *testing.T) {
	var res *agent.Result
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(fakeprovider.Profile{TTFT: fakeprovider.LogNormal(time.Second, 4*time.Second), ITL: fakeprovider.Fixed(10 * time.Millisecond),
			OutputTokens: fakeprovider.Fixed(4), SlotsPerReplica: 3, Seed: 11})
		defer f.Close()
		s, err := ParseSpec(fmt.Appendf(nil, judgeSpec, "30s"))
		if err != nil {
			t.Fatal(err)
		}
		r := s.Agent.Runner
		r.Queueing = f.QueueTime
		if res, err = r.Run(context.Background(), latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))); err != nil {
			t.Fatal(err)
		}
	})
	path := filepath.Join(t.ArtifactDir(), "tasks.json")
	writeTasks(t, res)
	for _, tc := range []struct {
		budget string
		want   sloassert.Verdict
	}{{"30s", sloassert.Pass}, {"1s", sloassert.Fail}} {
		s, err := ParseSpec(fmt.Appendf(nil, judgeSpec, tc.budget))
		if err != nil {
			t.Fatal(err)
		}
		levels, err := Judge(s, "", path)
		if err != nil {
			t.Fatal(err)
		}
		if len(levels) != 2 || levels[0].Name != "agent" || levels[1].Name != "calls" {
			t.Fatalf("budget %s: %d levels", tc.budget, len(levels))
		}
		live := res
		live.Graph = s.Agent.Runner.Graph
		want := agent.Evaluate(live, s.Agent.Objectives[0].ChainObjective())
		want.Title, want.RawRecords = levels[0].Report.Title, levels[0].Report.RawRecords
		if got := levels[0].Report.String(); got != want.String() {
			t.Errorf("budget %s: judged from tasks.json:\n%s\nlive:\n%s", tc.budget, got, want.String())
		}
		if got := levels[0].Verdict(); got != tc.want {
			t.Errorf("budget %s: verdict %v, want %v:\n%s", tc.budget, got, tc.want, levels[0].Report)
		}
		if calls := levels[1]; calls.Verdict() != sloassert.Pass || calls.Result.Len() != 40*5 {
			t.Errorf("calls: verdict %v on %d calls, want PASS on 200:\n%s", calls.Verdict(), calls.Result.Len(), calls.Report)
		}
	}
	s, _ := ParseSpec(fmt.Appendf(nil, judgeSpec, "30s"))
	if _, err := Judge(s, "", path, path); err == nil || !strings.Contains(err.Error(), "one tasks file") {
		t.Errorf("two files: %v", err)
	}
	if _, err := Judge(s, "k6", path); err == nil || !strings.Contains(err.Error(), "not k6 records") {
		t.Errorf("k6: %v", err)
	}
}
