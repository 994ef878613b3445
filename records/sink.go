package records

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/internal/resultbuild"
	"github.com/tailguard/tailguard/internal/scrub"
	"github.com/tailguard/tailguard/latencytest"
)

// Sink receives a Format's requests as its Decode reads them, and what
// the file says about the run. Add is the one way in: every record is
// cleaned and checked there.
type Sink struct {
	f       *Format
	split   bool // one result per load level (ImportLevels), else one
	builder map[int]builder
	order   []int // levels in the order first seen

	line   int    // the line being read (JSON-lines formats)
	prefix string // prefixed to every trace ID ("a.json:")
	file   string
	n      int      // records of the current file
	fps    []uint64 // the current file's fingerprints
	sent   []sentAt // the current file's records with a send time (duplicates)
	seen   []fileFingerprints

	versions, models, notes, partial []string
	levels                           []int
	memo                             map[string]string // texts cleaned so far (error texts repeat)
}

// fileFingerprints are one file's records, for finding the same run
// under another name: a hash of each timed record's clocks, sorted.
type fileFingerprints struct {
	file string
	fps  []uint64
}

// sentAt is a record with a send time: its fingerprint, its place among
// the file's records and its line (0 outside a JSON-lines file).
type sentAt struct {
	fp      uint64
	n, line uint32
}

func newSink(f *Format, split bool) *Sink {
	return &Sink{f: f, split: split, builder: map[int]builder{}}
}

func (s *Sink) startFile(path, prefix string) {
	s.file, s.prefix, s.n, s.line, s.fps, s.sent = path, scrub.Text(prefix), 0, 0, s.fps[:0], s.sent[:0]
}

// endFile refuses a file that holds one request twice (two records with
// the same send time and clocks, to the nanosecond), or whose timed
// records another file already held (one run under two names), and keeps
// its fingerprints for the next.
func (s *Sink) endFile() error {
	if err := s.duplicates(); err != nil {
		return err
	}
	if !s.split {
		return nil
	}
	slices.Sort(s.fps)
	for _, prev := range s.seen {
		if n := common(prev.fps, s.fps); n > 0 {
			return fmt.Errorf("%d of its %d timed requests are also in %s, to the nanosecond: the same run under two names would count twice; judge each run once", n, len(s.fps), prev.file)
		}
	}
	s.seen = append(s.seen, fileFingerprints{s.file, slices.Clone(s.fps)})
	return nil
}

// duplicates refuses a file with two records of the same send time and
// clocks to the nanosecond: one request written twice (a file pasted
// onto itself, a tool that wrote a request again), which would count
// twice. Only records with a send time are compared: without one, two
// honest requests of a coarse tool can share every clock.
func (s *Sink) duplicates() error {
	d := s.sent
	slices.SortFunc(d, func(a, b sentAt) int {
		return cmp.Or(cmp.Compare(a.fp, b.fp), cmp.Compare(a.n, b.n))
	})
	pairs := 0
	var first [2]sentAt
	for i := 1; i < len(d); i++ {
		if d[i].fp == d[i-1].fp {
			if pairs == 0 || d[i-1].n < first[0].n {
				first = [2]sentAt{d[i-1], d[i]}
			}
			pairs++
		}
	}
	if pairs == 0 {
		return nil
	}
	place := func(x sentAt) string {
		if x.line > 0 {
			return fmt.Sprintf("line %d", x.line)
		}
		return fmt.Sprintf("request %d", x.n+1)
	}
	return fmt.Errorf("%s and %s hold the same request (the same send time and clocks, to the nanosecond; %d such repeat(s) in the file): a request written twice would count twice; remove the copies",
		place(first[0]), place(first[1]), pairs)
}

// common counts the values two sorted lists share.
func common(a, b []uint64) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

var fpSeed = maphash.MakeSeed()

// fingerprint hashes what two honest runs never share to the nanosecond:
// the send time and every clock. Only timed records have one.
func fingerprint(rec *latencytest.Record) (uint64, bool) {
	if rec.Total <= 0 && rec.TTFT <= 0 {
		return 0, false
	}
	var b [8 * 8]byte
	put := func(i int, v int64) { binary.LittleEndian.PutUint64(b[8*i:], uint64(v)) }
	if !rec.Start.IsZero() {
		put(0, rec.Start.UnixNano())
	}
	put(1, int64(rec.TTFT))
	put(2, int64(rec.FirstAnswer))
	put(3, int64(rec.LastToken))
	put(4, int64(rec.Total))
	put(5, int64(rec.MaxGap))
	put(6, int64(rec.TTFB))
	put(7, int64(rec.Status)<<32|int64(rec.CompletionTokens))
	return maphash.Bytes(fpSeed, b[:]), true
}

