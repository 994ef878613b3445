package latencytest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/recfile"
	"github.com/tailguard/tailguard/sample"
)

// WriteRecords writes records as JSONL (one JSON object a line), then an
// end line that counts them: {"end_of_records":N}. The end line makes a
// file cut at a line boundary (or emptied) detectable on its own:
// ReadRecords checks the count, and records.Merge counts a file without
// an end line as incomplete unless its summary.json vouches for it.
func WriteRecords(w io.Writer, recs []Record) error {
	return writeRecordsEnd(w, recs, recordsEnd{})
}

// recordsEnd is the end line of a records file (recfile.End): its
// count, and the shard and label of a run Measure wrote.
type recordsEnd = recfile.End

// writeRecordsEnd is WriteRecords with the end line's shard and label.
func writeRecordsEnd(w io.Writer, recs []Record, end recordsEnd) error {
	return prefixed(recfile.Write(w, recs, end, func(r *Record) string { return r.ID }))
}

// prefixed puts the package's name in front of err (nil stays nil).
func prefixed(err error) error {
	if err != nil {
		return fmt.Errorf("latencytest: %w", err)
	}
	return nil
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
// is read as it is; records.Merge tells them apart with the summary.json
// beside it, or counts the file as incomplete.
func ReadRecords(r io.Reader) ([]Record, error) {
	recs, err := recfile.Read[Record](r)
	return recs, prefixed(err)
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
	Counts        Counts         `json:"counts"`
	ErrorRate     float64        `json:"error_rate"`
	Errors        map[string]int `json:"errors"`
	ErrorExamples []ErrorExample `json:"error_examples,omitempty"`
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
	Disclosure     Disclosure             `json:"disclosure"`
	// Machine is Result.Machine: the machine's load over the run (nil
	// when not measured).
	Machine *MachineLoad `json:"machine,omitempty"`
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

// recordSink takes a run's records as they complete, in slots numbered
// in submission order: kept whole (Records) or compact in the result, and
// written to the result's stream when it has one.
type recordSink struct {
	res   *Result
	first int      // the first slot's index in the compact store
	full  []Record // full records
}

// put stores the record of slot k (safe for concurrent use).
func (s *recordSink) put(k int, rec Record) {
	if s.res != nil && s.res.stream != nil {
		s.res.stream.write(&rec)
	}
	if s.full != nil {
		s.full[k] = rec
		return
	}
	s.res.compact.put(s.first+k, &rec)
}

// done ends the sink after sent requests: the full records to append to
// Records (nil for compact ones, which are in the store already).
func (s *recordSink) done(sent int) []Record {
	if s.full != nil {
		return s.full[:sent]
	}
	s.res.compact.Truncate(s.first + sent)
	return nil
}

// streamKey is the context key of Measure's recordStream.
type streamKey struct{}

// recordStream writes a compact run's records to its records file as they
// complete, one JSON line each, so that a crash loses none already
// measured: a file without its end line ({"end_of_records":N}, written by
// finish) is a partial one, as ReadRecords and records.Merge tell. The file
// is created at the first record.
type recordStream struct {
	recfile.Stream
	keepContent bool
}

// withRecordStream returns ctx carrying a stream to a records file in
// dir (none when dir is ""), for Measure.
func withRecordStream(ctx context.Context, dir, label string, keepContent bool) (context.Context, *recordStream) {
	if dir == "" {
		return ctx, nil
	}
	st := &recordStream{Stream: recfile.Stream{Dir: dir, Label: label}, keepContent: keepContent}
	return context.WithValue(ctx, streamKey{}, st), st
}

// write appends rec as one line (without its content unless kept).
func (s *recordStream) write(rec *Record) {
	r := rec
	if !s.keepContent && rec.Content != "" {
		c := *rec
		c.Content = ""
		r = &c
	}
	s.Write(r, rec.ID)
}

// finish writes the end line and closes the file; path is "" when no
// record was streamed (the run kept full records: Measure writes them).
func (s *recordStream) finish(sh Shard) (path string, err error) {
	if s == nil {
		return "", nil
	}
	path, err = s.Finish(sh.String())
	return path, prefixed(err)
}

// recordsPath is where a run's records go in dir: records.jsonl, or
// records-<label>.jsonl (-2, -3… if need be) when a test measures more
// than once.
func recordsPath(dir, label string) string { return recfile.Path(dir, label) }
