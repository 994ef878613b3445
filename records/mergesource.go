package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/internal/recfile"
	"github.com/tailguard/tailguard/internal/shard"
	"github.com/tailguard/tailguard/latencytest"
)

// source is one records file Merge reads: what the merged disclosure
// keeps of it (disclosure.Source, in Disclosure.Sources) and what
// the merge needs besides.
type source struct {
	disclosure.Source

	boxes    map[int]disclosure.Box   // its summary's disclosure, by box
	machine  *latencytest.MachineLoad // its summary's machine figures (nil: none)
	records  []latencytest.Record
	levelKey string            // its records' concurrency levels, to compare windows within a level
	end      *recordsEnd       // its end line (nil: the file does not end with one)
	written  int               // the records its summary says were written (counts.sent); -1 unknown
	label    string            // its run's label, from the summary or the end line
	unnamed  bool              // its summary names no shard (written before summaries did)
	shard    latencytest.Shard // Shard, parsed (the zero Shard when it does not split a run)
}

// readSummary reads the summary beside the source's records, if any.
func (src *source) readSummary() error {
	path := recfile.SummaryPath(src.Path)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		src.Counts.Planned = len(src.records)
		return nil
	}
	if err != nil {
		return fmt.Errorf("records: merge: %w", err)
	}
	var s summaryFile
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("records: merge: summary %s: %w", path, err)
	}
	test, label := s.Test, s.Label
	if s.Calls != nil && s.Counts == nil { // a chain run's summary
		s = *s.Calls
	}
	src.Summary, src.Test, src.Partial = path, test, s.Partial
	src.label, src.unnamed = label, s.Shard == nil
	if s.Shard != nil {
		src.Shard = *s.Shard
	}
	src.Counts.Planned = len(src.records)
	if s.Counts != nil {
		src.Counts.Planned = s.Counts.Planned
		src.written = s.Counts.Sent
	}
	if s.CPUPerWall != nil {
		src.CPUPerWall = *s.CPUPerWall
	}
	src.machine = s.Machine
	if s.Disclosure != nil {
		src.boxes = map[int]disclosure.Box{}
		for _, b := range s.Disclosure.Boxes {
			src.boxes[b.N] = b
		}
		if b, ok := src.boxes[14]; ok && !b.Missing {
			src.Location = b.Answer
		}
	}
	return nil
}

// fill computes the source's counts (but Planned) and window from its
// records.
func (src *source) fill() {
	r := latencytest.Result{Run: latencytest.Run{Planned: src.Counts.Planned}, Records: src.records}
	src.Counts = r.Counts()
	src.Start, src.End = time.Time{}, time.Time{}
	levels := map[int]bool{}
	for i := range src.records {
		rec := &src.records[i]
		levels[rec.Concurrency] = true
		if rec.Start.IsZero() {
			continue
		}
		end := rec.Start.Add(max(rec.Total, 0))
		if src.Start.IsZero() || rec.Start.Before(src.Start) {
			src.Start = rec.Start
		}
		if end.After(src.End) {
			src.End = end
		}
	}
	src.levelKey = fmt.Sprint(slices.Sorted(maps.Keys(levels)))
}

// identify finds the source's shard and label: from its summary or its
// end line. The problem is a shard that is unreadable, or that neither
// names ("" when none).
func (src *source) identify() string {
	if src.unnamed && src.end == nil {
		return "its summary names no shard and its records file has no end line (both written by an older tailguard): whether it is a whole run or one shard of it cannot be told; measure it again"
	}
	if src.end != nil {
		if src.Shard == "" {
			src.Shard = src.end.Shard
		}
		if src.label == "" {
			src.label = src.end.Label
		}
	}
	if src.Shard == "" {
		return ""
	}
	sh, err := shard.Parse(src.Shard)
	if err != nil {
		return fmt.Sprintf("it names shard %q, not one of n (%v): which part of the run it holds is not known", src.Shard, err)
	}
	if sh.Count > 1 {
		src.shard = sh
	}
	return ""
}

// name names the source in a partial reason: "shard 1/4 of c8 (path)",
// or its path when it is not a shard.
func (src *source) name() string {
	if src.shard.Count <= 1 {
		return src.Path
	}
	return "shard " + src.shard.String() + ofLabel(src.label) + " (" + src.Path + ")"
}

// lacks says what the source lacks, as far as its end line and summary
// tell ("" when it is whole); it runs after identify and readSummary (so
// Counts.Planned is the summary's, or the records').
func (src *source) lacks() string {
	var why []string
	if p := src.identify(); p != "" {
		why = append(why, p)
	}
	read := len(src.records)
	switch {
	case src.written >= 0 && read < src.written && read == 0:
		why = append(why, fmt.Sprintf("the records file is empty; its summary says %d records were written", src.written))
	case src.written >= 0 && read < src.written:
		why = append(why, fmt.Sprintf("the records file holds %d records; its summary says %d were written: the file was cut, %d records are missing",
			read, src.written, src.written-read))
	case src.written >= 0 && read > src.written:
		why = append(why, fmt.Sprintf("the records file holds %d records; its summary says %d were written: the summary is not this file's", read, src.written))
	case src.written < 0 && src.end == nil && read == 0:
		why = append(why, "the records file is empty, with no end line and no summary.json beside it")
	case src.written < 0 && src.end == nil:
		why = append(why, fmt.Sprintf("the records file (%d records) has no end line and no summary.json beside it: whether records are missing cannot be told (a file written before records files ended with their count, or one cut at a line boundary)", read))
	}
	if planned := src.Counts.Planned; len(why) == 0 && src.Partial == "" && read < planned {
		why = append(why, fmt.Sprintf("%d sent of %d planned, and its run does not say it was cut short: %d records are missing", read, planned, planned-read))
	}
	return strings.Join(why, "; ")
}
