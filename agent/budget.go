package agent

import (
	"errors"
	"fmt"
	"math"
	randv2 "math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/stats"
	"github.com/tailguard/tailguard/sloassert"
)

// Target is a task target: a task done within Budget for all but the
// fraction TailTasks of tasks (the task total's (1-TailTasks)-quantile
// within Budget). Judge it on measured task totals (Objective); Budgets
// works per-step budgets back from it, a planning figure.
type Target struct {
	Budget    time.Duration
	TailTasks float64
}

// Validate returns an error unless Budget is positive and TailTasks in
// (0,1) (0.05 for 5%).
func (t Target) Validate() error {
	if t.Budget <= 0 || !(t.TailTasks > 0 && t.TailTasks < 1) {
		return fmt.Errorf("agent: task target: budget %v must be positive and tail tasks %v a fraction in (0,1) (0.05 for 5%%)", t.Budget, t.TailTasks)
	}
	return nil
}

// Objective is the objective "the task total's (1-TailTasks)-quantile is
// within Budget", on measured task totals (a failed task never done, a
// task cut short by the run's end left out), for Evaluate and Check. An
// invalid target gives an objective that never passes and says why.
func (t Target) Objective(opts ...sloassert.Option) sloassert.Objective {
	q := 1 - t.TailTasks
	name := fmt.Sprintf("task total %s <= %s (%s of tasks)", sloassert.QuantileName(q), format.Duration(t.Budget), strings.TrimPrefix(sloassert.QuantileName(q), "p")+"%")
	if err := t.Validate(); err != nil {
		return sloassert.Invalid(name, err.Error())
	}
	o := sloassert.ChainQ(q, t.Budget, opts...)
	o.Name = name
	return o
}

// Plan is per-step budgets worked back from a task target.
type Plan struct {
	Target Target
	// StepQ is the probability each step that varies must meet its
	// budget with: (1-TailTasks)^(1/m) over its m such steps (model
	// steps, and tool steps whose latency is not fixed).
	StepQ float64
	// Steps are the graph's model and tool steps, sub-agents' steps
	// after their own, as written.
	Steps []StepBudget
	// Critical is the path that binds the budgets: the step paths, first
	// to last, along which the model steps' budgets and the tool time set
	// aside add up to the task's budget.
	Critical []string
	// ToolTime is the tool time set aside along Critical.
	ToolTime time.Duration
}

// StepBudget is one step's budget.
type StepBudget struct {
	// Path is the step's path through sub-agents ("research/search").
	Path string
	// Kind is KindModel or KindTool.
	Kind string
	// Copies is the copies a task runs (with sub-agents' copies
	// multiplied in; 0 when a fan-out is drawn); First as FanOut.First.
	Copies, First int
	// Budget is, for a model step, each call's budget; for a tool step,
	// the time set aside for each copy (its latency's Q-quantile).
	Budget time.Duration
	// Q is the probability each copy must be within Budget with, so that
	// the step is within it with probability StepQ: for n copies that
	// must all finish, StepQ^(1/n) (the slowest of n meets its budget
	// with probability Q^n); for the first k of n, the Q at which k or
	// more of the n are within it with probability StepQ.
	Q float64
	// Critical marks a step on Plan.Critical.
	Critical bool
}

// leaf is a model or tool step of a flattened graph.
type leaf struct {
	step  *Step
	path  string
	first int
	// counts are draws of (its own copies, copies of the graphs around
	// it): one pair without a drawn fan-out.
	counts [][2]int
}

// maxPaths bounds the paths Budgets walks.
const maxPaths = 100_000

// countDraws is the draws of drawn fan-outs Budgets averages over.
const countDraws = 4096

