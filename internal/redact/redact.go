package redact

import (
	"encoding/base64"
	"encoding/hex"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// minCut is the shortest piece of a secret's start that is redacted
// where a text was cut (at its end, or before the "…" that marks a cut):
// a secret cut by a truncation leaves at most minCut-1 of its bytes.
const minCut = 4

// Set is a list of secrets compiled for search (see the package doc).
// It is safe for concurrent use; make one with [For] (cached) or [New].
type Set struct {
	secrets []string
	pats    []pattern     // every form of every secret, for cuts
	shift   [4096]uint8   // by hashed 2-byte block: how far a window may slide
	filter  [1024]uint64  // a 65,536-bit set of hashed 8-byte windows
	grams   [1024]uint64  // a 65,536-bit set of the patterns' hashed 4-byte runs
	starts  [64]uint64    // a 4096-bit set of hashed 4-byte pattern starts (for cuts)
	table   []windowEntry // open addressing: the windows, by hash
	mask    uint64        // len(table)-1
	longest int           // the longest pattern that cuts are searched for
	empty   bool          // no secret: nothing to search
}

// windowEntry is one 8-byte window of a pattern; kind 0 is an empty slot.
type windowEntry struct {
	w    uint64
	kind uint8
}

// The kinds of a window (bits): of a secret as given (or hex), of its
// base64 (the match widens to the whole base64 word around it).
const (
	kindPlain uint8 = 1 << iota
	kindBase64
)

// pattern is one form of a secret searched for in decoded text (see New).
type pattern struct {
	s    string
	kind uint8
	cut  bool // its start is searched for at cuts
}

// patternsOf returns the forms of one secret: as given (and with '+' for
// each space), its hex (in lower case: windows of hex digits are matched
// in any case, see canon), and the base64
// characters that only its bytes determine, at each of the three offsets
// from a 3-byte group's start, in the standard and URL alphabets.
func patternsOf(sec string) []pattern {
	var out []pattern
	add := func(s string, kind uint8, cut bool) {
		if len(s) < MinLen {
			return
		}
		for _, p := range out {
			if p.s == s {
				return
			}
		}
		out = append(out, pattern{s, kind, cut})
	}
	add(sec, kindPlain, true)
	if strings.Contains(sec, " ") {
		add(strings.ReplaceAll(sec, " ", "+"), kindPlain, true)
	}
	h := hex.EncodeToString([]byte(sec))
	add(h, kindPlain, false)
	for off := range 3 {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, off), sec...))
		lo, hi := (8*off+5)/6, 8*(off+len(sec))/6
		core := enc[lo:hi]
		add(core, kindBase64, true)
		add(strings.NewReplacer("+", "-", "/", "_").Replace(core), kindBase64, true)
	}
	return out
}

// New compiles secrets (each of MinLen bytes or more; shorter ones are
// left out). Compiling costs microseconds per secret: use For on a hot
// path.
func New(secrets []string) *Set {
	s := &Set{secrets: slices.Clone(secrets)}
	for i := range s.shift {
		s.shift[i] = 7
	}
	var windows []windowEntry
	for _, sec := range secrets {
		if len(sec) < MinLen {
			continue
		}
		for _, p := range patternsOf(sec) {
			s.pats = append(s.pats, p)
			if p.cut {
				h4 := startHash(p.s)
				s.starts[h4>>6] |= 1 << (h4 & 63)
				s.longest = max(s.longest, len(p.s))
			}
			for i := 0; i+8 <= len(p.s); i++ {
				windows = append(windows, windowEntry{canon(load64(p.s, i)), p.kind})
			}
			for i := 0; i+4 <= len(p.s); i++ {
				g := gramHash(load32(p.s, i))
				s.grams[g>>6] |= 1 << (g & 63)
			}
			for q := 1; q < len(p.s); q++ {
				// A hex letter's block in either case: a window of hex
				// digits matches in any case (canon).
				for _, x := range caseVariants(p.s[q-1]) {
					for _, y := range caseVariants(p.s[q]) {
						b := blockHash(x, y)
						s.shift[b] = min(s.shift[b], uint8(max(7-q, 0)))
					}
				}
			}
		}
	}
	s.empty = len(windows) == 0
	size := 16
	for size < 2*len(windows) {
		size *= 2
	}
	s.table, s.mask = make([]windowEntry, size), uint64(size-1)
	for _, e := range windows {
		h := mix(e.w)
		s.filter[h>>54] |= 1 << ((h >> 48) & 63)
		for i := (h >> 20) & s.mask; ; i = (i + 1) & s.mask {
			if s.table[i].kind == 0 || s.table[i].w == e.w {
				s.table[i].w = e.w
				s.table[i].kind |= e.kind
				break
			}
		}
	}
	return s
}

