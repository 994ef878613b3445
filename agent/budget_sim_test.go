package agent

import (
	"math"
	randv2 "math/rand/v2"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
)

// seedsFor is the seeds a budget simulation runs and the tasks each
// draws: 1,000 seeds of 1,000 tasks, or 100 of 300 under -short.
func seedsFor(t *testing.T) (seeds, tasks int) {
	if testing.Short() {
		return 100, 300
	}
	return 1000, 1000
}

// metRate simulates tasks of g over seeds, each model call lognormal
// (sigma 0.5) with its plan's budget at quantile q(step) (so a copy meets
// its budget with probability exactly q), each tool drawn from its
// latency; it returns the share of tasks within the target's budget.
func metRate(g Graph, p Plan, seeds, tasks int, q func(StepBudget) float64) float64 {
	const sigma = 0.5
	median := map[string]float64{}
	for _, s := range p.Steps {
		z := math.Sqrt2 * math.Erfinv(2*q(s)-1)
		median[s.Path] = float64(s.Budget) * math.Exp(-sigma*z)
	}
	met, n := 0, 0
	for seed := range seeds {
		m := &sim{rng: randv2.New(randv2.NewPCG(uint64(seed), 0x73696d)), counts: map[string]int{},
			leaf: func(rng *randv2.Rand, s *Step, path string) time.Duration {
				if s.Tool != nil {
					return s.Tool.Latency.Sample(rng)
				}
				return time.Duration(median[path] * math.Exp(sigma*rng.NormFloat64()))
			}}
		for range tasks {
			if m.task(&g) <= p.Target.Budget {
				met++
			}
			n++
		}
	}
	return float64(met) / float64(n)
}

// One step of 10 parallel calls, all needed: the task meets its budget
// exactly when all ten do, so calls held to the plan's per-copy q =
// 0.95^(1/10) = 0.99488 meet the task target at exactly 95% (within
// sampling error); held to 95% each, as if fan-out did not count, the
// task meets it 0.95^10 = 59.9% of the time.
func TestBudgetsFanOutIsExact(t *testing.T) {
	g := Graph{Steps: []Step{{Name: "search", FanOut: FanOut{N: 10}}}}
	target := Target{Budget: 2 * time.Second, TailTasks: 0.05}
	p, err := target.Budgets(g)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Steps[0]
	if s.Budget != 2*time.Second || math.Abs(s.Q-math.Pow(0.95, 0.1)) > 1e-12 || s.Copies != 10 || !s.Critical {
		t.Fatalf("plan %+v", s)
	}
	seeds, tasks := seedsFor(t)
	n := float64(seeds * tasks)
	se := math.Sqrt(0.95 * 0.05 / n)
	got := metRate(g, p, seeds, tasks, func(s StepBudget) float64 { return s.Q })
	if math.Abs(got-0.95) > 4*se {
		t.Errorf("per-copy budgets: %.4f of %d tasks met the target, want 0.95 ± %.4f (4 standard errors)", got, int(n), 4*se)
	}
	naive := metRate(g, p, seeds, tasks, func(StepBudget) float64 { return p.StepQ })
	if want := math.Pow(0.95, 10); math.Abs(naive-want) > 4*math.Sqrt(want*(1-want)/n) {
		t.Errorf("fan-out not counted: %.4f met, want 0.95^10 = %.4f", naive, want)
	}
	t.Logf("%d tasks: fan-out counted %.4f met (target 0.95); not counted %.4f", int(n), got, naive)
}

// A graph with a plan, a tool, a fan-out done at its first 2 of 3, a
// sub-agent run twice (its own tool and a drawn fan-out) and an answer:
// with every call held to its plan's budget at its q, tasks meet the
// target at least at the stated rate (the budgets are sufficient), and
// the budgets along the critical path plus the tool time set aside add
// up to the task's budget.
func TestBudgetsGraphMeetTheTarget(t *testing.T) {
	research := Graph{Steps: []Step{
		{Name: "query"},
		{Name: "fetch", After: []string{"query"}, Tool: &Tool{Latency: fakeprovider.LogNormal(200*time.Millisecond, time.Second)}},
		{Name: "read", After: []string{"fetch"}, FanOut: FanOut{Drawn: fakeprovider.Uniform(1, 4)}},
	}}
	g := Graph{Steps: []Step{
		{Name: "plan"},
		{Name: "lookup", After: []string{"plan"}, Tool: &Tool{Latency: fakeprovider.Fixed(300 * time.Millisecond)}},
		{Name: "search", After: []string{"plan"}, FanOut: FanOut{N: 3, First: 2}},
		{Name: "research", After: []string{"lookup", "search"}, Agent: &research, FanOut: FanOut{N: 2}},
		{Name: "answer", After: []string{"research"}},
	}}
	target := Target{Budget: 10 * time.Second, TailTasks: 0.05}
	p, err := target.Budgets(g)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", p)
	// m = 6 varying steps (plan, search, query, fetch, read, answer;
	// lookup is fixed): each within its budget with probability
	// 0.95^(1/6).
	if math.Abs(p.StepQ-math.Pow(0.95, 1.0/6)) > 1e-12 {
		t.Errorf("step q %v", p.StepQ)
	}
	// Through search: 5 calls and the fetch's 1.23 s, (10 s - 1.23 s)/5 =
	// 1.75 s a call; through lookup: 4 calls and 1.53 s of tools, 2.12 s.
	want := []string{"plan", "search", "research/query", "research/fetch", "research/read", "answer"}
	if len(p.Critical) != len(want) {
		t.Fatalf("critical path %v, want %v", p.Critical, want)
	}
	sum := time.Duration(0)
	for i, path := range p.Critical {
		if path != want[i] {
			t.Errorf("critical path %v, want %v", p.Critical, want)
		}
		for _, s := range p.Steps {
			if s.Path == path {
				sum += s.Budget
			}
		}
	}
	if sum > target.Budget || sum < target.Budget-10*time.Nanosecond {
		t.Errorf("budgets along the critical path add up to %v, want the task's %v", sum, target.Budget)
	}
	seeds, tasks := seedsFor(t)
	n := float64(seeds * tasks)
	got := metRate(g, p, seeds, tasks, func(s StepBudget) float64 { return s.Q })
	if floor := 0.95 - 4*math.Sqrt(0.95*0.05/n); got < floor {
		t.Errorf("%.4f of %d tasks met the target, below 0.95 (floor %.4f)", got, int(n), floor)
	}
	t.Logf("%d tasks: %.4f met the target of 0.95", int(n), got)
}
