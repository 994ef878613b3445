package agent

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	randv2 "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/arrivals"
	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/latencytest"
)

// Runner runs Tasks tasks of Graph against a provider, closed-loop at
// Concurrency tasks in flight, or open-loop at Rate tasks a second. The
// zero value of every field is its documented default.
type Runner struct {
	// Graph is the task.
	Graph Graph
	// Tasks is the number of tasks. Default 30.
	Tasks int
	// Concurrency is the tasks in flight: closed-loop, the next task
	// starts when one ends (default 1); open-loop (Rate set), a cap on
	// tasks in flight, a task waiting for a slot starting late and saying
	// so (TaskRun.StartDelay) (default: no cap).
	Concurrency int
	// Rate, when set, starts tasks open-loop at this many a second, the
	// gaps exponential (Poisson arrivals) drawn from Seed.
	Rate float64
	// Seed seeds every draw: fan-out counts, tool waits, arrivals. The
	// same seed gives the same draws, whatever order tasks run in.
	Seed uint64
	// Prompt opens every task. Default: one sentence asking for the next
	// step of a plan.
	Prompt string
	// NoNonce turns off the unique nonce that opens each task's prompt.
	NoNonce bool
	// MaxTokens caps each model call (a Step's own wins). Default 64.
	MaxTokens int
	// FirstTokenTimeout and TotalTimeout bound each model call (0: none);
	// HardCap bounds it always (0: latencytest.DefaultHardCap).
	FirstTokenTimeout, TotalTimeout, HardCap time.Duration
	// Label opens every trace ID. Default "task".
	Label string
	// Queueing, when set, tells how long the server queued the call with
	// trace ID id (fakeprovider.Fake.QueueTime knows it for a fake).
	Queueing func(id string) time.Duration
}

// normalized applies the defaults and checks the configuration.
func (r Runner) normalized() (Runner, error) {
	r.Tasks = cmp.Or(r.Tasks, 30)
	r.MaxTokens = cmp.Or(r.MaxTokens, 64)
	r.Label = cmp.Or(r.Label, "task")
	r.Prompt = cmp.Or(r.Prompt, defaults.ChainPrompt)
	if r.Rate == 0 {
		r.Concurrency = cmp.Or(r.Concurrency, 1)
	}
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(r.Tasks < 0, "tasks %d < 0", r.Tasks)
	check(r.Concurrency < 0, "concurrency %d < 0", r.Concurrency)
	check(!(r.Rate >= 0) || math.IsInf(r.Rate, 0), "rate %v tasks/s is not a finite rate >= 0", r.Rate)
	check(r.MaxTokens < 0, "max_tokens %d < 0", r.MaxTokens)
	check(r.FirstTokenTimeout < 0 || r.TotalTimeout < 0 || r.HardCap < 0, "a negative timeout (first token %v, total %v, hard cap %v)", r.FirstTokenTimeout, r.TotalTimeout, r.HardCap)
	check(strings.ContainsAny(r.Label, " \t\n-"), "label %q holds white space or -", r.Label)
	if err := r.Graph.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return r, fmt.Errorf("agent: runner: %w", errors.Join(errs...))
	}
	return r, nil
}