// lookup returns the kind of window w, 0 when it is no window of a
// secret.
func (s *Set) lookup(w uint64) uint8 {
	h := mix(w)
	if s.filter[h>>54]&(1<<((h>>48)&63)) == 0 {
		return 0
	}
	for i := (h >> 20) & s.mask; ; i = (i + 1) & s.mask {
		switch e := s.table[i]; {
		case e.kind == 0:
			return 0
		case e.w == w:
			return e.kind
		}
	}
}

// mix hashes a window.
func mix(w uint64) uint64 { return w * 0x9E3779B97F4A7C15 }

// load64 reads the 8 bytes of s at i as a little-endian word.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// load32 reads the 4 bytes of s at i as a little-endian word.
func load32(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// gramHash hashes a 4-byte run to 16 bits, its bytes' case bit (0x20)
// set first: the same hash for a run in any case, so that the filter
// passes a run of a secret's form that is matched in another case (a hex
// digit's letter in upper case) whatever the window lookup folds.
func gramHash(g uint32) uint32 { return ((g | 0x20202020) * 0x9E3779B1) >> 16 }

// gram reports whether the 4 bytes of text at i may be a run of a
// pattern (no: certainly not).
func (s *Set) gram(text string, i int) bool {
	g := gramHash(load32(text, i))
	return s.grams[g>>6]&(1<<(g&63)) != 0
}

// startHash hashes the first 4 bytes of s to 12 bits.
func startHash(s string) uint64 {
	w := uint64(s[3])<<24 | uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16
	return (w * 0x9E3779B97F4A7C15) >> 52
}

// blockHash hashes two bytes to 12 bits.
func blockHash(a, b byte) int { return (int(a)<<4 ^ int(b)) & 4095 }

// foldHex maps A-F to a-f and every other byte to itself.
var foldHex = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	for c := 'A'; c <= 'F'; c++ {
		t[c] = byte(c) | 0x20
	}
	return t
}()

// caseVariants are c and, for a hex letter, its other case.
func caseVariants(c byte) []byte {
	if 'a' <= c|0x20 && c|0x20 <= 'f' {
		return []byte{c | 0x20, c &^ 0x20}
	}
	return []byte{c}
}

// canon is the form a window is stored and looked up in: a window of 8
// hex digits in lower case, so that a secret's hex matches in lower,
// upper or mixed case ("aB3f…", as a server that re-encodes it may
// write it); any other window as it is.
func canon(w uint64) uint64 {
	var folded uint64
	for k := 0; k < 64; k += 8 {
		c := byte(w >> k)
		if !isHexDigit(c) {
			return w
		}
		folded |= uint64(foldHex[c]) << k
	}
	return folded
}

// sets caches a Set per list of secrets (lists are few: one per provider,
// and a Func call's credentials). It is copied on write, so that the hot
// path reads it without a lock; at maxSets lists it starts afresh (calls
// whose credentials differ each time, such as presigned URLs, never
// compile a Set per event).
var (
	sets   atomic.Pointer[map[uint64][]*Set]
	setsMu sync.Mutex
)

var maxSets = 1024 // a variable for the tests

// For returns the Set of secrets, compiled once per list and cached.
func For(secrets []string) *Set {
	h := uint64(len(secrets))
	for _, s := range secrets {
		h = h*0x100000001B3 ^ uint64(len(s))
		if len(s) >= 8 {
			h = h*0x100000001B3 ^ load64(s, 0) ^ load64(s, len(s)-8)*31
		}
	}
	if c := sets.Load(); c != nil {
		for _, s := range (*c)[h] {
			if slices.Equal(s.secrets, secrets) {
				return s
			}
		}
	}
	s := New(secrets)
	setsMu.Lock()
	defer setsMu.Unlock()
	c := map[uint64][]*Set{}
	if old := sets.Load(); old != nil && len(*old) < maxSets {
		maps.Copy(c, *old)
	} // else start afresh: lists in use come back at their next call
	c[h] = append(slices.Clip(c[h]), s)
	sets.Store(&c)
	return s
}

// String is For(secrets).String(text).
func String(secrets []string, text string) string {
	if len(secrets) == 0 || len(text) < minCut {
		return text
	}
	return For(secrets).String(text)
}

// span is a byte range [a, b) to redact.
type span struct{ a, b int }

// buffers are the pooled buffers escape layers are decoded into.
var buffers = sync.Pool{New: func() any { return new([2][]byte) }}

