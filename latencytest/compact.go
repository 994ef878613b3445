package latencytest

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// RecordMode chooses how a run keeps its records in memory (Batch and
// OpenLoop's RecordMode field).
type RecordMode string

// The record modes.
const (
	// RecordsAuto (the zero value) keeps full records for runs of at most
	// CompactAbove planned requests and compact records above.
	RecordsAuto RecordMode = ""
	// RecordsFull keeps every Record whole in Result.Records: every gap,
	// the answer text and every field, about 1 KB a request.
	RecordsFull RecordMode = "full"
	// RecordsCompact keeps what the verdicts need, about 60-80 bytes a
	// request (see Result.Compact): every clock exact, the inter-token gaps
	// in a Sketch (ITL within SketchAlpha), no answer text.
	RecordsCompact RecordMode = "compact"
)

// compactFor reports whether a run of planned requests keeps compact
// records; the error names a mode that is not one.
func (m RecordMode) compactFor(planned int) (bool, error) {
	switch m {
	case RecordsAuto:
		return planned > CompactAbove, nil
	case RecordsFull:
		return false, nil
	case RecordsCompact:
		return true, nil
	}
	return false, fmt.Errorf("record_mode %q is not one of \"\", \"full\", \"compact\"", string(m))
}

// compactStore holds a Result's records compactly: each record a run of
// varints in chunks (strings interned) that start at 1 KiB and double up
// to 1 MiB, so a small run holds little, found by its slot; the
// inter-token gaps pooled in a Sketch. A record with Attempts is kept whole
// (a Func run through Instrument: small runs).
type compactStore struct {
	mu      sync.Mutex
	base    int64 // Unix nanoseconds that Start offsets count from
	loc     *time.Location
	chunks  [][]byte
	at      []uint64 // slot -> chunk<<32 | offset; emptySlot until put
	strs    []string // interned strings; 0 is ""
	ids     map[string]uint64
	whole   map[int]*Record // records kept whole, by slot
	itl     Sketch
	dropped int // details not interned (the table was full)
}

const (
	emptySlot     = ^uint64(0)
	firstChunk    = 1 << 10 // the first chunk's bytes: a small run holds little
	arenaChunk    = 1 << 20 // the largest chunk's
	maxInterned   = 1 << 16 // distinct details kept; past it a detail is replaced by droppedDetail
	droppedDetail = "(detail not kept: compact records keep 65,536 distinct texts; the records file has every one)"
)

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
	cfNoStart // Start is zero: an imported record without a send time
)

func newCompactStore(start time.Time) *compactStore {
	loc := start.Location()
	return &compactStore{base: start.UnixNano(), loc: loc, strs: []string{""}, ids: map[string]uint64{"": 0}}
}

// intern returns s's index; a detail past maxInterned texts becomes
// droppedDetail (the caller passes capped true for details).
func (c *compactStore) intern(s string, capped bool) uint64 {
	if i, ok := c.ids[s]; ok {
		return i
	}
	if capped && len(c.strs) >= maxInterned {
		c.dropped++
		return c.intern(droppedDetail, false)
	}
	i := uint64(len(c.strs))
	c.strs = append(c.strs, s)
	c.ids[s] = i
	return i
}

// reserve adds n empty slots and returns the first one's index.
func (c *compactStore) reserve(n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := len(c.at)
	c.at = slices.Grow(c.at, n)
	for range n {
		c.at = append(c.at, emptySlot)
	}
	return first
}

