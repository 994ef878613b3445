package latencytest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// WriteRecords writes records as JSONL (one JSON object a line), then an
// end line that counts them: {"end_of_records":N}. The end line makes a
// file cut at a line boundary (or emptied) detectable on its own:
// ReadRecords checks the count, and MergeRecords counts a file without
// an end line as incomplete unless its summary.json vouches for it.
func WriteRecords(w io.Writer, recs []Record) error {
	return writeRecordsEnd(w, recs, recordsEnd{})
}

// recordsEnd is the end line of a records file: how many records precede
// it (since the file's start, or since the previous end line of files
// joined with cat) and, for the files Measure writes, the shard and
// label of the run, so MergeRecords finds a missing shard without the
// summaries.
type recordsEnd struct {
	Records *int   `json:"end_of_records"`
	Shard   string `json:"shard,omitempty"`
	Label   string `json:"label,omitempty"`
}

// writeRecordsEnd is WriteRecords with the end line's shard and label.
func writeRecordsEnd(w io.Writer, recs []Record, end recordsEnd) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return fmt.Errorf("latencytest: writing record %s: %w", recs[i].ID, err)
		}
	}
	n := len(recs)
	end.Records = &n
	if err := enc.Encode(end); err != nil {
		return fmt.Errorf("latencytest: writing the end of records: %w", err)
	}
	return bw.Flush()
}

// LoadRecords reads a JSONL file of records written by WriteRecords (or a
// TB wrapper), so that every figure can be recomputed from raw data. Its
// end line is checked as ReadRecords does.
func LoadRecords(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("latencytest: %w", err)
	}
	defer f.Close()
	return ReadRecords(f)
}

// ReadRecords reads JSONL records; the error names the bad line. An end
// line ({"end_of_records":N}, as WriteRecords writes) must count the
// records before it (since the previous end line, for files joined with
// cat): a different count is an error naming the line, as lines were
// lost or added. A file without an end line (written before WriteRecords
// wrote one, or cut at a line boundary: ReadRecords cannot tell which)
// is read as it is; MergeRecords tells them apart with the summary.json
// beside it, or counts the file as incomplete.
func ReadRecords(r io.Reader) ([]Record, error) {
	recs, _, err := readRecords(r)
	return recs, err
}

// readRecords reads JSONL records; end is the file's last line when it is
// an end line (nil when the file does not end with one).
func readRecords(r io.Reader) (out []Record, end *recordsEnd, err error) {
	br := bufio.NewReader(r)
	since := 0 // records since the previous end line
	for line := 1; ; line++ {
		b, rerr := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(b))) > 0 {
			var rec Record
			dec := json.NewDecoder(strings.NewReader(string(b)))
			dec.DisallowUnknownFields()
			if derr := dec.Decode(&rec); derr != nil {
				e, ok := endLine(b)
				if !ok {
					return nil, nil, fmt.Errorf("latencytest: records line %d: %w", line, derr)
				}
				if *e.Records != since {
					return nil, nil, fmt.Errorf("latencytest: records line %d: the end line counts %d records, but %d precede it: lines were lost or added",
						line, *e.Records, since)
				}
				end, since = e, 0
			} else {
				out = append(out, rec)
				end = nil
				since++
			}
		}
		if errors.Is(rerr, io.EOF) {
			return out, end, nil
		}
		if rerr != nil {
			return nil, nil, fmt.Errorf("latencytest: reading records: %w", rerr)
		}
	}
}

// endLine decodes an end line; ok is false for anything else.
func endLine(b []byte) (*recordsEnd, bool) {
	var e recordsEnd
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Records == nil || dec.More() {
		return nil, false
	}
	return &e, true
}