// Budgets works per-step budgets back from the target along the graph's
// paths. Time: tool steps' time is set aside first (each its latency's
// quantile at its copy's Q); a model step's budget is the smallest share
// (Budget - tool time)/(model steps) over the paths through it, so the
// budgets along every path, the critical one included, add up to at most
// the task's budget. Probability: when every step of the graph meets its
// budget the task does; each of the m steps that vary meets it with
// probability StepQ = (1-TailTasks)^(1/m), a fan-out's copies each with
// the Q that gives StepQ (StepQ^(1/n) for all n; a drawn n averaged
// over its draws; a sub-agent's own First is not counted, all its copies
// held to their budgets, which errs on the safe side). The budgets are
// sufficient for independent steps, not necessary: judge tasks on
// measured totals (Objective). It returns an error for an invalid
// target or graph, a tool step with no latency distribution (Run only:
// its time cannot be set aside), tools that take a whole path's budget,
// or a graph of more than 100,000 paths.
func (t Target) Budgets(g Graph) (Plan, error) {
	if err := t.Validate(); err != nil {
		return Plan{}, err
	}
	if err := g.Validate(); err != nil {
		return Plan{}, err
	}
	rng := randv2.New(randv2.NewPCG(1, 0x62756467))
	var ls []leaf
	var errs []error
	leaves(&g, "", 0, rng, nil, &ls, &errs)
	if len(errs) > 0 {
		return Plan{}, fmt.Errorf("agent: budgets: %w", errors.Join(errs...))
	}
	m := 0
	for _, l := range ls {
		if l.step.Tool == nil || l.step.Tool.Latency.Kind != "fixed" {
			m++
		}
	}
	plan := Plan{Target: t, StepQ: math.Pow(1-t.TailTasks, 1/float64(m))}
	index := map[string]int{}
	for i, l := range ls {
		index[l.path] = i
		sb := StepBudget{Path: l.path, Kind: l.step.kind(), First: l.first, Q: copyQ(l.counts, l.first, plan.StepQ)}
		if len(l.counts) == 1 {
			sb.Copies = l.counts[0][0] * l.counts[0][1]
		}
		if sb.Kind == KindTool {
			sb.Budget = toolQuantile(l.step.Tool, sb.Q, rng)
		}
		plan.Steps = append(plan.Steps, sb)
	}
	all, err := paths(&g, "")
	if err != nil {
		return Plan{}, err
	}
	best, bestShare := -1, time.Duration(math.MaxInt64)
	for pi, p := range all {
		var tools time.Duration
		calls := 0
		for _, path := range p {
			if s := &plan.Steps[index[path]]; s.Kind == KindTool {
				tools += s.Budget
			} else {
				calls++
			}
		}
		left := t.Budget - tools
		if left <= 0 || (calls == 0 && tools > t.Budget) {
			return Plan{}, fmt.Errorf("agent: budgets: the tools on the path %s take %s, leaving its model steps nothing of the task's %s",
				strings.Join(p, " -> "), format.Duration(tools), format.Duration(t.Budget))
		}
		if calls == 0 {
			continue
		}
		share := left / time.Duration(calls)
		for _, path := range p {
			if s := &plan.Steps[index[path]]; s.Kind == KindModel && (s.Budget == 0 || share < s.Budget) {
				s.Budget = share
			}
		}
		if share < bestShare {
			best, bestShare = pi, share
		}
	}
	if best < 0 { // tools only: the path with the most tool time binds
		for pi, p := range all {
			var tools time.Duration
			for _, path := range p {
				tools += plan.Steps[index[path]].Budget
			}
			if best < 0 || tools > plan.ToolTime {
				best, plan.ToolTime = pi, tools
			}
		}
	}
	plan.Critical, plan.ToolTime = all[best], 0
	for _, path := range plan.Critical {
		s := &plan.Steps[index[path]]
		s.Critical = true
		if s.Kind == KindTool {
			plan.ToolTime += s.Budget
		}
	}
	return plan, nil
}

// leaves appends g's model and tool steps (at path, inside graphs run
// outer times, drawn by rng when a fan-out is) to out, as written.
func leaves(g *Graph, path string, depth int, rng *randv2.Rand, outer []*Step, out *[]leaf, errs *[]error) {
	for i := range g.Steps {
		s := &g.Steps[i]
		p := join(path, s.Name)
		if s.Agent != nil {
			leaves(s.Agent, p, depth+1, rng, append(slices.Clip(outer), s), out, errs)
			continue
		}
		if s.Tool != nil && !s.Tool.Latency.IsSet() {
			*errs = append(*errs, fmt.Errorf("step %q: a tool without a latency distribution (Run only): its time cannot be set aside", p))
			continue
		}
		l := leaf{step: s, path: p, first: s.FanOut.First}
		drawn := s.FanOut.Drawn.IsSet()
		for _, o := range outer {
			drawn = drawn || o.FanOut.Drawn.IsSet()
		}
		draws := 1
		if drawn {
			draws = countDraws
		}
		for range draws {
			n, m := count(s, rng), 1
			for _, o := range outer {
				m *= count(o, rng)
			}
			l.counts = append(l.counts, [2]int{n, m})
		}
		*out = append(*out, l)
	}
}

