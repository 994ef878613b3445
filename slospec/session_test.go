package slospec_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/slospec"
)

// sessionProfile is a fixed-latency fake: a turn takes 100 ms to the
// first token and 7 gaps of 10 ms, 170 ms in all; a later turn's history
// is a cached prefix (the default prefix cache: TTFT × 0.1), 80 ms.
const sessionProfile = "model: m\nttft: 100ms\nitl: 10ms\noutput_tokens: 8\nslots_per_replica: 64\n"

// sessionSpec runs 20 sessions of 4 turns with a fixed think time of 2 s:
// each session takes exactly 170 ms + 3 × 80 ms + 3 × 2 s = 6.41 s.
const sessionSpec = `
target: {profile: session.yaml}
conversation: {sessions: 20, turns: 4, concurrency: 4, think_time: 2s, max_tokens: 8}
objectives:
  session: {p95: BUDGET, error_rate: 5%}
`

// session: {p95: 30s, error_rate: 5%} parses into the session kinds,
// judged on the sessions (think times included), named as sessions.
func TestSessionObjectivesParse(t *testing.T) {
	s, err := slospec.ParseSpec([]byte(strings.Replace(strings.Replace(sessionSpec, "{profile: session.yaml}", "{preset: mistral-3-14b}", 1), "BUDGET", "30s", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range s.Objectives {
		got = append(got, o.Key+"="+o.ChainObjective().Name)
		if !o.IsChain() {
			t.Errorf("%s judges a single result", o.Key)
		}
	}
	want := []string{"session_p95=session total p95 <= 30.000s", "session_error_rate=sessions with a failed turn <= 5%"}
	if !slices.Equal(got, want) {
		t.Errorf("objectives %q, want %q", got, want)
	}
}

// Bad session objectives are errors naming the line and key.
func TestSessionObjectivesBadInput(t *testing.T) {
	base := "target: {preset: mistral-3-14b}\n"
	conv := base + "conversation: {sessions: 20, turns: 3}\n"
	for _, tc := range []struct{ spec, want string }{
		{conv + "objectives: {session: {}}\n", "line 3: objectives.session: no objective"},
		{conv + "objectives: {session: {p95: fast}}\n", "objectives.session.p95"},
		{conv + "objectives: {session: {p95: 30s, total: 1s}}\n", "objectives.session.total: unknown key \"total\""},
		{conv + "objectives: {session: {error_rate: 100%}}\n", "100% lets every request fail"},
		{conv + "objectives: {session: 30s}\n", "objectives.session: want a map"},
		{conv + "objectives: {session: {p99: 30s}}\n", "p99 needs n >= 100 (conversation.sessions gives 20 sessions"},
		{base + "load: {requests: 100}\nobjectives: {session: {p50: 30s}}\n", "session objectives judge a conversation's sessions: add a conversation section"},
		{"target: {records: x.jsonl}\nobjectives: {session: {p50: 30s}}\n", "session objectives need a live target"},
		{conv + "objectives: {turn: {2: {session: {p50: 30s}}}}\n", "a turn's objectives judge its requests: session_p50 judges whole sessions"},
	} {
		_, err := slospec.ParseSpec([]byte(tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.spec, err, tc.want)
		}
	}
	dir := t.TempDir()
	spec := writeSpec(t, dir, "objectives: {session: {p50: 30s}}\n")
	if _, err := slospec.JudgeFile(spec, "", filepath.Join(dir, "none.jsonl")); err == nil || !strings.Contains(err.Error(), "session objectives need a live target") {
		t.Errorf("judge with session objectives: %v", err)
	}
}

// RunFile judges the sessions' measured totals in virtual time, to the
// nanosecond: a budget of 6.41 s passes and 6.409 s fails, in the
// session_p95 subtest alone, the report naming sessions.
func TestSessionObjectivesRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "session.yaml"), []byte(sessionProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		budget string
		ok     bool
	}{{"6.41s", true}, {"6.409s", false}} {
		spec := filepath.Join(dir, "session-spec.yaml")
		if err := os.WriteFile(spec, []byte(strings.Replace(sessionSpec, "BUDGET", tc.budget, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		ok, skipped, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, spec) })
		if ok != tc.ok || skipped {
			t.Fatalf("budget %s: ok %v, skipped %v; output:\n%s", tc.budget, ok, skipped, out)
		}
		if tc.ok {
			continue
		}
		want := []string{"inner", "inner/conversation", "inner/conversation/session_p95"}
		if got := failedTestNames(out); !slices.Equal(got, want) {
			t.Errorf("failed tests %v, want %v; output:\n%s", got, want, out)
		}
		if strings.Contains(out, "correlated") { // think time is no model time: the prediction compares the turns'
			t.Errorf("the think times read as correlated calls:\n%s", out)
		}
		for _, w := range []string{"session total p95 <= 6409.0ms", "6410.0ms", "-1.0ms", "chain tools", "conversation sessions: FAIL"} {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, out)
			}
		}
	}
}