// truncate drops the slots from n on (requests never sent).
func (c *compactStore) truncate(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at[:n]
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
		for d := range rec.Gaps.values() {
			c.itl.Add(d)
		}
		if !rec.OK() {
			c.itl.Add(Failed)
		}
	}
	last := len(c.chunks) - 1
	if last < 0 || len(c.chunks[last])+len(b) > cap(c.chunks[last]) {
		size := firstChunk // then each chunk twice the last, up to arenaChunk
		if last >= 0 {
			size = min(2*cap(c.chunks[last]), arenaChunk)
		}
		c.chunks = append(c.chunks, make([]byte, 0, max(size, len(b))))
		last++
	}
	c.at[slot] = uint64(last)<<32 | uint64(len(c.chunks[last]))
	c.chunks[last] = append(c.chunks[last], b...)
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
	prefix, width, num, split := splitID(rec.ID)
	set(cfWarmup, rec.Warmup)
	set(cfOpenLoop, rec.OpenLoop)
	set(cfUsage, rec.UsageReported)
	set(cfCached, rec.CachedReported)
	set(cfWholeID, !split)
	set(cfConn, rec.DNS != 0 || rec.Connect != 0 || rec.TLS != 0)
	set(cfTool, rec.ToolCalls != 0 || rec.FirstToolCall != 0 || rec.ToolArgsDone != 0)
	set(cfChain, rec.Chain != 0 || rec.Call != 0)
	set(cfText, rec.Detail != "" || rec.Injected != "" || len(rec.Notes) > 0)
	set(cfNoStart, rec.Start.IsZero())
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
	return b
}

// decode fills rec from slot (Gaps and Content empty: see Result.Compact).
func (c *compactStore) decode(slot int, rec *Record) {
	*rec = Record{}
	at := c.at[slot]
	b := c.chunks[at>>32][uint32(at):]
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
		rec.ID = c.strs[u()]
	} else {
		prefix := c.strs[u()]
		width := int(u())
		num := strconv.FormatUint(u(), 10)
		if len(num) < width {
			num = strings.Repeat("0", width-len(num)) + num
		}
		rec.ID = prefix + num
	}
	rec.Warmup, rec.OpenLoop = flags&cfWarmup != 0, flags&cfOpenLoop != 0
	rec.UsageReported, rec.CachedReported = flags&cfUsage != 0, flags&cfCached != 0
	rec.Run, rec.Concurrency, rec.MaxTokens = int(i()), int(i()), int(i())
	rec.PromptClass, rec.FinishReason, rec.Model, rec.Err = c.strs[u()], c.strs[u()], c.strs[u()], c.strs[u()]
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
	}
	if flags&cfChain != 0 {
		rec.Chain, rec.Call = int(i()), int(i())
	}
	if flags&cfText != 0 {
		rec.Detail, rec.Injected = c.strs[u()], c.strs[u()]
		if n := c.strs[u()]; n != "" {
			rec.Notes = strings.Split(n[1:], "\x00")
		}
	}
}

// splitID splits a trace ID into its prefix and its trailing number
// ("c8-r1-" 4 17 for "c8-r1-0017"); split is false when the ID does not
// end in a number that round-trips (then it is interned whole).
func splitID(id string) (prefix string, width int, num uint64, split bool) {
	k := len(id)
	for k > 0 && id[k-1] >= '0' && id[k-1] <= '9' {
		k--
	}
	digits := id[k:]
	if digits == "" || len(digits) > 18 {
		return "", 0, 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return "", 0, 0, false
	}
	return id[:k], len(digits), n, true
}

// bytes is the memory the store holds: chunks, slots, interned strings,
// the sketch and whole records.
func (c *compactStore) bytes() int {
	n := 8 * cap(c.at)
	for _, ch := range c.chunks {
		n += cap(ch)
	}
	for _, s := range c.strs {
		n += len(s) + 16 + 24 // the string, its header, its map entry (about)
	}
	n += 8 * cap(c.itl.counts)
	n += 1024 * len(c.whole)
	return n
}

// clone is a copy that later puts do not change (Until's snapshot).
func (c *compactStore) clone() *compactStore {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &compactStore{base: c.base, loc: c.loc, chunks: slices.Clone(c.chunks), at: slices.Clone(c.at),
		strs: slices.Clone(c.strs), ids: map[string]uint64{}, whole: map[int]*Record{}, itl: c.itl, dropped: c.dropped}
	out.itl.counts = slices.Clone(c.itl.counts)
	for k, v := range c.ids {
		out.ids[k] = v
	}
	for k, v := range c.whole {
		out.whole[k] = v
	}
	return out
}

// recordSize is the size of a Record struct, without what it points to.
const recordSize = int(unsafe.Sizeof(Record{}))
