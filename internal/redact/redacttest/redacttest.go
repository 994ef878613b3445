// Package redacttest checks texts for what is left of a secret after
// redaction, independently of package redact's code (regular expressions
// and the standard library), for the tests of the packages that redact.
//
// # Checks
//
// [Leaks] finds pieces of 5 bytes of a key (after undoing the escape
// layers twice over), or 8 base64 characters only the key determines:
// the whole-key encodings a server may echo. [Runs] finds any run of 8
// bytes of a key anywhere in a text: as given, escaped, and hex-encoded
// in either case.
package redacttest

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
)

// Key has the characters that encodings change: '/', '+', '=', '_'.
const Key = "sk-Zq7/Wx+9v=TnLp_0MbQ8rYe4Hs2J"

// JSONUEscape writes every byte of s as \u00XX, as a hostile JSON encoder
// may.
func JSONUEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, `\u%04x`, c)
	}
	return b.String()
}

// Encoding is one form in which a server can echo a secret.
type Encoding struct {
	Name string
	Enc  func(string) string
}

// Encodings are the forms in which a server can echo a whole secret.
var Encodings = []Encoding{
	{"raw", func(s string) string { return s }},
	{"query-escaped", url.QueryEscape},
	{"path-escaped", url.PathEscape},
	{"percent lower-case hex", func(s string) string {
		return pctEscape.ReplaceAllStringFunc(url.QueryEscape(s), strings.ToLower)
	}},
	{"double query-escaped", func(s string) string { return url.QueryEscape(url.QueryEscape(s)) }},
	{"JSON", func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }},
	{`JSON \/`, func(s string) string { return strings.ReplaceAll(s, "/", `\/`) }},
	{`JSON \u00XX every byte`, JSONUEscape},
	{"JSON in JSON", func(s string) string { return strings.ReplaceAll(JSONUEscape(s), `\`, `\\`) }},
	{"HTML references", func(s string) string {
		return strings.NewReplacer("/", "&#x2F;", "+", "&#43;", "=", "&equals;").Replace(html.EscapeString(s))
	}},
	{"basic auth user:key", func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+s)) }},
	{"base64 key:", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s + ":")) }},
	{"base64url x:key", func(s string) string { return base64.URLEncoding.EncodeToString([]byte("x:" + s)) }},
	{"hex", func(s string) string { return hex.EncodeToString([]byte(s)) }},
	{"HEX", func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }},
}

// Slice is a part of a secret a server may echo in place of the whole.
type Slice struct {
	Name string
	Cut  func(string) string
}

// Slices are the parts of a secret a hostile server echoes: without its
// first bytes, without its last, a middle, and the shortest run that
// must be redacted.
var Slices = []Slice{
	{"whole", func(s string) string { return s }},
	{"key[3:]", func(s string) string { return s[3:] }},
	{"key[1:]", func(s string) string { return s[1:] }},
	{"key[:len-3]", func(s string) string { return s[:len(s)-3] }},
	{"middle key[5:len-5]", func(s string) string { return s[5 : len(s)-5] }},
	{"8 bytes key[9:17]", func(s string) string { return s[9:17] }},
}

var (
	uEscape   = regexp.MustCompile(`\\+u([0-9a-fA-F]{4})`)
	pctEscape = regexp.MustCompile(`%([0-9a-fA-F]{2})`)
	hexRun    = regexp.MustCompile(`[0-9a-fA-F]{16,}`)
)

// Decode undoes the escape layers (\u, %, HTML, \/ and \\), twice over.
func Decode(s string) string {
	for range 2 {
		s = uEscape.ReplaceAllStringFunc(s, func(m string) string {
			var v int
			fmt.Sscanf(m[len(m)-4:], "%x", &v)
			return string(rune(v))
		})
		s = pctEscape.ReplaceAllStringFunc(s, func(m string) string {
			var v int
			fmt.Sscanf(m[1:], "%x", &v)
			return string([]byte{byte(v)})
		})
		s = html.UnescapeString(strings.ReplaceAll(strings.ReplaceAll(s, `\/`, "/"), `\\`, `\`))
	}
	return s
}

// Leaks names the pieces of key (5 bytes or more, decoded; or 8 base64
// characters that only the key's bytes determine) found in s.
func Leaks(s, key string) []string {
	var out []string
	d := Decode(s)
	for i := 0; i+5 <= len(key); i++ {
		if strings.Contains(d, key[i:i+5]) {
			out = append(out, key[i:i+5])
		}
	}
	for _, pre := range []string{"", "x", "xx"} {
		for _, e := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			enc := e.EncodeToString([]byte(pre + key))
			lo, hi := (8*len(pre)+5)/6, 8*(len(pre)+len(key))/6
			for i := lo; i+8 <= hi; i++ {
				if strings.Contains(s, enc[i:i+8]) {
					out = append(out, enc[i:i+8])
				}
			}
		}
	}
	return out
}

// Runs names the runs of 8 bytes of key found in s: as given, after the
// escape layers are undone, and in any run of hex digits decoded (at
// either parity, any case).
func Runs(s, key string) []string {
	texts := []string{s, Decode(s)}
	for _, h := range hexRun.FindAllString(s, -1) {
		for _, odd := range []int{0, 1} {
			h := h[odd:]
			if b, err := hex.DecodeString(h[:len(h)&^1]); err == nil {
				texts = append(texts, string(b))
			}
		}
	}
	var out []string
	for i := 0; i+8 <= len(key); i++ {
		for _, t := range texts {
			if strings.Contains(t, key[i:i+8]) {
				out = append(out, key[i:i+8])
				break
			}
		}
	}
	return out
}