// Run runs the tasks. It stops starting tasks when ctx ends; the tasks
// it cuts short say so (TaskRun.Cut) and the result is Partial. The
// error is for an invalid configuration (the graph's Validate
// included); a failed call is data in its StepRun, never an error.
func (r Runner) Run(ctx context.Context, p latencytest.Provider) (*Result, error) {
	r, err := r.normalized()
	if err != nil {
		return nil, err
	}
	if p == nil && needsProvider(&r.Graph) {
		return nil, errors.New("agent: runner: no provider, and a model step names none of its own")
	}
	res := &Result{Planned: r.Tasks, Start: time.Now(), Concurrency: r.Concurrency, Rate: r.Rate, Seed: r.Seed, Graph: r.Graph}
	nonce := ""
	if !r.NoNonce {
		var b [6]byte
		_, _ = rand.Read(b[:])
		nonce = hex.EncodeToString(b[:])
	}
	runs := make([]TaskRun, r.Tasks)
	var sem chan struct{}
	if r.Concurrency > 0 {
		sem = make(chan struct{}, r.Concurrency)
	}
	seq := &arrivals.Seq{Limit: r.Tasks, Rate: r.Rate, Rng: arrivals.Rand(r.Seed)}
	var wg sync.WaitGroup
	started := 0
	for i := range r.Tasks {
		var at time.Duration
		if r.Rate > 0 {
			_, at, _ = seq.Take()
			if !sleepUntil(ctx, res.Start.Add(at)) {
				break
			}
		}
		if sem != nil {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			if sem != nil {
				defer func() { <-sem }()
			}
			runs[i] = r.runTask(ctx, p, i, nonce)
			if r.Rate > 0 {
				runs[i].Scheduled = at
				runs[i].StartDelay = max(runs[i].Start.Sub(res.Start)-at, 0)
			}
		}()
	}
	wg.Wait()
	res.Tasks = runs[:started]
	res.End = time.Now()
	if started < r.Tasks {
		res.Partial, res.PartialReason = true, fmt.Sprintf("started %d of %d tasks: the run's context ended (%v)", started, r.Tasks, context.Cause(ctx))
	}
	for _, t := range res.Tasks {
		if t.Cut != "" {
			res.Partial = true
			res.PartialReason = strings.TrimPrefix(res.PartialReason+"; task "+t.ID+": "+t.Cut, "; ")
		}
	}
	return res, nil
}

// sleepUntil waits for t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// needsProvider reports whether a model step has no provider of its own.
func needsProvider(g *Graph) bool {
	for _, s := range g.Steps {
		if (s.kind() == KindModel && s.Provider == nil) || (s.Agent != nil && needsProvider(s.Agent)) {
			return true
		}
	}
	return false
}

// task is one task in flight: where its copies are recorded.
type task struct {
	r     *Runner
	p     latencytest.Provider
	index int
	id    string
	start time.Time
	mu    sync.Mutex
	steps []StepRun
}

// record appends a copy's run and returns its index.
func (t *task) record(s StepRun) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.steps = append(t.steps, s)
	return len(t.steps) - 1
}

// abandon marks copy k abandoned, and every copy inside it (a
// sub-agent's steps, recorded before it).
func (t *task) abandon(k int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	inside := t.steps[k].ID + "-"
	for i := range t.steps {
		if i == k || strings.HasPrefix(t.steps[i].ID, inside) {
			t.steps[i].Abandoned = true
		}
	}
}

// runTask runs task i.
func (r *Runner) runTask(ctx context.Context, p latencytest.Provider, i int, nonce string) TaskRun {
	t := &task{r: r, p: p, index: i, id: fmt.Sprintf("%s%02d", r.Label, i), start: time.Now()}
	open := r.Prompt
	if nonce != "" {
		h := fnv.New64a()
		h.Write([]byte(t.id))
		open = fmt.Sprintf("[nonce %s-%016x] %s", nonce, h.Sum64(), open)
	}
	out := t.runGraph(ctx, &r.Graph, "", t.id, []latencytest.Message{{Role: "user", Content: open}})
	run := TaskRun{ID: t.id, Index: i, Start: t.start, Total: time.Since(t.start), Err: out.err}
	switch {
	case out.err == latencytest.ClassCanceled && ctx.Err() != nil:
		run.Cut = fmt.Sprintf("the run's context ended (%v)", context.Cause(ctx))
		run.Err = latencytest.ClassCanceled
	case out.err != "":
		// The copies the failure canceled are abandoned, not failures.
		for k := range t.steps {
			if t.steps[k].Err == latencytest.ClassCanceled {
				t.steps[k].Abandoned = true
			}
		}
	}
	// Order the copies by start, then trace ID, and point Critical at them.
	order := make([]int, len(t.steps))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(t.steps[a].Start, t.steps[b].Start), strings.Compare(t.steps[a].ID, t.steps[b].ID))
	})
	where := make([]int, len(order))
	for pos, k := range order {
		run.Steps = append(run.Steps, t.steps[k])
		where[k] = pos
	}
	if out.err == "" {
		for _, k := range out.critical {
			run.Critical = append(run.Critical, where[k])
		}
	}
	return run
}

