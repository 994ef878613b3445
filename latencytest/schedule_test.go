package latencytest

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
)

func TestLoadSchedule(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name, in string
		want     []Arrival
		err      string // the error names this (line and cause)
	}{
		{name: "offsets only", in: "0s\n100ms\n1.5s\n", want: []Arrival{{At: 0}, {At: 100 * ms}, {At: 1500 * ms}}},
		{name: "white space", in: "0.250s 1200 300\n\t0.5s\t10\t1\n", want: []Arrival{{At: 250 * ms, PromptTokens: 1200, MaxTokens: 300}, {At: 500 * ms, PromptTokens: 10, MaxTokens: 1}}},
		{name: "commas", in: "250ms,1200,300\n500ms, 10 ,1\n", want: []Arrival{{At: 250 * ms, PromptTokens: 1200, MaxTokens: 300}, {At: 500 * ms, PromptTokens: 10, MaxTokens: 1}}},
		{name: "prompt only", in: "1s 64\n", want: []Arrival{{At: time.Second, PromptTokens: 64, MaxTokens: 0}}},
		{name: "comments and blanks", in: "# trace\n\n0s 5 # first\n   \n# end\n", want: []Arrival{{At: 0, PromptTokens: 5, MaxTokens: 0}}},
		{name: "equal offsets", in: "1s\n1s\n", want: []Arrival{{At: time.Second}, {At: time.Second}}},
		{name: "CRLF", in: "0s 1\r\n1s 2\r\n", want: []Arrival{{At: 0, PromptTokens: 1, MaxTokens: 0}, {At: time.Second, PromptTokens: 2, MaxTokens: 0}}},
		{name: "no unit", in: "0s\n0.25\n", err: `line 2: offset "0.25" has no unit`},
		{name: "not a duration", in: "soon\n", err: `line 1: offset "soon" is not a duration`},
		{name: "negative", in: "# c\n-1s\n", err: "line 2: offset -1s < 0"},
		{name: "decreasing", in: "1s\n2s\n1.5s\n", err: "line 3: offset 1.5s is before the previous line's 2s"},
		{name: "bad prompt", in: "0s x\n", err: `line 1: prompt tokens "x": want a whole number >= 1`},
		{name: "zero cap", in: "0s 10 0\n", err: `line 1: max tokens "0": want a whole number >= 1`},
		{name: "too many", in: "0s 1 2 3\n", err: "line 1: 4 fields, want at most 3"},
		{name: "comma alone", in: "0s\n , \n", err: "line 2: no offset before the comma"},
		{name: "empty", in: "# nothing\n\n", err: "no arrivals"},
		// Sizes past the limits: one such line would grow an OpenLoop's
		// prompt text to gigabytes (99,999,999,999 tokens: 400 GB).
		{name: "huge prompt", in: "0s 10\n1s 99999999999 4\n", err: "line 2: prompt tokens 99999999999: above the limit of 10000000"},
		{name: "prompt past int64", in: "0s 99999999999999999999999\n", err: "line 1: prompt tokens 99999999999999999999999: above the limit"},
		{name: "huge cap", in: "0s 10 1048577\n", err: "line 1: max tokens 1048577: above the limit of 1048576"},
		{name: "at the limits", in: "0s 10000000 1048576\n", want: []Arrival{{At: 0, PromptTokens: defaults.MaxReplayPromptTokens, MaxTokens: defaults.MaxReplayMaxTokens}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.txt")
			if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := LoadSchedule(path)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "latencytest: schedule "+path+": ") {
					t.Errorf("error %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Errorf("error %v", err)
			case !reflect.DeepEqual(got, tc.want):
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLoadScheduleFile(t *testing.T) {
	got, err := LoadSchedule(filepath.Join("testdata", "schedule.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Arrival{{At: 0, PromptTokens: 1200, MaxTokens: 3}, {At: 250 * time.Millisecond, PromptTokens: 400, MaxTokens: 2}, {At: 250 * time.Millisecond, PromptTokens: 800, MaxTokens: 0}, {At: 1500 * time.Millisecond, PromptTokens: 16, MaxTokens: 9}, {At: 2 * time.Second, PromptTokens: 0, MaxTokens: 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	_, err = LoadSchedule(filepath.Join("testdata", "schedule-missing.txt"))
	if err == nil || !strings.Contains(err.Error(), "schedule-missing.txt") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(bad, []byte("0s\n1s 2 x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSchedule(bad); err == nil || !strings.Contains(err.Error(), "bad.txt: line 2: max tokens") {
		t.Errorf("bad file: %v", err)
	}
}

// The Poisson gaps of a seed are fixed (they are part of what a seed
// means), their mean is 1/Rate and their CV about 100% (exponential).
func TestPoissonArrivals(t *testing.T) {
	o, err := OpenLoop{Rate: 10, Requests: 100_000}.normalized()
	if err != nil {
		t.Fatal(err)
	}
	a := o.arrivals()
	var offsets []time.Duration
	for {
		_, at, ok := a.Take()
		if !ok {
			break
		}
		offsets = append(offsets, at)
	}
	if len(offsets) != 100_000 || offsets[0] != 0 {
		t.Fatalf("%d offsets, first %v", len(offsets), offsets[0])
	}
	// Seed 7's first gaps, pinned: a change here changes every run's
	// schedule and must be announced in the release notes.
	pinned := []time.Duration{0, 116371703, 232648075, 236121010}
	if !reflect.DeepEqual(offsets[:4], pinned) {
		t.Errorf("seed 7 starts %v, pinned %v", offsets[:4], pinned)
	}
	var sum, sq float64
	for i := 1; i < len(offsets); i++ {
		g := (offsets[i] - offsets[i-1]).Seconds()
		sum += g
		sq += g * g
	}
	n := float64(len(offsets) - 1)
	mean := sum / n
	cv := math.Sqrt(sq/n-mean*mean) / mean
	// 99,999 exponential gaps: the mean's standard error is 0.3%.
	if math.Abs(mean-0.1) > 0.1*0.01 || math.Abs(cv-1) > 0.02 {
		t.Errorf("gaps: mean %.5fs (want 0.1s), CV %.3f (want 1)", mean, cv)
	}
	// The count is the same however often it is asked.
	if n1, n2 := o.arrivals().Count(1e9), o.arrivals().Count(1e9); n1 != 100_000 || n2 != n1 {
		t.Errorf("count %d then %d", n1, n2)
	}
}

// A Replay given in code is held to the same limits as a trace file, so
// that one huge arrival cannot grow the run's prompt text to gigabytes.
func TestOpenLoopRefusesHugeReplay(t *testing.T) {
	for _, tc := range []struct {
		a    Arrival
		want string
	}{
		{Arrival{PromptTokens: 99_999_999_999}, "replay[1]: prompt_tokens 99999999999 is above the limit of 10000000"},
		{Arrival{MaxTokens: defaults.MaxReplayMaxTokens + 1}, "replay[1]: max_tokens 1048577 is above the limit of 1048576"},
	} {
		o := OpenLoop{Replay: []Arrival{{}, tc.a}}
		if _, err := o.normalized(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
