package latencytest

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tailguard/tailguard/internal/compact"
)

// RecordMode chooses how a run keeps its records in memory (Batch and
// OpenLoop's RecordMode field).
type RecordMode string

// The record modes.
const (
	// RecordsAuto (the zero value) keeps full records for runs of at most
	// 100,000 planned requests and compact records above.
	RecordsAuto RecordMode = ""
	// RecordsFull keeps every Record whole in Result.Records: every gap,
	// the answer text and every field, about 1 KB a request.
	RecordsFull RecordMode = "full"
	// RecordsCompact keeps what the verdicts need, about 60-80 bytes a
	// request: every clock (TTFT, first answer, last token, total, max
	// gap, TTFB, connection setup, schedule), token count, status, class,
	// detail, trace ID and start time exact, so every figure and verdict
	// but ITL is the same as with full records; the inter-token gaps
	// pooled in a sketch (ITL and Result.ITLQuantile within 1%, Record.Gaps
	// empty); no answer text. Result.Records is nil: All, Len and Record
	// read them.
	RecordsCompact RecordMode = "compact"
)

// compactFor reports whether a run of planned requests keeps compact
// records; the error names a mode that is not one.
func (m RecordMode) compactFor(planned int) (bool, error) {
	switch m {
	case RecordsAuto:
		return planned > compact.Above, nil
	case RecordsFull:
		return false, nil
	case RecordsCompact:
		return true, nil
	}
	return false, fmt.Errorf("record_mode %q is not one of \"\", \"full\", \"compact\"", string(m))
}

// compactStore holds a Result's records compactly: each record a run of
// varints in a compact.Arena (strings interned), found by its slot; the
// inter-token gaps pooled in a compact.Sketch. A record with Attempts is
// kept whole (a Func run through Instrument: small runs).
type compactStore struct {
	mu    sync.Mutex
	base  int64 // Unix nanoseconds that Start offsets count from
	loc   *time.Location
	arena *compact.Arena
	whole map[int]*Record // records kept whole, by slot
	itl   compact.Sketch
}

// flags of an encoded record.
const (
	cfWarmup = 1 << iota
	cfOpenLoop
	cfUsage
	cfCached
	cfWholeID
	cfConn
	cfTool
	cfChain
	cfText
	cfWhole
	cfNoStart     // Start is zero: an imported record without a send time
	cfCancel      // cancelled on purpose, or a conversation's turn (cancel.go, package agent)
	cfServerClose // ServerCloseReported
)

func newCompactStore(start time.Time) *compactStore {
	loc := start.Location()
	return &compactStore{base: start.UnixNano(), loc: loc, arena: compact.NewArena()}
}

// intern returns s's index; a detail past compact.MaxInterned texts
// becomes compact.DroppedDetail (the caller passes capped true for
// details).
func (c *compactStore) intern(s string, capped bool) uint64 { return c.arena.Intern(s, capped) }

// reserve adds n empty slots and returns the first one's index.
func (c *compactStore) reserve(n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.arena.Reserve(n)
}

// truncate drops the slots from n on (requests never sent).
func (c *compactStore) truncate(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.arena.Truncate(n)
}

// put encodes rec into slot (safe for concurrent use): a measured
// record's gaps go to the sketch, with one Failed for a failed record (as
// Result.ITL pools them). A record decoded from a store has no gaps: a
// window of a compact result (Result.Windows) keeps only its failures in
// its sketch, so its ITL cannot pass.
func (c *compactStore) put(slot int, rec *Record) {
	var buf [256]byte
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.encode(buf[:0], slot, rec)
	if !rec.Warmup {
		for d := range rec.Gaps.Values() {
			c.itl.Add(d)
		}
		if !rec.OK() && !cancelled(rec) {
			c.itl.Add(Failed)
		}
	}
	c.arena.Put(slot, b)
}

// append adds rec in a new slot (not for concurrent use with put).
func (c *compactStore) append(rec *Record) {
	c.put(c.reserve(1), rec)
}

