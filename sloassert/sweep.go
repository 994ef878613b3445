package sloassert

import (
	"fmt"
	"math"
	"slices"

	"github.com/tailguard/tailguard/latencytest"
)

// evaluateSweep judges every level of a sweep (Evaluate): one report per
// planned level, in order, in the sweep report's Levels.
func evaluateSweep(sr *latencytest.SweepResult, objectives []Objective) Report {
	sweep := Report{Title: "sweep", CPUPerWall: math.NaN()}
	if sr == nil || (len(sr.Planned) == 0 && len(sr.Levels) == 0) {
		sweep.Levels = []Report{{Title: "sweep", Problem: "no sweep level to judge", CPUPerWall: math.NaN()}}
		return sweep
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
		rep := evaluate(sr.Results[i], objectives)
		rep.Title = title
		out = append(out, rep)
		if sr.Results[i].Partial {
			stoppedAt = title + " was cut short: " + sr.Results[i].PartialReason
		}
	}
	sweep.Levels = out
	return sweep
}
