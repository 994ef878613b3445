package records

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/latencytest"
)

// Merge joins the raw records of several runs (the shards of one run,
// see latencytest.Shard) into one Result, so that the figures of the whole run are
// recomputed exactly from every raw value, never averaged from the parts.
// It judges nothing from an incomplete set: the Result is Partial, with a
// PartialReason naming each source or shard and what it lacks, so that
// every objective fails unless it allows a partial run (see "Complete"
// below).
// Each argument is a file or a glob (filepath.Match syntax, plus "**" for
// any number of directories: "shards/**/records*.jsonl"); a pattern that
// matches no file is an error, and a file matched twice counts once. Each
// file is a records file (latencytest.LoadRecords); the summary.json that Measure
// writes beside it ("summary-c8.json" beside "records-c8.jsonl"), when
// present, gives the source's planned count, client CPU/wall, location,
// partial reason, disclosure and machine figures.
//
// The Result holds every record in full (the files of a compact run hold
// full records, gaps included), ordered by send time (trace ID for ties);
// Planned sums the sources'; Start and End span them all; CPUPerWall is
// the highest of the sources' (the busiest client); Partial when any
// source was. Machine holds every source's machine figures
// (MachineLoad.Sources; a source whose summary has none is named as not
// recorded) and the worst of them, and warns,
// naming each source, when any source's figures say its timings may
// include scheduling delay of the client (MachineLoad.Warning); box 13
// shows them. Its Disclosure lists each source (Sources: path, counts, run
// window, CPU/wall, location), fills the boxes the sources agree on with
// their common answer (and lists differing ones per source), and warns
// (Warnings, and box 9 marked missing) when the sources of one load level
// have run windows that do not overlap: they did not load the provider at
// the same time, so the merged figures describe separate smaller runs, not
// their combined load (align them with TAILGUARD_START_AT).
//
// Complete: each source is checked against what it says of itself. Its
// end line (WriteRecords ends a file with its count) or its summary
// (counts.sent, the records Measure wrote; counts.planned) must account
// for every record: a file cut at a line boundary, emptied, or with fewer
// records than its summary wrote or planned (a run that says it was not
// cut short, "154 sent of 310 planned") makes the Result Partial. A file
// with neither an end line nor a summary (written before files had end
// lines, or cut and stripped of its summary: they cannot be told apart)
// is read but counted as incomplete, so it is judged only with
// AllowPartial. The shards of one run must all be there: the summaries
// (or end lines) that Measure writes say "shard 1/4" and the run's label,
// and a shard of a label and count with no source (its directory
// missing) makes the Result Partial ("shard 2/4 of c8: missing"). A
// records file written by WriteRecords alone carries its count but not
// its shard.
//
// Two sources that share a trace ID are an error naming both files (the
// same run merged twice, or shards that were not told apart): a request
// counted twice would make the figures lie. So are a file that cannot be
// read, holds the same trace ID twice or an end line whose count differs
// from the records before it, and a summary that cannot be read.
func Merge(paths ...string) (*latencytest.Result, error) {
	srcs, gaps, err := loadSources(paths)
	if err != nil {
		return nil, err
	}
	return mergeSources(srcs, gaps, -1), nil
}

// MergeLevels is Merge split by load level: one Result per
// latencytest.Record.Concurrency found in the records (0 for records that carry none,
// an open loop's), each merged from the part of every source at that
// level, with its own disclosure and window check. The same errors as
// Merge, checked across every level; an incomplete source makes
// every level it holds Partial, a missing shard every level its run's
// other shards hold.
func MergeLevels(paths ...string) (map[int]*latencytest.Result, error) {
	srcs, gaps, err := loadSources(paths)
	if err != nil {
		return nil, err
	}
	for _, src := range srcs {
		if src.Incomplete != "" { // every level it holds or its run holds: its missing records may be any
			gaps = append(gaps, shardGap{levels: runLevels(srcs, src), note: src.name() + ": " + src.Incomplete})
		}
	}
	parts := map[int][]*source{}
	for _, src := range srcs {
		by := map[int][]latencytest.Record{}
		for _, rec := range src.records {
			by[rec.Concurrency] = append(by[rec.Concurrency], rec)
		}
		for level, recs := range by {
			part := *src
			if len(by) > 1 { // its summary counts every level: keep what the records say
				part.Counts.Planned = len(recs)
			}
			part.records = recs
			part.fill()
			parts[level] = append(parts[level], &part)
		}
	}
	out := map[int]*latencytest.Result{}
	for level, ps := range parts {
		out[level] = mergeSources(ps, gaps, level)
	}
	return out, nil
}

