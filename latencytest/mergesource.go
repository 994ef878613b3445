package latencytest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// MergeSource is one records file that MergeRecords joined, as the merged
// disclosure keeps it (Disclosure.Sources).
type MergeSource struct {
	// Path is the records file (records.jsonl as Measure writes it).
	Path string `json:"path"`
	// Summary is the summary.json read beside it; "" when there was none
	// (then CPU/wall, location and the other boxes are not known).
	Summary string `json:"summary,omitempty"`
	// Test is the test that measured, from the summary.
	Test string `json:"test,omitempty"`
	// Counts are the source's own: Planned from its summary (the records
	// it holds when it has none), the rest from its records.
	Counts Counts `json:"counts"`
	// Start and End bound its records: the first send and the last end
	// (Record.Start + Total), wall clock.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// CPUPerWall is its client's CPU seconds per wall second, from the
	// summary; NaN (null in JSON) when unknown.
	CPUPerWall float64 `json:"cpu_per_wall"`
	// Location is where its client ran (disclosure box 14), "" when not
	// said.
	Location string `json:"location,omitempty"`
	// Partial says why its run stopped early ("" when it did not).
	Partial string `json:"partial,omitempty"`
	// Shard is the part of a split run the source measured ("1/4"), from
	// its summary or its end line; "" for a whole run or when not said.
	Shard string `json:"shard,omitempty"`
	// Incomplete says what the source lacks ("" when it is whole, as far
	// as its end line and summary tell): a file cut short, emptied, or
	// with fewer records than planned. It makes the merge Partial.
	Incomplete string `json:"incomplete,omitempty"`

	boxes    map[int]Box  // its summary's disclosure, by box
	machine  *MachineLoad // its summary's machine figures (nil: none)
	records  []Record
	levelKey string      // its records' concurrency levels, to compare windows within a level
	end      *recordsEnd // its end line (nil: the file does not end with one)
	written  int         // the records its summary says were written (counts.sent); -1 unknown
	label    string      // its run's label, from the summary or the end line
	shard    Shard       // Shard, parsed
}

// MarshalJSON writes a NaN CPU/wall as null.
func (s MergeSource) MarshalJSON() ([]byte, error) {
	type plain MergeSource
	return json.Marshal(struct {
		plain
		CPUPerWall *float64 `json:"cpu_per_wall"`
	}{plain(s), finite(s.CPUPerWall)})
}

// UnmarshalJSON reads a null CPU/wall as NaN.
func (s *MergeSource) UnmarshalJSON(b []byte) error {
	type plain MergeSource
	var v struct {
		plain
		CPUPerWall *float64 `json:"cpu_per_wall"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = MergeSource(v.plain)
	s.CPUPerWall = math.NaN()
	if v.CPUPerWall != nil {
		s.CPUPerWall = *v.CPUPerWall
	}
	return nil
}

// readSummary reads the summary beside the source's records, if any.
func (src *MergeSource) readSummary() error {
	path := summaryPath(src.Path)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		src.Counts.Planned = len(src.records)
		return nil
	}
	if err != nil {
		return fmt.Errorf("latencytest: merge: %w", err)
	}
	var s summaryFile
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("latencytest: merge: summary %s: %w", path, err)
	}
	test, label := s.Test, s.Label
	if s.Calls != nil && s.Counts == nil { // a chain run's summary
		s = *s.Calls
	}
	src.Summary, src.Test, src.Partial = path, test, s.Partial
	src.Shard, src.label = s.Shard, label
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
		src.boxes = map[int]Box{}
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
func (src *MergeSource) fill() {
	r := Result{Records: src.records, Planned: src.Counts.Planned}
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

// identify finds the source's shard and label: from its summary, an
// older summary's box 2, or its end line. The problem is an unreadable
// shard ("" when none).
func (src *MergeSource) identify() string {
	if src.Shard == "" {
		if m := shardInBox.FindStringSubmatch(src.boxes[2].Answer); m != nil {
			src.Shard = m[1]
		}
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
	sh, err := parseShard(src.Shard)
	if err != nil {
		return fmt.Sprintf("it names shard %q, not one of n (%v): which part of the run it holds is not known", src.Shard, err)
	}
	if sh.sharded() {
		src.shard = sh
	}
	return ""
}

// name names the source in a partial reason: "shard 1/4 of c8 (path)",
// or its path when it is not a shard.
func (src *MergeSource) name() string {
	if !src.shard.sharded() {
		return src.Path
	}
	return "shard " + src.shard.String() + ofLabel(src.label) + " (" + src.Path + ")"
}

// lacks says what the source lacks, as far as its end line and summary
// tell ("" when it is whole); it runs after identify and readSummary (so
// Counts.Planned is the summary's, or the records').
func (src *MergeSource) lacks() string {
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
