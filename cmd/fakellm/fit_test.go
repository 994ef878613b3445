package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// classRecords writes records of two prompt classes whose TTFTs differ
// (about 100 ms and 2 s) with no prompt sizes reported: no profile
// reproduces each class, so fit's own check fails on the per-class KS
// tests.
func classRecords(t *testing.T) string {
	t.Helper()
	var recs []latencytest.Record
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 160 {
		class, ttft := "fast", 100*time.Millisecond+time.Duration(i)*time.Millisecond
		if i%2 == 1 {
			class, ttft = "slow", 2*time.Second+time.Duration(i)*time.Millisecond
		}
		recs = append(recs, latencytest.Record{ID: fmt.Sprintf("c1-r0-%04d", i), Concurrency: 1, PromptClass: class, Start: start.Add(time.Duration(i) * time.Second),
			Status: 200, TTFT: ttft, FirstAnswer: ttft, LastToken: ttft + 90*time.Millisecond, Total: ttft + 91*time.Millisecond, TokenEvents: 10, FinishReason: "stop"})
	}
	var buf bytes.Buffer
	if err := latencytest.WriteRecords(&buf, recs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFitCheckFails: when fit's own check fails, fit says so on stderr,
// writes nothing and exits 1; -force writes the profile (which loads) and
// exits 0, still saying so.
func TestFitCheckFails(t *testing.T) {
	path := classRecords(t)
	var out, errb bytes.Buffer
	err := run([]string{"fit", path}, &out, &errb, nil)
	code := exitCode(err, &errb)
	if code != 1 || out.Len() != 0 || !strings.Contains(errb.String(), "fit check failed") || !strings.Contains(errb.String(), "ttft slow") || !strings.Contains(errb.String(), "-force") {
		t.Errorf("exit %d, %d bytes written, stderr %q: want exit 1, nothing written, the failed tests named", code, out.Len(), errb.String())
	}
	out.Reset()
	errb.Reset()
	err = run([]string{"fit", "-force", path}, &out, &errb, nil)
	if code := exitCode(err, &errb); code != 0 || !strings.Contains(errb.String(), "written anyway") {
		t.Errorf("-force: exit %d, stderr %q: want 0 and the failure said", code, errb.String())
	}
	if _, err := fakeprovider.ParseProfile(out.Bytes()); err != nil || !strings.Contains(out.String(), "# fit check failed") {
		t.Errorf("-force wrote a profile that does not load or hides the failed check: %v\n%s", err, out.String())
	}
}

// TestFitMixFlag: -mix default and class=tokens pairs are read; a bad one
// is an error naming it.
func TestFitMixFlag(t *testing.T) {
	path := classRecords(t)
	for _, tc := range []struct {
		mix, want string
	}{
		{"short=200,short=300", `"short" given twice`},
		{"short=abc", `prompt_tokens "abc"`},
		{"short", "class=prompt_tokens"},
	} {
		err := run([]string{"fit", "-mix", tc.mix, path}, io.Discard, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err, io.Discard) != 2 {
			t.Errorf("-mix %q: %v, want exit 2 and an error containing %q", tc.mix, err, tc.want)
		}
	}
	if err := run([]string{"fit", "-force", "-mix", "fast=100,slow=200", path}, io.Discard, io.Discard, nil); err != nil {
		t.Errorf("-mix fast=100,slow=200: %v", err)
	}
}
