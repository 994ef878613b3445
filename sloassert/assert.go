package sloassert

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

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

// Check judges r against every objective, reports the whole failure
// screen with t.Errorf when any fails (every violated objective, not just
// the first), and returns whether all passed. No objective never passes.
func Check(t TestingT, r *latencytest.Result, objectives ...Objective) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	rep := Evaluate(r, objectives...)
	rep.Replay = ReplayCommand(t, r)
	WriteReport(t, r, rep) // charts, report.md, the job summary
	return finish(t, rep)
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

// sampleReport is the report of objectives judged on a bare sample.
func sampleReport(title string, s latencytest.Sample, outs ...Outcome) Report {
	rep := Report{Title: title, Outcomes: outs, CPUPerWall: nanCPU}
	rep.Distributions = []Distribution{{Metric: title, Summary: s.Summarize()}}
	rep.Counts = latencytest.Counts{Planned: len(s), Sent: len(s), Kept: len(s) - s.Failures(), Failed: s.Failures()}
	if len(s) == 0 {
		rep.Problem = "no data: an empty sample never passes"
	}
	return rep
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

// Quantile asserts that the q-quantile of s is within budget. Below
// MinSamples(q) values it fails and says how many are needed, unless
// AllowSmallSample is given; Demonstrate and Refute judge a confidence
// bound instead of the point estimate.
func Quantile(t TestingT, s latencytest.Sample, q float64, budget time.Duration, opts ...Option) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	name := QuantileName(q) + " <= " + latencytest.FormatDuration(budget)
	return finish(t, sampleReport("sample", s, finalize(judgeQuantile(name, s, len(s), q, budget, collect(opts)), options{}, false, "")))
}

// P50 asserts the median is within budget.
func P50(t TestingT, s latencytest.Sample, budget time.Duration, opts ...Option) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	return Quantile(t, s, 0.5, budget, opts...)
}

// P95 asserts the 95th percentile is within budget (needs n >= 20).
func P95(t TestingT, s latencytest.Sample, budget time.Duration, opts ...Option) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	return Quantile(t, s, 0.95, budget, opts...)
}

// P99 asserts the 99th percentile is within budget (needs n >= 100).
func P99(t TestingT, s latencytest.Sample, budget time.Duration, opts ...Option) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	return Quantile(t, s, 0.99, budget, opts...)
}

// CV asserts the coefficient of variation of s is at most maxPercent
// percent (see the CV bands). A failed value, n < 2 or NaN fails.
func CV(t TestingT, s latencytest.Sample, maxPercent float64) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	return finish(t, sampleReport("sample", s, finalize(judgeCV("CV <= "+trimFloat(maxPercent)+"%", s, maxPercent), options{}, false, "")))
}

// TailRatio asserts p99/p50 of s is at most max (needs n >= 100).
func TailRatio(t TestingT, s latencytest.Sample, max float64) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	return finish(t, sampleReport("sample", s, finalize(judgeTailRatio("p99/p50 <= "+trimFloat(max), s, len(s), max, options{}), options{}, false, "")))
}

// ErrorRate asserts that at most the fraction max (0.01 for 1%) of r's
// measured requests failed; with classes, only those classes count.
func ErrorRate(t TestingT, r *latencytest.Result, max float64, classes ...string) bool {
	if h, ok := t.(helper); ok {
		h.Helper() // marks this function: Helper marks its caller
	}
	return Check(t, r, MaxErrorRate(max, classes...))
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

var nanCPU = math.NaN()
