package redact

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// MinLen is the length of the shortest secret searched for, and of the
// shortest run of a secret's bytes redacted: shorter values would mangle
// ordinary text.
const MinLen = 8

// Secrets lists the values to redact for a provider: the API key, every
// header value (for "Scheme token" values, where Scheme is a word of
// letters, the token rather than the whole value, so that the scheme
// stays readable; for Basic, also the decoded "user:password" and the
// password), the URL's user info (each part and "user:password") and
// every query value (decoded and as sent), each at least MinLen bytes,
// longest first. u may be nil.
func Secrets(key string, h http.Header, u *url.URL) []string {
	var out []string
	add := func(v string) {
		if len(v) >= MinLen && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	add(key)
	for _, vs := range h {
		for _, v := range vs {
			scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
			if !ok || !isWord(scheme) {
				add(v)
				if !ok {
					continue
				}
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
	if u != nil && u.User != nil {
		add(u.User.Username())
		if pw, ok := u.User.Password(); ok {
			add(pw)
			add(u.User.Username() + ":" + pw)
		}
	}
	if u != nil {
		for _, kv := range strings.Split(u.RawQuery, "&") {
			_, raw, _ := strings.Cut(kv, "=")
			add(raw)
			if v, err := url.QueryUnescape(raw); err == nil {
				add(v)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// isWord reports whether s is a non-empty run of ASCII letters (an
// authorization scheme: Bearer, Basic, Token).
func isWord(s string) bool {
	for i := range len(s) {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}
