package latencytest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Import formats: the per-request raw output of other load tools that
// Import turns into Records, and this package's own records.
const (
	// FormatTailguard is this package's own records (JSONL, WriteRecords).
	FormatTailguard = "tailguard"
	// FormatAIPerf is AIPerf's profile_export.jsonl (one record a line).
	FormatAIPerf = "aiperf"
	// FormatVLLM is the JSON that vllm bench serve writes with
	// --save-result --save-detailed (per-request arrays).
	FormatVLLM = "vllm"
	// FormatGuideLLM is GuideLLM's benchmarks report (benchmarks.json,
	// report schema version 1).
	FormatGuideLLM = "guidellm"
	// FormatLLMPerf is llmperf's *_individual_responses.json.
	FormatLLMPerf = "llmperf"
	// FormatK6 is k6's JSON output (k6 run --out json=FILE): HTTP
	// timings only.
	FormatK6 = "k6"
	// FormatVegeta is vegeta's JSON results, one a line (vegeta encode,
	// or vegeta attack -format json... | vegeta encode).
	FormatVegeta = "vegeta"
)

// Formats lists the formats Import reads, sorted.
func Formats() []string {
	return []string{FormatAIPerf, FormatGuideLLM, FormatK6, FormatLLMPerf, FormatTailguard, FormatVegeta, FormatVLLM}
}

// ImportedMetrics lists the clocks a format measures per request, among
// "ttft", "first_answer", "itl", "max_gap", "total" and "tokens": an
// objective on a clock the tool did not measure cannot be judged from its
// records (its values are not observed and count as failed). Nil for an
// unknown format.
func ImportedMetrics(format string) []string {
	switch format {
	case FormatTailguard:
		return []string{"ttft", "first_answer", "itl", "max_gap", "total", "tokens"}
	case FormatAIPerf:
		return []string{"ttft", "first_answer", "itl", "max_gap", "total", "tokens"}
	case FormatVLLM:
		return []string{"ttft", "itl", "max_gap", "total", "tokens"}
	case FormatGuideLLM:
		return []string{"ttft", "total", "tokens"}
	case FormatLLMPerf:
		return []string{"ttft", "first_answer", "total", "tokens"}
	case FormatK6, FormatVegeta:
		return []string{"total"}
	}
	return nil
}

