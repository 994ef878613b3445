package records_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
)

// measureShards measures the n shards of b with Measure (each in a
// subtest, as n machines would) and copies each one's artifacts
// (records.jsonl, summary.json) to root/shard-i, as a judge job downloads
// them.
func measureShards(t *testing.T, root string, b latencytest.Batch, n int) {
	t.Helper()
	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	for i := range n {
		t.Run(fmt.Sprintf("shard-%d", i), func(t *testing.T) {
			b := b
			b.Shard = latencytest.Shard{Index: i, Count: n}
			b.Measure(t, nop)
			ad, ok := any(t).(interface{ ArtifactDir() string })
			if !ok {
				t.Skip("no t.ArtifactDir before Go 1.26: Measure writes no records")
			}
			if err := os.CopyFS(filepath.Join(root, fmt.Sprintf("shard-%d", i)), os.DirFS(ad.ArtifactDir())); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// editFile rewrites a file through f.
func editFile(t *testing.T, path string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dropLines removes the last k lines.
func dropLines(k int) func([]byte) []byte {
	return func(b []byte) []byte {
		lines := bytes.SplitAfter(b, []byte("\n"))
		if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		return bytes.Join(lines[:max(0, len(lines)-k)], nil)
	}
}

// editSummary changes one key of a summary.json's counts, or removes a
// top-level key (value nil).
func editSummary(t *testing.T, path string, key string, value any) {
	t.Helper()
	editFile(t, path, func(b []byte) []byte {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasPrefix(key, "counts."):
			m["counts"].(map[string]any)[strings.TrimPrefix(key, "counts.")] = value
		case value == nil:
			delete(m, key)
		default:
			m[key] = value
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
}

// A merge is Partial, naming the shard and what is missing, whenever the
// set it reads is not the whole run: a shard's directory absent, a
// records file cut at a line boundary or emptied, a summary whose planned
// or written count disagrees with the records. A whole set, written by
// Measure, with or without its summaries, merges complete.
func TestMergeIsPartialWhenTheSetIsNot(t *testing.T) {
	root := t.TempDir()
	// 4 shards of 2 warm-up + 38 requests: 10 each; concurrency 4 (1 each).
	measureShards(t, filepath.Join(root, "whole"), latencytest.Batch{Requests: 38, Warmup: 2, Concurrency: 4}, 4)
	rec := func(dir string, i int) string {
		return filepath.Join(dir, fmt.Sprintf("shard-%d", i), "records.jsonl")
	}
	sum := func(dir string, i int) string {
		return filepath.Join(dir, fmt.Sprintf("shard-%d", i), "summary.json")
	}
	stripEnd := func(b []byte) []byte { // an old records file: no end line
		return dropLines(1)(b)
	}
	for _, c := range []struct {
		name  string
		edit  func(t *testing.T, dir string)
		wants []string // in PartialReason; none: the merge is complete
	}{
		{"whole", func(*testing.T, string) {}, nil},
		{"whole without summaries", func(t *testing.T, dir string) {
			for i := range 4 {
				os.Remove(sum(dir, i))
			}
		}, nil},
		{"old files (no end line, no shard key): which part each holds is unknown", func(t *testing.T, dir string) {
			for i := range 4 {
				editFile(t, rec(dir, i), stripEnd)
				editSummary(t, sum(dir, i), "shard", nil)
			}
		}, []string{"shard-0/records.jsonl: its summary names no shard and its records file has no end line", "shard-3/records.jsonl: its summary names no shard"}},
		{"old records files (no end line), summaries naming the shard", func(t *testing.T, dir string) {
			for i := range 4 {
				editFile(t, rec(dir, i), stripEnd)
			}
		}, nil},
		{"shard directory missing", func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, "shard-2"))
		}, []string{"shard 2/4 of c4 missing: no records file of it among those merged (3 of 4 shards read)"}},
		{"two shard directories missing", func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, "shard-0"))
			os.RemoveAll(filepath.Join(dir, "shard-3"))
		}, []string{"shards 0/4, 3/4 of c4 missing: no records file of it among those merged (2 of 4 shards read)"}},
		{"shard missing, no summaries: the end lines name the shards", func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, "shard-1"))
			for _, i := range []int{0, 2, 3} {
				os.Remove(sum(dir, i))
			}
		}, []string{"shard 1/4 of c4 missing"}},
		{"shard missing, old records files: the summaries name the shards", func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, "shard-1"))
			for _, i := range []int{0, 2, 3} {
				editFile(t, rec(dir, i), stripEnd)
			}
		}, []string{"shard 1/4 of c4 missing"}},
		{"records cut at a line boundary", func(t *testing.T, dir string) {
			editFile(t, rec(dir, 1), dropLines(4)) // the end line and 3 records
		}, []string{"shard 1/4 of c4 (" + rec("DIR", 1) + "): the records file holds 7 records; its summary says 10 were written: the file was cut, 3 records are missing"}},
		{"records emptied", func(t *testing.T, dir string) {
			editFile(t, rec(dir, 3), func([]byte) []byte { return nil })
		}, []string{"shard 3/4 of c4 (" + rec("DIR", 3) + "): the records file is empty; its summary says 10 records were written"}},
		{"records cut, summary gone", func(t *testing.T, dir string) {
			editFile(t, rec(dir, 0), dropLines(2))
			os.Remove(sum(dir, 0))
		}, []string{rec("DIR", 0) + ": the records file (9 records) has no end line and no summary.json beside it: whether records are missing cannot be told"}},
		{"records emptied, summary gone", func(t *testing.T, dir string) {
			editFile(t, rec(dir, 0), func([]byte) []byte { return nil })
			os.Remove(sum(dir, 0))
		}, []string{rec("DIR", 0) + ": the records file is empty, with no end line and no summary.json beside it"}},
		{"summary plans more than was sent", func(t *testing.T, dir string) {
			editSummary(t, sum(dir, 2), "counts.planned", 310)
		}, []string{"shard 2/4 of c4 (" + rec("DIR", 2) + "): 10 sent of 310 planned, and its run does not say it was cut short: 300 records are missing"}},
		{"summary wrote more than the file holds", func(t *testing.T, dir string) {
			editFile(t, rec(dir, 2), stripEnd)
			editSummary(t, sum(dir, 2), "counts.sent", 11)
		}, []string{"the records file holds 10 records; its summary says 11 were written: the file was cut, 1 records are missing"}},
		{"summary wrote fewer than the file holds", func(t *testing.T, dir string) {
			editSummary(t, sum(dir, 2), "counts.sent", 9)
		}, []string{"its summary says 9 were written: the summary is not this file's"}},
		{"summary names no shard", func(t *testing.T, dir string) {
			editSummary(t, sum(dir, 2), "shard", "two of four")
		}, []string{`it names shard "two of four", not one of n`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(root, "case-"+strings.ReplaceAll(c.name, " ", "_"))
			if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "whole"))); err != nil {
				t.Fatal(err)
			}
			c.edit(t, dir)
			glob := filepath.Join(dir, "**", "records*.jsonl")
			m, err := records.Merge(glob)
			if err != nil {
				t.Fatal(err)
			}
			levels, err := records.MergeLevels(glob)
			if err != nil {
				t.Fatal(err)
			}
			if len(levels) != 1 || levels[4] == nil {
				t.Fatalf("levels %v", levels)
			}
			for name, r := range map[string]*latencytest.Result{"MergeRecords": m, "MergeLevels": levels[4]} {
				if len(c.wants) == 0 {
					if r.Partial || r.Counts().Sent != 40 {
						t.Errorf("%s: a whole set merged partial (%q) or short: %+v", name, r.PartialReason, r.Counts())
					}
					continue
				}
				if !r.Partial {
					t.Errorf("%s: an incomplete set merged complete: %+v", name, r.Counts())
				}
				for _, w := range c.wants {
					if w = strings.ReplaceAll(w, "DIR", dir); !strings.Contains(r.PartialReason, w) {
						t.Errorf("%s: partial reason %q\nwant %q", name, r.PartialReason, w)
					}
				}
				if b := r.Disclosure.Box(2).Answer; !strings.Contains(b, "PARTIAL: ") {
					t.Errorf("%s: box 2 %q", name, b)
				}
			}
		})
	}
}

// A missing shard leaves incomplete only the levels its run holds:
// another run's level, whole, merges complete.
func TestMergeLevelsMissingShardMarksItsLevel(t *testing.T) {
	root := t.TempDir()
	measureShards(t, filepath.Join(root, "c2"), latencytest.Batch{Requests: 8, Warmup: 2, Concurrency: 2}, 2)
	measureShards(t, filepath.Join(root, "c4"), latencytest.Batch{Requests: 8, Warmup: 4, Concurrency: 4}, 4)
	os.RemoveAll(filepath.Join(root, "c4", "shard-1"))
	levels, err := records.MergeLevels(filepath.Join(root, "**", "records*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if r := levels[2]; r == nil || r.Partial {
		t.Errorf("level 2, whole: %+v", r)
	}
	if r := levels[4]; r == nil || !r.Partial || !strings.Contains(r.PartialReason, "shard 1/4 of c4 missing") {
		t.Errorf("level 4, missing a shard: %+v", r)
	}
}
