package latencytest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// testKey has the characters that encodings change: '/', '+', '=', '_'.
const testKey = "sk-Zq7/Wx+9v=TnLp_0MbQ8rYe4Hs2J"

// jsonUEscape writes every byte of s as \u00XX, as a hostile JSON
// encoder may.
func jsonUEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, `\u%04x`, c)
	}
	return b.String()
}

// secretEncodings are the forms in which a server can echo a secret.
var secretEncodings = []struct {
	name string
	enc  func(string) string
}{
	{"raw", func(s string) string { return s }},
	{"query-escaped", url.QueryEscape},
	{"path-escaped", url.PathEscape},
	{"percent lower-case hex", func(s string) string {
		return pctEscape.ReplaceAllStringFunc(url.QueryEscape(s), strings.ToLower)
	}},
	{"double query-escaped", func(s string) string { return url.QueryEscape(url.QueryEscape(s)) }},
	{"JSON", func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }},
	{`JSON \/`, func(s string) string { return strings.ReplaceAll(s, "/", `\/`) }},
	{`JSON \u00XX every byte`, jsonUEscape},
	{"JSON in JSON", func(s string) string { return strings.ReplaceAll(jsonUEscape(s), `\`, `\\`) }},
	{"HTML references", func(s string) string {
		return strings.NewReplacer("/", "&#x2F;", "+", "&#43;", "=", "&equals;").Replace(html.EscapeString(s))
	}},
	{"basic auth user:key", func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+s)) }},
	{"base64 key:", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s + ":")) }},
	{"base64url x:key", func(s string) string { return base64.URLEncoding.EncodeToString([]byte("x:" + s)) }},
}

var (
	uEscape   = regexp.MustCompile(`\\+u([0-9a-fA-F]{4})`)
	pctEscape = regexp.MustCompile(`%([0-9a-fA-F]{2})`)
)

// decodeForLeaks undoes the encodings independently of the code under
// test (regular expressions and the standard library), twice over.
func decodeForLeaks(s string) string {
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

// keyLeaks names the pieces of key (5 bytes or more, decoded; or 8
// base64 characters that only the key's bytes determine) found in s.
func keyLeaks(s, key string) []string {
	var out []string
	d := decodeForLeaks(s)
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

// Every encoding of the key, in the middle of a text, at its end, cut at
// the end (any cut of 4 bytes or more), cut before a "…" mark, and cut
// inside an escape, is redacted, and the text around it is kept.
func TestRedactSecretsEveryEncoding(t *testing.T) {
	secrets := secretsOf(testKey, nil, &url.URL{})
	for _, e := range secretEncodings {
		enc := e.enc(testKey)
		places := map[string]string{
			"middle":     "before " + enc + " after",
			"start":      enc + " after",
			"end":        "before " + enc,
			"json field": `{"error":{"message":"bad key ` + enc + `"}}`,
		}
		// Cuts: every cut of the encoded form that leaves 5 decoded bytes
		// of the key or more (a cut at 3 bytes or fewer may stay).
		for n := 1; n < len(enc); n++ {
			places[fmt.Sprintf("cut at %d", n)] = "before " + enc[:n]
			places[fmt.Sprintf("cut at %d before the mark", n)] = "before " + enc[:n] + "…) after"
		}
		for place, text := range places {
			got := redactSecrets(secrets, text)
			if l := keyLeaks(got, testKey); len(l) > 0 {
				t.Errorf("%s, %s: %q leaves %q in %q", e.name, place, text, l, got)
			}
			if !strings.HasPrefix(text, "before") || strings.HasPrefix(got, "before ") {
				continue
			}
			t.Errorf("%s, %s: the text before the secret is lost: %q", e.name, place, got)
		}
		if got := redactSecrets(secrets, "before "+enc+" after"); !strings.HasSuffix(got, " after") || !strings.Contains(got, "[redacted]") {
			t.Errorf("%s: %q", e.name, got)
		}
	}
}

// Text without a secret is returned as it is, the same string (the
// stream's hot path relies on it), escapes and cut marks included.
func TestRedactSecretsLeavesOtherText(t *testing.T) {
	secrets := secretsOf(testKey, http.Header{"X-Org": {"org-12345678"}}, &url.URL{})
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"Hello\n\"world\" 100% \u00e9 &amp; sk-\u2026"}}]}`,
		"a cut mark… in the middle, sk- before it", "ends with sk-", "ends with sk-Zx", "Bearer", "",
		"org-1234 is not the whole header value", strings.Repeat("abcd", 100) + "%",
	} {
		if got := redactSecrets(secrets, s); got != s {
			t.Errorf("%q became %q", s, got)
		}
	}
	s := "plain text without escapes or secrets"
	if got := redactSecrets(secrets, s); &[]byte(got)[0] == &[]byte(s)[0] && got != s {
		t.Errorf("changed")
	}
}

// A Basic credential, given as a header or in the URL, is redacted as
// sent, decoded, and as its password alone.
func TestSecretsOfBasicAuth(t *testing.T) {
	u, _ := url.Parse("https://alice:" + url.PathEscape(testKey) + "@api.test/v1")
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:"+testKey))
	secrets := secretsOf("", http.Header{"Authorization": {basic}}, u)
	for _, want := range []string{basic, basic[len("Basic "):], "bob:" + testKey, testKey, "alice:" + testKey} {
		found := false
		for _, s := range secrets {
			found = found || s == want
		}
		if !found {
			t.Errorf("%q is not among the secrets %q", want, secrets)
		}
	}
}

// BenchmarkRedactEvent is the cost of the redaction every SSE event pays
// (three secrets: key, header value, query value), on a common chunk and
// on one with escapes.
func BenchmarkRedactEvent(b *testing.B) {
	u, _ := url.Parse("https://api.test/v1?api-key=" + url.QueryEscape("q/hostile-QUERY+77"))
	secrets := secretsOf(testKey, http.Header{"X-Org": {"org-hostile-HEADER-4242"}}, u)
	for _, ev := range []struct{ name, data string }{
		{"plain", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":null}]}`},
		{"escapes", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"\n\n\"quoted\" 50% \u00e9"},"finish_reason":null}]}`},
	} {
		b.Run(ev.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if redactSecrets(secrets, ev.data) != ev.data {
					b.Fatal("changed")
				}
			}
		})
	}
}

// The helpers above, for the package's external tests (secret_test.go).
var (
	TestKey           = testKey
	KeyLeaks          = keyLeaks
	SecretEncodingsOf = func() (names []string, encs []func(string) string) {
		for _, e := range secretEncodings {
			names, encs = append(names, e.name), append(encs, e.enc)
		}
		return names, encs
	}
)

// FuzzRedactSecrets: the redactor reads what hostile servers send, so it
// never panics; the key put into any text, raw or in any encoding, never
// survives; and a text without the key is left as it is unless it ends
// in (or cuts before a "…") a start of an encoded key.
func FuzzRedactSecrets(f *testing.F) {
	for _, s := range []string{"", "%", `\u00`, "&#x2", "…", `{"a":"\\u0073k-"}`, "%%2F%2f", "&amp;&#47;&#x2F;"} {
		f.Add(s, s, uint8(0))
	}
	secrets := secretsOf(testKey, nil, &url.URL{})
	f.Fuzz(func(t *testing.T, before, after string, enc uint8) {
		_ = redactSecrets(secrets, before+after) // never panics
		e := secretEncodings[int(enc)%len(secretEncodings)]
		text := before + " " + e.enc(testKey) + " " + after
		got := redactSecrets(secrets, text)
		if strings.Contains(decodeForLeaks(got), testKey) {
			t.Errorf("%s: the key survives in %q", e.name, got)
		}
	})
}

// A base64 word cut before a "…" is redacted even when a whole one comes
// after it (the scan redacts words left to right).
func TestRedactSecretsCutWordBeforeWholeWord(t *testing.T) {
	secrets := secretsOf(testKey, nil, &url.URL{})
	full := base64.StdEncoding.EncodeToString([]byte("u:" + testKey))
	s := "x " + full[:20] + "… and " + full
	if got := redactSecrets(secrets, s); len(keyLeaks(got, testKey)) > 0 || got != "x [redacted]… and [redacted]" {
		t.Errorf("%q became %q", s, got)
	}
}

// BenchmarkRedactHostile is the redaction of 64 KiB (the most of an error
// body kept) of adversarial text: the base64 of the key repeated without a
// break (each copy a match inside one word), cut marks, escapes. Linear:
// before words were skipped once redacted, the first took seconds.
func BenchmarkRedactHostile(b *testing.B) {
	secrets := secretsOf(testKey, nil, &url.URL{})
	b64 := base64.StdEncoding.EncodeToString([]byte(testKey + testKey + testKey))
	for name, s := range map[string]string{
		"base64 run": strings.Repeat(b64, 64<<10/len(b64)),
		"cut marks":  strings.Repeat("sk-Zq7…", 64<<10/9),
		"escapes":    strings.Repeat(`\u0041%41&#x41;`, 64<<10/16),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				redactSecrets(secrets, s)
			}
		})
	}
}