// ResultSummary is a result at a glance, for summary.json and the log: the
// whole distribution of each clock, the counts, the errors with an example
// each, and the disclosure. Measure fills Test and Label; Summarize fills
// the rest. In JSON every key is snake_case, durations are nanoseconds
// with an _ns suffix, and a Failed or undefined value is null.
type ResultSummary struct {
	// Test is the name of the test that measured (Measure only).
	Test string `json:"test,omitempty"`
	// Label is the batch's label, the prefix of its trace IDs ("c8").
	Label string `json:"label,omitempty"`
	// Shard is the part of a split run the result measured ("1/4", see
	// Result.Shard); "" for a whole run. MergeRecords reads it to find a
	// shard missing from a merge.
	Shard string `json:"shard,omitempty"`
	// Concurrency is the load level, when every record shares one.
	Concurrency int `json:"concurrency,omitempty"`
	// Model is the model the responses named (several joined by ", ").
	Model string `json:"model,omitempty"`
	// Counts, ErrorRate and Errors are Result's; ErrorExamples gives one
	// request of each error class, most frequent first. Counts.Sent is
	// also how many records Measure wrote to the records file beside the
	// summary: MergeRecords compares it, and Counts.Planned, with the
	// records it reads.
	Counts        Counts         `json:"counts"`
	ErrorRate     float64        `json:"error_rate"`
	Errors        map[string]int `json:"errors"`
	ErrorExamples []ErrorExample `json:"error_examples,omitempty"`
	// The whole distribution of each clock (Failed values count).
	TTFT        Summary `json:"ttft"`
	FirstAnswer Summary `json:"first_answer"`
	Total       Summary `json:"total"`
	MaxGap      Summary `json:"max_gap"`
	ITL         Summary `json:"itl"`
	// FromSchedule and TTFTFromSchedule are the distributions measured
	// from each request's scheduled send (an OpenLoop's result only; nil
	// otherwise); LateStarts and MaxStartDelay are Result.Lag.
	FromSchedule     *Summary      `json:"from_schedule,omitempty"`
	TTFTFromSchedule *Summary      `json:"ttft_from_schedule,omitempty"`
	LateStarts       int           `json:"late_starts,omitempty"`
	MaxStartDelay    time.Duration `json:"max_start_delay_ns,omitempty"`
	// DecodeRateUnit is "tokens/s" when every measured success reported
	// usage, else "events/s" (see Record.DecodeRateUnit).
	DecodeRateUnit string      `json:"decode_rate_unit,omitempty"`
	CPUPerWall     float64     `json:"cpu_per_wall"`
	Partial        string      `json:"partial,omitempty"`
	RepeatGaps     []RepeatGap `json:"repeat_gaps,omitempty"`
	Disclosure     Disclosure  `json:"disclosure"`
	// Machine is Result.Machine: the machine's load over the run (nil
	// when not measured).
	Machine *MachineLoad `json:"machine,omitempty"`
}

// Summarize computes the ResultSummary (Test and Label are left empty).
func (r *Result) Summarize() ResultSummary {
	s := ResultSummary{
		Counts: r.Counts(), ErrorRate: r.ErrorRate(), Errors: r.Errors(), ErrorExamples: r.ErrorExamples(),
		TTFT: r.TTFT().Summarize(), FirstAnswer: r.FirstAnswer().Summarize(), Total: r.Total().Summarize(),
		MaxGap: r.MaxGap().Summarize(), ITL: r.ITL().Summarize(), CPUPerWall: r.CPUPerWall,
		Partial: r.PartialReason, RepeatGaps: r.RepeatGaps, Disclosure: r.Disclosure,
		Model: strings.Join(modelsOf(r.Records), ", "), DecodeRateUnit: r.DecodeRateUnit(), Shard: r.Shard.String(),
	}
	s.Machine = r.Machine
	if r.openLoop() {
		fs, tf := r.FromSchedule().Summarize(), r.TTFTFromSchedule().Summarize()
		s.FromSchedule, s.TTFTFromSchedule = &fs, &tf
		s.LateStarts, s.MaxStartDelay = r.Lag()
	}
	for i := range r.Records {
		switch c := r.Records[i].Concurrency; {
		case i == 0:
			s.Concurrency = c
		case c != s.Concurrency:
			s.Concurrency = 0 // mixed (merged records)
		}
	}
	return s
}

