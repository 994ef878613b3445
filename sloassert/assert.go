package sloassert

import (
	"strings"

	"github.com/tailguard/tailguard/internal/rerun"
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
// passed. No objective never passes. The report of a failing result run
// in virtual time (against the fake, under testing/synctest) ends with
// the command that replays it: the same test gives the same records.
func Check[S Subject](t TestingT, s S, objectives ...Objective) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	rep := Evaluate(s, objectives...)
	if r, ok := any(s).(*latencytest.Result); ok {
		rep.Replay = replayCommand(t, r)
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

// replayCommand is the command that replays the test t when r ran in
// virtual time (rerun.Replay); "" for a nil r.
func replayCommand(t TestingT, r *latencytest.Result) string {
	if r == nil {
		return ""
	}
	return rerun.Replay(t, r.Start)
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
