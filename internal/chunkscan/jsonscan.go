package chunkscan

import (
	"bytes"
	"strconv"
)

// The JSON scanner under Scan (chunk.go): it validates a document
// as encoding/json would and walks its objects and arrays without
// decoding, so that the chunk reader can take the few fields it needs.

// chunkScanner validates and walks one JSON document.
type chunkScanner struct {
	b []byte
	i int
}

// maxFastDepth bounds nesting in skipped values; deeper goes the slow way.
const maxFastDepth = 32

func (s *chunkScanner) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return // the common case: no white space
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, 0 at the end.
func (s *chunkScanner) peek() byte {
	i, b := s.i, s.b
	if i < len(b) && b[i] > ' ' {
		return b[i]
	}
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// str scans a string at s.i (the opening quote): its contents' Span,
// whether it holds escapes or bytes above 0x7F (esc), and ok false for
// invalid JSON or a control character.
func (s *chunkScanner) str() (sp Span, esc, ok bool) {
	b := s.b
	i := s.i + 1
	sp.Start = i
	for i < len(b) {
		for i < len(b) && plainByte[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			sp.End = i
			s.i = i + 1
			return sp, esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return sp, esc, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return sp, esc, false
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return sp, esc, false
					}
				}
				i += 6
			default:
				return sp, esc, false
			}
		case c < 0x20:
			return sp, esc, false
		case c >= 0x80:
			esc = true
			i++
		default:
			i++
		}
	}
	return sp, esc, false
}

// plainByte marks the bytes a string holds as they are: printable ASCII
// other than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number scans a JSON number; digits is true when it is a plain
// non-negative integer (no sign, fraction or exponent).
func (s *chunkScanner) number() (sp Span, digits, ok bool) {
	b, i := s.b, s.i
	sp.Start = i
	digits = true
	if i < len(b) && b[i] == '-' {
		digits = false
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return sp, false, false
	}
	if i < len(b) && b[i] == '.' {
		digits = false
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return sp, false, false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		digits = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return sp, false, false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	sp.End, s.i = i, i
	return sp, digits, true
}

// literal scans true, false or null.
func (s *chunkScanner) literal(lit string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return false
	}
	s.i += len(lit)
	return true
}

// null consumes a null if one is next.
func (s *chunkScanner) null() bool {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	return false
}

// skip validates and skips any value.
func (s *chunkScanner) skip(depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	switch s.peek() {
	case '"':
		_, _, ok := s.str()
		return ok
	case '{':
		return s.object(func(key []byte) bool { return s.skip(depth + 1) })
	case '[':
		return s.array(func() bool { return s.skip(depth + 1) })
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		_, _, ok := s.number()
		return ok
	}
}

// object walks an object at s.i, calling field with each key (plain
// ASCII without escapes, or the walk fails) positioned at its value,
// which field must consume.
func (s *chunkScanner) object(field func(key []byte) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		if s.peek() != '"' {
			return false
		}
		sp, esc, ok := s.str()
		if !ok || esc {
			return false
		}
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.ws()
		if !field(s.b[sp.Start:sp.End]) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array walks an array at s.i, calling elem positioned at each element.
func (s *chunkScanner) array(elem func() bool) bool {
	if s.peek() != '[' {
		return false
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		s.ws()
		if !elem() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// known reports whether key is one of names exactly (ok), or matches one
// only case-insensitively (fold: encoding/json would take it as that
// field, so the fast path gives up). Keys are plain ASCII here (object
// gives up on others), so a key without an upper-case letter folds to a
// name only by being it.
func known(key []byte, names ...string) (i int, fold bool) {
	for j, n := range names {
		if string(key) == n {
			return j, false
		}
	}
	upper := false
	for _, c := range key {
		if 'A' <= c && c <= 'Z' {
			upper = true
			break
		}
	}
	if !upper {
		return -1, false
	}
	for _, n := range names {
		if len(n) == len(key) && foldsTo(key, n) {
			return -1, true
		}
	}
	return -1, false
}

// MaxCount bounds a usage count: anything above is not a token count.
const MaxCount = 1<<31 - 1

// foldsTo reports whether key equals n when both have bit 0x20 set in
// every byte (ASCII letters compared without case); len(key) == len(n).
func foldsTo(key []byte, n string) bool {
	for i := range len(n) {
		if key[i]|0x20 != n[i]|0x20 {
			return false
		}
	}
	return true
}

// optString scans a value that must be null or a string: present is false
// for null.
func (s *chunkScanner) optString() (sp Span, esc, present, ok bool) {
	if s.null() {
		return sp, false, false, true
	}
	if s.peek() != '"' {
		return sp, false, false, false
	}
	sp, esc, ok = s.str()
	return sp, esc, true, ok
}

// optIndex scans an index into n: null (n left as it is, as encoding/json
// leaves it), or a plain integer of at most 18 digits; anything else
// gives up.
func (s *chunkScanner) optIndex(n *int64) bool {
	if s.null() {
		return true
	}
	sp, digits, ok := s.number()
	if !ok || !digits || sp.End-sp.Start > 18 {
		return false
	}
	*n, _ = strconv.ParseInt(string(s.b[sp.Start:sp.End]), 10, 64)
	return true
}

// optCount scans a token count: null (-1), or a plain integer in
// [0, MaxCount]; anything else gives up.
func (s *chunkScanner) optCount() (n int64, ok bool) {
	if s.null() {
		return -1, true
	}
	sp, digits, ok := s.number()
	if !ok || !digits || sp.End-sp.Start > 10 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(s.b[sp.Start:sp.End]), 10, 64)
	if err != nil || v > MaxCount {
		return 0, false
	}
	return v, true
}
