package latencytest

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// minSecretLen is the shortest secret searched for in what a server sends
// back: shorter values would mangle ordinary text (see WithAPIKey).
const minSecretLen = 8

// secretsOf lists the values to redact: the API key, every header value,
// the base URL's user info and every query value (decoded and as sent),
// each at least minSecretLen bytes, longest first (so that a secret that
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
		}
	}
	if u.User != nil {
		add(u.User.Username())
		if pw, ok := u.User.Password(); ok {
			add(pw)
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

// redact replaces every secret in s by "[redacted]".
func (o *openAI) redact(s string) string { return redactSecrets(o.secrets, s) }

// redactSecrets replaces every one of secrets (longest first) in s by
// "[redacted]".
func redactSecrets(secrets []string, s string) string {
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

// scrub redacts every string of a record that came from the server or
// the network: the model name, the answer (assembled, so a key split
// across chunks is caught), the detail, the notes, the finish reason and
// the fake's injection note.
func (o *openAI) scrub(rec *Record) { scrubRecord(o.secrets, rec) }

// scrubRecord redacts secrets from every string of rec that came from a
// server, the network or the user's code (see openAI.scrub), its attempts'
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
