package slospec

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
)

// recordsTarget resolves a records target, in its format.
func recordsTarget(t Target) runTarget {
	desc := "records " + t.Records + ", merged"
	if t.Format != "" && t.Format != records.Tailguard {
		desc = "records " + t.Records + ", imported from " + t.Format
	}
	return runTarget{records: t.Records, format: t.Format, desc: desc}
}

// LevelReport is one load level of a judged records target: its name
// ("c8", or "all" for records without a level), the imported or merged
// result, and the report of the spec's objectives on it.
type LevelReport struct {
	Name   string
	Result *latencytest.Result
	Report sloassert.Report
	// Undecided says why each objective the level cannot judge cannot be
	// judged, one line each ("ttft_p99: p99 needs n >= 100 (the records
	// hold 40 at c8)"): a sample smaller than the objective's rule asks
	// (unless allow_small_sample), where the data do not already show a
	// failure (a quantile whose lower confidence bound is over budget
	// fails on 40 requests too); or a row left inconclusive under
	// demonstrate or refute.
	Undecided []string
	undecided []bool // per outcome of Report
}

// Verdict is what the level decides: sloassert.Pass when the report
// passed; sloassert.Fail when an objective failed on the data;
// sloassert.Inconclusive when the level cannot be judged (no data, a
// partial run, or every objective that did not pass is Undecided).
func (lr LevelReport) Verdict() sloassert.Verdict {
	rep := lr.Report
	switch {
	case rep.Problem != "" || rep.Partial != "":
		return sloassert.Inconclusive
	case rep.OK():
		return sloassert.Pass
	}
	for i, o := range rep.Outcomes {
		if !o.OK && (i >= len(lr.undecided) || !lr.undecided[i]) {
			return sloassert.Fail
		}
	}
	return sloassert.Inconclusive
}

// undecide fills lr's Undecided from the spec's objectives, in the order
// of lr.Report.Outcomes.
func (lr *LevelReport) undecide(objectives []Objective) {
	lr.undecided = make([]bool, len(lr.Report.Outcomes))
	for i, out := range lr.Report.Outcomes {
		if out.OK || i >= len(objectives) {
			continue
		}
		o := objectives[i]
		why := ""
		if k := kindOf(o); k != nil && k.sample != nil && !o.AllowSmallSample {
			if m, q := k.sample(o); q > 0 && m != "" {
				res, of := judged(lr.Result, o) // a turn's objective: its turn's requests
				s, err := m.Sample(res)
				n := len(s)
				if m == sloassert.ITL { // the rule counts requests, as sloassert's
					c := res.Counts()
					n = c.Kept + c.Failed
				}
				// a quantile whose lower bound is already over budget fails
				// on any n (its Interval is set; other kinds' is not)
				proven := out.Verdict == sloassert.Fail && out.Interval != ""
				if need := sloassert.MinSamples(q); err == nil && n < need && !proven {
					what := sloassert.QuantileName(q)
					if o.Kind == kindTailRatio {
						what = "p99/p50"
					}
					why = fmt.Sprintf("%s needs n >= %d (the records hold %d%s at %s)", what, need, n, of, lr.Name)
				}
			}
		}
		if why == "" && out.Verdict == sloassert.Inconclusive && (o.Demonstrate > 0 || o.Refute > 0) {
			why = "inconclusive where the spec demands a decision (demonstrate or refute): more data is needed"
		}
		if why != "" {
			lr.undecided[i] = true
			lr.Undecided = append(lr.Undecided, o.Key+": "+why)
		}
	}
}

// JudgeFile loads the spec at path and judges records with it (Judge):
// the records given, or without any the spec's target.records. A spec
// given records needs no target (a target it has is not run), and its
// load's planned sample is not checked: the records' is, per level, when
// they are judged (see LevelReport.Undecided).
func JudgeFile(path, format string, records ...string) ([]LevelReport, error) {
	s, err := loadSpec(path, len(records) > 0)
	if err != nil {
		return nil, err
	}
	return Judge(s, format, records...)
}

// RecordsFormat names the format of a result read from records (one of
// records.Formats): the tool that measured it.
func RecordsFormat(res *latencytest.Result) string {
	if f := importedFormat(res); f != "" {
		return f
	}
	return records.Tailguard
}

