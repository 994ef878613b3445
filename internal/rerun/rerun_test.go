package rerun

import (
	"os"
	"testing"
	"time"
)

type named string

func (n named) Name() string { return string(n) }

// TestCommand: the test name becomes an anchored -run pattern, one part
// per subtest, regexp metacharacters quoted; a directory with a space is
// shell-quoted, a quote inside it escaped.
func TestCommand(t *testing.T) {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		t    any
		want string
	}{
		{"no Name method", struct{}{}, ""},
		{"top-level test", named("TestX"), "cd " + dir + " && go test -count=1 -run '^TestX$' ."},
		{"subtest with metacharacters", named("TestX/c8_(p99)"), `cd ` + dir + ` && go test -count=1 -run '^TestX$/^c8_\(p99\)$' .`},
	} {
		if got := Command(tc.t); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := Command(t); got != "cd "+dir+" && go test -count=1 -run '^TestCommand$' ." {
		t.Errorf("a *testing.T: %q", got)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b-c_d.e": "/a/b-c_d.e",
		"/a b":       "'/a b'",
		"/it's":      `'/it'\''s'`,
		"":           "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReplay: only a start in virtual time (synctest's clock: 2000) gives
// a command; a real-time run or a zero start does not.
func TestReplay(t *testing.T) {
	virtual := time.Date(2000, 1, 1, 0, 0, 1, 0, time.UTC)
	if got, want := Replay(named("TestX"), virtual), Command(named("TestX")); got != want || got == "" {
		t.Errorf("virtual time: %q, want %q", got, want)
	}
	for _, start := range []time.Time{{}, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Now()} {
		if got := Replay(named("TestX"), start); got != "" {
			t.Errorf("start %v: %q, want no command", start, got)
		}
	}
	if got := Replay(struct{}{}, virtual); got != "" {
		t.Errorf("no Name: %q", got)
	}
}
