package sloassert

import (
	"fmt"
	"math"
	"slices"

	"github.com/tailguard/tailguard/latencytest"
)

// EvaluateSweep judges every level of a sweep against the objectives: one
// Report per planned level ("c8"), in order. A level that never ran (the
// sweep stops after a level its deadline cut short) is a failing report
// that says so, as is a level cut short (unless the objectives allow
// partial results); a nil sweep or one with no level fails.
func EvaluateSweep(sr *latencytest.SweepResult, objectives ...Objective) []Report {
	if sr == nil || (len(sr.Planned) == 0 && len(sr.Levels) == 0) {
		return []Report{{Title: "sweep", Problem: "no sweep level to judge", CPUPerWall: math.NaN()}}
	}
	planned := sr.Planned
	if len(planned) == 0 {
		planned = sr.Levels
	}
	var out []Report
	stoppedAt := ""
	for _, l := range planned {
		title := fmt.Sprintf("c%d", l)
		i := slices.Index(sr.Levels, l)
		if i < 0 || i >= len(sr.Results) || sr.Results[i] == nil {
			why := "never ran"
			if stoppedAt != "" {
				why += " (the sweep stopped after " + stoppedAt + ")"
			}
			out = append(out, Report{Title: title, Problem: "level " + title + " " + why, CPUPerWall: math.NaN()})
			continue
		}
		rep := Evaluate(sr.Results[i], objectives...)
		rep.Title = title
		out = append(out, rep)
		if sr.Results[i].Partial {
			stoppedAt = title + " was cut short: " + sr.Results[i].PartialReason
		}
	}
	return out
}

// CheckSweep judges every level of a sweep (EvaluateSweep), reports each
// failing level's screen with t.Errorf, and returns whether all passed.
func CheckSweep(t TestingT, sr *latencytest.SweepResult, objectives ...Objective) bool {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	ok := true
	reps := EvaluateSweep(sr, objectives...)
	writeSweepReport(t, sr, reps) // charts, reports, the job summary
	for _, rep := range reps {
		ok = finish(t, rep) && ok
	}
	return ok
}
