package records

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/machine"
	"github.com/tailguard/tailguard/latencytest"
)

// This file fills the merged disclosure's boxes that need every source:
// the run window, the client CPU/wall and machine figures, the location.

// setLevels fills box 8 from the load levels merged, as a Sweep does.
func setLevels(d *latencytest.Disclosure, levels []int) {
	s := fmt.Sprint(levels)
	if len(levels) >= 3 {
		d.Set(8, "concurrency "+s+", side by side", false)
	} else {
		d.Set(8, "only concurrency "+s+" tested (fewer than three load levels)", true)
	}
}

// partialNote is "; PARTIAL: <reason>" for a result cut short, to end
// box 2's counts; "" for a whole one.
func partialNote(partial bool, reason string) string {
	if partial {
		return "; PARTIAL: " + reason
	}
	return ""
}

// modelsOf lists the model IDs the responses named.
func modelsOf(recs []latencytest.Record) []string {
	var out []string
	for i := range recs {
		if m := recs[i].Model; m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// mergeMachine combines the sources' machine figures (the MachineLoad
// each summary.json holds: Measure writes it under "machine", a chain
// run's under "calls"; see machine.Merge); never nil for a merge (a
// source without figures is listed as not recorded).
func mergeMachine(srcs []*source) *latencytest.MachineLoad {
	s := make([]machine.Source, len(srcs))
	for i, src := range srcs {
		s[i] = machine.Source{Source: src.name(), Machine: src.machine}
	}
	return machine.Merge(s)
}

// mergeWindow fills box 9 and warns when the sources of one level did
// not run at the same time.
func mergeWindow(d *latencytest.Disclosure, srcs []*source, res *latencytest.Result) {
	answer := fmt.Sprintf("%s to %s (%v) over %d source(s)", res.Start.UTC().Format(time.RFC3339Nano), res.End.UTC().Format(time.RFC3339Nano),
		res.End.Sub(res.Start).Round(time.Millisecond), len(srcs))
	if machine.VirtualClock(res.Start) {
		answer += ", virtual time"
	}
	groups := map[string][]*source{}
	for _, src := range srcs {
		if !src.Start.IsZero() {
			groups[src.levelKey] = append(groups[src.levelKey], src)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		g := groups[key]
		if len(g) < 2 {
			continue
		}
		late, early := g[0], g[0] // the latest start, the earliest end
		for _, src := range g[1:] {
			if src.Start.After(late.Start) {
				late = src
			}
			if src.End.Before(early.End) {
				early = src
			}
		}
		if !late.Start.After(early.End) {
			continue
		}
		level := ""
		if key != "[0]" {
			level = " (concurrency " + strings.Trim(key, "[]") + ")"
		}
		w := fmt.Sprintf("run windows do not overlap%s: %s ended at %s, %v before %s started at %s; the sources did not load the provider at the same time, so the merged figures describe %d separate smaller runs, not their combined load (align the shards with %s)",
			level, early.Path, early.End.UTC().Format(time.RFC3339Nano), late.Start.Sub(early.End).Round(time.Millisecond),
			late.Path, late.Start.UTC().Format(time.RFC3339Nano), len(g), latencytest.EnvStartAt)
		d.Warnings = append(d.Warnings, w)
	}
	if len(d.Warnings) > 0 {
		d.Set(9, answer+"; WARNING: "+strings.Join(d.Warnings, "; WARNING: "), true)
		return
	}
	if len(srcs) > 1 {
		answer += "; the sources' windows overlap"
	}
	d.Set(9, answer, false)
}

// mergeCPU fills box 13 with each source's client CPU/wall.
func mergeCPU(d *latencytest.Disclosure, srcs []*source) {
	if b, _ := agreed(srcs, 13); strings.Contains(b, "virtual time") && !strings.HasPrefix(b, "differs") {
		d.Set(13, b, false)
		return
	}
	parts := make([]string, len(srcs))
	worst, unknown := math.NaN(), 0
	for i, src := range srcs {
		v := "not measured"
		if math.IsNaN(src.CPUPerWall) {
			unknown++
		} else {
			v = strconv.FormatFloat(src.CPUPerWall, 'f', 2, 64)
			if math.IsNaN(worst) || src.CPUPerWall > worst {
				worst = src.CPUPerWall
			}
		}
		parts[i] = src.Path + " " + v
	}
	answer := "highest " + format.Float(worst, "%.2f")
	if worst > defaults.BusyClient {
		answer += fmt.Sprintf(": above %.1f, a client is part of the tail", defaults.BusyClient)
	}
	d.Set(13, answer+" ("+strings.Join(parts, "; ")+")", unknown > 0)
}

// mergeLocation fills box 14 with each source's location.
func mergeLocation(d *latencytest.Disclosure, srcs []*source) {
	var locs []string
	unknown := 0
	for _, src := range srcs {
		if src.Location == "" {
			unknown++
		} else if !slices.Contains(locs, src.Location) {
			locs = append(locs, src.Location)
		}
	}
	switch {
	case unknown == 0 && len(locs) == 1:
		d.Set(14, locs[0]+" (every source)", false)
		return
	case unknown == len(srcs):
		d.Set(14, "no location label in any source (set "+latencytest.EnvLocation+" in each shard)", true)
		return
	}
	parts := make([]string, len(srcs))
	for i, src := range srcs {
		loc := src.Location
		if loc == "" {
			loc = "no location label"
		}
		parts[i] = src.Path + ": " + loc
	}
	d.Set(14, strings.Join(parts, "; "), unknown > 0)
}

// noteMergedMachine adds the merged machine figures to box 13 (which
// mergeCPU filled), with the warning when any source's figures warn. When
// every source ran in virtual time the box already says so.
func noteMergedMachine(d *latencytest.Disclosure, m *latencytest.MachineLoad) {
	b := d.Box(13)
	s := m.String()
	if s == "" || strings.Contains(b.Answer, s) {
		return
	}
	answer := b.Answer + "; " + s
	if w := m.Warning(); w != "" {
		answer += "; WARNING: " + w
	}
	d.Set(13, answer, b.Missing)
}