func (c *compactStore) encode(b []byte, slot int, rec *Record) []byte {
	if len(rec.Attempts) > 0 {
		if c.whole == nil {
			c.whole = map[int]*Record{}
		}
		keep := *rec
		keep.Content = ""
		c.whole[slot] = &keep
		return binary.AppendUvarint(b, cfWhole)
	}
	flags := uint64(0)
	set := func(f uint64, on bool) {
		if on {
			flags |= f
		}
	}
	prefix, width, num, split := compact.SplitID(rec.ID)
	set(cfWarmup, rec.Warmup)
	set(cfOpenLoop, rec.OpenLoop)
	set(cfUsage, rec.UsageReported)
	set(cfCached, rec.CachedReported)
	set(cfWholeID, !split)
	set(cfConn, rec.DNS != 0 || rec.Connect != 0 || rec.TLS != 0)
	set(cfTool, rec.ToolCalls != 0 || rec.FirstToolCall != 0 || rec.ToolArgsDone != 0 || rec.HostedTools != 0)
	set(cfChain, rec.Chain != 0 || rec.Call != 0)
	set(cfText, rec.Detail != "" || rec.Injected != "" || len(rec.Notes) > 0)
	set(cfNoStart, rec.Start.IsZero())
	set(cfCancel, rec.CancelAt != 0 || rec.CancelClose != 0 || rec.ServerAfterClose != 0 || rec.Session != 0 || rec.Turn != 0)
	set(cfServerClose, rec.ServerCloseReported)
	u := func(v uint64) { b = binary.AppendUvarint(b, v) }
	i := func(v int64) { b = binary.AppendVarint(b, v) }
	d := func(v time.Duration) { b = binary.AppendVarint(b, int64(v)) }
	u(flags)
	if split {
		u(c.intern(prefix, false))
		u(uint64(width))
		u(num)
	} else {
		u(c.intern(rec.ID, false))
	}
	i(int64(rec.Run))
	i(int64(rec.Concurrency))
	i(int64(rec.MaxTokens))
	u(c.intern(rec.PromptClass, false))
	u(c.intern(rec.FinishReason, false))
	u(c.intern(rec.Model, false))
	u(c.intern(rec.Err, false))
	if flags&cfNoStart == 0 {
		i(rec.Start.UnixNano() - c.base)
	}
	d(rec.TTFB)
	d(rec.TTFT)
	d(rec.FirstAnswer - rec.TTFT)
	d(rec.LastToken - rec.TTFT)
	d(rec.Total)
	d(rec.MaxGap)
	i(int64(rec.TokenEvents))
	i(int64(rec.PromptTokens))
	i(int64(rec.CompletionTokens))
	i(int64(rec.CachedTokens))
	i(int64(rec.ReasoningTokens))
	i(int64(rec.Status))
	if flags&cfOpenLoop != 0 {
		d(rec.Scheduled)
		d(rec.StartDelay)
		d(rec.FromSchedule - (rec.StartDelay + rec.Total))
	}
	if flags&cfConn != 0 {
		d(rec.DNS)
		d(rec.Connect)
		d(rec.TLS)
	}
	if flags&cfTool != 0 {
		i(int64(rec.ToolCalls))
		d(rec.FirstToolCall)
		d(rec.ToolArgsDone)
		i(int64(rec.HostedTools))
	}
	if flags&cfChain != 0 {
		i(int64(rec.Chain))
		i(int64(rec.Call))
	}
	if flags&cfText != 0 {
		u(c.intern(rec.Detail, true))
		u(c.intern(rec.Injected, false))
		notes := uint64(0)
		if len(rec.Notes) > 0 {
			notes = c.intern("\x00"+strings.Join(rec.Notes, "\x00"), false)
		}
		u(notes)
	}
	if flags&cfCancel != 0 {
		d(rec.CancelAt)
		d(rec.CancelClose)
		i(int64(rec.ServerAfterClose))
		i(int64(rec.Session))
		i(int64(rec.Turn))
	}
	return b
}

