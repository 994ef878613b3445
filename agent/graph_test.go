package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// fake is an in-memory fake whose every call takes ttft (one token, so
// the call's total is its TTFT exactly), with script entries forcing
// the TTFT of given trace IDs.
func fake(t *testing.T, ttft time.Duration, forced map[string]time.Duration) (*fakeprovider.Fake, latencytest.Provider) {
	t.Helper()
	prof := fakeprovider.Profile{TTFT: fakeprovider.Fixed(ttft), ITL: fakeprovider.Fixed(time.Duration(0)),
		OutputTokens: fakeprovider.Fixed(1), SlotsPerReplica: 64}
	prof.PrefixCache.Disabled = true // every call its TTFT, cached prefix or not
	for id, d := range forced {
		prof.Script = append(prof.Script, fakeprovider.ScriptEntry{ID: id, TTFT: d})
	}
	f := fakeprovider.New(prof)
	t.Cleanup(f.Close)
	return f, latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
}

// fanOut is a plan, then three searches at once.
var fanOut = agent.Graph{Steps: []agent.Step{
	{Name: "plan"},
	{Name: "search", After: []string{"plan"}, FanOut: agent.FanOut{N: 3}},
}}

// A 1 s plan, then a 3-way fan-out of 1 s, 2 s and 3 s branches: the task
// takes exactly 1 s + 3 s = 4 s, and its critical path is the plan and
// the 3 s branch.
func TestFanOutCriticalPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, p := fake(t, time.Second, map[string]time.Duration{
			"task00-search-b00": 1 * time.Second, "task00-search-b01": 2 * time.Second, "task00-search-b02": 3 * time.Second,
		})
		res, err := agent.Runner{Graph: fanOut, Tasks: 1, Queueing: f.QueueTime}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		task := res.Tasks[0]
		if !task.OK() || task.Total != 4*time.Second {
			t.Fatalf("task: err %q, total %v, want 4s", task.Err, task.Total)
		}
		var path []string
		for _, s := range task.CriticalPath() {
			path = append(path, s.ID+"@"+s.Time().String())
		}
		if got, want := strings.Join(path, " "), "task00-plan@1s task00-search-b02@3s"; got != want {
			t.Errorf("critical path %s, want %s", got, want)
		}
		if len(task.Steps) != 4 {
			t.Fatalf("%d step copies, want 4", len(task.Steps))
		}
		for _, s := range task.Steps {
			want := map[string]struct {
				stage, branch int
				start, end    time.Duration
			}{
				"task00-plan":       {0, 0, 0, time.Second},
				"task00-search-b00": {1, 0, time.Second, 2 * time.Second},
				"task00-search-b01": {1, 1, time.Second, 3 * time.Second},
				"task00-search-b02": {1, 2, time.Second, 4 * time.Second},
			}[s.ID]
			if s.Stage != want.stage || s.Branch != want.branch || s.Start != want.start || s.End != want.end || s.Record == nil || !s.Record.OK() {
				t.Errorf("%s: stage %d branch %d from %v to %v, want %+v", s.ID, s.Stage, s.Branch, s.Start, s.End, want)
			}
		}
	})
}

// Done after the first 2 of 3 copies: the task ends with the 2 s branch
// (1 s + 2 s), the 3 s copy is abandoned (canceled, not a failure), and
// the critical path names the 2 s branch.
func TestFanOutFirstK(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, time.Second, map[string]time.Duration{
			"task00-search-b00": 1 * time.Second, "task00-search-b01": 2 * time.Second, "task00-search-b02": 3 * time.Second,
		})
		g := agent.Graph{Steps: []agent.Step{{Name: "plan"}, {Name: "search", After: []string{"plan"}, FanOut: agent.FanOut{N: 3, First: 2}}}}
		res, err := agent.Runner{Graph: g, Tasks: 1}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		task := res.Tasks[0]
		crit := task.CriticalPath()
		if !task.OK() || task.Total != 3*time.Second || len(crit) != 2 || crit[1].ID != "task00-search-b01" {
			t.Fatalf("task: err %q, total %v, critical %v; want 3s through search-b01", task.Err, task.Total, crit)
		}
		abandoned := 0
		for _, s := range task.Steps {
			if s.Abandoned {
				abandoned++
				if s.ID != "task00-search-b02" {
					t.Errorf("%s abandoned", s.ID)
				}
			}
		}
		if abandoned != 1 || len(res.Calls().Records) != 3 {
			t.Errorf("%d abandoned, %d calls kept; want 1 and 3", abandoned, len(res.Calls().Records))
		}
	})
}

