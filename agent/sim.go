package agent

import (
	"cmp"
	"math"
	randv2 "math/rand/v2"
	"slices"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// sim draws one task through a graph: each model and tool copy's time
// from leaf, each fan-out's copies from its Drawn (one draw a path a
// task, as the runner draws them), a step done at its First-th (or
// last) copy, a task done when its last step is. A leaf may draw
// latencytest.Failed: a step with fewer than First (or all) copies done
// fails, and so does its task.
type sim struct {
	rng    *randv2.Rand
	leaf   func(rng *randv2.Rand, s *Step, path string) time.Duration
	counts map[string]int // copies per path in the task drawn now
}

// task draws one task's total.
func (m *sim) task(g *Graph) time.Duration {
	clear(m.counts)
	return m.graph(g, "")
}

// add is a+b, Failed when either is or the sum overflows.
func add(a, b time.Duration) time.Duration {
	if a == latencytest.Failed || b == latencytest.Failed || a > math.MaxInt64-b {
		return latencytest.Failed
	}
	return a + b
}

// graph draws g's end, from its start.
func (m *sim) graph(g *Graph, path string) time.Duration {
	order := topo(g)
	ends := make(map[string]time.Duration, len(g.Steps))
	var last time.Duration
	for _, i := range order {
		s := &g.Steps[i]
		var start time.Duration
		for _, a := range s.After {
			start = max(start, ends[a])
		}
		end := add(start, m.step(s, join(path, s.Name)))
		ends[s.Name] = end
		last = max(last, end)
	}
	return last
}

// copies is the number of copies of s at path (drawn once a task).
func (m *sim) copies(s *Step, path string) int {
	f := s.FanOut
	if !f.Drawn.IsSet() {
		return max(f.N, 1)
	}
	n, ok := m.counts[path]
	if !ok {
		n = max(f.Drawn.Sample(m.rng), f.First, 1)
		m.counts[path] = n
	}
	return n
}

// step draws step s's time: its First-th (or slowest) copy's.
func (m *sim) step(s *Step, path string) time.Duration {
	n := m.copies(s, path)
	ds := make([]time.Duration, n)
	for b := range ds {
		if s.Agent != nil {
			ds[b] = m.graph(s.Agent, path)
		} else {
			ds[b] = m.leaf(m.rng, s, path)
		}
	}
	slices.Sort(ds)
	return ds[cmp.Or(s.FanOut.First, n)-1]
}

// topo is g's steps in an order where each comes after those it waits
// for (by stage, then as written). g must be valid.
func topo(g *Graph) []int {
	st := g.stages()
	order := make([]int, len(g.Steps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(st[a], st[b]) })
	return order
}
