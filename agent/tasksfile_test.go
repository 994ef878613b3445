package agent_test

import (
	"bytes"
	"context"
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

// roundTripGraph has every kind of step: a plan, three searches of which
// the first two are needed, a tool, a sub-agent of two calls, an answer.
var roundTripGraph = agent.Graph{Steps: []agent.Step{
	{Name: "plan"},
	{Name: "search", After: []string{"plan"}, FanOut: agent.FanOut{N: 3, First: 2}},
	{Name: "lookup", After: []string{"plan"}, Tool: &agent.Tool{Latency: fakeprovider.LogNormal(200*time.Millisecond, 2*time.Second)}},
	{Name: "research", After: []string{"plan"}, Agent: &agent.Graph{Steps: []agent.Step{{Name: "read"}, {Name: "note", After: []string{"read"}}}}},
	{Name: "answer", After: []string{"search", "lookup", "research"}},
}}

// A run written with WriteTasks and read back with ReadTasks is the run:
// the file it writes again is the same byte for byte, and judging it
// gives the same verdicts and the same report (distributions, slowest
// tasks, critical paths, prediction) as judging the live result; the
// answers are not in the file.
func TestTasksFileRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fakeprovider.Profile{TTFT: fakeprovider.LogNormal(300*time.Millisecond, 3*time.Second), ITL: fakeprovider.Fixed(10 * time.Millisecond),
			OutputTokens: fakeprovider.Fixed(5), SlotsPerReplica: 4, Seed: 3}
		f := fakeprovider.New(prof)
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
		live, err := agent.Runner{Graph: roundTripGraph, Tasks: 60, Concurrency: 3, Seed: 5, Queueing: f.QueueTime}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		var written bytes.Buffer
		if err := agent.WriteTasks(&written, live); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "tasks.json")
		if err := os.WriteFile(path, written.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if answer := live.Tasks[0].Steps[0].Record.Content; answer == "" || bytes.Contains(written.Bytes(), []byte(answer)) {
			t.Errorf("the file holds the answer %q (or there was none)", answer)
		}
		read, err := agent.ReadTasks(path)
		if err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := agent.WriteTasks(&again, read); err != nil {
			t.Fatal(err)
		}
		if again.String() != written.String() {
			t.Error("the tasks read back write a different file")
		}
		read.Graph = roundTripGraph
		for _, budget := range []time.Duration{2 * time.Second, 10 * time.Second, time.Minute} {
			objs := []sloassert.Objective{
				agent.Target{Budget: budget, TailTasks: 0.05}.Objective(),
				sloassert.MaxChainErrorRate(0.05),
			}
			want, got := agent.Evaluate(live, objs...), agent.Evaluate(read, objs...)
			if got.String() != want.String() {
				t.Errorf("budget %v: the report read back differs:\n%s\nlive:\n%s", budget, got, want)
			}
			for i := range want.Outcomes {
				if got.Outcomes[i].Verdict != want.Outcomes[i].Verdict {
					t.Errorf("budget %v: %s: verdict %v read back, %v live", budget, want.Outcomes[i].Objective, got.Outcomes[i].Verdict, want.Outcomes[i].Verdict)
				}
			}
			t.Logf("budget %v: %v", budget, want.OK())
		}
		if rep := agent.Evaluate(read, agent.Target{Budget: time.Minute, TailTasks: 0.05}.Objective()); !rep.OK() ||
			!strings.Contains(rep.String(), "a prediction, not a measurement") {
			t.Errorf("read back with its graph: ok %v, no prediction:\n%s", rep.OK(), rep)
		}
	})
}

// A tasks file with one done task: plan (0-1 s), then search (1-3 s);
// total 3 s.
const goodTasks = `{"tasks": [{"id": "task00", "index": 0, "total_ns": 3000000000, "critical": [0, 1], "steps": [
 {"id": "task00-plan", "path": "plan", "step": "plan", "kind": "model", "start_ns": 0, "end_ns": 1000000000},
 {"id": "task00-search", "path": "search", "step": "search", "kind": "model", "stage": 1, "start_ns": 1000000000, "end_ns": 3000000000}]}]}`

