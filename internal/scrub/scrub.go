// Package scrub cleans texts that come from outside the module (another
// tool's error texts, request IDs, URLs, model names) before they reach a
// record, a log, a report or a terminal: it removes terminal escape
// sequences and control characters, and hides what looks like a secret.
//
// Secrets it hides, each replaced by Redacted: the value of a URL query
// parameter or a key=value pair whose name ends in key, token, secret,
// password, signature, auth or credential (api_key=..., access_token=...),
// and of a "key": value pair of such a name when the value looks like a
// credential (8 characters with a digit, or 16; x-api-key: ...); the credential after Bearer, Basic or
// Token; the password in a URL's user:password@; and the shapes of
// common API keys (sk-..., AKIA..., AIza..., ghp_..., hf_..., xox?-...,
// JSON Web Tokens). Secrets it was given (the run's own keys) are another
// job: package scrub knows no key, only shapes.
//
// Control characters: ANSI/VT escape sequences (CSI, OSC, and two-byte
// ESC sequences) are dropped whole; newlines, tabs and other C0/C1
// controls become a space; bidirectional overrides (U+202A-U+202E,
// U+2066-U+2069) are dropped; invalid UTF-8 becomes U+FFFD. So a text
// always renders on one line, as it reads.
package scrub

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Redacted replaces a secret: the marker package redact writes for the
// run's own keys, so a reader meets one spelling.
const Redacted = "[redacted]"

var (
	// bearer: an Authorization scheme and its credential.
	bearer = regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=-]{6,}`)
	// userinfo: scheme://user:password@host.
	userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]*):[^/\s@]+@`)
	// pair: a secret-named key and its value, in a query (?api_key=v&),
	// a header (x-api-key: v), JSON ("api_key": "v") or prose (key=v).
	pair = regexp.MustCompile(`(?i)\b([a-z0-9_.-]*(?:key|token|secret|password|passwd|pwd|sig|signature|auth|authorization|credentials?)["']?)(\s*[=:]\s*["']?)(\[redacted\]|[^\s&"',;)}\]]+)`)
	// shapes: well-known API key and token formats.
	shapes = regexp.MustCompile(`\b(?:sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`)
)

// shapePrefixes are how every key of shapes starts: a text with none of
// them holds none.
var shapePrefixes = []string{"sk-", "AKIA", "AIza", "gh", "hf_", "xox", "eyJ"}

// Text returns s on one line, its control characters and escape
// sequences removed and its secrets replaced by Redacted (see the package
// doc). Text of a clean text is the text.
func Text(s string) string {
	s = Controls(s)
	if s == "" {
		return s
	}
	l := strings.ToLower(s)
	if strings.Contains(l, "bearer") || strings.Contains(l, "basic") || strings.Contains(l, "token") {
		s = bearer.ReplaceAllStringFunc(s, func(m string) string {
			sub := bearer.FindStringSubmatch(m)
			cred := m[len(sub[1])+len(sub[2]):]
			if len(cred) < 20 && !strings.ContainsAny(cred, "0123456789") {
				return m // a word after "token" in prose, not a credential
			}
			return sub[1] + sub[2] + Redacted
		})
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = userinfo.ReplaceAllString(s, "${1}:"+Redacted+"@")
	}
	if strings.ContainsAny(s, "=:") {
		s = pair.ReplaceAllStringFunc(s, func(m string) string {
			sub := pair.FindStringSubmatch(m)
			if sub[3] == Redacted || !strings.Contains(sub[2], "=") && !credential(sub[3]) {
				return m // "name: word" in prose names no secret
			}
			return sub[1] + sub[2] + Redacted
		})
	}
	for _, p := range shapePrefixes {
		if strings.Contains(s, p) {
			return shapes.ReplaceAllString(s, Redacted)
		}
	}
	return s
}

// credential reports whether a value after "name:" looks like one: 16
// characters or more, or 8 or more with a digit.
func credential(v string) bool {
	return len(v) >= 16 || len(v) >= 8 && strings.ContainsAny(v, "0123456789")
}

// Controls returns s with escape sequences and bidirectional overrides
// dropped, every other control character (newline, tab, C0, DEL, C1)
// replaced by a space, and invalid UTF-8 replaced by U+FFFD.
func Controls(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b || r == 0x9b: // ESC or C1 CSI: drop the sequence
			i += escapeLen(s[i:])
			continue
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
		case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			b.WriteByte(' ')
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// escapeLen is the length of the escape sequence at the start of s (ESC
// or C1 CSI): CSI up to its final byte, OSC/DCS/APC/PM/SOS up to BEL or
// ST, otherwise ESC and the next character.
func escapeLen(s string) int {
	i := 1
	if s[0] == 0xc2 { // U+009B encoded
		i = 2
		return i + csiLen(s[i:])
	}
	if len(s) < 2 {
		return 1
	}
	switch s[1] {
	case '[':
		return 2 + csiLen(s[2:])
	case ']', 'P', '_', '^', 'X': // a string sequence: up to BEL or ESC \
		for j := 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	}
	_, n := utf8.DecodeRuneInString(s[1:])
	return 1 + n
}

// csiLen is the length of a CSI sequence's parameters and final byte.
func csiLen(s string) int {
	for j := 0; j < len(s); j++ {
		if c := s[j]; c >= 0x40 && c <= 0x7e {
			return j + 1
		} else if c < 0x20 || c > 0x3f && c < 0x40 || c >= 0x80 {
			return j
		}
	}
	return len(s)
}
