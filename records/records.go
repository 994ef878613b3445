// Package records reads per-request records into latencytest Results: this
// module's own records files and the raw output of other load tools
// (AIPerf, vLLM bench serve, GuideLLM, llmperf, k6, vegeta), with the
// semantics of latencytest's measured records, so the same objectives
// judge them.
//
// Each format is one Format value in one file, listed once in the
// registry (Formats). Detection tries every format in turn on what a
// file's first record looks like (its keys; see Sniff), as vegeta's
// DecoderFor tries its decoders; the hint of a file that fits none is
// generated from the registry. A new format is one file and one entry.
//
// Every imported record is checked as a measured one would be before it
// counts (see Sink.Add): a zero or negative latency, a first token after
// the end, a time that does not fit its unit or a NaN is an error naming
// the file and the line (or the JSON path of a one-document file), never
// a record. Texts from the file (error texts, request IDs, URLs, model
// names) are cleaned of secrets and control characters (internal/scrub).
// The same requests under two file names are refused, never counted
// twice. Merge and MergeLevels join this module's records files (the
// shards of one run) with the summaries beside them, every figure
// recomputed from the raw records. Files are read as a stream: a JSON-lines file of a million
// requests holds compact records (latencytest's builder), not a million
// full ones.
package records

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tailguard/tailguard/internal/scrub"
	"github.com/tailguard/tailguard/latencytest"
)

// Format is one records format: how to recognise it, how to read it, and
// what it measures.
type Format struct {
	// Name is the format's name in specs and on the command line ("vllm").
	Name string
	// Tool is the tool that writes it, for the disclosure ("vLLM bench serve").
	Tool string
	// Metrics lists the clocks the format measures per request, among
	// "ttft", "first_answer", "itl", "max_gap", "total" and "tokens": an
	// objective on a clock the tool did not measure cannot be judged from
	// its records (its values are not observed and count as failed).
	Metrics []string
	// Keys says in words which keys identify the format, for the hint of
	// a file that fits none ("code+latency+timestamp").
	Keys string
	// Detect reports whether a file's first record fits the format.
	Detect func(Sniff) bool
	// Decode reads one file's requests into s, in order. Its errors need
	// not name the file or the format: Import adds both.
	Decode func(r io.Reader, s *Sink) error
	// Levels, when set, reads the files the patterns match by itself, split
	// by load level (this module's own records, merged with their
	// summaries by MergeLevels); ImportLevels then checks each
	// record it returns.
	Levels func(patterns ...string) (map[int]*latencytest.Result, error)
	// ZeroTimes lets a success take no time: records measured on
	// synctest's virtual clock (this module's own), where a call that
	// only computes takes 0s. Another tool's clock is real: 0 is a
	// missing value, refused.
	ZeroTimes bool
	// Timed and Warmup are the disclosure's sentences: what the tool timed
	// and what it did not (box 1), how it marks warm-up (box 4; "" for
	// none marked).
	Timed, Warmup string
}

// formats is the registry, tried in this order by detection.
var formats = []*Format{&tailguardFormat, &aiperfFormat, &vllmFormat, &guidellmFormat, &llmperfFormat, &k6Format, &vegetaFormat}

// Formats lists the names of the formats Import reads, sorted.
func Formats() []string {
	out := make([]string, len(formats))
	for i, f := range formats {
		out[i] = f.Name
	}
	sort.Strings(out)
	return out
}

