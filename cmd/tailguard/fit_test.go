package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// TestFitCheckExit: tailguard fit exits 1 with the failed KS tests on
// stderr and nothing written when fit's own check fails (two prompt
// classes with 100 ms and 2 s TTFTs and no prompt sizes: no profile
// serves each class), and writes a loadable profile with -force.
func TestFitCheckExit(t *testing.T) {
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
	code, out, errs := runCmd("fit", path)
	if code != 1 || out != "" || !strings.Contains(errs, "fit check failed") || !strings.Contains(errs, "ttft fast") {
		t.Errorf("fit: exit %d, stdout %d bytes, stderr %q: want 1, nothing written, the failed tests named", code, len(out), errs)
	}
	code, out, errs = runCmd("fit", "-force", path)
	if _, err := fakeprovider.ParseProfile([]byte(out)); code != 0 || err != nil || !strings.Contains(errs, "written anyway") {
		t.Errorf("fit -force: exit %d, profile error %v, stderr %q: want 0, a profile, the failure said", code, err, errs)
	}
	if code, _, errs := runCmd("fit", "-mix", "fast=0", path); code != 2 || !strings.Contains(errs, `prompt_tokens "0"`) {
		t.Errorf("fit -mix fast=0: exit %d, stderr %q: want 2 naming the size", code, errs)
	}
}
