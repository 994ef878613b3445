package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// Graph is a task: steps, each run once every step it names in After is
// done. Steps with no After start with the task. Validate says what is
// wrong with one.
type Graph struct {
	Steps []Step
}

// Step kinds, as StepRun.Kind names them.
const (
	KindModel = "model" // a call to a model (latencytest.Provider)
	KindTool  = "tool"  // a tool step (Tool)
	KindAgent = "agent" // a sub-agent (a nested Graph)
)

// Step is one step of a graph: a model call (the default), a tool step
// (Tool set) or a sub-agent (Agent set, run as a whole graph per copy).
type Step struct {
	// Name names the step in its graph (unique there) and in trace IDs:
	// letters, digits and _ only.
	Name string
	// After names the steps of the same graph this one waits for.
	After []string
	// Prompt is a model step's instruction, sent after the task's opening
	// prompt and the answers of the steps it waited for. Default "Do the
	// step <Name> of the task." For a sub-agent it opens the sub-agent's
	// own history the same way.
	Prompt string
	// MaxTokens caps a model step's answer; default Runner.MaxTokens.
	MaxTokens int
	// Provider, when set, answers this step's calls instead of the
	// provider given to Runner.Run (a planner and a searcher on
	// different models). Default: the run's provider.
	Provider latencytest.Provider
	// Tool, when set, makes the step a tool step.
	Tool *Tool
	// Agent, when set, makes the step a sub-agent: each copy runs the
	// whole nested graph, done when its last step is.
	Agent *Graph
	// FanOut runs parallel copies of the step. Zero: one copy.
	FanOut FanOut
}

// Tool is a tool step's time: a wait drawn from Latency (as
// fakeprovider.ToolSteps draws a chain's tool steps: per task and copy,
// from Runner.Seed, so a run waits the same whatever order its tasks
// run in), or, when Run is set, the tool itself, its wall time measured.
type Tool struct {
	// Latency is the wait's distribution.
	Latency fakeprovider.Dist[time.Duration]
	// Run, when set, is run instead of the wait (a real tool). An error
	// from it fails the task with class latencytest.ClassToolError.
	Run func(ctx context.Context, c Copy) error
}

// Copy names one copy of a step in one task, for Tool.Run.
type Copy struct {
	// Task is the task's index, from 0; ID the copy's trace ID
	// ("task03-search-b01"); Branch the copy's index in its fan-out.
	Task   int
	ID     string
	Branch int
}

// FanOut is how many parallel copies of a step run, and how many must
// finish for the step to be done.
type FanOut struct {
	// N is a fixed number of copies. 0: one (unless Drawn is set).
	N int
	// Drawn, when set (instead of N), draws the copies per task from
	// Runner.Seed and the step's path; a draw below max(First, 1) runs
	// max(First, 1) copies.
	Drawn fakeprovider.Dist[int]
	// First, when set, makes the step done when its first First copies
	// finish: the others are abandoned (canceled, marked, never a
	// failure). 0: done when all finish.
	First int
}

// fanned reports whether the step's copies carry a branch in their IDs.
func (f FanOut) fanned() bool { return f.N > 1 || f.Drawn.IsSet() }

// kind is the step's kind.
func (s *Step) kind() string {
	switch {
	case s.Tool != nil:
		return KindTool
	case s.Agent != nil:
		return KindAgent
	}
	return KindModel
}

// maxDepth bounds sub-agent nesting.
const maxDepth = 16

// Validate returns an error naming every problem of the graph: no step,
// a name that is empty, repeated or not letters, digits and _, an After
// that names no step of the graph (or the step itself), a cycle (its
// steps named), a step that is both a tool and a sub-agent, a tool with
// neither Latency nor Run or an invalid Latency, a fan-out with N below
// 0, both N and Drawn, or First above N or below 0; and the same for
// each sub-agent, its path named ("research/search").
func (g Graph) Validate() error {
	var errs []error
	g.validate("", 0, &errs)
	if len(errs) > 0 {
		return fmt.Errorf("agent: graph: %w", errors.Join(errs...))
	}
	return nil
}