// Import reads one file of another load tool's per-request output (format
// is one of Formats, or "" to detect it from the keys of the file's first
// record: contents that fit no format, or more than one, are an error
// that says which) and returns its requests as a Result, with the
// semantics of this package's own records: TTFT, first answer where the
// tool tells it apart, inter-token gaps, total time, token counts, errors
// mapped to error classes (http_<status>, transport, total_timeout,
// canceled, call_error), warm-up where the tool marks it. Its Disclosure
// names the tool, its version when the file records one, and what the
// tool did not measure (box 1); boxes the tool does not record are
// marked missing.
//
// A clock the tool did not measure is NotObserved (so it counts as
// failed in a sample, never as 0): k6 and vegeta time HTTP only (no TTFT).
// A request the tool recorded without any timing is a failed record
// (call_error) with a note, never dropped. Units are checked against what
// the file declares or what the tool writes (seconds, milliseconds,
// nanoseconds); a value that does not fit its unit is an error, never
// rescaled. A file of another format, or of another version of the tool's
// schema, is an error naming the field that was expected. A file cut
// short (a last line or a JSON document that ends early) gives the
// requests read so far and a Partial result saying where it ended.
func Import(format string, r io.Reader) (*Result, error) {
	var (
		im  *importer
		err error
	)
	if format == "" {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("latencytest: import: %w", err)
		}
		if format, err = detectFormat(b); err != nil {
			return nil, fmt.Errorf("%w (name the format)", err)
		}
		r = bytes.NewReader(b)
	}
	switch format {
	case FormatTailguard:
		recs, err := ReadRecords(r)
		if err != nil {
			return nil, err
		}
		im = &importer{tool: "tailguard", recs: recs}
		return im.result(), nil
	case FormatAIPerf:
		im, err = importAIPerf(r)
	case FormatVLLM:
		im, err = importVLLM(r)
	case FormatGuideLLM:
		im, err = importGuideLLM(r)
	case FormatLLMPerf:
		im, err = importLLMPerf(r)
	case FormatK6:
		im, err = importK6(r)
	case FormatVegeta:
		im, err = importVegeta(r)
	default:
		return nil, fmt.Errorf("latencytest: import: unknown format %q (want one of %s)", format, strings.Join(Formats(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("latencytest: import %s: %w", format, err)
	}
	return im.result(), nil
}

// ImportFile reads the file at path with Import; a gzipped file (k6
// --out json=results.gz) is unzipped first. An empty format is detected
// from the file, as Import does. A tailguard records file is read with
// MergeRecords, so the summary.json beside it counts too.
func ImportFile(format, path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("latencytest: import: %w", err)
	}
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err == nil {
			b, err = io.ReadAll(zr)
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) { // a cut gzip stream: the lines read so far
			return nil, fmt.Errorf("latencytest: import: %s: gzip: %w", path, err)
		}
	}
	if format == "" {
		if format, err = detectFormat(b); err != nil {
			return nil, fmt.Errorf("%w (file %s; name the format)", err, path)
		}
	}
	if format == FormatTailguard {
		return MergeRecords(path)
	}
	res, err := Import(format, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	res.Disclosure.SetRawRecords(path + " (" + format + ", imported)")
	return res, nil
}

// ImportLevels imports every file the patterns match (files or globs, as
// MergeRecords takes them) in the given format ("" detects it: every file
// must be of the same format)
// and splits the requests by load level (Record.Concurrency; 0 for a tool
// that does not record one), as MergeLevels does; this package's own
// records are merged by MergeLevels. With more than one file of another
// tool,
// each trace ID is prefixed with its file's name and a colon, so the
// files' own IDs cannot collide. A partial file makes its levels partial.
func ImportLevels(format string, patterns ...string) (map[int]*Result, error) {
	if format == FormatTailguard {
		return MergeLevels(patterns...)
	}
	paths, err := globAll(patterns)
	if err != nil {
		return nil, err
	}
	if format == "" && len(paths) > 0 {
		if format, err = sameFormat(paths); err != nil {
			return nil, err
		}
	}
	if format == FormatTailguard {
		return MergeLevels(patterns...) // this package's own records: merged, duplicate trace IDs refused
	}
	var all []*Result
	for _, p := range paths {
		res, err := ImportFile(format, p)
		if err != nil {
			return nil, err
		}
		if len(paths) > 1 {
			for i := range res.Records {
				res.Records[i].ID = filepath.Base(p) + ":" + res.Records[i].ID
			}
		}
		all = append(all, res)
	}
	out := map[int]*Result{}
	for _, res := range all {
		by := map[int][]Record{}
		for _, rec := range res.Records {
			by[rec.Concurrency] = append(by[rec.Concurrency], rec)
		}
		for level, recs := range by {
			dst := out[level]
			if dst == nil {
				dst = &Result{CPUPerWall: math.NaN(), Disclosure: res.Disclosure}
				dst.Disclosure.Boxes = slices.Clone(res.Disclosure.Boxes) // each level's boxes are its own
				out[level] = dst
			}
			dst.Records = append(dst.Records, recs...)
			dst.Planned += len(recs)
			if res.Partial {
				dst.Partial = true
				dst.PartialReason = strings.TrimPrefix(dst.PartialReason+"; "+res.PartialReason, "; ")
			}
		}
	}
	for _, res := range out {
		res.Start, res.End = window(res.Records)
		if len(paths) > 1 {
			res.Disclosure.SetRawRecords(fmt.Sprintf("%d files: %s (%s, imported)", len(paths), strings.Join(paths, ", "), format))
		}
		c := res.Counts()
		res.Disclosure.set(2, fmt.Sprintf("%d requests: %d kept, %d discarded (warm-up), %d failed%s", c.Sent, c.Kept, c.Discarded, c.Failed, partialNote(res.Partial, res.PartialReason)), false)
	}
	return out, nil
}

// sameFormat detects every file's format: one format for them all, or an
// error naming two files that differ (one judged sample is one tool's).
func sameFormat(paths []string) (string, error) {
	format, first := "", ""
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("latencytest: import: %w", err)
		}
		if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
				b, _ = io.ReadAll(zr)
			}
		}
		f, err := detectFormat(b)
		if err != nil {
			return "", fmt.Errorf("%w (file %s; name the format)", err, p)
		}
		if format != "" && f != format {
			return "", fmt.Errorf("latencytest: import: %s is %s but %s is %s: one judged sample comes from one tool", first, format, p, f)
		}
		format, first = f, p
	}
	return format, nil
}