// Judge judges records already measured with the spec's objectives, level
// by level, without a testing.T: the pure core of a records target (Run
// and RunFile are its testing wrapper). records are files or globs; none
// takes the spec's own target.records. format names their format (one of
// records.Formats); "" takes the spec's target.format, else detects
// each file's. A level listed in load.concurrency that the records do not
// hold is an error, as are chains and sessions (records hold no chain
// or session totals), an objective on a clock the format does not
// measure (k6 has no TTFT), and a spec without objectives. A spec with
// agent tasks is judged on the one tasks file a run of it wrote
// (tasks.json, read with agent.ReadTasks): its task objectives on the
// tasks' measured totals (the level "agent"), its other objectives on
// the tasks' model calls (the level "calls").
//
// A partial level is judged, and its report fails saying so (a partial
// result never passes). A level whose sample is too small for an
// objective says so in its Undecided.
func Judge(s Spec, format string, records ...string) ([]LevelReport, error) {
	if s.Agent != nil && len(s.Agent.Objectives) > 0 && (s.Chains == nil || len(s.Chains.Objectives) == 0) {
		return judgeTasks(s, format, records)
	}
	if len(s.Objectives) == 0 {
		return nil, fmt.Errorf("slospec: spec %s: no objectives: a spec with no objective never passes", s.title())
	}
	if s.Chains != nil && len(s.Chains.Objectives) > 0 {
		return nil, fmt.Errorf("slospec: spec %s: chains need a live target: records hold each call, not the measured chain totals", s.title())
	}
	if slices.ContainsFunc(s.Objectives, isSession) {
		return nil, fmt.Errorf("slospec: spec %s: session objectives need a live target: records hold each turn, not the measured session totals", s.title())
	}
	if format == "" {
		format = s.Target.Format
	}
	if len(records) == 0 {
		if s.Target.Records == "" {
			return nil, fmt.Errorf("slospec: spec %s: no records given and the spec's target is not records", s.title())
		}
		records = []string{s.Target.Records}
	}
	if format != "" {
		if err := measurable(s, format); err != nil {
			return nil, err
		}
	}
	var byLevel map[int]*latencytest.Result
	var err error
	byLevel, err = importLevels(format, records...)
	if err != nil {
		return nil, fmt.Errorf("slospec: spec %s: records: %w", s.title(), err)
	}
	if format == "" { // detected per file: check what the first level disclosed
		for _, res := range byLevel {
			if f := importedFormat(res); f != "" {
				if err := measurable(s, f); err != nil {
					return nil, err
				}
			}
		}
	}
	have := slices.Sorted(maps.Keys(byLevel))
	levels := have
	if len(s.Load.Concurrency) > 0 {
		levels = slices.Clone(s.Load.Concurrency)
	}
	objs := make([]sloassert.Objective, len(s.Objectives))
	for i, o := range s.Objectives {
		objs[i] = o.Objective()
	}
	var out []LevelReport
	for _, level := range levels {
		res := byLevel[level]
		name := recordsLevel(level)
		if res == nil {
			return nil, fmt.Errorf("slospec: spec %s: %s: no records at concurrency %d (the records hold %v)", s.title(), name, level, have)
		}
		discloseLevels(&res.Disclosure, levels)
		rep := sloassert.Evaluate(res, objs...)
		rep.Title = s.title() + " " + name
		lr := LevelReport{Name: name, Result: res, Report: rep}
		lr.undecide(s.Objectives)
		out = append(out, lr)
	}
	if len(out) == 0 {
		return nil, errors.New("slospec: spec " + s.title() + ": the records hold no request")
	}
	return out, nil
}

// importLevels is records.ImportLevels (Judge's parameter records hides
// the package).
var importLevels = records.ImportLevels

// importedFormat names the format an imported result came from; "" for
// this package's own.
func importedFormat(res *latencytest.Result) string { return res.Disclosure.Format }

// measurable refuses an objective on a clock the format does not measure.
func measurable(s Spec, format string) error {
	have := records.Metrics(format)
	for _, o := range s.Objectives {
		if clock, _ := needs(o); clock != "" && !slices.Contains(have, clock) {
			where := o.Key
			if o.Line > 0 {
				where = fmt.Sprintf("line %d: %s", o.Line, o.Key)
			}
			return fmt.Errorf("slospec: spec %s: %s: %s records do not measure %s (they measure %s)", s.title(), where, format, clock, strings.Join(have, ", "))
		}
	}
	return nil
}