// Lookup returns the format named name; the error lists the formats.
func Lookup(name string) (*Format, error) {
	for _, f := range formats {
		if f.Name == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("records: unknown format %q (want one of %s)", name, strings.Join(Formats(), ", "))
}

// Metrics lists the clocks the named format measures (Format.Metrics);
// nil for an unknown format.
func Metrics(name string) []string {
	if f, err := Lookup(name); err == nil {
		return slices.Clone(f.Metrics)
	}
	return nil
}

// Import reads one file of per-request output in the named format ("" to
// detect it: contents that fit no format, or more than one, are an error
// that says which) and returns its requests as a Result. A clock the
// tool did not measure is NotObserved (counted as failed, never as 0); a
// request the tool recorded without timing is a failed record with a
// note, never dropped; a value that does not fit its unit is an error,
// never rescaled. A file cut short gives the requests read before the cut
// and a Partial result saying where it ended; a cut file with no request
// whole is an error. Its Disclosure names the tool, its version when the
// file records one, what the tool did not measure (box 1) and the format
// (Disclosure.Format).
func Import(format string, r io.Reader) (*latencytest.Result, error) {
	return importOne(format, r, "")
}

// ImportFile reads the file at path as Import does; a gzipped file (k6
// --out json=results.gz) is unzipped as it is read. This module's own
// records are read with Merge, so the summary.json
// beside them counts too.
func ImportFile(format, path string) (*latencytest.Result, error) {
	if format == "" {
		var err error
		if format, err = detectFile(path); err != nil {
			return nil, err
		}
	}
	f, err := Lookup(format)
	if err != nil {
		return nil, err
	}
	if f.Levels != nil {
		res, err := Merge(path)
		if err != nil {
			return nil, err
		}
		return res, checkResult(res, path, f.ZeroTimes)
	}
	rc, err := open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return importOne(format, rc, path)
}

func importOne(format string, r io.Reader, path string) (*latencytest.Result, error) {
	var err error
	br := bufio.NewReaderSize(r, 1<<16)
	var in io.Reader = br
	if format == "" {
		if format, in, err = detect(br); err != nil {
			return nil, fmt.Errorf("%w (name the format)", inFile(err, path, ""))
		}
	}
	f, err := Lookup(format)
	if err != nil {
		return nil, err
	}
	s := newSink(f, false)
	s.startFile(path, "")
	if err := f.Decode(in, s); err != nil {
		return nil, inFile(err, path, f.Name)
	}
	if err := s.endFile(); err != nil {
		return nil, inFile(err, path, f.Name)
	}
	res := s.result(0, []string{path})
	if res == nil {
		return nil, inFile(errors.New("no request in the file"), path, f.Name)
	}
	return res, nil
}

// ImportLevels imports every file the patterns match (files or globs) in
// the named format ("" detects it: every file must be of the same
// format, one judged sample being one tool's) and splits the requests by
// load level (Record.Concurrency; 0 for a tool that does not record
// one). With more than one file each trace ID is prefixed with its
// file's name and a colon, so the files' own IDs cannot collide; files
// that hold the same requests (one run under two names) are refused. A
// partial file makes its levels partial.
func ImportLevels(format string, patterns ...string) (map[int]*latencytest.Result, error) {
	paths, err := globAll("records", patterns)
	if err != nil {
		return nil, err
	}
	if format == "" {
		if format, err = sameFormat(paths); err != nil {
			return nil, err
		}
	}
	f, err := Lookup(format)
	if err != nil {
		return nil, err
	}
	if f.Levels != nil {
		out, err := f.Levels(patterns...)
		if err != nil {
			return nil, err
		}
		for _, res := range out {
			if err := checkResult(res, strings.Join(patterns, ", "), f.ZeroTimes); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	s := newSink(f, true)
	for _, p := range paths {
		prefix := ""
		if len(paths) > 1 {
			prefix = filepath.Base(p) + ":"
		}
		if err := importInto(s, p, prefix); err != nil {
			return nil, err
		}
	}
	out := map[int]*latencytest.Result{}
	for _, level := range s.order {
		out[level] = s.result(level, paths)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("records: %s: no request in %s", f.Name, strings.Join(paths, ", "))
	}
	return out, nil
}

// importInto decodes the file at path into s.
func importInto(s *Sink, path, prefix string) error {
	rc, err := open(path)
	if err != nil {
		return err
	}
	defer rc.Close()
	s.startFile(path, prefix)
	if err := s.f.Decode(bufio.NewReaderSize(rc, 1<<16), s); err != nil {
		return inFile(err, path, s.f.Name)
	}
	return inFile(s.endFile(), path, s.f.Name)
}

// inFile prefixes an import error with the package, the format and the
// file; nil stays nil.
func inFile(err error, path, format string) error {
	if err == nil {
		return nil
	}
	where := "records: "
	if format != "" {
		where += "import " + format + ": "
	}
	if path != "" {
		where += path + ": "
	}
	return cleanError{fmt.Errorf("%s%w", where, err)}
}

// cleanError is an import error whose text quotes the file (a value, a
// phase, a path): its secrets and control characters are removed as from
// the records' texts.
type cleanError struct{ err error }

func (e cleanError) Error() string { return scrub.Text(e.err.Error()) }
func (e cleanError) Unwrap() error { return e.err }

// open opens path for reading, unzipping a gzipped file as it is read.
func open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	br := bufio.NewReader(f)
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("records: %s: gzip: %w", path, err)
		}
		return struct {
			io.Reader
			io.Closer
		}{cutGzip{zr}, f}, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{br, f}, nil
}

// cutGzip reads a gzip stream cut short as a clean end: the lines read
// so far, the last one cut (which the line reader reports as partial).
type cutGzip struct{ r io.Reader }

func (c cutGzip) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	return n, err
}

// sameFormat detects every file's format: one format for them all, or an
// error naming two files that differ (one judged sample is one tool's).
func sameFormat(paths []string) (string, error) {
	format, first := "", ""
	for _, p := range paths {
		f, err := detectFile(p)
		if err != nil {
			return "", err
		}
		if format != "" && f != format {
			return "", fmt.Errorf("records: %s is %s but %s is %s: one judged sample comes from one tool", first, format, p, f)
		}
		format, first = f, p
	}
	return format, nil
}

// detectFile names the format of the file at path.
func detectFile(path string) (string, error) {
	rc, err := open(path)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	format, _, err := detect(bufio.NewReaderSize(rc, 1<<16))
	if err != nil {
		return "", fmt.Errorf("%w (name the format)", inFile(err, path, ""))
	}
	return format, nil
}

// Detect names the format of a file's contents (one of Formats) from its
// first record's keys. Contents that fit no format, or more than one, are
// an error that says which.
func Detect(b []byte) (string, error) {
	format, _, err := detect(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		return "", fmt.Errorf("records: %w", err)
	}
	return format, nil
}
