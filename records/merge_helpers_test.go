package records_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
)

// fake starts a fake provider in the current bubble and returns it with an
// OpenAI provider that reaches it in memory.
func fake(t *testing.T, p fakeprovider.Profile) (*fakeprovider.Fake, latencytest.Provider) {
	t.Helper()
	f := fakeprovider.New(p)
	t.Cleanup(f.Close)
	return f, latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
}

// writeArtifacts writes r's records and summary into dir as Measure
// does, for tests that build shards without a testing.T's artifact
// directory: records.jsonl ends with Measure's end line (count, shard,
// label), and summary.json is r's summary with test and label.
func writeArtifacts(dir string, r *latencytest.Result, test, label string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := latencytest.WriteRecords(&buf, r.Records); err != nil {
		return err
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	body = body[:bytes.LastIndexByte(body, '\n')+1] // WriteRecords' end line, without shard and label
	end, err := json.Marshal(struct {
		Records int    `json:"end_of_records"`
		Shard   string `json:"shard,omitempty"`
		Label   string `json:"label,omitempty"`
	}{len(r.Records), r.Shard.String(), label})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "records.jsonl"), append(append(body, end...), '\n'), 0o644); err != nil {
		return err
	}
	s := r.Summarize()
	s.Test, s.Label = test, label
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644)
}

// A merge's box 1 extends the box 1 every runner writes: the two stay
// the same words.
func TestMergeBoxOneIsTheRunners(t *testing.T) {
	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	r, err := latencytest.Batch{Requests: 3, NoWarmup: true}.Run(context.Background(), nop)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writeArtifacts(dir, r, "TestMergeBoxOneIsTheRunners", "c1"); err != nil {
		t.Fatal(err)
	}
	m, err := records.Merge(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const suffix = "; merged from 1 records file(s) by records.Merge, every figure recomputed from the raw records"
	got, run := m.Disclosure.Box(1).Answer, r.Disclosure.Box(1).Answer
	common, ok := strings.CutSuffix(got, suffix)
	if !ok || !strings.HasPrefix(common, "on the client") || !strings.HasPrefix(run, common+";") {
		t.Errorf("merged box 1:\n%s\nwant the runner's first sentences\n%s\nthen %q", got, run, suffix)
	}
}