// String returns text with every secret in it (see the package doc)
// replaced by "[redacted]"; when nothing is found, text itself (the same
// string, nothing allocated).
func (s *Set) String(text string) string {
	if s == nil || s.empty || len(text) < minCut {
		return text
	}
	spans := s.find(text, nil)
	if !hasEscape(text) {
		if len(spans) == 0 {
			return text // the common case: nothing to decode, nothing found
		}
		return cutSpans(text, spans)
	}
	found := false
	bufs := buffers.Get().(*[2][]byte)
	canon := text
	for layer := range maxUnescape {
		b, _, _, changed := unescapeOnce(bufs[layer%2][:0], canon, false)
		bufs[layer%2] = b
		if !changed {
			break
		}
		canon = unsafe.String(unsafe.SliceData(b), len(b)) // b is not written until the next layer but one
		if len(s.find(canon, nil)) > 0 {
			found = true
			break
		}
		if !hasEscape(canon) {
			break
		}
	}
	for i := range bufs {
		if cap(bufs[i]) > 64<<10 {
			bufs[i] = nil // do not keep a hostile body's buffer
		}
	}
	buffers.Put(bufs)
	if !found {
		if len(spans) == 0 {
			return text
		}
		return cutSpans(text, spans)
	}
	// Found in decoded text: decode again, keeping where each byte came
	// from, and redact at every layer.
	canon = text
	from, to := make([]int, len(text)), make([]int, len(text))
	for i := range from {
		from[i], to[i] = i, i+1
	}
	for range maxUnescape {
		b, f, t, changed := unescapeOnce(nil, canon, true)
		if !changed {
			break
		}
		for i := range f {
			f[i], t[i] = from[f[i]], to[t[i]-1]
		}
		canon, from, to = string(b), f, t
		for _, sp := range s.find(canon, nil) {
			spans = append(spans, span{from[sp.a], to[sp.b-1]})
		}
	}
	return cutSpans(text, spans)
}

// find appends to out the ranges of text that hold a window of a
// pattern, or a pattern's start of minCut bytes or more at a cut (see
// the package doc), in no order.
func (s *Set) find(text string, out []span) []span {
	runStart, runEnd := 0, 0 // the last base64 word redacted whole
	add := func(a, b int, kind uint8) {
		if kind&kindBase64 != 0 {
			if a >= runStart && b <= runEnd {
				return // inside the word just redacted (the scan goes left to right)
			}
			for a > 0 && isBase64Byte(text[a-1]) {
				a--
			}
			for b < len(text) && isBase64Byte(text[b]) {
				b++
			}
			runStart, runEnd = a, b
		}
		if n := len(out); n > 0 && kind&kindBase64 == 0 && out[n-1].b >= a && out[n-1].a <= a {
			out[n-1].b = max(out[n-1].b, b) // the next window of the same run
			return
		}
		out = append(out, span{a, b})
	}
	// Every 8-byte window [i, i+8) holds whole the 4 bytes at the
	// multiple of 5 j in [i, i+4]: where those are no run of a pattern,
	// none of the windows i = j-4..j is a window of one, and the scan
	// moves on by 5.
	for j := 0; j+8 <= len(text)+4; j += 5 {
		if !s.gram(text, j) {
			continue
		}
		for i := max(j-4, 0); i <= j && i+8 <= len(text); i++ {
			if sh := s.shift[blockHash(text[i+6], text[i+7])]; sh > 0 {
				continue // no window ends in that block
			}
			if kind := s.lookup(canon(load64(text, i))); kind != 0 {
				add(i, i+8, kind)
			}
		}
	}
	// Cuts: the end of text, and each "…" (a cut mark), each also before
	// an escape the cut left unfinished ("\u00", "%2").
	for end, rest := len(text), text; ; {
		s.cut(text[:end], add)
		if n := unfinishedEscape(text[:end]); n > 0 {
			s.cut(text[:end-n], add)
		}
		i := strings.Index(rest, "…")
		if i < 0 {
			break
		}
		end = len(text) - len(rest) + i
		rest = rest[i+len("…"):]
	}
	return out
}

// cut finds the longest proper start of a pattern, of minCut bytes or
// more, that text ends with.
func (s *Set) cut(text string, add func(a, b int, kind uint8)) {
	// A cut's start text[j:] ends text: text's last 4 bytes are a run of
	// the pattern it starts.
	if len(text) < minCut || !s.gram(text, len(text)-minCut) {
		return
	}
	for j := max(0, len(text)-s.longest+1); j <= len(text)-minCut; j++ {
		if h := startHash(text[j:]); s.starts[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, p := range s.pats {
			if p.cut && len(p.s) > len(text)-j && strings.HasPrefix(p.s, text[j:]) {
				add(j, len(text), p.kind)
				return
			}
		}
	}
}

// cutSpans replaces the spans of s (merged where they overlap or touch)
// by "[redacted]".
func cutSpans(s string, spans []span) string {
	slices.SortFunc(spans, func(x, y span) int { return x.a - y.a })
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		a, e := spans[i].a, spans[i].b
		for i++; i < len(spans) && spans[i].a <= e; i++ {
			e = max(e, spans[i].b)
		}
		b.WriteString(s[last:a])
		b.WriteString("[redacted]")
		last = e
	}
	b.WriteString(s[last:])
	return b.String()
}

// URL is raw without its user information, query and fragment, which may
// hold credentials, for display; "(unparsable URL)" when it does not
// parse.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
