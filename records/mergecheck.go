package records

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/tailguard/tailguard/internal/recfile"
	"github.com/tailguard/tailguard/latencytest"
)

// This file checks that a merge reads a whole run (see Merge):
// each source against its end line and summary, each sharded run for
// shards with no source.

// recordsEnd is the end line of a records file, as latencytest's
// WriteRecords and Measure write it.
type recordsEnd = recfile.End

// loadRecords is latencytest.LoadRecords with the file's end line: its
// last non-blank line when that is an end line (nil when the file does
// not end with one). latencytest.ReadRecords checks every end line's
// count.
func loadRecords(path string) ([]latencytest.Record, *recordsEnd, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	recs, err := latencytest.ReadRecords(bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	return recs, endOf(b), nil
}

// endOf decodes the last non-blank line of a records file as an end
// line; nil when it is not one (a record, or nothing).
func endOf(b []byte) *recordsEnd {
	for {
		i := bytes.LastIndexByte(b, '\n')
		if line := b[i+1:]; len(bytes.TrimSpace(line)) > 0 {
			e, _ := recfile.EndLine(line)
			return e
		}
		if i < 0 {
			return nil
		}
		b = b[:i]
	}
}

func ofLabel(label string) string {
	if label == "" {
		return ""
	}
	return " of " + label
}

// runLevels are the load levels an incomplete source's records may have
// held: those its run's sources (its label) hold; every level (nil) when
// its label is not known, or its run holds no record.
func runLevels(srcs []*source, src *source) map[int]bool {
	if src.label == "" {
		return nil
	}
	levels := map[int]bool{}
	for _, s := range srcs {
		if s.label == src.label {
			for i := range s.records {
				levels[s.records[i].Concurrency] = true
			}
		}
	}
	return levels
}

// shardGap is a shard missing from a merge: note says which; levels are
// the load levels the run's other shards hold (the levels it leaves
// incomplete).
type shardGap struct {
	levels map[int]bool
	note   string
}

// shardGaps finds, for each sharded run among the sources (one label and
// shard count), the shards with no source.
func shardGaps(srcs []*source) []shardGap {
	type run struct {
		label string
		count int
	}
	runs := map[run][]*source{}
	for _, src := range srcs {
		if src.shard.Count > 1 {
			k := run{src.label, src.shard.Count}
			runs[k] = append(runs[k], src)
		}
	}
	keys := slices.SortedFunc(maps.Keys(runs), func(a, b run) int {
		if c := strings.Compare(a.label, b.label); c != 0 {
			return c
		}
		return a.count - b.count
	})
	var gaps []shardGap
	for _, k := range keys {
		present := map[int]bool{}
		levels := map[int]bool{}
		for _, src := range runs[k] {
			present[src.shard.Index] = true
			for i := range src.records {
				levels[src.records[i].Concurrency] = true
			}
		}
		missing := k.count - len(present)
		if missing == 0 {
			continue
		}
		var names []string // the first ten missing: a run has at most len(srcs) present
		for i := 0; i < k.count && len(names) < 10; i++ {
			if !present[i] {
				names = append(names, fmt.Sprintf("%d/%d", i, k.count))
			}
		}
		list := strings.Join(names, ", ")
		if missing > len(names) {
			list += fmt.Sprintf(" and %d more", missing-len(names))
		}
		what := "shard " + list
		if missing > 1 {
			what = "shards " + list
		}
		gaps = append(gaps, shardGap{levels: levels, note: fmt.Sprintf("%s%s missing: no records file of it among those merged (%d of %d shards read)",
			what, ofLabel(k.label), len(present), k.count)})
	}
	return gaps
}
