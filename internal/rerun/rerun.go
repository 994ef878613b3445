// Package rerun writes the shell command that runs one Go test again,
// alone, from its package directory: the line a failure report ends with
// so a person can reproduce it.
//
// [Command] reruns any test; [Replay] does so only for a run in virtual
// time (testing/synctest's clock starts in 2000), where the same test
// against the fake gives the same records, so the rerun replays the
// failure exactly.
package rerun

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

// Command is the shell command that runs the test t again, alone, from its
// package directory: "cd DIR && go test -count=1 -run '^TestX$/^c8$' .".
// t is a *testing.T or anything with its Name method; the command is ""
// for a t without one, or when the working directory is unknown.
func Command(t any) string {
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

// Replay is Command for a run that started at start in virtual time
// (synctest's clock starts in 2000, so any start before 2001): against
// the fake, the same test with the same seed and trace IDs gives the same
// records, so rerunning it reproduces the report, locally and instantly.
// It is "" for a real-time run, a zero start, or a t without a Name.
func Replay(t any, start time.Time) string {
	if start.IsZero() || start.Year() >= 2001 {
		return ""
	}
	return Command(t)
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
