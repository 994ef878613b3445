package agent_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// The budget of TestBudgetsFanOutIsExact, run through the Runner against
// the fake: ten parallel calls whose TTFT is log-normal (sigma 0.5) with
// the plan's per-copy budget at the plan's per-copy q. The task meets
// its 2 s target in 95% of tasks, within sampling error (4 standard
// errors): 2,000 tasks (20,000 calls), or 300 under -short.
func TestBudgetsOnTheFake(t *testing.T) {
	g := agent.Graph{Steps: []agent.Step{{Name: "search", FanOut: agent.FanOut{N: 10}}}}
	target := agent.Target{Budget: 2 * time.Second, TailTasks: 0.05}
	plan, err := target.Budgets(g)
	if err != nil {
		t.Fatal(err)
	}
	s := plan.Steps[0]
	const sigma = 0.5
	z := func(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }
	median := time.Duration(float64(s.Budget) * math.Exp(-sigma*z(s.Q)))
	p99 := time.Duration(float64(median) * math.Exp(sigma*z(0.99)))
	tasks := 2000
	if testing.Short() {
		tasks = 300
	}
	synctest.Test(t, func(t *testing.T) {
		prof := fakeprovider.Profile{TTFT: fakeprovider.LogNormal(median, p99), ITL: fakeprovider.Fixed(time.Duration(0)),
			OutputTokens: fakeprovider.Fixed(1), SlotsPerReplica: 1000, Seed: 11}
		prof.PrefixCache.Disabled = true
		f := fakeprovider.New(prof)
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
		res, err := agent.Runner{Graph: g, Tasks: tasks, Concurrency: 50}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		met := 0
		for _, task := range res.Tasks {
			if task.OK() && task.Total <= target.Budget {
				met++
			}
		}
		rate, se := float64(met)/float64(tasks), math.Sqrt(0.95*0.05/float64(tasks))
		if math.Abs(rate-0.95) > 4*se {
			t.Errorf("%d of %d tasks (%.4f) met the 2 s target; want 0.95 ± %.4f", met, tasks, rate, 4*se)
		}
		t.Logf("runner against the fake: %d of %d tasks (%.4f) within 2 s (target 95%%); per call within %v at q=%.5f", met, tasks, rate, s.Budget, s.Q)
	})
}