// ReadTasks refuses what is not a tasks file, or a run no runner could
// have written, naming the file and what is wrong.
func TestReadTasksRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text, want string
	}{
		{"not JSON", "task00 3s\n", "not a tasks file"},
		{"a NaN total is not JSON", strings.Replace(goodTasks, "3000000000,", "NaN,", 1), "not a tasks file"},
		{"a fractional total", strings.Replace(goodTasks, `"total_ns": 3000000000`, `"total_ns": 2.5`, 1), "not a tasks file"},
		{"call records, not tasks", `{"id": "c1-r0-00000", "total_ns": 1000}`, "no tasks"},
		{"no tasks", `{"tasks": []}`, "no tasks: a run with no task never passes"},
		{"a negative total", strings.Replace(goodTasks, `"total_ns": 3000000000`, `"total_ns": -1`, 1), "task task00: a negative time (total -1ns"},
		{"a total shorter than its critical path", strings.Replace(goodTasks, `"total_ns": 3000000000`, `"total_ns": 2000000000`, 1),
			"task task00: total 2s is shorter than its critical path (task00-plan -> task00-search), which ends at 3s"},
		{"steps out of order", strings.Replace(goodTasks, `"critical": [0, 1]`, `"critical": [1, 0]`, 1),
			"task task00: critical path out of order: task00-plan starts at 0s, before task00-search ends at 3s"},
		{"copies out of order", strings.Replace(goodTasks, `"start_ns": 0, "end_ns": 1000000000`, `"start_ns": 1500000000, "end_ns": 1600000000`, 1),
			"task task00: steps out of order: step 1 (task00-search) starts at 1s, before step 0 (task00-plan) at 1.5s"},
		{"a copy ending before it starts", strings.Replace(goodTasks, `"end_ns": 1000000000`, `"end_ns": -5`, 1), "step 0 (task00-plan): starts at 0s, ends at -5ns"},
		{"a critical path past the steps", strings.Replace(goodTasks, `"critical": [0, 1]`, `"critical": [0, 2]`, 1), "critical path: step 2 of 2"},
		{"done without a critical path", strings.Replace(goodTasks, `"critical": [0, 1], `, "", 1), "task task00: done but has no critical path"},
		{"an unknown kind", strings.Replace(goodTasks, `"kind": "model"`, `"kind": "robot"`, 1), `kind "robot"`},
		{"fewer planned than tasks", strings.Replace(goodTasks, `{"tasks"`, `{"planned": -1, "tasks"`, 1), "planned -1 < 0"},
		{"two tasks of one id", strings.Replace(goodTasks, "}]}]}", "}]}, "+goodTasks[len(`{"tasks": [`):len(goodTasks)-2]+"]}", 1), "task task00: twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := agent.ReadTasks(path)
			if err == nil || !strings.Contains(err.Error(), "agent: tasks "+path+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadTasks: %v, %v; want an error naming %s and %q", res, err, path, tc.want)
			}
		})
	}
	path := filepath.Join(dir, "good.json")
	if err := os.WriteFile(path, []byte(goodTasks), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := agent.ReadTasks(path)
	if err != nil || len(res.Tasks) != 1 || res.Planned != 1 || res.Tasks[0].Total != 3*time.Second {
		t.Fatalf("the good file: %+v, %v", res, err)
	}
	if _, err := agent.ReadTasks(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing file: %v", err)
	}
}

// FuzzReadTasks: ReadTasks never panics, and what it accepts can be
// judged (Evaluate never panics on it) and holds no negative total.
func FuzzReadTasks(f *testing.F) {
	f.Add([]byte(goodTasks))
	f.Add([]byte(strings.Replace(goodTasks, `"critical": [0, 1]`, `"critical": [1]`, 1)))
	f.Add([]byte(`{"tasks": [{"id": "t", "err": "http_5xx", "steps": []}]}`))
	f.Add([]byte(`{"tasks": null}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "tasks.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := agent.ReadTasks(path)
		if err != nil {
			return
		}
		for _, d := range res.Totals() {
			if d < 0 && d != latencytest.Failed {
				t.Fatalf("accepted a negative total %v", d)
			}
		}
		_ = agent.Evaluate(res, agent.Target{Budget: time.Second, TailTasks: 0.05}.Objective()).String()
	})
}
