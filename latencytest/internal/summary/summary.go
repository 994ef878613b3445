// Package summary is a latencytest result at a glance (Summary, which
// latencytest names ResultSummary): the counts, the errors with an
// example each (ErrorExample), the whole distribution of each clock and
// the disclosure, as summary.json (MarshalJSON: NaN as null), a screen
// (String) and a few lines for a test's log (Brief). latencytest's
// Result.Summarize fills it; this package only renders it.
package summary

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/machine"
	"github.com/tailguard/tailguard/sample"
)

// Summary is a result at a glance (latencytest.ResultSummary), for
// summary.json and the log: the whole distribution of each clock, the
// counts, the errors with an example each, and the disclosure. Measure
// fills Test and Label; Result.Summarize fills the rest. In JSON every key is snake_case, durations are nanoseconds
// with an _ns suffix, and a Failed or undefined value is null.
type Summary struct {
	// Test is the name of the test that measured (Measure only).
	Test string `json:"test,omitempty"`
	// Label is the batch's label, the prefix of its trace IDs ("c8").
	Label string `json:"label,omitempty"`
	// Shard is the part of a split run the result measured ("1/4", see
	// Result.Shard); "" for a whole run, written all the same: records.Merge
	// reads it to find a shard missing from a merge, and tells a whole
	// run's summary from an older one that named no shard.
	Shard string `json:"shard"`
	// Concurrency is the load level, when every record shares one.
	Concurrency int `json:"concurrency,omitempty"`
	// Model is the model the responses named (several joined by ", ").
	Model string `json:"model,omitempty"`
	// Counts, ErrorRate and Errors are Result's; ErrorExamples gives one
	// request of each error class, most frequent first. Counts.Sent is
	// also how many records Measure wrote to the records file beside the
	// summary: records.Merge compares it, and Counts.Planned, with the
	// records it reads.
	Counts        disclosure.Counts `json:"counts"`
	ErrorRate     float64           `json:"error_rate"`
	Errors        map[string]int    `json:"errors"`
	ErrorExamples []ErrorExample    `json:"error_examples,omitempty"`
	// The whole distribution of each clock (Failed values count).
	TTFT        sample.Summary `json:"ttft"`
	FirstAnswer sample.Summary `json:"first_answer"`
	Total       sample.Summary `json:"total"`
	MaxGap      sample.Summary `json:"max_gap"`
	ITL         sample.Summary `json:"itl"`
	// FromSchedule and TTFTFromSchedule are the distributions measured
	// from each request's scheduled send (an OpenLoop's result only; nil
	// otherwise); LateStarts and MaxStartDelay are Result.Lag.
	FromSchedule     *sample.Summary `json:"from_schedule,omitempty"`
	TTFTFromSchedule *sample.Summary `json:"ttft_from_schedule,omitempty"`
	LateStarts       int             `json:"late_starts,omitempty"`
	MaxStartDelay    time.Duration   `json:"max_start_delay_ns,omitempty"`
	// DecodeRateUnit is "tokens/s" when every measured success reported
	// usage, else "events/s" (see Record.DecodeRateUnit).
	DecodeRateUnit string                 `json:"decode_rate_unit,omitempty"`
	CPUPerWall     float64                `json:"cpu_per_wall"`
	Partial        string                 `json:"partial,omitempty"`
	RepeatGaps     []disclosure.RepeatGap `json:"repeat_gaps,omitempty"`
	Disclosure     disclosure.Disclosure  `json:"disclosure"`
	// Machine is Result.Machine: the machine's load over the run (nil
	// when not measured).
	Machine *machine.Load `json:"machine,omitempty"`
}

// Finite is f, or nil (JSON null) for NaN and the infinities.
func Finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// MarshalJSON writes NaN rates as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	return json.Marshal(struct {
		plain
		ErrorRate  *float64 `json:"error_rate"`
		CPUPerWall *float64 `json:"cpu_per_wall"`
	}{plain(s), Finite(s.ErrorRate), Finite(s.CPUPerWall)})
}