// since is the offset from the task's start.
func (t *task) since() time.Duration { return time.Since(t.start) }

// graphOut is how one run of a graph ended.
type graphOut struct {
	err      string
	critical []int  // t.steps indexes, first to last
	answer   string // the answers of the step that ended it
}

// node is a step of a graph in one run of it.
type node struct {
	step     *Step
	stage    int
	waiting  int
	next     []int
	done     bool
	end      time.Duration // when it was done (offset from the task's start)
	critical []int         // the critical path of the copy that finished it
	answer   string
}

// stepOut is how one step ended.
type stepOut struct {
	i        int
	err      string
	end      time.Duration
	critical []int
	answer   string
}

// runGraph runs g once: path names it through sub-agents, id prefixes
// its copies' trace IDs, history is the conversation its model steps
// continue.
func (t *task) runGraph(ctx context.Context, g *Graph, path, id string, history []latencytest.Message) graphOut {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idx := map[string]int{}
	for i, s := range g.Steps {
		idx[s.Name] = i
	}
	stages := g.stages()
	nodes := make([]node, len(g.Steps))
	for i := range g.Steps {
		nodes[i].step, nodes[i].stage, nodes[i].waiting = &g.Steps[i], stages[i], len(g.Steps[i].After)
		for _, a := range g.Steps[i].After {
			nodes[idx[a]].next = append(nodes[idx[a]].next, i)
		}
	}
	events := make(chan stepOut)
	running := 0
	launch := func(i int) {
		n := &nodes[i]
		msgs := slices.Clip(history)
		for _, a := range n.step.After {
			if ans := nodes[idx[a]].answer; ans != "" {
				msgs = append(msgs, latencytest.Message{Role: "assistant", Content: ans})
			}
		}
		running++
		go func() { events <- t.runStep(ctx, n.step, n.stage, i, path, id, msgs) }()
	}
	for i := range nodes {
		if nodes[i].waiting == 0 {
			launch(i)
		}
	}
	failed := stepOut{i: -1}
	for running > 0 {
		out := <-events
		running--
		if out.err != "" && failed.i < 0 {
			failed = out
			cancel()
		}
		if failed.i >= 0 {
			continue // the graph has failed: wait for the rest to stop
		}
		n := &nodes[out.i]
		n.done, n.end, n.critical, n.answer = true, out.end, out.critical, out.answer
		for _, j := range n.next {
			if nodes[j].waiting--; nodes[j].waiting == 0 {
				launch(j)
			}
		}
	}
	if failed.i >= 0 {
		return graphOut{err: failed.err}
	}
	// The critical path: back from the step done last, each time to the
	// step it waited for that was done last (ties: the first written).
	last := 0
	for i := range nodes {
		if nodes[i].end > nodes[last].end {
			last = i
		}
	}
	var crit [][]int
	for i := last; ; {
		crit = append(crit, nodes[i].critical)
		prev := -1
		for _, a := range nodes[i].step.After {
			if j := idx[a]; prev < 0 || nodes[j].end > nodes[prev].end {
				prev = j
			}
		}
		if prev < 0 {
			break
		}
		i = prev
	}
	slices.Reverse(crit)
	return graphOut{critical: slices.Concat(crit...), answer: nodes[last].answer}
}

// copyOut is how one copy of a step ended.
type copyOut struct {
	branch   int
	rec      int // t.steps index
	err      string
	end      time.Duration
	critical []int
	answer   string
}

// copies is how many copies of s task t runs at path.
func (t *task) copies(s *Step, path string) int {
	f := s.FanOut
	if !f.Drawn.IsSet() {
		return max(f.N, 1)
	}
	h := fnv.New64a()
	h.Write([]byte(path))
	rng := randv2.New(randv2.NewPCG(t.r.Seed^h.Sum64(), uint64(t.index)))
	return max(f.Drawn.Sample(rng), f.First, 1)
}