// detectFormat names the format of a file's contents (one of Formats),
// from the keys of its first record. Contents that fit no format, or more
// than one, are an error that says which.
func detectFormat(b []byte) (string, error) {
	t := bytes.TrimLeft(b, " \t\r\n\ufeff")
	if len(t) == 0 {
		return "", errors.New("latencytest: detect format: the file is empty")
	}
	var found []string
	switch t[0] {
	case '[':
		tree, _, err := readJSONTree(bytes.NewReader(t))
		if arr, ok := tree.([]any); err == nil && ok && len(arr) > 0 {
			if m, ok := arr[0].(map[string]any); ok && has(m, "end_to_end_latency_s") && has(m, "ttft_s") {
				found = append(found, FormatLLMPerf)
			}
		}
	case '{':
		line := t
		if i := bytes.IndexByte(t, '\n'); i > 0 {
			line = t[:i]
		}
		var m map[string]any
		if json.Unmarshal(line, &m) == nil { // a JSON-lines file
			if has(m, "metadata") && has(m, "metrics") {
				found = append(found, FormatAIPerf)
			}
			if has(m, "type") && has(m, "metric") && has(m, "data") {
				found = append(found, FormatK6)
			}
			if has(m, "code") && has(m, "latency") && has(m, "timestamp") {
				found = append(found, FormatVegeta)
			}
			if has(m, "id") && has(m, "ttft_ns") && has(m, "total_ns") {
				found = append(found, FormatTailguard)
			}
		}
		if tree, _, err := readJSONTree(bytes.NewReader(t)); err == nil {
			if m, ok := tree.(map[string]any); ok {
				if has(m, "benchmarks") {
					found = append(found, FormatGuideLLM)
				}
				if has(m, "ttfts") || has(m, "itls") {
					found = append(found, FormatVLLM)
				}
			}
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("latencytest: detect format: the file is none of %s (a record's keys name its tool: e.g. aiperf metadata+metrics, vllm ttfts, guidellm benchmarks, llmperf ttft_s, k6 type+metric, vegeta code+latency)", strings.Join(Formats(), ", "))
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("latencytest: detect format: ambiguous: the file fits %s", strings.Join(found, " and "))
}

func has(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// importer collects one tool's records and what the tool did and did not
// measure, for the disclosure.
type importer struct {
	tool, version string // "AIPerf", "0.4.0" ("" when not recorded)
	recs          []Record
	partial       []string // why the file is partial
	timed         string   // box 1: what the tool timed, and what it did not
	warmup        string   // box 4
	models        []string
	levels        []int
	notes         []string // extra sentences for box 1
}

// result builds the Result and its disclosure.
func (im *importer) result() *Result {
	res := &Result{Records: im.recs, Planned: len(im.recs), CPUPerWall: math.NaN()}
	res.Start, res.End = window(im.recs)
	if len(im.partial) > 0 {
		res.Partial, res.PartialReason = true, strings.Join(im.partial, "; ")
	}
	if im.tool == "tailguard" {
		res.Disclosure.set(1, measurementBox, false)
		res.Disclosure.set(3, "read back from JSONL (no summary beside it: the other boxes are not known)", false)
		return res
	}
	d := &res.Disclosure
	name := im.tool
	if im.version != "" {
		name += " " + im.version
	} else {
		name += " (version not recorded in the file)"
	}
	box1 := "imported from " + name + ": " + im.timed
	if len(im.notes) > 0 {
		box1 += "; " + strings.Join(im.notes, "; ")
	}
	d.set(1, box1+"; failed requests count as infinitely slow", false)
	c := res.Counts()
	d.set(2, fmt.Sprintf("%d requests in the file: %d kept, %d discarded (warm-up), %d failed%s", c.Sent, c.Kept, c.Discarded, c.Failed, partialNote(res.Partial, res.PartialReason)), false)
	d.set(3, "imported from "+im.tool+"'s output", false)
	if im.warmup == "" {
		im.warmup = im.tool + " marks no warm-up request: every request counts"
	}
	d.set(4, im.warmup, c.Discarded == 0)
	unknown := "not recorded by " + im.tool
	d.set(5, unknown+": cache state unknown", true)
	d.set(6, unknown, true)
	if len(im.levels) > 0 {
		d.set(7, fmt.Sprintf("%v request(s) in flight (as %s recorded it)", im.levels, im.tool), false)
	} else {
		d.set(7, unknown, true)
	}
	d.set(8, fmt.Sprintf("%d load level(s) in the file", max(len(im.levels), 1)), len(im.levels) < 3)
	if !res.Start.IsZero() {
		d.set(9, fmt.Sprintf("%s to %s (%v)", res.Start.UTC().Format(time.RFC3339), res.End.UTC().Format(time.RFC3339), res.End.Sub(res.Start).Round(time.Millisecond)), false)
	} else {
		d.set(9, unknown+": no send times in the file", true)
	}
	d.set(10, unknown, true)
	d.set(11, unknown, true)
	if len(im.models) > 0 {
		d.set(12, strings.Join(im.models, ", ")+" (as "+im.tool+" recorded it)", false)
	} else {
		d.set(12, unknown, true)
	}
	d.set(13, unknown, true)
	d.set(14, unknown, true)
	d.set(15, "one file, kept whole", true)
	return res
}

// window spans the records' send and end times (zero without send times).
func window(recs []Record) (start, end time.Time) {
	for i := range recs {
		r := &recs[i]
		if r.Start.IsZero() {
			continue
		}
		if start.IsZero() || r.Start.Before(start) {
			start = r.Start
		}
		if e := r.Start.Add(max(r.Total, 0)); e.After(end) {
			end = e
		}
	}
	return start, end
}

// addModel and addLevel note a model ID and a load level once.
func (im *importer) addModel(m string) {
	if m != "" && !slices.Contains(im.models, m) {
		im.models = append(im.models, m)
	}
}

func (im *importer) addLevel(l int) {
	if l > 0 && !slices.Contains(im.levels, l) {
		im.levels = append(im.levels, l)
		slices.Sort(im.levels)
	}
}

// untimed marks a request the tool recorded without timing as failed,
// with a note.
func untimed(rec *Record, tool, missing string) {
	rec.Err = ClassCallError
	rec.Detail = tool + " recorded this request without timing (" + missing + ")"
	rec.Notes = append(rec.Notes, "no timing in "+tool+"'s record: counted as failed, not dropped")
	rec.TTFT, rec.FirstAnswer, rec.LastToken, rec.MaxGap, rec.TTFB = NotObserved, NotObserved, NotObserved, NotObserved, NotObserved
}

// httpStatusClass maps an error code a tool recorded to an error class:
// an HTTP status (100-599) gives http_<status>; ok is false otherwise.
func httpStatusClass(code int) (string, bool) {
	if code >= 100 && code <= 599 {
		return HTTPClass(code), true
	}
	return "", false
}

// reasonStatus maps an HTTP reason phrase ("Too Many Requests") to its
// status, 0 when the text is not one.
func reasonStatus(text string) int {
	t := strings.TrimSpace(text)
	for code := 100; code <= 599; code++ {
		if s := http.StatusText(code); s != "" && strings.EqualFold(s, t) {
			return code
		}
	}
	return 0
}

// textClass classifies an error text no status explains: a timeout, a
// connection failure, or a call error.
func textClass(text string) string {
	l := strings.ToLower(text)
	switch {
	case strings.Contains(l, "timeout") || strings.Contains(l, "timed out"):
		return ClassTotalTimeout
	case strings.Contains(l, "connection refused") || strings.Contains(l, "connection reset") ||
		strings.Contains(l, "cannot connect") || strings.Contains(l, "no such host") || strings.Contains(l, "connecterror"):
		return ClassTransport
	case strings.Contains(l, "cancel"):
		return ClassCanceled
	}
	return ClassCallError
}

// firstLine cuts an error text (often a traceback) to one line of at most
// 200 characters.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 && strings.HasPrefix(s, "Traceback") {
		s = strings.TrimSpace(s[i+1:]) // a Python traceback's last line names the error
	} else if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return cutRunes(s, 200)
}

// seconds converts a time in seconds to a Duration; ok is false for a
// value that is not finite, negative, or above limit seconds (a unit that
// does not fit).
func seconds(v float64, limit float64) (time.Duration, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > limit {
		return 0, false
	}
	return time.Duration(math.Round(v * 1e9)), true
}

// maxPlausible is the longest request a seconds field may hold (a day):
// a larger value is a unit mistake (milliseconds written as seconds).
const maxPlausible = 86400

// gapsOf stores a request's inter-token gaps and returns their sum and
// maximum.
func gapsOf(rec *Record, gaps []time.Duration) (sum, longest time.Duration) {
	for _, g := range gaps {
		rec.Gaps.Add(g)
		sum += g
		longest = max(longest, g)
	}
	return sum, longest
}

// readLines calls fn for each non-empty line of a JSON-lines file. A last
// line without a newline that does not parse is a cut file: truncated
// says where it ended; any other bad line is an error.
func readLines(r io.Reader, fn func(n int, line []byte) error) (truncated string, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		b, rerr := br.ReadBytes('\n')
		atEnd := errors.Is(rerr, io.EOF)
		if rerr != nil && !atEnd {
			return "", fmt.Errorf("reading line %d: %w", n, rerr)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			if atEnd && !json.Valid(b) {
				return fmt.Sprintf("the file ends inside line %d (cut short): %d line(s) read", n, n-1), nil
			}
			if err := fn(n, b); err != nil {
				return "", err
			}
		}
		if atEnd {
			return "", nil
		}
	}
}