// decode fills rec from slot (Gaps and Content empty: see RecordsCompact).
func (c *compactStore) decode(slot int, rec *Record) {
	*rec = Record{}
	b := c.arena.Get(slot)
	u := func() uint64 {
		v, k := binary.Uvarint(b)
		b = b[k:]
		return v
	}
	i := func() int64 {
		v, k := binary.Varint(b)
		b = b[k:]
		return v
	}
	d := func() time.Duration { return time.Duration(i()) }
	flags := u()
	if flags&cfWhole != 0 {
		*rec = *c.whole[slot]
		return
	}
	if flags&cfWholeID != 0 {
		rec.ID = c.arena.Str(u())
	} else {
		prefix := c.arena.Str(u())
		width := int(u())
		rec.ID = compact.JoinID(prefix, width, u())
	}
	rec.Warmup, rec.OpenLoop = flags&cfWarmup != 0, flags&cfOpenLoop != 0
	rec.UsageReported, rec.CachedReported = flags&cfUsage != 0, flags&cfCached != 0
	rec.Run, rec.Concurrency, rec.MaxTokens = int(i()), int(i()), int(i())
	str := func() string { return c.arena.Str(u()) }
	rec.PromptClass, rec.FinishReason, rec.Model, rec.Err = str(), str(), str(), str()
	if flags&cfNoStart == 0 {
		rec.Start = time.Unix(0, c.base+i()).In(c.loc)
	}
	rec.TTFB, rec.TTFT = d(), d()
	rec.FirstAnswer = d() + rec.TTFT
	rec.LastToken = d() + rec.TTFT
	rec.Total, rec.MaxGap = d(), d()
	rec.TokenEvents, rec.PromptTokens, rec.CompletionTokens = int(i()), int(i()), int(i())
	rec.CachedTokens, rec.ReasoningTokens, rec.Status = int(i()), int(i()), int(i())
	if flags&cfOpenLoop != 0 {
		rec.Scheduled, rec.StartDelay = d(), d()
		rec.FromSchedule = d() + rec.StartDelay + rec.Total
	}
	if flags&cfConn != 0 {
		rec.DNS, rec.Connect, rec.TLS = d(), d(), d()
	}
	if flags&cfTool != 0 {
		rec.ToolCalls = int(i())
		rec.FirstToolCall, rec.ToolArgsDone = d(), d()
		rec.HostedTools = int(i())
	}
	if flags&cfChain != 0 {
		rec.Chain, rec.Call = int(i()), int(i())
	}
	if flags&cfText != 0 {
		rec.Detail, rec.Injected = str(), str()
		if n := str(); n != "" {
			rec.Notes = strings.Split(n[1:], "\x00")
		}
	}
	rec.ServerCloseReported = flags&cfServerClose != 0
	if flags&cfCancel != 0 {
		rec.CancelAt, rec.CancelClose = d(), d()
		rec.ServerAfterClose = int(i())
		rec.Session, rec.Turn = int(i()), int(i())
	}
}

// bytes is the memory the store holds: chunks, slots, interned strings,
// the sketch and whole records.
func (c *compactStore) bytes() int {
	return c.arena.Bytes() + c.itl.Size() + 1024*len(c.whole)
}

// clone is a copy that later puts do not change (Until's snapshot).
func (c *compactStore) clone() *compactStore {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &compactStore{base: c.base, loc: c.loc, arena: c.arena.Clone(), whole: map[int]*Record{}, itl: c.itl.Clone()}
	for k, v := range c.whole {
		out.whole[k] = v
	}
	return out
}

// compact.Failed is Failed: the sketch counts failures by it (a
// different value would not compile here).
var _ = [1]struct{}{}[compact.Failed-Failed]

// init gives packages outside latencytest (records' tests and
// benchmarks) a Result's retained bytes without an exported method.
func init() {
	compact.RetainedBytes = func(r any) int { return r.(*Result).retainedBytes() }
}

// recordSize is the size of a Record struct, without what it points to.
const recordSize = int(unsafe.Sizeof(Record{}))