// summaryFile is what Merge reads of a summary.json: a
// latencytest.ResultSummary, or a chain run's summary (whose calls hold
// the same keys).
type summaryFile struct {
	Test       string                   `json:"test"`
	Label      string                   `json:"label"`
	Shard      *string                  `json:"shard"` // nil: an older summary, which named no shard
	Counts     *latencytest.Counts      `json:"counts"`
	CPUPerWall *float64                 `json:"cpu_per_wall"`
	Partial    string                   `json:"partial"`
	Disclosure *latencytest.Disclosure  `json:"disclosure"`
	Machine    *latencytest.MachineLoad `json:"machine"`
	Calls      *summaryFile             `json:"calls"`
}

// loadSources reads every records file (and its summary), checks that
// no trace ID appears twice, and checks each source and each sharded run
// for completeness: the sources say what they lack (Incomplete), gaps
// are the shards missing.
func loadSources(patterns []string) ([]*source, []shardGap, error) {
	paths, err := globAll("records: merge", patterns)
	if err != nil {
		return nil, nil, err
	}
	var srcs []*source
	owner := map[string]string{} // trace ID -> the file that holds it
	for _, path := range paths {
		recs, end, err := loadRecords(path)
		if err != nil {
			return nil, nil, fmt.Errorf("records: merge: %s: %w", path, unprefixed{err})
		}
		src := &source{Source: disclosure.Source{Path: path, CPUPerWall: math.NaN()}, records: recs, end: end, written: -1}
		for _, rec := range recs {
			if first, dup := owner[rec.ID]; dup {
				if first == path {
					return nil, nil, fmt.Errorf("records: merge: %s holds trace ID %q twice", path, rec.ID)
				}
				n := 0
				for _, r := range recs {
					if owner[r.ID] == first {
						n++
					}
				}
				return nil, nil, fmt.Errorf("records: merge: %s and %s overlap in %d trace ID(s), %q the first: the same requests would count twice (the same run merged twice, or shards not told apart: set TAILGUARD_SHARD=i/n in each)",
					first, path, n, rec.ID)
			}
			owner[rec.ID] = path
		}
		if err := src.readSummary(); err != nil {
			return nil, nil, err
		}
		src.Incomplete = src.lacks()
		src.fill()
		srcs = append(srcs, src)
	}
	return srcs, shardGaps(srcs), nil
}

// unprefixed is an error of latencytest without its "latencytest: "
// prefix, to wrap in another.
type unprefixed struct{ err error }

func (e unprefixed) Error() string { return strings.TrimPrefix(e.err.Error(), "latencytest: ") }
func (e unprefixed) Unwrap() error { return e.err }

// mergeSources builds the merged Result: of every level when level < 0,
// else of that level (for the missing shards that leave it incomplete).
func mergeSources(srcs []*source, gaps []shardGap, level int) *latencytest.Result {
	res := &latencytest.Result{Run: latencytest.Run{CPUPerWall: math.NaN()}}
	var partial []string
	for _, src := range srcs {
		res.Records = append(res.Records, src.records...)
		res.Planned += src.Counts.Planned
		if !src.Start.IsZero() && (res.Start.IsZero() || src.Start.Before(res.Start)) {
			res.Start = src.Start
		}
		if src.End.After(res.End) {
			res.End = src.End
		}
		if !math.IsNaN(src.CPUPerWall) && (math.IsNaN(res.CPUPerWall) || src.CPUPerWall > res.CPUPerWall) {
			res.CPUPerWall = src.CPUPerWall
		}
		if src.Partial != "" {
			partial = append(partial, src.name()+": "+src.Partial)
		}
		if src.Incomplete != "" && level < 0 { // MergeLevels gives it as a gap, to every level it may touch
			partial = append(partial, src.name()+": "+src.Incomplete)
		}
	}
	for _, g := range gaps {
		if level < 0 || len(g.levels) == 0 || g.levels[level] {
			partial = append(partial, g.note)
		}
	}
	if len(partial) == 0 && len(res.Records) < res.Planned {
		partial = append(partial, fmt.Sprintf("%d records of %d planned", len(res.Records), res.Planned))
	}
	slices.SortStableFunc(res.Records, func(a, b latencytest.Record) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return compareIDs(a.ID, b.ID)
	})
	if len(partial) > 0 {
		res.Partial, res.PartialReason = true, strings.Join(partial, "; ")
	}
	res.Machine = mergeMachine(srcs)
	res.Disclosure = discloseMerge(srcs, res)
	return res
}