// count is a draw of s's copies, as the runner draws them.
func count(s *Step, rng *randv2.Rand) int {
	if !s.FanOut.Drawn.IsSet() {
		return max(s.FanOut.N, 1)
	}
	return max(s.FanOut.Drawn.Sample(rng), s.FanOut.First, 1)
}

// copyQ is the probability q each copy must meet its budget with so that
// the step meets it with probability stepQ: the mean over counts (n, m)
// of P(at least k of n copies meet it)^m (k = first, or n) equals stepQ.
func copyQ(counts [][2]int, first int, stepQ float64) float64 {
	meet := func(q float64) float64 {
		sum := 0.0
		for _, c := range counts {
			n, m := c[0], c[1]
			k := first
			if k == 0 {
				k = n
			}
			sum += math.Pow(atLeast(k, n, q), float64(m))
		}
		return sum / float64(len(counts))
	}
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := (lo + hi) / 2
		if meet(mid) < stepQ {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// atLeast is P(X >= k) for X ~ Binomial(n, q).
func atLeast(k, n int, q float64) float64 {
	if k <= 0 {
		return 1
	}
	if k == n {
		return math.Pow(q, float64(n))
	}
	return 1 - stats.BinomCDF(k-1, n, q)
}

// toolQuantile is the q-quantile of a tool's latency: exact when fixed,
// else of 200,000 seeded draws.
func toolQuantile(t *Tool, q float64, rng *randv2.Rand) time.Duration {
	if t.Latency.Kind == "fixed" {
		return t.Latency.Value
	}
	xs := make([]time.Duration, 200_000)
	for i := range xs {
		xs[i] = t.Latency.Sample(rng)
	}
	slices.Sort(xs)
	return time.Duration(math.Ceil(stats.Quantile(xs, q)))
}

// paths returns every path of g from a step that waits for none to a
// step none waits for, as step paths, each sub-agent replaced by each of
// its own paths.
func paths(g *Graph, path string) ([][]string, error) {
	idx := map[string]int{}
	waited := make([]bool, len(g.Steps))
	for i, s := range g.Steps {
		idx[s.Name] = i
	}
	next := make([][]int, len(g.Steps))
	for i, s := range g.Steps {
		for _, a := range s.After {
			next[idx[a]] = append(next[idx[a]], i)
			waited[idx[a]] = true
		}
	}
	inner := make([][][]string, len(g.Steps))
	for i := range g.Steps {
		s := &g.Steps[i]
		p := join(path, s.Name)
		if s.Agent == nil {
			inner[i] = [][]string{{p}}
			continue
		}
		sub, err := paths(s.Agent, p)
		if err != nil {
			return nil, err
		}
		inner[i] = sub
	}
	var out [][]string
	var walk func(i int, prefix []string) error
	walk = func(i int, prefix []string) error {
		for _, in := range inner[i] {
			p := append(slices.Clip(prefix), in...)
			if !waited[i] {
				if out = append(out, p); len(out) > maxPaths {
					return fmt.Errorf("agent: budgets: the graph has more than %d paths", maxPaths)
				}
			}
			for _, j := range next[i] {
				if err := walk(j, p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i, s := range g.Steps {
		if len(s.After) == 0 {
			if err := walk(i, nil); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// String renders the plan: the target, then a row per step.
func (p Plan) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "task within %s for %s of tasks: each varying step within its budget with probability %.5f; tool time set aside on the critical path %s\n",
		format.Duration(p.Target.Budget), strings.TrimPrefix(sloassert.QuantileName(1-p.Target.TailTasks), "p")+"%", p.StepQ, format.Duration(p.ToolTime))
	for _, s := range p.Steps {
		copies := fmt.Sprint(s.Copies)
		if s.Copies == 0 {
			copies = "drawn"
		}
		if s.First > 0 {
			copies = fmt.Sprintf("first %d of %s", s.First, copies)
		}
		what := "each call within"
		if s.Kind == KindTool {
			what = "tool time set aside"
		}
		crit := ""
		if s.Critical {
			crit = " (critical path)"
		}
		fmt.Fprintf(&sb, "  %-20s %-6s copies %-14s %s %s at q=%.5f%s\n", s.Path, s.Kind, copies, what, format.Duration(s.Budget), s.Q, crit)
	}
	return sb.String()
}
