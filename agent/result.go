package agent

import (
	"fmt"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/format"

	"github.com/tailguard/tailguard/latencytest"
)

// Result is what a Runner measured: every task, each with every copy of
// every step.
type Result struct {
	Tasks []TaskRun `json:"tasks"`
	// Planned is how many tasks the run meant to run.
	Planned int `json:"planned"`
	// Partial says the run's context ended before every planned task
	// ran to its end; PartialReason says how far it got.
	Partial       bool      `json:"partial,omitempty"`
	PartialReason string    `json:"partial_reason,omitempty"`
	Start         time.Time `json:"start"`
	End           time.Time `json:"end"`
	// Concurrency, Rate and Seed are the run's (Runner's, defaults
	// applied).
	Concurrency int     `json:"concurrency,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	Seed        uint64  `json:"seed"`
	// Graph is the graph the tasks ran (for predictions and budgets).
	Graph Graph `json:"-"`
}

// TaskRun is one task: its steps and its measured total.
type TaskRun struct {
	// ID is the task's trace ID prefix ("task03"); Index its index.
	ID    string `json:"id"`
	Index int    `json:"index"`
	// Start is when the task started; Scheduled, in an open-loop run, its
	// planned start from the run's start and StartDelay how late it
	// started (waiting for Runner.Concurrency).
	Start      time.Time     `json:"start"`
	Scheduled  time.Duration `json:"scheduled_ns,omitempty"`
	StartDelay time.Duration `json:"start_delay_ns,omitempty"`
	// Total is measured around the whole task, end to end.
	Total time.Duration `json:"total_ns"`
	// Err is the class of the first failed step ("" when the task was
	// done; latencytest.ClassToolError for a tool; "canceled" when the
	// run's end cut it short, which Cut then says).
	Err string `json:"err,omitempty"`
	// Cut says the run's end stopped the task ("" otherwise).
	Cut string `json:"cut,omitempty"`
	// Steps are every copy of every step, sub-agents' steps included,
	// ordered by start offset, then trace ID.
	Steps []StepRun `json:"steps"`
	// Critical indexes Steps: the copies of model and tool steps that set
	// the task's total, first to last (each waited for the one before).
	Critical []int `json:"critical,omitempty"`
}

// OK reports whether the task was done: every step it needed succeeded.
func (t *TaskRun) OK() bool { return t.Err == "" }

// CutShort reports whether the run's end cut the task short before any
// step failed for another reason: such a task is partial, not failed.
func (t *TaskRun) CutShort() bool { return t.Cut != "" && t.Err == latencytest.ClassCanceled }

// CriticalPath returns the copies on the task's critical path, first to
// last (copies of Steps).
func (t *TaskRun) CriticalPath() []StepRun {
	out := make([]StepRun, len(t.Critical))
	for i, k := range t.Critical {
		out[i] = t.Steps[k]
	}
	return out
}

// PathLine renders the task's critical path on one line: "critical path
// of task07 (9.100s): plan b0 1.000s (queued 200.0ms) -> search b2
// 7.100s -> answer b0 1.000s"; for a failed task, its failed steps.
func (t *TaskRun) PathLine() string {
	if !t.OK() {
		var failed []string
		for _, s := range t.Steps {
			if s.Err != "" && !s.Abandoned {
				failed = append(failed, fmt.Sprintf("%s b%d %s after %s", s.Path, s.Branch, s.Err, format.Duration(s.Time())))
			}
		}
		return fmt.Sprintf("task %s failed (%s) after %s: %s", t.ID, t.Err, format.Duration(t.Total), strings.Join(failed, "; "))
	}
	var parts []string
	for _, s := range t.CriticalPath() {
		p := fmt.Sprintf("%s b%d %s", s.Path, s.Branch, format.Duration(s.Time()))
		if s.Queue > 0 {
			p += fmt.Sprintf(" (queued %s)", format.Duration(s.Queue))
		}
		parts = append(parts, p)
	}
	return fmt.Sprintf("critical path of task %s (%s): %s", t.ID, format.Duration(t.Total), strings.Join(parts, " -> "))
}

// StepRun is one copy of one step in one task.
type StepRun struct {
	// ID is the copy's trace ID: the task's, then the step path, each
	// fanned-out step with its branch ("task03-research-b01-search-b02").
	ID string `json:"id"`
	// Path is the step's path through sub-agents ("research/search");
	// Step the step's own name.
	Path string `json:"path"`
	Step string `json:"step"`
	// Kind is KindModel, KindTool or KindAgent.
	Kind string `json:"kind"`
	// Stage is the step's stage in its own graph: 0 for a step that
	// waits for none, else one more than the latest it waits for.
	Stage int `json:"stage"`
	// Branch is the copy's index in its fan-out (0 without).
	Branch int `json:"branch"`
	// Start and End are offsets from the task's start.
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
	// Queue is how long the server queued a model call, as
	// Runner.Queueing says (0 without).
	Queue time.Duration `json:"queue_ns,omitempty"`
	// Record is a model call's record (nil for tools and sub-agents).
	Record *latencytest.Record `json:"record,omitempty"`
	// Err is the copy's error class ("" when it succeeded); Detail, for
	// a tool step's error, its text.
	Err    string `json:"err,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Abandoned marks a copy canceled because its step was already done
	// (FanOut.First) or had failed: never a failure of its own.
	Abandoned bool `json:"abandoned,omitempty"`
}

// Time is the copy's wall time (End - Start).
func (s *StepRun) Time() time.Duration { return s.End - s.Start }

// Totals is each task's measured total; a task that failed is
// latencytest.Failed, a task cut short by the run's end is left out.
func (r *Result) Totals() latencytest.Sample {
	var s latencytest.Sample
	for i := range r.Tasks {
		switch t := &r.Tasks[i]; {
		case t.CutShort():
		case t.OK():
			s = append(s, t.Total)
		default:
			s = append(s, latencytest.Failed)
		}
	}
	return s
}

// Calls returns every model call of every task as one Result (abandoned
// copies left out), for per-call figures: each record's Chain is its
// task's index and Call its step's stage, and its trace ID says where it
// sat.
func (r *Result) Calls() *latencytest.Result {
	out := &latencytest.Result{Run: latencytest.Run{Start: r.Start, End: r.End, Partial: r.Partial, PartialReason: r.PartialReason}}
	for i := range r.Tasks {
		for _, s := range r.Tasks[i].Steps {
			if s.Record != nil && !s.Abandoned {
				out.Records = append(out.Records, *s.Record)
			}
		}
	}
	out.Planned = len(out.Records)
	return out
}
