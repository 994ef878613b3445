package latencytest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// WriteRecords writes records as JSONL (one JSON object a line).
func WriteRecords(w io.Writer, recs []Record) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return fmt.Errorf("latencytest: writing record %s: %w", recs[i].ID, err)
		}
	}
	return bw.Flush()
}

// LoadRecords reads a JSONL file of records written by WriteRecords (or a
// TB wrapper), so that every figure can be recomputed from raw data.
func LoadRecords(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("latencytest: %w", err)
	}
	defer f.Close()
	return ReadRecords(f)
}

// ReadRecords reads JSONL records; the error names the bad line.
func ReadRecords(r io.Reader) ([]Record, error) {
	var out []Record
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(b))) > 0 {
			var rec Record
			dec := json.NewDecoder(strings.NewReader(string(b)))
			dec.DisallowUnknownFields()
			if derr := dec.Decode(&rec); derr != nil {
				return nil, fmt.Errorf("latencytest: records line %d: %w", line, derr)
			}
			out = append(out, rec)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("latencytest: reading records: %w", err)
		}
	}
}

// Summary of a result for summary.json and the log: the whole distribution
// of each clock, the counts and the disclosure.
type ResultSummary struct {
	Counts      Counts         `json:"counts"`
	ErrorRate   float64        `json:"error_rate"`
	Errors      map[string]int `json:"errors"`
	TTFT        Summary        `json:"ttft"`
	FirstAnswer Summary        `json:"first_answer"`
	Total       Summary        `json:"total"`
	MaxGap      Summary        `json:"max_gap"`
	ITL         Summary        `json:"itl"`
	CPUPerWall  float64        `json:"cpu_per_wall"`
	Partial     string         `json:"partial,omitempty"`
	RepeatGaps  []RepeatGap    `json:"repeat_gaps,omitempty"`
	Disclosure  Disclosure     `json:"disclosure"`
}

// Summarize computes the ResultSummary.
func (r *Result) Summarize() ResultSummary {
	return ResultSummary{
		Counts: r.Counts(), ErrorRate: r.ErrorRate(), Errors: r.Errors(),
		TTFT: r.TTFT().Summarize(), FirstAnswer: r.FirstAnswer().Summarize(), Total: r.Total().Summarize(),
		MaxGap: r.MaxGap().Summarize(), ITL: r.ITL().Summarize(), CPUPerWall: r.CPUPerWall,
		Partial: r.PartialReason, RepeatGaps: r.RepeatGaps, Disclosure: r.Disclosure,
	}
}

// MarshalJSON writes NaN and ±Inf (which JSON lacks) as null, and durations
// in nanoseconds.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	return json.Marshal(struct {
		plain
		CV        *float64 `json:"CV"`
		TailRatio *float64 `json:"TailRatio"`
	}{plain(s), finite(s.CV), finite(s.TailRatio)})
}

func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// MarshalJSON writes NaN rates as null.
func (s ResultSummary) MarshalJSON() ([]byte, error) {
	type plain ResultSummary
	return json.Marshal(struct {
		plain
		ErrorRate  *float64 `json:"error_rate"`
		CPUPerWall *float64 `json:"cpu_per_wall"`
	}{plain(s), finite(s.ErrorRate), finite(s.CPUPerWall)})
}

// MarshalJSON writes a NaN CPU/wall as null.
func (r *Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return json.Marshal(struct {
		*plain
		CPUPerWall *float64 `json:"cpu_per_wall"`
	}{(*plain)(r), finite(r.CPUPerWall)})
}

