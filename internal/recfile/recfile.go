// Package recfile reads and writes records files: JSON Lines, one value
// a line, then an end line ({"end_of_records":N}) that counts the values
// before it, so a file cut at a line boundary is detectable on its own.
// Stream writes one value a line straight to a file as each completes,
// so a crash loses none already written; its end line is written last.
// Errors name the line or the record but not the package: the caller
// prefixes its own.
package recfile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// End is the end line of a records file: how many records precede it
// (since the file's start, or since the previous end line of files
// joined with cat) and, when known, the shard and label of the run.
type End struct {
	Records *int   `json:"end_of_records"`
	Shard   string `json:"shard,omitempty"`
	Label   string `json:"label,omitempty"`
}

// Write writes recs as JSON Lines, then end counting them; id names a
// record that cannot be encoded.
func Write[T any](w io.Writer, recs []T, end End, id func(*T) string) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return fmt.Errorf("writing record %s: %w", id(&recs[i]), err)
		}
	}
	n := len(recs)
	end.Records = &n
	if err := enc.Encode(end); err != nil {
		return fmt.Errorf("writing the end of records: %w", err)
	}
	return bw.Flush()
}

// Read reads JSON Lines of T, refusing unknown fields; the error names
// the bad line. An end line must count the values before it (since the
// previous end line): a different count is an error, as lines were lost
// or added. A file without an end line is read as it is.
func Read[T any](r io.Reader) ([]T, error) {
	var out []T
	br := bufio.NewReader(r)
	since := 0 // values since the previous end line
	for line := 1; ; line++ {
		b, rerr := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(b))) > 0 {
			var v T
			dec := json.NewDecoder(strings.NewReader(string(b)))
			dec.DisallowUnknownFields()
			if derr := dec.Decode(&v); derr != nil {
				e, ok := EndLine(b)
				if !ok {
					return nil, fmt.Errorf("records line %d: %w", line, derr)
				}
				if *e.Records != since {
					return nil, fmt.Errorf("records line %d: the end line counts %d records, but %d precede it: lines were lost or added",
						line, *e.Records, since)
				}
				since = 0
			} else {
				out = append(out, v)
				since++
			}
		}
		if errors.Is(rerr, io.EOF) {
			return out, nil
		}
		if rerr != nil {
			return nil, fmt.Errorf("reading records: %w", rerr)
		}
	}
}

// EndLine decodes an end line; ok is false for anything else.
func EndLine(b []byte) (*End, bool) {
	var e End
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Records == nil || dec.More() {
		return nil, false
	}
	return &e, true
}

// Path is where a run's records go in dir: records.jsonl, or
// records-<label>.jsonl (-2, -3… if need be) when that exists already.
func Path(dir, label string) string {
	path := filepath.Join(dir, "records.jsonl")
	for i := 1; exists(path); i++ {
		name := "records-" + label
		if i > 1 {
			name += "-" + strconv.Itoa(i)
		}
		path = filepath.Join(dir, name+".jsonl")
	}
	return path
}

// SummaryPath is where the summary of the records at path goes, beside
// them: records.jsonl's is summary.json, records-c8.jsonl's
// summary-c8.json. Measure writes it there and a merge reads it there.
func SummaryPath(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	return filepath.Join(filepath.Dir(path), "summary"+strings.TrimPrefix(name, "records")+".json")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Stream writes values to a records file (File, or Path(Dir, Label)
// when File is "") as they come, one line each, straight to the file (no buffer left
// unwritten). The file is created at the first value. It is safe for
// concurrent use.
type Stream struct {
	Dir, Label, File string

	mu  sync.Mutex
	f   *os.File
	buf []byte
	n   int
	err error
}

// Write appends v as one line; id names it in an error. The first error
// sticks and stops the writing; Finish returns it.
func (s *Stream) Write(v any, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if s.f == nil {
		if s.File == "" {
			s.File = Path(s.Dir, s.Label)
		}
		if s.f, s.err = os.Create(s.File); s.err != nil {
			return
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		s.err = fmt.Errorf("writing record %s: %w", id, err)
		return
	}
	s.buf = append(append(s.buf[:0], b...), '\n')
	if _, err := s.f.Write(s.buf); err != nil {
		s.err = fmt.Errorf("writing record %s: %w", id, err)
		return
	}
	s.n++
}

// Finish writes the end line (with shard and the Label) and closes the
// file; path is "" when nothing was written.
func (s *Stream) Finish(shard string) (path string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return "", s.err
	}
	defer func() {
		if cerr := s.f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if s.err != nil {
		return s.File, s.err
	}
	n := s.n
	b, err := json.Marshal(End{Records: &n, Shard: shard, Label: s.Label})
	if err != nil {
		return s.File, fmt.Errorf("writing the end of records: %w", err)
	}
	if _, err := s.f.Write(append(b, '\n')); err != nil {
		return s.File, fmt.Errorf("writing the end of records: %w", err)
	}
	return s.File, nil
}