// runStep runs every copy of step s (node i of its graph) and says when
// the step was done: when all copies, or the first FanOut.First, finished.
func (t *task) runStep(ctx context.Context, s *Step, stage, i int, path, id string, msgs []latencytest.Message) stepOut {
	spath := join(path, s.Name)
	n := t.copies(s, spath)
	k := cmp.Or(s.FanOut.First, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	outs := make(chan copyOut)
	for b := range n {
		cid := id + "-" + s.Name
		if s.FanOut.fanned() {
			cid += fmt.Sprintf("-b%02d", b)
		}
		go func() { outs <- t.runCopy(ctx, s, stage, b, spath, cid, msgs) }()
	}
	var ok, bad []copyOut
	settled := false
	for range n {
		c := <-outs
		switch {
		case settled:
			if c.err != "" {
				t.abandon(c.rec) // canceled once the step was settled
			}
			continue
		case c.err == "":
			ok = append(ok, c)
		default:
			bad = append(bad, c)
		}
		if len(ok) >= k || len(bad) > n-k {
			settled = true
			cancel()
		}
	}
	byEnd := func(a, b copyOut) int { return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(a.branch, b.branch)) }
	if len(bad) > n-k {
		slices.SortFunc(bad, byEnd)
		return stepOut{i: i, err: bad[0].err}
	}
	slices.SortFunc(ok, byEnd)
	c := ok[k-1]
	return stepOut{i: i, end: c.end, critical: c.critical, answer: c.answer}
}

// runCopy runs one copy of step s.
func (t *task) runCopy(ctx context.Context, s *Step, stage, branch int, path, id string, msgs []latencytest.Message) copyOut {
	run := StepRun{ID: id, Path: path, Step: s.Name, Kind: s.kind(), Stage: stage, Branch: branch, Start: t.since()}
	prompt := cmp.Or(s.Prompt, fmt.Sprintf("Do the step %s of the task.", s.Name))
	var out copyOut
	switch run.Kind {
	case KindModel:
		p := cmp.Or[latencytest.Provider](s.Provider, t.p)
		req := latencytest.Request{ID: id, Messages: append(slices.Clip(msgs), latencytest.Message{Role: "user", Content: prompt}),
			MaxTokens: cmp.Or(s.MaxTokens, t.r.MaxTokens), FirstTokenTimeout: t.r.FirstTokenTimeout, TotalTimeout: t.r.TotalTimeout, HardCap: t.r.HardCap}
		rec := p.Call(ctx, req)
		rec.ID, rec.Chain, rec.Call, rec.Concurrency, rec.PromptChars = id, t.index, stage, t.r.Concurrency, promptChars(req)
		if rec.MaxTokens == 0 {
			rec.MaxTokens = req.MaxTokens
		}
		run.Record, run.Err, out.answer = &rec, rec.Err, rec.Content
		if out.answer == "" {
			out.answer = "(no answer)"
		}
		if t.r.Queueing != nil {
			run.Queue = t.r.Queueing(id)
		}
	case KindTool:
		var err error
		if s.Tool.Run != nil {
			err = s.Tool.Run(ctx, Copy{Task: t.index, ID: id, Branch: branch})
		} else {
			h := fnv.New32a()
			h.Write([]byte(path + fmt.Sprintf("#%d", branch)))
			err = fakeprovider.ToolSteps{Latency: s.Tool.Latency, Seed: t.r.Seed}.Wait(ctx, t.index, int(h.Sum32()))
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			run.Err = latencytest.ClassCanceled
		default:
			run.Err, run.Detail = latencytest.ClassToolError, err.Error()
		}
	case KindAgent:
		sub := t.runGraph(ctx, s.Agent, path, id, append(slices.Clip(msgs), latencytest.Message{Role: "user", Content: prompt}))
		run.Err, out.critical, out.answer = sub.err, sub.critical, sub.answer
	}
	run.End = t.since()
	out.branch, out.err, out.end = branch, run.Err, run.End
	out.rec = t.record(run)
	if run.Kind != KindAgent {
		out.critical = []int{out.rec}
	}
	return out
}

// promptChars is the characters (runes) of the prompt text req sends:
// its messages' content, the nonce included (latencytest.Record.PromptChars).
func promptChars(req latencytest.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += utf8.RuneCountInString(m.Content)
	}
	return n
}
