package sloassert

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/tailguard/tailguard/latencytest"
)

// TestingT is the part of *testing.T the assertions use (testify's shape):
// Errorf reports a failure and lets the test go on. Helper is called when
// the value has it.
type TestingT interface {
	Errorf(format string, args ...any)
}

// helper is the part of *testing.T that marks a function as a test
// helper. Each assertion calls it itself (Helper marks its caller), so a
// failure points at the test's line, not at sloassert.
type helper interface{ Helper() }

// Check judges s against every objective (Evaluate), reports the whole
// failure screen with t.Errorf when any fails (every violated objective,
// not just the first; for a sweep, each failing level's screen), writes
// the report where people look (WriteReport), and returns whether all
// passed. No objective never passes. A failing result run in virtual time
// ends with the command that replays it (ReplayCommand).
func Check[S Subject](t TestingT, s S, objectives ...Objective) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	rep := Evaluate(s, objectives...)
	if r, ok := any(s).(*latencytest.Result); ok {
		rep.Replay = ReplayCommand(t, r)
	}
	WriteReport(t, s, rep) // charts, report.md, the job summary
	if rep.Levels == nil {
		return finish(t, rep)
	}
	ok := true
	for _, l := range rep.Levels {
		ok = finish(t, l) && ok
	}
	return ok
}

// ReplayCommand is the command that replays the test t when r ran in
// virtual time (synctest's clock starts in 2000): against the fake, the
// same test with the same seed and trace IDs gives the same records, so
// rerunning it reproduces the report, locally and instantly. It is "" for
// a real-time run, a nil r, or a t without a Name. Check puts it at the
// end of a failing report.
func ReplayCommand(t TestingT, r *latencytest.Result) string {
	if r == nil || r.Start.IsZero() || r.Start.Year() >= 2001 {
		return ""
	}
	return RerunCommand(t)
}

// RerunCommand is the shell command that runs the test t again, alone,
// from its package directory: "cd DIR && go test -count=1 -run
// '^TestX$/^c8$' .". It is "" for a t without a Name.
func RerunCommand(t TestingT) string {
	n, ok := t.(interface{ Name() string })
	if !ok {
		return ""
	}
	parts := strings.Split(n.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	return fmt.Sprintf("cd %s && go test -count=1 -run '%s' .", shellQuote(dir), strings.Join(parts, "/"))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func finish(t TestingT, rep Report) bool {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	if !rep.OK() {
		t.Errorf("%s", strings.TrimRight(rep.String(), "\n"))
	}
	return rep.OK()
}