// String renders the summary on one screen: the counts, errors by class
// with an example each, and the whole distribution of each clock.
func (s Summary) String() string {
	var sb strings.Builder
	c := s.Counts
	fmt.Fprintf(&sb, "requests: planned %d, sent %d, kept %d, discarded %d, failed %d\n", c.Planned, c.Sent, c.Kept, c.Discarded, c.Failed)
	for _, e := range s.ErrorExamples {
		fmt.Fprintf(&sb, "  %s\n", e)
	}
	fmt.Fprintf(&sb, "%-12s %9s %9s %9s %9s %9s %9s %7s %7s\n", "", "min", "p50", "p90", "p95", "p99", "max", "CV%", "p99/p50")
	type row struct {
		name string
		s    sample.Summary
	}
	rows := []row{{"ttft", s.TTFT}, {"first answer", s.FirstAnswer}, {"total", s.Total}, {"max gap", s.MaxGap}, {"itl", s.ITL}}
	if s.FromSchedule != nil && s.TTFTFromSchedule != nil { // an open loop's, from each scheduled send
		rows = append(rows, row{"sched. ttft", *s.TTFTFromSchedule}, row{"sched. total", *s.FromSchedule})
	}
	var all []time.Duration
	for _, row := range rows {
		all = append(all, row.s.Min, row.s.P50, row.s.P90, row.s.P95, row.s.P99, row.s.Max)
	}
	u := format.UnitFor(all...)
	for _, row := range rows {
		fmt.Fprintf(&sb, "%-12s %9s %9s %9s %9s %9s %9s %7s %7s\n", row.name, format.In(row.s.Min, u), format.In(row.s.P50, u),
			format.In(row.s.P90, u), format.In(row.s.P95, u), format.In(row.s.P99, u), format.In(row.s.Max, u),
			format.Float(row.s.CV, "%.0f"), format.Float(row.s.TailRatio, "%.2f"))
	}
	fmt.Fprintf(&sb, "client CPU/wall: %s", format.Float(s.CPUPerWall, "%.2f"))
	if s.CPUPerWall > defaults.BusyClient {
		sb.WriteString(" (above 0.7: the client is part of the tail)")
	}
	sb.WriteString("\n")
	if s.Machine != nil {
		fmt.Fprintf(&sb, "%s\n", s.Machine)
	}
	if w := s.Machine.Warning(); w != "" {
		fmt.Fprintf(&sb, "WARNING: %s\n", w)
	}
	if s.Partial != "" {
		fmt.Fprintf(&sb, "PARTIAL: %s\n", s.Partial)
	}
	return sb.String()
}

// Brief renders the summary in a few lines for the log of a passing or
// failing test: what ran, the counts, p50 and p99 of TTFT and total, the
// errors by class with an example each, and where the raw records are.
func (s Summary) Brief(where string) string {
	var sb strings.Builder
	what := s.Label
	if what == "" {
		what = "batch"
	}
	if s.Shard != "" {
		what += " (shard " + s.Shard + ": one part of the run; merge the shards to judge it)"
	}
	fmt.Fprintf(&sb, "latency %s: %d measured", what, s.Counts.Kept+s.Counts.Failed)
	if s.Concurrency > 0 {
		fmt.Fprintf(&sb, " at concurrency %d", s.Concurrency)
	}
	if s.Model != "" {
		fmt.Fprintf(&sb, ", model %s", s.Model)
	}
	c := s.Counts
	fmt.Fprintf(&sb, "\n  requests: sent %d of %d planned: %d kept, %d discarded (warm-up), %d failed\n", c.Sent, c.Planned, c.Kept, c.Discarded, c.Failed)
	u := format.UnitFor(s.TTFT.P50, s.TTFT.P99, s.Total.P50, s.Total.P99)
	fmt.Fprintf(&sb, "  ttft p50 %s p99 %s; total p50 %s p99 %s\n", format.In(s.TTFT.P50, u), format.In(s.TTFT.P99, u), format.In(s.Total.P50, u), format.In(s.Total.P99, u))
	if len(s.ErrorExamples) > 0 {
		parts := make([]string, len(s.ErrorExamples))
		for i, e := range s.ErrorExamples {
			parts[i] = e.String()
		}
		fmt.Fprintf(&sb, "  errors: %s\n", strings.Join(parts, "; "))
	}
	if s.Partial != "" {
		fmt.Fprintf(&sb, "  PARTIAL: %s\n", s.Partial)
	}
	if w := s.Machine.Warning(); w != "" {
		fmt.Fprintf(&sb, "  WARNING: %s\n", w)
	}
	if where != "" {
		fmt.Fprintf(&sb, "  raw records: %s\n", where)
	}
	if missing := s.Disclosure.Missing(); len(missing) > 0 {
		fmt.Fprintf(&sb, "  disclosure: %d of 15 boxes missing (go test -v prints them all; summary.json holds them)\n", len(missing))
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// ErrorExample is one error class (latencytest.ErrorExample) of a result: how many measured requests
// failed with it, and the first of them in submission order as an
// example.
type ErrorExample struct {
	Class  string `json:"class"`
	Count  int    `json:"count"`
	ID     string `json:"id"`               // the example's trace ID
	Detail string `json:"detail,omitempty"` // the example's Detail
}

// String renders the example on one line, its detail as ShortDetail:
// `http_400 100 (e.g. c1-0000: "you must provide a model parameter")`.
func (e ErrorExample) String() string {
	if e.Detail == "" {
		return fmt.Sprintf("%s %d (e.g. %s)", e.Class, e.Count, e.ID)
	}
	return fmt.Sprintf("%s %d (e.g. %s: %q)", e.Class, e.Count, e.ID, format.ShortDetail(e.Detail))
}