// String renders the summary on one screen.
func (s ResultSummary) String() string {
	var sb strings.Builder
	c := s.Counts
	fmt.Fprintf(&sb, "requests: planned %d, sent %d, kept %d, discarded %d, failed %d", c.Planned, c.Sent, c.Kept, c.Discarded, c.Failed)
	if len(s.Errors) > 0 {
		fmt.Fprintf(&sb, " %v", s.Errors)
	}
	sb.WriteString("\n")
	fmt.Fprintf(&sb, "%-12s %9s %9s %9s %9s %9s %9s %7s %7s\n", "", "min", "p50", "p90", "p95", "p99", "max", "CV%", "p99/p50")
	rows := []struct {
		name string
		s    Summary
	}{{"ttft", s.TTFT}, {"first answer", s.FirstAnswer}, {"total", s.Total}, {"max gap", s.MaxGap}, {"itl", s.ITL}}
	var all []time.Duration
	for _, row := range rows {
		all = append(all, row.s.Min, row.s.P50, row.s.P90, row.s.P95, row.s.P99, row.s.Max)
	}
	u := UnitFor(all...)
	for _, row := range rows {
		fmt.Fprintf(&sb, "%-12s %9s %9s %9s %9s %9s %9s %7s %7s\n", row.name, FormatIn(row.s.Min, u), FormatIn(row.s.P50, u),
			FormatIn(row.s.P90, u), FormatIn(row.s.P95, u), FormatIn(row.s.P99, u), FormatIn(row.s.Max, u),
			FormatFloat(row.s.CV, "%.0f"), FormatFloat(row.s.TailRatio, "%.2f"))
	}
	fmt.Fprintf(&sb, "client CPU/wall: %s", FormatFloat(s.CPUPerWall, "%.2f"))
	if s.CPUPerWall > BusyClient {
		sb.WriteString(" (above 0.7: the client is part of the tail)")
	}
	sb.WriteString("\n")
	if s.Partial != "" {
		fmt.Fprintf(&sb, "PARTIAL: %s\n", s.Partial)
	}
	return sb.String()
}

// FormatDuration renders a latency for reports: "failed" for Failed,
// milliseconds with one decimal below 10 s, seconds above.
func FormatDuration(d time.Duration) string { return FormatIn(d, UnitFor(d)) }

// UnitFor picks one unit for a column of latencies (one unit per column):
// seconds when any finite value reaches 10 s, else milliseconds.
func UnitFor(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d != Failed && (d >= 10*time.Second || d <= -10*time.Second) {
			return time.Second
		}
	}
	return time.Millisecond
}

