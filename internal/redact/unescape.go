package redact

import (
	"strings"
	"unicode/utf8"
)

// maxUnescape is how many layers of escaping are taken off.
const maxUnescape = 3

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

// unescapeOnce appends to b the text with one layer of escapes taken
// off: JSON's (\" \\ \/ \b \f \n \r \t \uXXXX, surrogate pairs too),
// percent escapes (%2F, %2f) and HTML character references (&#47; &#x2F;
// &sol;). With spans it also returns, for each output byte, the first
// input byte it came from and the end (exclusive) of the input it came
// from; without, it allocates nothing when b has room.
func unescapeOnce(b []byte, text string, spans bool) (out []byte, from, to []int, changed bool) {
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
	return b, from, to, changed
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
