package latencytest

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// WriteArtifacts writes r's records (with Measure's end line: count,
// shard, label) and summary into dir as Measure does, for tests that
// build shards without a testing.T's artifact directory.
func WriteArtifacts(dir string, r *Result, test, label string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "records.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeRecordsEnd(f, r.Records, recordsEnd{Shard: r.Shard.String(), Label: label}); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	s := r.Summarize()
	s.Test, s.Label = test, label
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(summaryPath(path), b, 0o644)
}

// Brief is the summary's few log lines (what Measure logs), for tests.
func (s ResultSummary) Brief() string { return s.brief("") }
