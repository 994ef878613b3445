package latencytest

import (
	"encoding/base64"
	"hash/maphash"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"
)

// minSecretLen is the shortest secret searched for in what a server sends
// back: shorter values would mangle ordinary text (see WithAPIKey).
const minSecretLen = 8

// minCutSecret is the shortest piece of a secret's start that is redacted
// where a text was cut (at its end, or before the "…" that marks a cut):
// a secret cut by a truncation leaves at most minCutSecret-1 of its bytes.
const minCutSecret = 4

// secretsOf lists the values to redact: the API key, every header value
// (and, for "Scheme token" values, the token; for Basic, the decoded
// "user:password" and the password), the base URL's user info (each part
// and "user:password") and every query value (decoded and as sent), each
// at least minSecretLen bytes, longest first (so that a secret that
// contains another is redacted whole).
func secretsOf(key string, h http.Header, u *url.URL) []string {
	var out []string
	add := func(v string) {
		if len(v) >= minSecretLen && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	add(key)
	for _, vs := range h {
		for _, v := range vs {
			add(v)
			scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
			if !ok {
				continue
			}
			tok = strings.TrimSpace(tok)
			add(tok)
			if strings.EqualFold(scheme, "basic") {
				if b, err := base64.StdEncoding.DecodeString(tok); err == nil {
					add(string(b))
					_, pw, _ := strings.Cut(string(b), ":")
					add(pw)
				}
			}
		}
	}
	if u.User != nil {
		add(u.User.Username())
		if pw, ok := u.User.Password(); ok {
			add(pw)
			add(u.User.Username() + ":" + pw)
		}
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		_, raw, _ := strings.Cut(kv, "=")
		add(raw)
		if v, err := url.QueryUnescape(raw); err == nil {
			add(v)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// redactSecrets replaces every one of secrets in s by "[redacted]", in
// every form a server may echo it in: as given; JSON-escaped (any
// \uXXXX, \/ and the like), percent-escaped (a query or a path, any hex
// case, '+' for a space), as an HTML character reference, each of these
// nested up to maxUnescape layers (JSON in JSON, a double-escaped URL);
// and base64-encoded (the standard and URL alphabets, at any offset:
// "Basic " + base64 of "user:key"), in which case the whole base64 word
// goes. A secret's start of minCutSecret bytes or more right before the
// end of s, or before the "…" that marks a cut, goes too: a text cut
// before it was redacted keeps no more than minCutSecret-1 bytes of a
// secret. When nothing is found s itself is returned (the same string,
// unallocated).
func redactSecrets(secrets []string, s string) string {
	if len(secrets) == 0 || len(s) == 0 {
		return s
	}
	m := matcherFor(secrets)
	var spans []secretSpan
	spans = m.find(s, spans)
	if !hasEscape(s) {
		if len(spans) == 0 {
			return s // the common case: nothing to decode, nothing found
		}
		return cutSpans(s, spans)
	}
	canon, found := s, false
	for range maxUnescape {
		next, _, _, changed := unescapeOnce(canon, false)
		if !changed {
			break
		}
		canon = next
		if len(m.find(canon, nil)) > 0 {
			found = true
			break
		}
		if !hasEscape(canon) {
			break
		}
	}
	if !found {
		if len(spans) == 0 {
			return s
		}
		return cutSpans(s, spans)
	}
	// Found in decoded text: decode again, keeping where each byte came
	// from, and redact at every layer.
	canon = s
	from, to := make([]int, len(s)), make([]int, len(s))
	for i := range from {
		from[i], to[i] = i, i+1
	}
	for range maxUnescape {
		next, f, t, changed := unescapeOnce(canon, true)
		if !changed {
			break
		}
		for i := range f {
			f[i], t[i] = from[f[i]], to[t[i]-1]
		}
		canon, from, to = next, f, t
		for _, sp := range m.find(canon, nil) {
			spans = append(spans, secretSpan{from[sp.a], to[sp.b-1]})
		}
	}
	return cutSpans(s, spans)
}

// maxUnescape is how many layers of escaping are taken off.
const maxUnescape = 3

// pattern is one form of a secret searched for in decoded text: the
// secret itself (or with '+' for each space), or a piece of its base64
// (b64: the match widens to the whole base64 word around it). Every
// pattern is at least minSecretLen bytes long.
type pattern struct {
	s   string
	b64 bool
}

// patternsOf returns the patterns of one secret (see redactSecrets).
func patternsOf(sec string) []pattern {
	var out []pattern
	add := func(s string, b64 bool) {
		for _, p := range out {
			if p.s == s {
				return
			}
		}
		out = append(out, pattern{s, b64})
	}
	add(sec, false)
	if strings.Contains(sec, " ") {
		add(strings.ReplaceAll(sec, " ", "+"), false)
	}
	// The base64 characters that only sec's bytes determine, for sec at
	// each of the three offsets from a 3-byte group's start.
	for off := range 3 {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, off), sec...))
		lo, hi := (8*off+5)/6, 8*(off+len(sec))/6
		if hi-lo >= minSecretLen {
			core := enc[lo:hi]
			add(core, true)
			add(strings.NewReplacer("+", "-", "/", "_").Replace(core), true)
		}
	}
	return out
}

// matcher finds the patterns of a list of secrets in one pass over a
// text, whatever their number (Wu-Manber): every pattern has 8 or more
// bytes, so a window of 8 bytes slides by the shift its last two bytes
// allow, and only a window whose 8 bytes hash into heads is compared.
type matcher struct {
	secrets []string
	pats    []pattern
	shift   [4096]uint8 // by hashed 2-byte block: how far the window may slide
	heads   [64]uint64  // a 4096-bit set of hashed 8-byte heads
	starts  [64]uint64  // a 4096-bit set of hashed 4-byte heads (for cuts)
	longest int
}

// matchers caches a matcher per list of secrets (lists are few: one per
// provider, and a Func call's credentials). It is copied on write, so
// that the hot path (every event of a stream) reads it without a lock;
// it stops growing at maxMatchers lists.
var (
	matchers    atomic.Pointer[map[uint64][]*matcher]
	matchersMu  sync.Mutex
	matcherSeed = maphash.MakeSeed()
)

const maxMatchers = 1024

// matcherFor returns the matcher of secrets.
func matcherFor(secrets []string) *matcher {
	var h uint64
	for _, s := range secrets {
		h = h*31 + maphash.String(matcherSeed, s)
	}
	if c := matchers.Load(); c != nil {
		for _, m := range (*c)[h] {
			if slices.Equal(m.secrets, secrets) {
				return m
			}
		}
	}
	m := &matcher{secrets: slices.Clone(secrets)}
	for i := range m.shift {
		m.shift[i] = 7
	}
	for _, sec := range secrets {
		for _, p := range patternsOf(sec) {
			if len(p.s) < 8 {
				continue
			}
			m.pats = append(m.pats, p)
			h, h4 := headHash(p.s), startHash(p.s)
			m.heads[h>>6] |= 1 << (h & 63)
			m.starts[h4>>6] |= 1 << (h4 & 63)
			for q := 1; q < 8; q++ {
				b := blockHash(p.s[q-1], p.s[q])
				m.shift[b] = min(m.shift[b], uint8(7-q))
			}
			m.longest = max(m.longest, len(p.s))
		}
	}
	matchersMu.Lock()
	defer matchersMu.Unlock()
	old := matchers.Load()
	if old == nil || len(*old) < maxMatchers {
		c := map[uint64][]*matcher{}
		if old != nil {
			maps.Copy(c, *old)
		}
		c[h] = append(slices.Clip(c[h]), m)
		matchers.Store(&c)
	}
	return m
}

// headHash hashes the first 8 bytes of s to 12 bits.
func headHash(s string) uint64 {
	w := uint64(s[7])<<56 | uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48
	return (w * 0x9E3779B97F4A7C15) >> 52
}

// startHash hashes the first 4 bytes of s to 12 bits.
func startHash(s string) uint64 {
	w := uint64(s[3])<<24 | uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16
	return (w * 0x9E3779B97F4A7C15) >> 52
}

// blockHash hashes two bytes to 12 bits.
func blockHash(a, b byte) int { return (int(a)<<4 ^ int(b)) & 4095 }

// secretSpan is a byte range [a, b) to redact.
type secretSpan struct{ a, b int }

// find appends to out the ranges of text that hold a pattern, or a
// pattern's start of minCutSecret bytes or more at a cut (see
// redactSecrets), in no order.
func (m *matcher) find(text string, out []secretSpan) []secretSpan {
	runStart, runEnd := 0, 0 // the last base64 word redacted whole
	add := func(a, b int, b64 bool) {
		if b64 {
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
		out = append(out, secretSpan{a, b})
	}
	for pos := 7; pos < len(text); {
		if sh := m.shift[blockHash(text[pos-1], text[pos])]; sh > 0 {
			pos += int(sh)
			continue
		}
		i := pos - 7
		if h := headHash(text[i:]); m.heads[h>>6]&(1<<(h&63)) != 0 {
			for _, p := range m.pats {
				if strings.HasPrefix(text[i:], p.s) {
					add(i, i+len(p.s), p.b64)
				}
			}
		}
		pos++
	}
	// Cuts: the end of text, and each "…" (a cut mark), each also before
	// an escape the cut left unfinished ("\u00", "%2").
	for end, rest := len(text), text; ; {
		m.cut(text[:end], add)
		if n := unfinishedEscape(text[:end]); n > 0 {
			m.cut(text[:end-n], add)
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

// cut finds the longest proper start of a pattern, of minCutSecret bytes
// or more, that text ends with.
func (m *matcher) cut(text string, add func(a, b int, b64 bool)) {
	for j := max(0, len(text)-m.longest+1); j <= len(text)-minCutSecret; j++ {
		if h := startHash(text[j:]); m.starts[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, p := range m.pats {
			if len(p.s) > len(text)-j && strings.HasPrefix(p.s, text[j:]) {
				add(j, len(text), p.b64)
				return
			}
		}
	}
}

// unfinishedEscape is the length of an escape sequence cut short at the
// end of text ("\\", "\\u0", "%", "%4", "&#x2", "&equ"), or 0.
func unfinishedEscape(text string) int {
	for n := 1; n <= 10 && n <= len(text); n++ {
		switch tail := text[len(text)-n:]; tail[0] {
		case '\\', '%', '&':
			for _, c := range []byte(tail[1:]) {
				if !isHexDigit(c) && !('a' <= c|0x20 && c|0x20 <= 'z') && c != '#' {
					return 0
				}
			}
			return n
		}
	}
	return 0
}

// cutSpans replaces the spans of s (merged where they overlap or touch)
// by "[redacted]".
func cutSpans(s string, spans []secretSpan) string {
	slices.SortFunc(spans, func(x, y secretSpan) int { return x.a - y.a })
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

// hasEscape reports whether s may hold an escaped character.
func hasEscape(s string) bool {
	return strings.IndexByte(s, '\\') >= 0 || strings.IndexByte(s, '%') >= 0 || strings.IndexByte(s, '&') >= 0
}

func isHexDigit(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f' }

func isBase64Byte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=' || c == '-' || c == '_'
}

// hexVal is the value of the hex digits of s.
func hexVal(s string) (int, bool) {
	v := 0
	for i := range len(s) {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | int(c-'0')
		case 'a' <= c|0x20 && c|0x20 <= 'f':
			v = v<<4 | int(c|0x20-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// jsonEscapes are the characters after a backslash in a JSON string, and
// jsonEscaped what each stands for.
const (
	jsonEscapes = `"\/bfnrt`
	jsonEscaped = "\"\\/\b\f\n\r\t"
)

// htmlEntities are the named character references decoded.
var htmlEntities = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\'', "sol": '/', "plus": '+', "equals": '=', "colon": ':', "num": '#', "percnt": '%', "lowbar": '_', "hyphen": '-', "period": '.'}

// unescapeOnce takes one layer of escapes off text: JSON's (\" \\ \/ \b
// \f \n \r \t \uXXXX, surrogate pairs too), percent escapes (%2F, %2f)
// and HTML character references (&#47; &#x2F; &sol;). With spans it also
// returns, for each output byte, the first input byte it came from and
// the end (exclusive) of the input it came from.
func unescapeOnce(text string, spans bool) (out string, from, to []int, changed bool) {
	b := make([]byte, 0, len(text))
	if spans {
		from, to = make([]int, 0, len(text)), make([]int, 0, len(text))
	}
	for i := 0; i < len(text); {
		// Copy the run up to the next escape in one go.
		j := i
		for j < len(text) && text[j] != '\\' && text[j] != '%' && text[j] != '&' {
			j++
		}
		if j > i {
			b = append(b, text[i:j]...)
			if spans {
				for k := i; k < j; k++ {
					from, to = append(from, k), append(to, k+1)
				}
			}
			if i = j; i == len(text) {
				break
			}
		}
		c, w := text[i], 1
		var r rune = -1
		switch c {
		case '\\':
			if i+1 < len(text) {
				if k := strings.IndexByte(jsonEscapes, text[i+1]); k >= 0 {
					c, w = jsonEscaped[k], 2
				} else if text[i+1] == 'u' && i+6 <= len(text) {
					if v, ok := hexVal(text[i+2 : i+6]); ok {
						r, w = rune(v), 6
						if 0xD800 <= v && v < 0xDC00 && i+12 <= len(text) && text[i+6] == '\\' && text[i+7] == 'u' {
							if lo, ok := hexVal(text[i+8 : i+12]); ok && 0xDC00 <= lo && lo < 0xE000 {
								r, w = rune(0x10000+(v-0xD800)<<10+(lo-0xDC00)), 12
							}
						}
					}
				}
			}
		case '%':
			if i+3 <= len(text) {
				if v, ok := hexVal(text[i+1 : i+3]); ok {
					c, w = byte(v), 3
				}
			}
		case '&':
			if semi := strings.IndexByte(text[i+1:min(len(text), i+12)], ';'); semi > 0 {
				ref := text[i+1 : i+1+semi]
				v, ok := htmlEntities[ref]
				switch {
				case ok:
				case len(ref) > 2 && (ref[1] == 'x' || ref[1] == 'X') && ref[0] == '#':
					var n int
					n, ok = hexVal(ref[2:])
					v = rune(n)
				case len(ref) > 1 && ref[0] == '#' && len(ref) < 9 && strings.Trim(ref[1:], "0123456789") == "":
					n := 0
					for _, d := range ref[1:] {
						n = n*10 + int(d-'0')
					}
					v, ok = rune(n), true
				}
				if ok {
					r, w = v, semi+2
				}
			}
		}
		n := 1
		if r >= 0 {
			if r < utf8.RuneSelf {
				c, r = byte(r), -1
			} else {
				n = utf8.RuneLen(r)
				if n < 0 {
					r, n = utf8.RuneError, 3
				}
				b = utf8.AppendRune(b, r)
			}
		}
		if r < 0 {
			b = append(b, c)
		}
		if spans {
			for range n {
				from, to = append(from, i), append(to, i+w)
			}
		}
		changed = changed || w != 1
		i += w
	}
	if len(b) == 0 {
		return "", from, to, changed
	}
	return unsafe.String(&b[0], len(b)), from, to, changed // b is not written again
}

// scrubRecord redacts secrets from every string of rec that came from a
// server, the network or the user's code (see LLMProvider.scrub), its attempts'
// details included.
func scrubRecord(secrets []string, rec *Record) {
	if len(secrets) == 0 {
		return
	}
	for _, p := range []*string{&rec.Model, &rec.Content, &rec.Detail, &rec.FinishReason, &rec.Injected} {
		*p = redactSecrets(secrets, *p)
	}
	for i := range rec.Notes {
		rec.Notes[i] = redactSecrets(secrets, rec.Notes[i])
	}
	for i := range rec.Attempts {
		rec.Attempts[i].Detail = redactSecrets(secrets, rec.Attempts[i].Detail)
	}
}

// shownURL is how an error or a panic names a URL that was refused:
// redacted (see redactURL) when it has a scheme and a host; otherwise not
// at all, since a value that is no URL may be a key given in its place.
func shownURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
		return strconv.Quote(redactURL(raw))
	}
	return "(a value that is no URL, not shown: it may be a secret)"
}