// A sub-agent's steps run inside each of its copies; the task's critical
// path runs through the slowest copy's own critical path, and a tool
// step's fixed wait counts in it.
func TestSubAgentCriticalPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, time.Second, map[string]time.Duration{"task00-research-b01-read": 5 * time.Second})
		research := agent.Graph{Steps: []agent.Step{
			{Name: "query"},
			{Name: "fetch", After: []string{"query"}, Tool: &agent.Tool{Latency: fakeprovider.Fixed(500 * time.Millisecond)}},
			{Name: "read", After: []string{"fetch"}},
		}}
		g := agent.Graph{Steps: []agent.Step{
			{Name: "plan"},
			{Name: "research", After: []string{"plan"}, Agent: &research, FanOut: agent.FanOut{N: 2}},
			{Name: "answer", After: []string{"research"}},
		}}
		res, err := agent.Runner{Graph: g, Tasks: 2, Concurrency: 2}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		// task00: plan 1 s, research (query 1 s + fetch 0.5 s + read 5 s on
		// branch 1), answer 1 s: 8.5 s. task01: every read 1 s: 4.5 s.
		for i, want := range []time.Duration{8500 * time.Millisecond, 4500 * time.Millisecond} {
			if got := res.Tasks[i].Total; got != want {
				t.Errorf("task %d: total %v, want %v", i, got, want)
			}
		}
		var ids []string
		for _, s := range res.Tasks[0].CriticalPath() {
			ids = append(ids, s.ID)
		}
		want := "task00-plan task00-research-b01-query task00-research-b01-fetch task00-research-b01-read task00-answer"
		if got := strings.Join(ids, " "); got != want {
			t.Errorf("critical path\n got %s\nwant %s", got, want)
		}
		for _, s := range res.Tasks[0].Steps {
			if s.ID == "task00-research-b01-read" && (s.Path != "research/read" || s.Stage != 2 || s.Kind != agent.KindModel) {
				t.Errorf("%s: path %q stage %d kind %s", s.ID, s.Path, s.Stage, s.Kind)
			}
		}
	})
}

// A sub-agent done at its first copy: the slower copy and every step
// inside it are abandoned (not failures, not in the calls), and the task
// ends with the faster copy.
func TestSubAgentFirstAbandonsInside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, time.Second, map[string]time.Duration{"task00-research-b01-read": 5 * time.Second})
		research := agent.Graph{Steps: []agent.Step{{Name: "read"}, {Name: "note", After: []string{"read"}}}}
		g := agent.Graph{Steps: []agent.Step{{Name: "research", Agent: &research, FanOut: agent.FanOut{N: 2, First: 1}}}}
		res, err := agent.Runner{Graph: g, Tasks: 1}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		task := res.Tasks[0]
		if !task.OK() || task.Total != 2*time.Second {
			t.Fatalf("task: %q %v, want ok in 2s", task.Err, task.Total)
		}
		var abandoned []string
		for _, s := range task.Steps {
			if s.Abandoned {
				abandoned = append(abandoned, s.ID)
			}
		}
		if got := strings.Join(abandoned, " "); got != "task00-research-b01 task00-research-b01-read" {
			t.Errorf("abandoned: %s", got)
		}
		if calls := res.Calls(); len(calls.Records) != 2 || calls.ErrorRate() != 0 {
			t.Errorf("%d calls kept, error rate %v; want the 2 of the first copy, none failed", len(calls.Records), calls.ErrorRate())
		}
	})
}

// A linear chain is the one-branch graph: ten steps each after the one
// before measure as latencytest.Chain's ten calls do (1 s each with a
// 250 ms tool step between: 12.25 s), and the critical path is every
// step in order.
func TestLinearGraphIsAChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, time.Second, nil)
		var g agent.Graph
		prev := ""
		for i := range 10 {
			name := fmt.Sprintf("call%02d", i)
			s := agent.Step{Name: name}
			if prev != "" {
				tool := "tool" + prev[4:]
				g.Steps = append(g.Steps, agent.Step{Name: tool, After: []string{prev}, Tool: &agent.Tool{Latency: fakeprovider.Fixed(250 * time.Millisecond)}})
				s.After = []string{tool}
			}
			g.Steps = append(g.Steps, s)
			prev = name
		}
		res, err := agent.Runner{Graph: g, Tasks: 3}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		wait := func(ctx context.Context, chain, call int) error { time.Sleep(250 * time.Millisecond); return ctx.Err() }
		cr, err := latencytest.Chain{Chains: 3, Length: 10, Tool: wait}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			task, chain := res.Tasks[i], cr.Chains[i]
			if task.Total != 12250*time.Millisecond || chain.Total != task.Total || len(task.Critical) != 19 {
				t.Errorf("task %d: %v (critical path of %d), chain %v; want 12.25s both, 19 steps", i, task.Total, len(task.Critical), chain.Total)
			}
		}
	})
}