func (g Graph) validate(path string, depth int, errs *[]error) {
	bad := func(format string, args ...any) { *errs = append(*errs, fmt.Errorf(format, args...)) }
	where := "the graph"
	if path != "" {
		where = fmt.Sprintf("sub-agent %q", path)
	}
	if len(g.Steps) == 0 {
		bad("%s has no step", where)
		return
	}
	if depth > maxDepth {
		bad("%s nests sub-agents more than %d deep", where, maxDepth)
		return
	}
	seen := map[string]bool{}
	for _, s := range g.Steps {
		name := join(path, s.Name)
		switch {
		case s.Name == "":
			bad("%s: a step has no name", where)
		case strings.TrimLeft(s.Name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "":
			bad("step %q: a name may hold letters, digits and _ only", name)
		case seen[s.Name]:
			bad("step %q is named twice", name)
		}
		seen[s.Name] = true
	}
	for _, s := range g.Steps {
		name := join(path, s.Name)
		for _, a := range s.After {
			switch {
			case a == s.Name:
				bad("step %q: after %q: a step cannot wait for itself", name, a)
			case !seen[a]:
				bad("step %q: after %q: no such step in %s", name, a, where)
			}
		}
		f := s.FanOut
		switch {
		case f.N < 0:
			bad("step %q: fan_out %d < 0", name, f.N)
		case f.N > 0 && f.Drawn.IsSet():
			bad("step %q: fan_out gives both a fixed count (%d) and a drawn one", name, f.N)
		case f.First < 0:
			bad("step %q: fan_out first %d < 0", name, f.First)
		case f.First > max(f.N, 1) && !f.Drawn.IsSet():
			bad("step %q: done after the first %d copies, but it runs %d", name, f.First, max(f.N, 1))
		}
		if s.Tool != nil && s.Agent != nil {
			bad("step %q is both a tool step and a sub-agent", name)
		}
		if t := s.Tool; t != nil {
			if !t.Latency.IsSet() && t.Run == nil {
				bad("step %q: a tool step needs a latency or a Run function", name)
			} else if err := (fakeprovider.ToolSteps{Latency: t.Latency}).Validate(); err != nil {
				bad("step %q: tool: %v", name, strings.TrimPrefix(err.Error(), "fakeprovider: tool steps: "))
			}
		}
		if s.Agent != nil {
			s.Agent.validate(name, depth+1, errs)
		}
	}
	if cyc := g.cycle(); len(cyc) > 0 {
		for i := range cyc {
			cyc[i] = join(path, cyc[i])
		}
		bad("%s has a cycle: %s", where, strings.Join(cyc, " -> "))
	}
}

// join is path/name ("" path: name).
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "/" + name
}

// cycle returns the steps of one cycle of After edges, the first step
// repeated at the end ("a -> b -> a"), or nil. After names of no step
// are ignored (Validate reports them).
func (g Graph) cycle() []string {
	idx := map[string]int{}
	for i, s := range g.Steps {
		idx[s.Name] = i
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(g.Steps))
	var stack []int
	var found []string
	var visit func(i int) bool
	visit = func(i int) bool {
		color[i] = grey
		stack = append(stack, i)
		for _, a := range g.Steps[i].After {
			j, ok := idx[a]
			if !ok {
				continue
			}
			if color[j] == grey {
				at := slices.Index(stack, j)
				for _, k := range stack[at:] {
					found = append(found, g.Steps[k].Name)
				}
				found = append(found, g.Steps[j].Name)
				return true
			}
			if color[j] == white && visit(j) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
		return false
	}
	for i := range g.Steps {
		if color[i] == white && visit(i) {
			// found runs along After edges (each waits for the next):
			// reverse it to read in the order the steps would run.
			slices.Reverse(found)
			return found
		}
	}
	return nil
}

// stages returns each step's stage: 0 for a step that waits for none,
// else one more than the latest stage it waits for. The graph must be
// valid.
func (g Graph) stages() []int {
	idx := map[string]int{}
	for i, s := range g.Steps {
		idx[s.Name] = i
	}
	st := make([]int, len(g.Steps))
	done := make([]bool, len(g.Steps))
	var of func(i int) int
	of = func(i int) int {
		if done[i] {
			return st[i]
		}
		for _, a := range g.Steps[i].After {
			st[i] = max(st[i], of(idx[a])+1)
		}
		done[i] = true
		return st[i]
	}
	for i := range g.Steps {
		of(i)
	}
	return st
}