// Add checks one request and keeps it: where names it in the file (a
// JSON path such as "ttfts[3]"; "" names the line being read). Its texts
// (trace ID, detail, notes, model, finish reason) are cleaned of secrets
// and control characters. A record that could not have been measured is
// an error naming where and why (see check): a zero or negative latency,
// a first token after the end, a value out of range.
func (s *Sink) Add(rec *latencytest.Record, where string) error {
	line := 0 // the record's line, when where is one
	if where == "" {
		where, line = fmt.Sprintf("line %d", s.line), s.line
	}
	rec.ID = scrub.Text(cut(rec.ID, 200))
	if rec.ID == "" {
		rec.ID = fmt.Sprintf("%s-%05d", s.f.Name, s.n)
	}
	rec.ID = s.prefix + rec.ID
	rec.Detail = s.clean(rec.Detail)
	rec.Model = scrub.Text(rec.Model)
	rec.FinishReason = scrub.Text(rec.FinishReason)
	rec.Injected = scrub.Text(rec.Injected)
	for i, n := range rec.Notes {
		rec.Notes[i] = scrub.Text(n)
	}
	if err := check(rec, s.f.ZeroTimes); err != nil {
		return fmt.Errorf("%s: request %s: %w", where, rec.ID, err)
	}
	if fp, ok := fingerprint(rec); ok {
		if s.split {
			s.fps = append(s.fps, fp)
		}
		if !rec.Start.IsZero() {
			s.sent = append(s.sent, sentAt{fp, uint32(s.n), uint32(line)})
		}
	}
	level := 0
	if s.split {
		level = rec.Concurrency
	}
	b := s.builder[level]
	if b == nil {
		b = resultbuild.New().(builder)
		s.builder[level] = b
		s.order = append(s.order, level)
	}
	b.Add(rec)
	s.n++
	return nil
}

// clean is scrub.Text, remembered for up to 4,096 distinct texts.
func (s *Sink) clean(text string) string {
	if text == "" {
		return ""
	}
	if c, ok := s.memo[text]; ok {
		return c
	}
	c := scrub.Text(text)
	if s.memo == nil {
		s.memo = map[string]string{}
	}
	if len(s.memo) < 4096 {
		s.memo[text] = c
	}
	return c
}

// maxTime is the longest time a record may hold (a day): a larger value
// is a unit mistake (milliseconds written as seconds).
const maxTime = 24 * time.Hour

// check refuses a record that could not have been measured: a clock that
// is negative (other than NotObserved) or over a day; a success with no
// time at all, a token clock without a token or a token event without a
// clock; the first token after the first answer, the last token or the
// end; a gap or the token times after the end; a negative count or
// status. A failed record may have no time (a refused connection), never
// an impossible one; zeroTimes lets a success take no time (see
// Format.ZeroTimes).
func check(rec *latencytest.Record, zeroTimes bool) error {
	clocks := []struct {
		name string
		d    time.Duration
	}{{"TTFB", rec.TTFB}, {"TTFT", rec.TTFT}, {"first answer", rec.FirstAnswer}, {"last token", rec.LastToken},
		{"total", rec.Total}, {"longest gap", rec.MaxGap}, {"connect", rec.Connect}, {"TLS", rec.TLS}, {"DNS", rec.DNS}}
	for _, c := range clocks {
		if c.d != latencytest.NotObserved && (c.d < 0 || c.d > maxTime) {
			return fmt.Errorf("%s %v is not a time a request takes (0 to a day): a unit mistake?", c.name, c.d)
		}
	}
	for _, n := range []int{rec.TokenEvents, rec.PromptTokens, rec.CompletionTokens, rec.CachedTokens, rec.ReasoningTokens} {
		if n < 0 {
			return fmt.Errorf("negative token count %d", n)
		}
	}
	if rec.Status < 0 || rec.Status > 599 {
		return fmt.Errorf("HTTP status %d", rec.Status)
	}
	obs := func(d time.Duration) bool { return d > 0 }
	if rec.OK() {
		if rec.Total == 0 && zeroTimes && rec.Start.IsZero() {
			return errors.New("a success of 0s without a send time: not a measurement (this module's records of a 0s call on synctest's clock have one)")
		}
		if rec.Total < 0 || rec.Total == 0 && !zeroTimes {
			return fmt.Errorf("a success that took %v: a request takes time (a missing value written as 0?)", rec.Total)
		}
		if rec.TokenEvents > 0 && (rec.TTFT < 0 || rec.TTFT == 0 && !zeroTimes) {
			return fmt.Errorf("%d token event(s) but TTFT %v: a first token takes time", rec.TokenEvents, rec.TTFT)
		}
	}
	order := []struct {
		a, b   string
		da, db time.Duration
	}{
		{"TTFT", "total", rec.TTFT, rec.Total},
		{"TTFT", "first answer", rec.TTFT, rec.FirstAnswer},
		{"first answer", "total", rec.FirstAnswer, rec.Total},
		{"TTFT", "last token", rec.TTFT, rec.LastToken},
		{"last token", "total", rec.LastToken, rec.Total},
		{"longest gap", "total", rec.MaxGap, rec.Total},
		{"TTFB", "total", rec.TTFB, rec.Total},
	}
	for _, o := range order {
		if obs(o.da) && obs(o.db) && o.da > o.db {
			return fmt.Errorf("%s %v after %s %v: impossible (mixed units?)", o.a, o.da, o.b, o.db)
		}
	}
	if g := rec.Gaps.Len(); g > 0 && obs(rec.Total) {
		var sum time.Duration
		for _, d := range rec.Gaps.All() {
			sum += d
		}
		if rec.TTFT > 0 && rec.TTFT+sum > rec.Total+time.Duration(g) { // g ns: each gap rounded to the nanosecond
			return fmt.Errorf("TTFT %v and %d gaps of %v end after total %v: impossible (mixed units?)", rec.TTFT, g, sum, rec.Total)
		}
	}
	return nil
}