// endLines closes the import of a JSON-lines file from what readLines
// returned: its error ends the import; a cut file makes it partial; a
// whole file in which n counts nothing read is the error "no <what> in the
// file".
func (im *importer) endLines(cut string, err error, n int, what string) error {
	if err != nil {
		return err
	}
	if cut != "" {
		im.partial = append(im.partial, cut)
	}
	if n == 0 && cut == "" {
		return fmt.Errorf("no %s in the file", what)
	}
	return nil
}

// readJSONTree decodes one JSON document into maps, slices, json.Number,
// strings, bools and nils. When the input ends early it closes what is
// open, drops every value that may have been cut (an unfinished container,
// and the last scalar of an unfinished container), and reports truncated.
// Malformed JSON is an error.
func readJSONTree(r io.Reader) (v any, truncated bool, err error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	type frame struct {
		arr    []any
		obj    map[string]any
		isObj  bool
		key    string
		hasKey bool
		last   string // the key of the last member, for dropping it
		lastOK bool   // the last element or member is complete (a closed container)
	}
	var stack []*frame
	var root any
	put := func(val any, complete bool) {
		if len(stack) == 0 {
			root = val
			return
		}
		f := stack[len(stack)-1]
		if f.isObj {
			f.obj[f.key] = val
			f.last, f.hasKey = f.key, false
		} else {
			f.arr = append(f.arr, val)
		}
		f.lastOK = complete
	}
	value := func(f *frame) any {
		if f.isObj {
			return f.obj
		}
		if f.arr == nil {
			return []any{}
		}
		return f.arr
	}
	for {
		tok, terr := dec.Token()
		if terr != nil {
			if errors.Is(terr, io.EOF) && len(stack) == 0 && root != nil {
				return root, false, nil
			}
			if !errors.Is(terr, io.EOF) && !errors.Is(terr, io.ErrUnexpectedEOF) {
				return nil, false, terr
			}
			if len(stack) == 0 {
				return nil, false, io.ErrUnexpectedEOF
			}
			// Cut short: close every open container, innermost first.
			for i := len(stack) - 1; i >= 0; i-- {
				f := stack[i]
				if !f.lastOK {
					if f.isObj && f.last != "" {
						delete(f.obj, f.last)
					} else if !f.isObj && len(f.arr) > 0 {
						f.arr = f.arr[:len(f.arr)-1]
					}
				}
				stack = stack[:i]
				if i == 0 {
					root = value(f)
				} else {
					put(value(f), false)
				}
			}
			return root, true, nil
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{obj: map[string]any{}, isObj: true, lastOK: true})
			case '[':
				stack = append(stack, &frame{lastOK: true})
			default:
				f := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				put(value(f), true)
			}
		default:
			if f := len(stack); f > 0 && stack[f-1].isObj && !stack[f-1].hasKey {
				stack[f-1].key, stack[f-1].hasKey = t.(string), true
				continue
			}
			put(t, false)
		}
	}
}

// decodeTree decodes a tree from readJSONTree into v (a struct).
func decodeTree(tree any, v any) error {
	b, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
