package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/fit"
	"github.com/tailguard/tailguard/latencytest"
)

// TestFit: -fit writes a commented YAML profile that -profile can serve.
func TestFit(t *testing.T) {
	st, err := fit.LoadStudy("../../fit/testdata/serverless-tail-study/results_llama-4-maverick.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "records.jsonl")
	var buf bytes.Buffer
	if err := latencytest.WriteRecords(&buf, st.Chains); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"-fit", path, "-seed", "4"}, &out, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	p, err := fakeprovider.ParseProfile(out.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if p.Seed != 4 || p.Conversation.ICC < 0.4 || p.Stall.Probability == 0 {
		t.Errorf("fitted seed %d, icc %v, stall %v; want 4, about 0.53 and the stalled stream", p.Seed, p.Conversation.ICC, p.Stall.Probability)
	}
	for _, want := range []string{"# ttft: interpolated empirical", "# conversation.icc: one-way ANOVA", "KS total"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if err := run([]string{"-fit", path, "-preset", "gpt-oss-120b"}, io.Discard, io.Discard, nil); err == nil {
		t.Error("-fit with -preset: no error")
	}
}

// TestFitSubcommand: fit FILE is -fit FILE; a bad call names what is wrong.
func TestFitSubcommand(t *testing.T) {
	st, err := fit.LoadStudy("../../fit/testdata/serverless-tail-study/results_llama-4-maverick.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "records.jsonl")
	var buf bytes.Buffer
	if err := latencytest.WriteRecords(&buf, st.Chains); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var sub, flagged bytes.Buffer
	if err := run([]string{"fit", "-seed", "4", path}, &sub, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-fit", path, "-seed", "4"}, &flagged, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	if sub.Len() == 0 || sub.String() != flagged.String() {
		t.Errorf("fit FILE and -fit FILE differ (%d and %d bytes)", sub.Len(), flagged.Len())
	}
	var tailed bytes.Buffer
	if err := run([]string{"fit", "-tail", "-seed", "4", path}, &tailed, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sub.String(), "tail: {") || !strings.Contains(tailed.String(), "tail: {share: ") || !strings.Contains(tailed.String(), "probability-weighted moments") {
		t.Errorf("fit -tail: want a tail (and none without -tail); got:\n%s", tailed.String())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fit"}, "give one records file"},
		{[]string{"fit", path, path}, "give one records file"},
		{[]string{"fit", "-seed", "-2", path}, "-seed -2"},
		{[]string{"serv", "-preset", "x"}, `unknown subcommand "serv"`},
	} {
		err := run(tc.args, io.Discard, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