// FormatIn renders d in unit (time.Millisecond: "1327.9ms"; time.Second:
// "89.670s"); "failed" for Failed, "-" for NotObserved.
func FormatIn(d, unit time.Duration) string {
	switch {
	case d == Failed:
		return "failed"
	case d == NotObserved:
		return "-"
	case unit == time.Second:
		return fmt.Sprintf("%.3fs", d.Seconds())
	default:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
}

// FormatFloat renders a ratio or percentage for reports with format, and
// NaN as "n/a" and +Inf as "inf".
func FormatFloat(f float64, format string) string {
	switch {
	case math.IsNaN(f):
		return "n/a"
	case math.IsInf(f, 1):
		return "inf"
	}
	return fmt.Sprintf(format, f)
}

// runContext returns the context a TB wrapper runs under: its deadline is
// the test binary's (t.Deadline), less a margin to report the partial
// result, when t has one and is not inside a synctest bubble.
func runContext(t testing.TB) (context.Context, context.CancelFunc) {
	dl, ok := testDeadline(t)
	if !ok {
		return context.WithCancel(context.Background())
	}
	margin := max(5*time.Second, time.Until(dl)/20)
	return context.WithDeadline(context.Background(), dl.Add(-margin))
}

// testDeadline is t.Deadline(), or false inside a synctest bubble (where
// Deadline panics: a real-clock deadline means nothing on a fake clock).
func testDeadline(t testing.TB) (dl time.Time, ok bool) {
	d, has := t.(interface{ Deadline() (time.Time, bool) })
	if !has {
		return time.Time{}, false
	}
	defer func() {
		if recover() != nil {
			dl, ok = time.Time{}, false
		}
	}()
	return d.Deadline()
}

// inBubble reports whether t runs inside a synctest bubble.
func inBubble(t testing.TB) bool {
	d, has := t.(interface{ Deadline() (time.Time, bool) })
	if !has {
		return false
	}
	bubble := false
	func() {
		defer func() { bubble = recover() != nil }()
		d.Deadline()
	}()
	return bubble
}

// artifactDir is t.ArtifactDir() (Go 1.26; kept with go test -artifacts),
// or "" when t has none.
func artifactDir(t testing.TB) string {
	if a, ok := t.(interface{ ArtifactDir() string }); ok {
		return a.ArtifactDir()
	}
	return ""
}

// writeArtifacts writes records.jsonl and summary.json; it returns where,
// or "" when t has no artifact directory.
func writeArtifacts(t testing.TB, recs []Record, summary any) string {
	dir := artifactDir(t)
	if dir == "" {
		return ""
	}
	path := filepath.Join(dir, "records.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Errorf("latencytest: %v", err)
		return ""
	}
	if err := WriteRecords(f, recs); err != nil {
		t.Errorf("%v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("latencytest: %v", err)
	}
	b, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		t.Errorf("latencytest: summary: %v", err)
		return path
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644); err != nil {
		t.Errorf("latencytest: %v", err)
	}
	return path
}

// attrs reports key figures as test attributes.
func attrs(t testing.TB, prefix string, s ResultSummary) {
	set := func(k, v string) { t.Attr("tailguard."+prefix+k, v) }
	set("sent", fmt.Sprint(s.Counts.Sent))
	set("failed", fmt.Sprint(s.Counts.Failed))
	set("ttft.p50", FormatDuration(s.TTFT.P50))
	set("ttft.p99", FormatDuration(s.TTFT.P99))
	set("total.p50", FormatDuration(s.Total.P50))
	set("total.p99", FormatDuration(s.Total.P99))
	set("error_rate", FormatFloat(s.ErrorRate, "%.4f"))
}

// Measure runs the batch under t: the deadline comes from t.Deadline()
// (outside a synctest bubble) so that the run stops starting requests
// before go test -timeout kills it; the raw records (JSONL) and summary
// (JSON) go to t.ArtifactDir() (kept with go test -artifacts); key figures
// become t.Attr attributes; the summary and disclosure are logged. An
// invalid batch fails the test at once.
func (b Batch) Measure(t testing.TB, p Provider) *Result {
	t.Helper()
	ctx, cancel := runContext(t)
	defer cancel()
	r, err := b.Run(ctx, p)
	if err != nil {
		t.Fatalf("%v", err)
	}
	report(t, r, "")
	return r
}

func report(t testing.TB, r *Result, prefix string) {
	t.Helper()
	where := writeArtifacts(t, r.Records, r.Summarize())
	if where != "" {
		r.Disclosure.SetRawRecords(where)
	}
	s := r.Summarize()
	attrs(t, prefix, s)
	t.Logf("latency:\n%s\ndisclosure:\n%s", s, r.Disclosure)
	if r.Partial {
		t.Logf("PARTIAL RESULT: %s", r.PartialReason)
	}
}

// Measure runs the sweep under t, one subtest per level ("c8") when t is a
// *testing.T outside a synctest bubble (t.Run cannot be called inside one;
// there the levels run in turn and are logged). Artifacts and logs as in
// Batch.Measure.
func (s Sweep) Measure(t testing.TB, p Provider) *SweepResult {
	t.Helper()
	levels, err := s.levels()
	if err != nil {
		t.Fatalf("%v", err)
	}
	out := &SweepResult{}
	tt, isT := t.(*testing.T)
	for _, l := range levels {
		b := s.level(l)
		var r *Result
		if isT && !inBubble(t) {
			tt.Run(b.Label, func(t *testing.T) { r = b.Measure(t, p) })
		} else {
			t.Logf("level %d:", l)
			r = b.Measure(t, p)
		}
		if r == nil {
			break
		}
		out.Levels = append(out.Levels, l)
		out.Results = append(out.Results, r)
		if r.Partial {
			break
		}
	}
	for _, r := range out.Results {
		r.Disclosure.setLevels(out.Levels)
	}
	return out
}

// Measure runs the chains under t, as Batch.Measure does: all calls go to
// records.jsonl, the chain totals and summary to summary.json.
func (c Chain) Measure(t testing.TB, p Provider) *ChainResult {
	t.Helper()
	ctx, cancel := runContext(t)
	defer cancel()
	cr, err := c.Run(ctx, p)
	if err != nil {
		t.Fatalf("%v", err)
	}
	calls := cr.Calls()
	totals := cr.Totals().Summarize()
	summary := struct {
		Chains    int           `json:"chains"`
		Totals    Summary       `json:"chain_totals"`
		ErrorRate float64       `json:"chain_error_rate"`
		Calls     ResultSummary `json:"calls"`
	}{len(cr.Chains), totals, cr.ErrorRate(), calls.Summarize()}
	if where := writeArtifacts(t, calls.Records, summary); where != "" {
		cr.Disclosure.SetRawRecords(where)
	}
	t.Attr("tailguard.chain.total.p50", FormatDuration(totals.P50))
	t.Attr("tailguard.chain.total.p95", FormatDuration(totals.P95))
	t.Logf("chains: %d run, %d failed; chain total min %s p50 %s p95 %s p99 %s max %s\ncalls:\n%s\ndisclosure:\n%s",
		len(cr.Chains), totals.Failed, FormatDuration(totals.Min), FormatDuration(totals.P50), FormatDuration(totals.P95),
		FormatDuration(totals.P99), FormatDuration(totals.Max), calls.Summarize(), cr.Disclosure)
	if cr.Partial {
		t.Logf("PARTIAL RESULT: %s", cr.PartialReason)
	}
	return cr
}
