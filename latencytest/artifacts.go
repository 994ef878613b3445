package latencytest

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/tailguard/tailguard/internal/recfile"
	"github.com/tailguard/tailguard/latencytest/internal/summary"
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

// ResultSummary is a result at a glance, for summary.json and the log:
// the whole distribution of each clock, the counts, the errors with an
// example each, and the disclosure. Measure fills Test and Label;
// Result.Summarize fills the rest. In JSON every key is snake_case,
// durations are nanoseconds with an _ns suffix, and a Failed or
// undefined value is null; String renders it on one screen.
type ResultSummary = summary.Summary

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