// MarshalJSON writes snake_case keys, durations in nanoseconds (_ns), and
// Failed durations and NaN or infinite ratios (which JSON lacks) as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		N         int      `json:"n"`
		Failed    int      `json:"failed"`
		Min       *int64   `json:"min_ns"`
		P50       *int64   `json:"p50_ns"`
		P90       *int64   `json:"p90_ns"`
		P95       *int64   `json:"p95_ns"`
		P99       *int64   `json:"p99_ns"`
		Max       *int64   `json:"max_ns"`
		Mean      *int64   `json:"mean_ns"`
		Stddev    *int64   `json:"stddev_ns"`
		CV        *float64 `json:"cv_percent"`
		TailRatio *float64 `json:"tail_ratio"`
	}{s.N, s.Failed, nanos(s.Min), nanos(s.P50), nanos(s.P90), nanos(s.P95), nanos(s.P99), nanos(s.Max),
		nanos(s.Mean), nanos(s.Stddev), finite(s.CV), finite(s.TailRatio)})
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

// String renders the summary on one screen: the counts, errors by class
// with an example each, and the whole distribution of each clock.
func (s ResultSummary) String() string {
	var sb strings.Builder
	c := s.Counts
	fmt.Fprintf(&sb, "requests: planned %d, sent %d, kept %d, discarded %d, failed %d\n", c.Planned, c.Sent, c.Kept, c.Discarded, c.Failed)
	for _, e := range s.ErrorExamples {
		fmt.Fprintf(&sb, "  %s\n", e)
	}
	fmt.Fprintf(&sb, "%-12s %9s %9s %9s %9s %9s %9s %7s %7s\n", "", "min", "p50", "p90", "p95", "p99", "max", "CV%", "p99/p50")
	type row struct {
		name string
		s    Summary
	}
	rows := []row{{"ttft", s.TTFT}, {"first answer", s.FirstAnswer}, {"total", s.Total}, {"max gap", s.MaxGap}, {"itl", s.ITL}}
	if s.FromSchedule != nil && s.TTFTFromSchedule != nil { // an open loop's, from each scheduled send
		rows = append(rows, row{"sched. ttft", *s.TTFTFromSchedule}, row{"sched. total", *s.FromSchedule})
	}
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

// brief renders the summary in a few lines for the log of a passing or
// failing test: what ran, the counts, p50 and p99 of TTFT and total, the
// errors by class with an example each, and where the raw records are.
func (s ResultSummary) brief(where string) string {
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
	u := UnitFor(s.TTFT.P50, s.TTFT.P99, s.Total.P50, s.Total.P99)
	fmt.Fprintf(&sb, "  ttft p50 %s p99 %s; total p50 %s p99 %s\n", FormatIn(s.TTFT.P50, u), FormatIn(s.TTFT.P99, u), FormatIn(s.Total.P50, u), FormatIn(s.Total.P99, u))
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

// artifactsKept reports whether go test runs with -artifacts: without it,
// t.ArtifactDir is a temporary directory removed when the test ends.
func artifactsKept() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}

// whereNote names the raw records and says whether they outlive the test.
func whereNote(path string) string {
	if path == "" {
		return ""
	}
	if artifactsKept() {
		return path + " (kept: -artifacts)"
	}
	return path + " (deleted when the test ends; run go test -artifacts to keep it)"
}

// verbose is testing.Verbose, false where it cannot be asked.
func verbose() (v bool) {
	defer func() {
		if recover() != nil {
			v = false
		}
	}()
	return flag.Parsed() && testing.Verbose()
}

// writeRecords writes records.jsonl (answer text left out unless
// keepContent) to t's artifact directory; it returns its path, or "" when
// t has no artifact directory. A test that measures more than once (a
// sweep inside a synctest bubble, a batch then a chain) keeps every run:
// the later ones go to records-<label>.jsonl (-2, -3… if need be).
func writeRecords(t testing.TB, recs []Record, keepContent bool, label string, sh Shard) string {
	t.Helper()
	dir := artifactDir(t)
	if dir == "" {
		return ""
	}
	if !keepContent {
		recs = slices.Clone(recs)
		for i := range recs {
			recs[i].Content = ""
		}
	}
	path := filepath.Join(dir, "records.jsonl")
	for i := 1; exists(path); i++ {
		name := "records-" + label
		if i > 1 {
			name += "-" + strconv.Itoa(i)
		}
		path = filepath.Join(dir, name+".jsonl")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Errorf("latencytest: %v", err)
		return ""
	}
	if err := writeRecordsEnd(f, recs, recordsEnd{Shard: sh.String(), Label: label}); err != nil {
		t.Errorf("%v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("latencytest: %v", err)
	}
	return path
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// summaryPath is where the summary of the records at path goes:
// records.jsonl's is summary.json, records-c8.jsonl's summary-c8.json.
func summaryPath(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	return filepath.Join(filepath.Dir(path), "summary"+strings.TrimPrefix(name, "records")+".json")
}

// writeSummary writes the summary beside the records at path.
func writeSummary(t testing.TB, path string, summary any) {
	t.Helper()
	if path == "" {
		return
	}
	b, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		t.Errorf("latencytest: summary: %v", err)
		return
	}
	if err := os.WriteFile(summaryPath(path), b, 0o644); err != nil {
		t.Errorf("latencytest: %v", err)
	}
}

// attrs reports key figures as test attributes.
func attrs(t testing.TB, prefix string, s ResultSummary) {
	set := func(k, v string) { t.Attr("tailguard."+prefix+k, v) }
	set("sent", strconv.Itoa(s.Counts.Sent))
	set("failed", strconv.Itoa(s.Counts.Failed))
	set("ttft.p50", FormatDuration(s.TTFT.P50))
	set("ttft.p99", FormatDuration(s.TTFT.P99))
	set("total.p50", FormatDuration(s.Total.P50))
	set("total.p99", FormatDuration(s.Total.P99))
	set("error_rate", FormatFloat(s.ErrorRate, "%.4f"))
}

// Measure runs the batch under t: the deadline comes from t.Deadline()
// (outside a synctest bubble) so that the run stops starting requests
// before go test -timeout kills it; the raw records (JSONL, answer text
// only with KeepContent) and the summary with the whole disclosure (JSON)
// go to t.ArtifactDir() (removed when the test ends unless go test runs
// with -artifacts; the log says which); key figures become t.Attr
// attributes. The log gets a few lines (what ran, the counts, p50 and p99
// of TTFT and total, errors by class with an example each, where the raw
// records are); the whole distribution and the 15-box disclosure are
// logged too under go test -v. An invalid batch fails the test at once.
func (b Batch) Measure(t testing.TB, p Provider) *Result {
	t.Helper()
	ctx, cancel := runContext(t)
	defer cancel()
	r, err := b.Run(ctx, p)
	if err != nil {
		t.Fatalf("%v", err)
	}
	label := b.Label
	if n, err := b.normalized(); err == nil {
		label = n.Label
	}
	report(t, r, "", label, b.KeepContent)
	return r
}

func report(t testing.TB, r *Result, prefix, label string, keepContent bool) {
	t.Helper()
	path := writeRecords(t, r.Records, keepContent, label, r.Shard)
	where := whereNote(path)
	if path != "" {
		r.Disclosure.SetRawRecords(where)
	}
	s := r.Summarize()
	s.Test, s.Label = t.Name(), label
	writeSummary(t, path, s)
	attrs(t, prefix, s)
	t.Log(s.brief(where))
	if verbose() {
		t.Logf("latency:\n%s\ndisclosure:\n%s", s, r.Disclosure)
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
	out := &SweepResult{Planned: slices.Clone(levels)}
	tt, isT := t.(*testing.T)
	for _, l := range levels {
		b := s.level(l)
		var r *Result
		if isT && !inBubble(t) {
			tt.Run(b.Label, func(t *testing.T) { r = b.Measure(t, p) })
		} else {
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

// ChainSummary is a chain run at a glance, for summary.json: what ran, the
// chain totals, the chain error rate and the calls' ResultSummary (JSON as
// in ResultSummary: snake_case, _ns, null for Failed).
type ChainSummary struct {
	// Test, Label, Concurrency and Model say what ran, as in ResultSummary
	// (Concurrency is the chains run at once).
	Test        string `json:"test,omitempty"`
	Label       string `json:"label,omitempty"`
	Concurrency int    `json:"concurrency,omitempty"`
	Model       string `json:"model,omitempty"`
	// Chains is how many chains ran; Totals is the distribution of their
	// measured totals (a chain with a failed call is Failed).
	Chains int     `json:"chains"`
	Totals Summary `json:"chain_totals"`
	// ErrorRate is the fraction of chains with a failed call (NaN, null
	// in JSON, when none ran).
	ErrorRate float64 `json:"chain_error_rate"`
	// Calls summarizes every call of every chain.
	Calls ResultSummary `json:"calls"`
}

// MarshalJSON writes a NaN error rate as null.
func (s ChainSummary) MarshalJSON() ([]byte, error) {
	type plain ChainSummary
	return json.Marshal(struct {
		plain
		ErrorRate *float64 `json:"chain_error_rate"`
	}{plain(s), finite(s.ErrorRate)})
}

// Measure runs the chains under t, as Batch.Measure does: all calls go to
// records.jsonl (answer text only with KeepContent), the chain totals and
// summary to summary.json; a few lines are logged, the calls'
// distribution and the disclosure too under go test -v.
func (c Chain) Measure(t testing.TB, p Provider) *ChainResult {
	t.Helper()
	ctx, cancel := runContext(t)
	defer cancel()
	cr, err := c.Run(ctx, p)
	if err != nil {
		t.Fatalf("%v", err)
	}
	label := c.Label
	if n, err := c.normalized(); err == nil {
		label = n.Label
	}
	calls := cr.Calls()
	path := writeRecords(t, calls.Records, c.KeepContent, label, cr.Shard)
	where := whereNote(path)
	if path != "" {
		cr.Disclosure.SetRawRecords(where)
	}
	calls.Disclosure, calls.PartialReason = cr.Disclosure, cr.PartialReason
	totals := cr.Totals().Summarize()
	cs := calls.Summarize()
	sum := ChainSummary{Test: t.Name(), Label: label, Concurrency: max(c.Concurrency, 1), Model: cs.Model,
		Chains: len(cr.Chains), Totals: totals, ErrorRate: cr.ErrorRate(), Calls: cs}
	writeSummary(t, path, sum)
	t.Attr("tailguard.chain.total.p50", FormatDuration(totals.P50))
	t.Attr("tailguard.chain.total.p95", FormatDuration(totals.P95))
	u := UnitFor(totals.P50, totals.P95, totals.P99)
	t.Logf("chains %s: %d run, %d failed; chain total p50 %s p95 %s p99 %s\n%s", label, len(cr.Chains), totals.Failed,
		FormatIn(totals.P50, u), FormatIn(totals.P95, u), FormatIn(totals.P99, u), sum.Calls.brief(where))
	if verbose() {
		t.Logf("chain total min %s max %s\ncalls:\n%s\ndisclosure:\n%s", FormatDuration(totals.Min), FormatDuration(totals.Max), sum.Calls, cr.Disclosure)
	}
	return cr
}
