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
}

// Judge judges records already measured with the spec's objectives, level
// by level, without a testing.T: the pure core of a records target (Run
// and RunFile are its testing wrapper). records are files or globs; none
// takes the spec's own target.records. format names their format (one of
// records.Formats); "" takes the spec's target.format, else detects
// each file's. A level listed in load.concurrency that the records do not
// hold is an error, as are chains (records hold no chain totals), an
// objective on a clock the format does not measure (k6 has no TTFT), and a
// spec without objectives.
//
// A partial level is judged, and its report fails saying so (a partial
// result never passes).
func Judge(s Spec, format string, records ...string) ([]LevelReport, error) {
	if len(s.Objectives) == 0 {
		return nil, fmt.Errorf("slospec: spec %s: no objectives: a spec with no objective never passes", s.title())
	}
	if s.Chains != nil && len(s.Chains.Objectives) > 0 {
		return nil, fmt.Errorf("slospec: spec %s: chains need a live target: records hold each call, not the measured chain totals", s.title())
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
		out = append(out, LevelReport{Name: name, Result: res, Report: rep})
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

// needs is the clock an objective cannot be judged without, named as
// records.Metrics names them, and what the objective judges
// of it: a quantile's, CV's or tail ratio's clock; the gaps between
// tokens for the decode speed ("itl") and for the longest stall
// ("max_gap"); TTFT for cold starts. "" for an objective that needs no
// clock of its own (an error rate, cache misses).
func needs(o Objective) (clock, what string) {
	switch o.Kind {
	case KindQuantile, KindCV, KindTailRatio:
		switch o.Metric {
		case sloassert.TTFT, sloassert.FirstAnswer, sloassert.ITL, sloassert.MaxGap, sloassert.Total:
			return string(o.Metric), "judges " + string(o.Metric)
		}
	case KindDecodeRate:
		return "itl", "judges the decode speed (tokens after the first, over their time)"
	case KindMaxStall:
		return "max_gap", "judges the longest gap between tokens"
	case KindColdStart:
		return "ttft", "judges cold starts by their TTFT"
	}
	return "", ""
}