// checkResult checks every record of a result read by a Format's Levels
// (this module's own records), naming the first implausible one.
func checkResult(res *latencytest.Result, where string, zeroTimes bool) error {
	for _, rec := range res.All() {
		if err := check(rec, zeroTimes); err != nil {
			return fmt.Errorf("records: %s: request %s: %w", where, scrub.Text(rec.ID), err)
		}
	}
	return nil
}

// Partial notes that the file is cut short, and where.
func (s *Sink) Partial(reason string) {
	if s.file != "" && s.split {
		reason = s.file + ": " + reason
	}
	s.partial = append(s.partial, reason)
}

// Note adds a sentence to box 1 (once).
func (s *Sink) Note(sentence string) { s.notes = addOnce(s.notes, scrub.Text(sentence)) }

// Version notes the tool's version as the file records it.
func (s *Sink) Version(v string) {
	if v = scrub.Text(v); v != "" {
		s.versions = addOnce(s.versions, v)
	}
}

// Model notes a model ID the file names.
func (s *Sink) Model(m string) {
	if m = scrub.Text(m); m != "" {
		s.models = addOnce(s.models, m)
	}
}

// Level notes a load level (requests in flight) the file names.
func (s *Sink) Level(n int) {
	if n > 0 && !slices.Contains(s.levels, n) {
		s.levels = append(s.levels, n)
		slices.Sort(s.levels)
	}
}

// Records is how many requests of the current file were added.
func (s *Sink) Records() int { return s.n }

func addOnce(list []string, v string) []string {
	if v == "" || slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// result builds one level's Result and its disclosure (nil when the
// level holds no record).
func (s *Sink) result(level int, paths []string) *latencytest.Result {
	b := s.builder[level]
	if b == nil {
		return nil
	}
	f := s.f
	tool := f.Tool
	name := tool + " (version not recorded in the file)"
	if len(s.versions) > 0 {
		name = tool + " " + strings.Join(s.versions, ", ")
	}
	box1 := "imported from " + name + ": " + f.Timed
	if len(s.notes) > 0 {
		box1 += "; " + strings.Join(s.notes, "; ")
	}
	b.Box(1, box1+"; failed requests count as infinitely slow", false)
	warm := f.Warmup
	if warm == "" {
		warm = tool + " marks no warm-up request: every request counts"
	}
	unknown := "not recorded by " + tool
	b.Box(5, unknown+": cache state unknown", true)
	b.Box(6, unknown, true)
	if len(s.levels) > 0 {
		b.Box(7, fmt.Sprintf("%v request(s) in flight (as %s recorded it)", s.levels, tool), false)
	} else {
		b.Box(7, unknown, true)
	}
	b.Box(8, fmt.Sprintf("%d load level(s) in the file", max(len(s.levels), 1)), len(s.levels) < 3)
	b.Box(10, unknown, true)
	b.Box(11, unknown, true)
	if len(s.models) > 0 {
		b.Box(12, strings.Join(s.models, ", ")+" (as "+tool+" recorded it)", false)
	} else {
		b.Box(12, unknown, true)
	}
	b.Box(13, unknown, true)
	b.Box(14, unknown, true)
	b.Box(15, "one file, kept whole", true)
	var where string
	switch {
	case len(paths) == 1 && paths[0] != "":
		where = paths[0] + " (" + f.Name + ", imported)"
	case len(paths) > 1:
		where = fmt.Sprintf("%d files: %s (%s, imported)", len(paths), strings.Join(paths, ", "), f.Name)
	default:
		where = "imported from " + tool + "'s output"
	}
	b.Box(3, scrub.Text(where), false)
	res := b.Result(strings.Join(s.partial, "; "))
	res.Disclosure.Format = f.Name
	c := res.Counts()
	res.Disclosure.Boxes = slices.DeleteFunc(res.Disclosure.Boxes, func(x disclosure.Box) bool { return x.N == 4 || x.N == 9 })
	d := &res.Disclosure
	d.Set(4, warm, c.Discarded == 0)
	if !res.Start.IsZero() {
		d.Set(9, fmt.Sprintf("%s to %s (%v)", res.Start.UTC().Format(time.RFC3339), res.End.UTC().Format(time.RFC3339), res.End.Sub(res.Start).Round(time.Millisecond)), false)
	} else {
		d.Set(9, unknown+": no send times in the file", true)
	}
	return res
}

// cut cuts s to at most n characters, marking a cut with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// builder builds a latencytest.Result from records added one at a time,
// compacting them past compact.Above as a run does: latencytest's, made
// through internal/resultbuild.
type builder interface {
	Add(rec *latencytest.Record)
	Len() int
	Box(n int, answer string, missing bool)
	Result(partial string) *latencytest.Result
}
