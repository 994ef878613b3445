package slospec_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/slospec"
)

// End to end in virtual time: a conversation cancels every turn after
// 2 of 8 tokens against a fake that goes on generating after the close
// (after_close: keep_generating); RunFile joins what the fake saw into
// the records, and the report names the cost: every cancelled turn kept
// generating for its 6 other tokens. Against a fake that stops, the
// report says it stopped. (A failing objective prints the report.)
func TestConversationReportsAServerThatKeptGenerating(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		profile string
		want    *regexp.Regexp
	}{
		{"after_close: {keep_generating: true}\n", regexp.MustCompile(`cancelled (\d+) \(the client's own cancels[^\n]*server stopped within one event: 0 of (\d+) reported; KEPT GENERATING after the client's close: (\d+) \(a cost: tokens paid for, never read\), e\.g\. conv\d+-turn\d+ \(6 tokens after the close\)`)},
		{"", regexp.MustCompile(`cancelled (\d+) \(the client's own cancels[^\n]*server stopped within one event: (\d+) of (\d+) reported`)},
	} {
		prof := "model: m\nttft: 100ms\nitl: 10ms\noutput_tokens: 8\nslots_per_replica: 64\n" + tc.profile
		if err := os.WriteFile(filepath.Join(dir, "keep.yaml"), []byte(prof), 0o644); err != nil {
			t.Fatal(err)
		}
		spec := filepath.Join(dir, "keep-spec.yaml")
		text := "target: {profile: keep.yaml}\nconversation: {sessions: 6, turns: 3, concurrency: 2, max_tokens: 8, think_time: 1s, cancel: {after_tokens: 2}}\nobjectives:\n  ttft: {p50: 1ms}\n"
		if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
		m := tc.want.FindStringSubmatch(out)
		// every cancelled turn reported (the last ones too, recorded at
		// their answers' end), and each of them kept generating (or stopped)
		if ok || m == nil || m[1] != m[2] || m[2] != m[3] || m[1] == "0" || tc.profile == "" && strings.Contains(out, "KEPT GENERATING") {
			t.Errorf("%q: ok %v; the report lacks %q (or counts differ):\n%s", tc.profile, ok, tc.want, out)
			continue
		}
		t.Logf("%q: %s cancelled turns, all reported", tc.profile, m[1])
	}
}
