// Package format renders latencies and ratios for tailguard's reports:
// one unit per column ([UnitFor]), milliseconds with one decimal below
// 10 s and seconds above ([Duration], [In]), and "failed", "-", "n/a" and
// "inf" for the values that are not numbers ([Float]).
package format

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// The two durations that are not times: latencytest.Failed (a failed
// request, infinitely slow) and latencytest.NotObserved (a clock that did
// not run). latencytest's tests check that the values agree.
const (
	failed      = time.Duration(math.MaxInt64)
	notObserved = time.Duration(-1)
)

// Duration renders a latency for reports: "failed" for latencytest.Failed,
// milliseconds with one decimal below 10 s, seconds above.
func Duration(d time.Duration) string { return In(d, UnitFor(d)) }

// UnitFor picks one unit for a column of latencies (one unit per column):
// seconds when any finite value reaches 10 s, else milliseconds.
func UnitFor(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d != failed && (d >= 10*time.Second || d <= -10*time.Second) {
			return time.Second
		}
	}
	return time.Millisecond
}

// In renders d in unit (time.Millisecond: "1327.9ms"; time.Second:
// "89.670s"); "failed" for latencytest.Failed, "-" for latencytest.NotObserved.
func In(d, unit time.Duration) string {
	switch {
	case d == failed:
		return "failed"
	case d == notObserved:
		return "-"
	case unit == time.Second:
		return fmt.Sprintf("%.3fs", d.Seconds())
	default:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
}

// Float renders a ratio or percentage for reports with format, and
// NaN as "n/a" and +Inf as "inf".
func Float(f float64, format string) string {
	switch {
	case math.IsNaN(f):
		return "n/a"
	case math.IsInf(f, 1):
		return "inf"
	}
	return fmt.Sprintf(format, f)
}

// ShortDetail is an error's detail for one line of a report: at most 160
// characters, a longer one cut in the middle ("…"), so both what was
// being done and the cause that a wrapped error ends with stay
// ("Post \"http://…\": … connect: connection refused").
func ShortDetail(detail string) string {
	const n = 160
	if utf8.RuneCountInString(detail) <= n {
		return detail
	}
	r := []rune(detail)
	return string(r[:n/2]) + "…" + string(r[len(r)-(n/2-1):])
}
