// The tasks file: a Result written as JSON (answers left out) and read
// back to be judged later.

package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// WriteTasks writes r to w as JSON, every copy of every step with its
// task, stage, branch, times, record and critical path, and the run's
// planned tasks, partial state, clock, concurrency, rate and seed; the
// answers (each record's Content) are left out, as they may hold what a
// test should not keep, and so is the Graph (the spec that ran it has
// it). [ReadTasks] reads it back.
func WriteTasks(w io.Writer, r *Result) error {
	out := *r
	out.Tasks = slices.Clone(r.Tasks)
	for i := range out.Tasks {
		out.Tasks[i].Steps = slices.Clone(out.Tasks[i].Steps)
		for j, s := range out.Tasks[i].Steps {
			if s.Record != nil {
				rec := *s.Record
				rec.Content = ""
				out.Tasks[i].Steps[j].Record = &rec
			}
		}
	}
	b, err := json.MarshalIndent(&out, "", " ")
	if err != nil {
		return fmt.Errorf("agent: tasks: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadTasks reads a tasks file [WriteTasks] wrote (a spec's tasks.json)
// into a Result to judge with [Evaluate]; its Graph is zero (set it to
// the graph that ran, for [Predict]). A file without planned counts its
// tasks as planned. It refuses, with an error naming the file and the
// task: what is not JSON, a file without tasks, a negative planned, rate
// or concurrency, fewer planned than tasks, two tasks of one ID, a
// negative total, a copy ending before it starts or before the task
// starts, copies out of order (by start, then trace ID), an unknown
// step kind, a critical path that points past the steps, runs out of
// order or ends after the task's total, and a task that failed with a
// critical path or was done without one.
func ReadTasks(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("agent: tasks: %w", err)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("agent: tasks %s: not a tasks file (JSON of {\"tasks\": [...]}): %w", path, err)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("agent: tasks %s: %w", path, err)
	}
	if r.Planned == 0 {
		r.Planned = len(r.Tasks)
	}
	return &r, nil
}

// check checks a Result read from a file (see ReadTasks).
func (r *Result) check() error {
	switch {
	case len(r.Tasks) == 0:
		return errors.New("no tasks: a run with no task never passes")
	case r.Planned < 0:
		return fmt.Errorf("planned %d < 0", r.Planned)
	case r.Planned > 0 && r.Planned < len(r.Tasks):
		return fmt.Errorf("planned %d tasks, but holds %d", r.Planned, len(r.Tasks))
	case !(r.Rate >= 0) || math.IsInf(r.Rate, 0):
		return fmt.Errorf("rate %v tasks/s is not a finite rate >= 0", r.Rate)
	case r.Concurrency < 0:
		return fmt.Errorf("concurrency %d < 0", r.Concurrency)
	}
	seen := map[string]bool{}
	for i := range r.Tasks {
		t := &r.Tasks[i]
		if t.ID == "" {
			return fmt.Errorf("task %d has no id", i)
		}
		if seen[t.ID] {
			return fmt.Errorf("task %s: twice", t.ID)
		}
		seen[t.ID] = true
		if err := t.check(); err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	return nil
}

// check checks one task read from a file.
func (t *TaskRun) check() error {
	if t.Total < 0 || t.Scheduled < 0 || t.StartDelay < 0 {
		return fmt.Errorf("a negative time (total %v, scheduled %v, start delay %v)", t.Total, t.Scheduled, t.StartDelay)
	}
	for k := range t.Steps {
		s := &t.Steps[k]
		switch {
		case !slices.Contains([]string{KindModel, KindTool, KindAgent}, s.Kind):
			return fmt.Errorf("step %d (%s): kind %q (want %s, %s or %s)", k, s.ID, s.Kind, KindModel, KindTool, KindAgent)
		case s.Start < 0 || s.End < s.Start || s.Queue < 0:
			return fmt.Errorf("step %d (%s): starts at %v, ends at %v, queued %v: want 0 <= start <= end and queue >= 0", k, s.ID, s.Start, s.End, s.Queue)
		case k > 0 && (s.Start < t.Steps[k-1].Start || s.Start == t.Steps[k-1].Start && s.ID < t.Steps[k-1].ID):
			return fmt.Errorf("steps out of order: step %d (%s) starts at %v, before step %d (%s) at %v (want them by start, then trace ID)",
				k, s.ID, s.Start, k-1, t.Steps[k-1].ID, t.Steps[k-1].Start)
		}
	}
	switch {
	case !t.OK() && len(t.Critical) > 0:
		return fmt.Errorf("failed (%s) but has a critical path", t.Err)
	case t.OK() && len(t.Critical) == 0:
		return errors.New("done but has no critical path")
	}
	var path []string
	prev := -1
	for _, k := range t.Critical {
		if k < 0 || k >= len(t.Steps) {
			return fmt.Errorf("critical path: step %d of %d", k, len(t.Steps))
		}
		s := &t.Steps[k]
		path = append(path, s.ID)
		if prev >= 0 && s.Start < t.Steps[prev].End {
			return fmt.Errorf("critical path out of order: %s starts at %v, before %s ends at %v", s.ID, s.Start, t.Steps[prev].ID, t.Steps[prev].End)
		}
		prev = k
	}
	if prev >= 0 && t.Steps[prev].End > t.Total {
		return fmt.Errorf("total %v is shorter than its critical path (%s), which ends at %v", t.Total, strings.Join(path, " -> "), t.Steps[prev].End)
	}
	return nil
}
