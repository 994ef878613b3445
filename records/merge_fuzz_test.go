package records_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
)

// FuzzMergeNeverCompleteFromIncomplete merges the shards of one run
// after the fuzzer's edits (a shard's directory removed, records cut at a
// line boundary, emptied or missing a middle line, an end line removed,
// a summary removed or its planned / written counts or shard key changed,
// a shard copied twice) and checks that the merge never yields a
// complete result from an incomplete set: either an error, or Partial
// with a reason, or every record of the whole run exactly once with as
// many planned.
func FuzzMergeNeverCompleteFromIncomplete(f *testing.F) {
	base := f.TempDir()
	whole := map[int][]string{} // shard count -> the whole run's trace IDs
	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	for n := 1; n <= 4; n++ {
		for i := range n {
			b := latencytest.Batch{Requests: 9, Warmup: 3, Concurrency: n, Load: latencytest.Load{Shard: latencytest.Shard{Index: i, Count: n}}}
			r, err := b.Run(context.Background(), nop)
			if err != nil {
				f.Fatal(err)
			}
			for _, rec := range r.Records {
				whole[n] = append(whole[n], rec.ID)
			}
			if err := writeArtifacts(filepath.Join(base, fmt.Sprint(n), fmt.Sprintf("shard-%d", i)), r, "FuzzShard", fmt.Sprintf("c%d", n)); err != nil {
				f.Fatal(err)
			}
		}
		slices.Sort(whole[n])
	}
	f.Add(uint8(3), []byte{})
	for op := range byte(10) {
		f.Add(uint8(3), []byte{op, 2})
		f.Add(uint8(1), []byte{op + 10, 0})
	}
	f.Add(uint8(3), []byte{3, 1, 6, 1})             // summary and end line gone: an old file without its summary
	f.Add(uint8(2), []byte{6, 0, 7, 0, 0, 1})       // old files, one shard missing
	f.Add(uint8(3), []byte{3, 0, 3, 1, 3, 2, 0, 3}) // no summaries, shard 3 missing
	f.Add(uint8(0), []byte{6, 0, 3, 0})             // one unsharded file: no end line, no summary
	f.Fuzz(func(t *testing.T, shards uint8, ops []byte) {
		n := 1 + int(shards%4)
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(base, fmt.Sprint(n)))); err != nil {
			t.Fatal(err)
		}
		for k := 0; k+1 < len(ops) && k < 16; k += 2 {
			op, i := ops[k], int(ops[k+1])%n
			sd := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
			rec, sum := filepath.Join(sd, "records.jsonl"), filepath.Join(sd, "summary.json")
			arg := int(op / 10)
			switch op % 10 {
			case 0:
				os.RemoveAll(sd)
			case 1:
				edit(rec, func(b []byte) []byte { return dropLines(1 + arg%4)(b) })
			case 2:
				edit(rec, func([]byte) []byte { return nil })
			case 3:
				os.Remove(sum)
			case 4:
				summaryKey(sum, "planned", func(v float64) float64 { return v + 1 + float64(arg) })
			case 5:
				summaryKey(sum, "sent", func(v float64) float64 { return v + float64(arg%3) - 1 })
			case 6:
				edit(rec, func(b []byte) []byte {
					if i := bytes.LastIndex(b, []byte(`{"end_of_records"`)); i >= 0 {
						return b[:i]
					}
					return b
				})
			case 7:
				summaryKey(sum, "shard", nil)
			case 8:
				edit(rec, func(b []byte) []byte {
					lines := bytes.SplitAfter(b, []byte("\n"))
					if len(lines) < 3 {
						return b
					}
					j := arg % (len(lines) - 2)
					return slices.Concat(bytes.Join(lines[:j], nil), bytes.Join(lines[j+1:], nil))
				})
			case 9:
				if _, err := os.Stat(sd); err == nil {
					os.CopyFS(filepath.Join(dir, fmt.Sprintf("copy-%d-%d", i, k)), os.DirFS(sd))
				}
			}
		}
		glob := filepath.Join(dir, "**", "records*.jsonl")
		m, err := records.Merge(glob)
		if err == nil {
			complete(t, "MergeRecords", m, whole[n])
		}
		levels, err := records.MergeLevels(glob)
		if err == nil {
			for _, r := range levels {
				complete(t, "MergeLevels", r, whole[n])
			}
		}
	})
}

// complete fails t when a merged result says it is complete but is not
// the whole run.
func complete(t *testing.T, what string, r *latencytest.Result, whole []string) {
	t.Helper()
	if r.Partial {
		if r.PartialReason == "" {
			t.Errorf("%s: Partial without a reason", what)
		}
		return
	}
	var ids []string
	for _, rec := range r.Records {
		ids = append(ids, rec.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, whole) || r.Counts().Sent != r.Planned {
		t.Errorf("%s: complete, but %d records (planned %d) of the whole run's %d:\n%v", what, len(ids), r.Planned, len(whole), r.Disclosure.Sources)
	}
}

// edit rewrites a file through f, when it exists.
func edit(path string, f func([]byte) []byte) {
	if b, err := os.ReadFile(path); err == nil {
		os.WriteFile(path, f(b), 0o644)
	}
}

// summaryKey changes a count of a summary.json (counts.<key>) through f,
// or removes a top-level key (f nil); a missing summary stays missing.
func summaryKey(path, key string, f func(float64) float64) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return
	}
	if f == nil {
		delete(m, key)
	} else if c, ok := m["counts"].(map[string]any); ok {
		v, _ := c[key].(float64)
		c[key] = f(v)
	}
	if b, err := json.Marshal(m); err == nil {
		os.WriteFile(path, b, 0o644)
	}
}