// compareIDs orders trace IDs with their numbers by value: c8-9999
// before c8-10000.
func compareIDs(a, b string) int {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := len(na) - len(nb); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitsPrefix(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// discloseMerge fills the merged disclosure.
func discloseMerge(srcs []*source, res *latencytest.Result) latencytest.Disclosure {
	var d latencytest.Disclosure
	for _, src := range srcs {
		d.Sources = append(d.Sources, src.Source)
	}
	n := len(srcs)
	for box := 1; box <= 15; box++ {
		answer, missing := agreed(srcs, box)
		d.Set(box, answer, missing)
	}
	d.Set(1, disclosure.Measurement+fmt.Sprintf("; merged from %d records file(s) by records.Merge, every figure recomputed from the raw records", n), false)
	c := res.Counts()
	per := make([]string, n)
	paths := make([]string, n)
	for i, src := range srcs {
		sc := src.Counts
		per[i] = fmt.Sprintf("%s: planned %d, sent %d", src.Path, sc.Planned, sc.Sent)
		paths[i] = src.Path
	}
	partial := partialNote(res.Partial, res.PartialReason)
	d.Set(2, fmt.Sprintf("merged from %d source(s): planned %d, sent %d: %d kept, %d discarded (warm-up), %d failed (%s)%s",
		n, c.Planned, c.Sent, c.Kept, c.Discarded, c.Failed, strings.Join(per, "; "), partial), false)
	d.Set(3, strings.Join(paths, ", "), false)
	if c.Discarded > 0 {
		d.Set(4, fmt.Sprintf("yes: %d warm-up record(s), as their runs marked them (by submission order)", c.Discarded), false)
	} else if b, _ := agreed(srcs, 4); b == "" {
		d.Set(4, "no: no record is marked warm-up", false)
	}
	var levels []int
	for i := range res.Records {
		if l := res.Records[i].Concurrency; l > 0 && !slices.Contains(levels, l) {
			levels = append(levels, l)
		}
	}
	slices.Sort(levels)
	if len(levels) > 1 {
		setLevels(&d, levels)
	}
	if models := modelsOf(res.Records); len(models) > 0 {
		d.Set(12, strings.Join(models, ", ")+" (as the API named it)", false)
	}
	mergeWindow(&d, srcs, res)
	mergeCPU(&d, srcs)
	noteMergedMachine(&d, res.Machine)
	mergeLocation(&d, srcs)
	return d
}

// agreed is box n as the sources' summaries give it: their common answer
// when they agree, else each source's, one after the other; missing when
// any source lacks it.
func agreed(srcs []*source, n int) (string, bool) {
	var answers, noSummary []string
	missing := false
	for _, src := range srcs {
		b, ok := src.boxes[n]
		if !ok {
			missing = true
			noSummary = append(noSummary, src.Path)
			continue
		}
		missing = missing || b.Missing
		if !slices.Contains(answers, b.Answer) {
			answers = append(answers, b.Answer)
		}
	}
	var out string
	switch len(answers) {
	case 0:
		return "not recorded: no source has a summary.json with a disclosure", true
	case 1:
		out = answers[0]
	default:
		parts := make([]string, 0, len(srcs))
		for _, src := range srcs {
			if b, ok := src.boxes[n]; ok {
				parts = append(parts, fmt.Sprintf("%s: %s", src.Path, b.Answer))
			}
		}
		out = "differs by source: " + strings.Join(parts, " | ")
	}
	if len(noSummary) > 0 {
		out += "; not recorded for " + strings.Join(noSummary, ", ") + " (no summary.json)"
	}
	return out, missing
}
