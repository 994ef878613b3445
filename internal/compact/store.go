package compact

import (
	"encoding/binary"
	"strings"
	"sync"
	"time"
)

// Store holds a result's records compactly: each record a run of varints
// in an Arena (strings interned), found by its slot; the inter-token gaps
// of the measured records pooled in a Sketch. A record with Attempts is
// kept whole (a Func run through latencytest's Instrument: small runs),
// without its Content. A decoded record has no Gaps and no Content. It is
// safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	base  int64 // Unix nanoseconds that Start offsets count from
	loc   *time.Location
	arena *Arena
	whole map[int]*Rec // records kept whole, by slot
	itl   Sketch
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
	cfCancel      // cancelled on purpose, or a conversation's turn
	cfServerClose // ServerCloseReported
	cfServer      // ServerLatency
)

// NewStore is an empty Store whose records' send times count from start
// (and are decoded in its location).
func NewStore(start time.Time) *Store {
	return &Store{base: start.UnixNano(), loc: start.Location(), arena: NewArena()}
}

// Reserve adds n empty slots and returns the first one's index.
func (c *Store) Reserve(n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.arena.Reserve(n)
}

// Truncate drops the slots from n on (requests never sent).
func (c *Store) Truncate(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.arena.Truncate(n)
}

// Len is the number of slots.
func (c *Store) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.arena.Len()
}

// Put encodes rec into slot. Unless rec is a warm-up, its gaps go to the
// sketch, and one Failed when failed (a failure that is not a deliberate
// cancel, as latencytest's Result.ITL pools them). A record decoded from
// a Store has no gaps: a store built from decoded records (a window of a
// compact result) keeps only its failures in its sketch.
func (c *Store) Put(slot int, rec *Rec, failed bool) {
	var buf [256]byte
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.encode(buf[:0], slot, rec)
	if !rec.Warmup {
		for d := range rec.Gaps.Values() {
			c.itl.Add(d)
		}
		if failed {
			c.itl.Add(Failed)
		}
	}
	c.arena.Put(slot, b)
}

func (c *Store) encode(b []byte, slot int, rec *Rec) []byte {
	if len(rec.Attempts) > 0 {
		if c.whole == nil {
			c.whole = map[int]*Rec{}
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
	prefix, width, num, split := SplitID(rec.ID)
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
	set(cfServer, rec.ServerLatency != 0)
	u := func(v uint64) { b = binary.AppendUvarint(b, v) }
	i := func(v int64) { b = binary.AppendVarint(b, v) }
	d := func(v time.Duration) { b = binary.AppendVarint(b, int64(v)) }
	u(flags)
	if split {
		u(c.arena.Intern(prefix, false))
		u(uint64(width))
		u(num)
	} else {
		u(c.arena.Intern(rec.ID, false))
	}
	i(int64(rec.Run))
	i(int64(rec.Concurrency))
	i(int64(rec.MaxTokens))
	i(int64(rec.PromptChars))
	u(c.arena.Intern(rec.PromptClass, false))
	u(c.arena.Intern(rec.FinishReason, false))
	u(c.arena.Intern(rec.Model, false))
	u(c.arena.Intern(rec.Err, false))
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
		u(c.arena.Intern(rec.Detail, true))
		u(c.arena.Intern(rec.Injected, false))
		notes := uint64(0)
		if len(rec.Notes) > 0 {
			notes = c.arena.Intern("\x00"+strings.Join(rec.Notes, "\x00"), false)
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
	if flags&cfServer != 0 {
		d(rec.ServerLatency)
	}
	return b
}

// Decode fills rec from slot (Gaps and Content empty). It does not lock:
// decode a store once its puts have ended.
func (c *Store) Decode(slot int, rec *Rec) {
	*rec = Rec{}
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
		rec.ID = JoinID(prefix, width, u())
	}
	rec.Warmup, rec.OpenLoop = flags&cfWarmup != 0, flags&cfOpenLoop != 0
	rec.UsageReported, rec.CachedReported = flags&cfUsage != 0, flags&cfCached != 0
	rec.Run, rec.Concurrency, rec.MaxTokens, rec.PromptChars = int(i()), int(i()), int(i()), int(i())
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
	if flags&cfServer != 0 {
		rec.ServerLatency = d()
	}
}

// ITL is the sketch of the measured records' inter-token gaps (and one
// Failed per failure). Read it once the puts have ended.
func (c *Store) ITL() *Sketch { return &c.itl }

// Dropped is how many details were replaced by DroppedDetail (see
// Arena.Intern).
func (c *Store) Dropped() int { return c.arena.Dropped() }

// Bytes is the memory the store holds: chunks, slots, interned strings,
// the sketch and whole records (about 1 KiB each).
func (c *Store) Bytes() int {
	return c.arena.Bytes() + c.itl.Size() + 1024*len(c.whole)
}

// Clone is a copy that later Puts do not change.
func (c *Store) Clone() *Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &Store{base: c.base, loc: c.loc, arena: c.arena.Clone(), whole: map[int]*Rec{}, itl: c.itl.Clone()}
	for k, v := range c.whole {
		out.whole[k] = v
	}
	return out
}
