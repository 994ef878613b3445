package compact

import (
	"slices"
	"strconv"
	"strings"
)

// Arena holds encoded records: each a byte string appended to chunks
// that start at 1 KiB and double up to 1 MiB (so a small run holds
// little), found by its slot, with a table of interned strings. The zero
// Arena is not ready: use NewArena. It is not safe for concurrent use:
// its owner locks.
type Arena struct {
	chunks  [][]byte
	at      []uint64 // slot -> chunk<<32 | offset; emptySlot until Put
	strs    []string // interned strings; 0 is ""
	ids     map[string]uint64
	dropped int // capped strings not interned (the table was full)
}

const (
	emptySlot  = ^uint64(0)
	firstChunk = 1 << 10 // the first chunk's bytes: a small run holds little
	arenaChunk = 1 << 20 // the largest chunk's
	// MaxInterned is how many distinct strings an Arena interns for
	// capped callers; past it Intern gives DroppedDetail's index.
	MaxInterned = 1 << 16
	// DroppedDetail replaces a detail past MaxInterned distinct texts.
	DroppedDetail = "(detail not kept: compact records keep 65,536 distinct texts; the records file has every one)"
)

// NewArena is an empty Arena, "" interned at index 0.
func NewArena() *Arena {
	return &Arena{strs: []string{""}, ids: map[string]uint64{"": 0}}
}

// Intern returns s's index; when capped and MaxInterned strings are
// interned already, a new s is counted as dropped and DroppedDetail's index is
// returned instead.
func (a *Arena) Intern(s string, capped bool) uint64 {
	if i, ok := a.ids[s]; ok {
		return i
	}
	if capped && len(a.strs) >= MaxInterned {
		a.dropped++
		return a.Intern(DroppedDetail, false)
	}
	i := uint64(len(a.strs))
	a.strs = append(a.strs, s)
	a.ids[s] = i
	return i
}

// Str is the string interned at index i.
func (a *Arena) Str(i uint64) string { return a.strs[i] }

// Dropped is how many capped strings Intern replaced by DroppedDetail.
func (a *Arena) Dropped() int { return a.dropped }

// Reserve adds n empty slots and returns the first one's index.
func (a *Arena) Reserve(n int) int {
	first := len(a.at)
	a.at = slices.Grow(a.at, n)
	for range n {
		a.at = append(a.at, emptySlot)
	}
	return first
}

// Truncate drops the slots from n on.
func (a *Arena) Truncate(n int) { a.at = a.at[:n] }

// Len is the number of slots.
func (a *Arena) Len() int { return len(a.at) }

// Put stores a copy of b in slot.
func (a *Arena) Put(slot int, b []byte) {
	last := len(a.chunks) - 1
	if last < 0 || len(a.chunks[last])+len(b) > cap(a.chunks[last]) {
		size := firstChunk // then each chunk twice the last, up to arenaChunk
		if last >= 0 {
			size = min(2*cap(a.chunks[last]), arenaChunk)
		}
		a.chunks = append(a.chunks, make([]byte, 0, max(size, len(b))))
		last++
	}
	a.at[slot] = uint64(last)<<32 | uint64(len(a.chunks[last]))
	a.chunks[last] = append(a.chunks[last], b...)
}

// Get is slot's bytes, followed by whatever was Put after them in the
// same chunk: the decoder reads what it needs. It panics for a slot
// never Put.
func (a *Arena) Get(slot int) []byte {
	at := a.at[slot]
	return a.chunks[at>>32][uint32(at):]
}

// Bytes is about how much memory a holds: chunks, slots and interned
// strings.
func (a *Arena) Bytes() int {
	n := 8 * cap(a.at)
	for _, ch := range a.chunks {
		n += cap(ch)
	}
	for _, s := range a.strs {
		n += len(s) + 16 + 24 // the string, its header, its map entry (about)
	}
	return n
}

// Clone is a copy that later Puts to a do not change.
func (a *Arena) Clone() *Arena {
	out := &Arena{chunks: slices.Clone(a.chunks), at: slices.Clone(a.at), strs: slices.Clone(a.strs),
		ids: make(map[string]uint64, len(a.ids)), dropped: a.dropped}
	for k, v := range a.ids {
		out.ids[k] = v
	}
	return out
}

// SplitID splits a trace ID into its prefix and its trailing number
// ("c8-r1-" 4 17 for "c8-r1-0017"); split is false when the ID does not
// end in a number that round-trips (then it is interned whole). JoinID
// undoes it.
func SplitID(id string) (prefix string, width int, num uint64, split bool) {
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

// JoinID is the trace ID that SplitID split into prefix, width and num.
func JoinID(prefix string, width int, num uint64) string {
	s := strconv.FormatUint(num, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return prefix + s
}
