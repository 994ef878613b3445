package latencytest

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tailguard/tailguard/internal/redact"
)

// Redaction lives in internal/redact; these are the package's names for
// it, so that the providers' call sites stay as they are.

// secretsOf lists the values to redact (see redact.Secrets).
func secretsOf(key string, h http.Header, u *url.URL) []string { return redact.Secrets(key, h, u) }

// redactSecrets replaces every run of 8 bytes or more of one of secrets
// in s by "[redacted]", in every form a server may echo it in (see
// internal/redact). When nothing is found s itself is returned (the same
// string, unallocated).
func redactSecrets(secrets []string, s string) string { return redact.String(secrets, s) }

// scrubRecord redacts secrets from every string of rec that came from a
// server, the network or the user's code (see LLMProvider.scrub), its attempts'
// details included.
func scrubRecord(secrets []string, rec *Record) {
	if len(secrets) == 0 {
		return
	}
	set := redact.For(secrets)
	for _, p := range []*string{&rec.Model, &rec.Content, &rec.Detail, &rec.FinishReason, &rec.Injected} {
		*p = set.String(*p)
	}
	// A secret split across events is redacted in each: one mark for it.
	for strings.Contains(rec.Content, "[redacted][redacted]") {
		rec.Content = strings.ReplaceAll(rec.Content, "[redacted][redacted]", "[redacted]")
	}
	for i := range rec.Notes {
		rec.Notes[i] = set.String(rec.Notes[i])
	}
	for i := range rec.Attempts {
		rec.Attempts[i].Detail = set.String(rec.Attempts[i].Detail)
	}
}

// shownURL is how an error or a panic names a URL that was refused:
// redacted (see redactURL) when it has a scheme and a host; otherwise not
// at all, since a value that is no URL may be a key given in its place.
func shownURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
		return strconv.Quote(redact.URL(raw))
	}
	return "(a value that is no URL, not shown: it may be a secret)"
}
