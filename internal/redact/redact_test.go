package redact

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/internal/redact/redacttest"
)

const testKey = redacttest.Key

// Every encoding of the key, in the middle of a text, at its end, cut at
// the end (any cut of 4 bytes or more), cut before a "…" mark, and cut
// inside an escape, is redacted, and the text around it is kept.
func TestEveryEncoding(t *testing.T) {
	secrets := Secrets(testKey, nil, nil)
	for _, e := range redacttest.Encodings {
		enc := e.Enc(testKey)
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
			got := String(secrets, text)
			if l := redacttest.Leaks(got, testKey); len(l) > 0 {
				t.Errorf("%s, %s: %q leaves %q in %q", e.Name, place, text, l, got)
			}
			if !strings.HasPrefix(text, "before") || strings.HasPrefix(got, "before ") {
				continue
			}
			t.Errorf("%s, %s: the text before the secret is lost: %q", e.Name, place, got)
		}
		if got := String(secrets, "before "+enc+" after"); !strings.HasSuffix(got, " after") || !strings.Contains(got, "[redacted]") {
			t.Errorf("%s: %q", e.Name, got)
		}
	}
}

// Any run of 8 bytes or more of a secret goes, wherever it starts: a
// server that echoes the key without its first bytes (key[3:]), without
// its last, a middle slice, or just 8 of its bytes; in every encoding
// (hex, lower and upper case, and base64 too), and in every place of a
// text. Nothing of the run is left: not 8 bytes (Runs), not 5 (Leaks).
func TestEveryRunOfASecret(t *testing.T) {
	for _, key := range []string{testKey, "sk-proj-0123456789abcdefABCDEF0123456789", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"} {
		secrets := Secrets(key, nil, nil)
		for _, sl := range redacttest.Slices {
			for _, e := range redacttest.Encodings {
				enc := e.Enc(sl.Cut(key))
				for place, text := range map[string]string{
					"middle":     "429 slow down " + enc + " please",
					"end":        "429 slow down " + enc,
					"json field": `{"error":{"message":"bad key ` + enc + `","code":429}}`,
					"glued":      "x" + enc + "y",
				} {
					got := String(secrets, text)
					if l := redacttest.Runs(got, key); len(l) > 0 {
						t.Errorf("%s of %s, %s, %s: %q leaves runs %q in %q", sl.Name, key, e.Name, place, text, l, got)
					}
					if l := redacttest.Leaks(got, key); len(l) > 0 && sl.Name != "8 bytes key[9:17]" {
						t.Errorf("%s of %s, %s, %s: %q leaves %q in %q", sl.Name, key, e.Name, place, text, l, got)
					}
					if !strings.Contains(got, "[redacted]") || (place == "middle" && !strings.HasPrefix(got, "429 slow down ")) {
						t.Errorf("%s of %s, %s, %s: %q became %q", sl.Name, key, e.Name, place, text, got)
					}
				}
			}
		}
	}
}

// Fewer than 8 bytes of a secret stay (7 bytes, raw or in hex), and so
// does text that shares only short pieces with it: redaction does not eat
// ordinary text.
func TestShortRunsStay(t *testing.T) {
	secrets := Secrets(testKey, nil, nil)
	for _, s := range []string{
		"a piece " + testKey[3:10] + " of 7 bytes",
		"in hex " + fmt.Sprintf("%x", testKey[3:6]) + " (3 bytes)",
		"sk-Zq7 and Wx+9v= and TnLp_0M, apart",
		`{"id":"chatcmpl-0123456789","object":"chat.completion.chunk","model":"gpt-4o-mini"}`,
	} {
		if got := String(secrets, s); got != s {
			t.Errorf("%q became %q", s, got)
		}
	}
}

// Text without a secret is returned as it is, the same string (the
// stream's hot path relies on it), escapes and cut marks included.
func TestLeavesOtherText(t *testing.T) {
	secrets := Secrets(testKey, http.Header{"X-Org": {"org-12345678"}}, &url.URL{})
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"Hello\n\"world\" 100% \u00e9 &amp; sk-\u2026"}}]}`,
		"a cut mark… in the middle, sk- before it", "ends with sk-", "ends with sk-Zx", "Bearer", "",
		"org-123 is not the whole header value, 7 bytes of it", strings.Repeat("abcd", 100) + "%",
	} {
		if got := String(secrets, s); got != s {
			t.Errorf("%q became %q", s, got)
		}
	}
}

// A text without a secret costs no allocation, with escapes or without,
// once the Set is compiled and the pool's buffers exist.
func TestNoAllocationWhenClean(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops buffers at random under the race detector")
	}
	secrets := Secrets(testKey, http.Header{"X-Org": {"org-hostile-HEADER-4242"}}, nil)
	for _, ev := range benchEvents {
		String(secrets, ev.data)
		if n := testing.AllocsPerRun(100, func() { String(secrets, ev.data) }); n != 0 {
			t.Errorf("%s: %v allocations", ev.name, n)
		}
	}
}

// A Basic credential, given as a header or in the URL, is redacted as its
// token, decoded, and as its password alone; the scheme word stays
// readable.
func TestSecretsOfBasicAuth(t *testing.T) {
	u, _ := url.Parse("https://alice:" + url.PathEscape(testKey) + "@api.test/v1")
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:"+testKey))
	secrets := Secrets("", http.Header{"Authorization": {basic}, "X-Note": {"v1: a value, no scheme"}}, u)
	for _, want := range []string{basic[len("Basic "):], "bob:" + testKey, testKey, "alice:" + testKey, "v1: a value, no scheme"} {
		found := false
		for _, s := range secrets {
			found = found || s == want
		}
		if !found {
			t.Errorf("%q is not among the secrets %q", want, secrets)
		}
	}
	if got := String(secrets, "sent "+basic); got != "sent Basic [redacted]" {
		t.Errorf("got %q", got)
	}
}

// A base64 word cut before a "…" is redacted even when a whole one comes
// after it (the scan redacts words left to right).
func TestCutWordBeforeWholeWord(t *testing.T) {
	secrets := Secrets(testKey, nil, nil)
	full := base64.StdEncoding.EncodeToString([]byte("u:" + testKey))
	s := "x " + full[:20] + "… and " + full
	if got := String(secrets, s); len(redacttest.Leaks(got, testKey)) > 0 || got != "x [redacted]… and [redacted]" {
		t.Errorf("%q became %q", s, got)
	}
}

// FuzzString: the redactor reads what hostile servers send, so it never
// panics; the key, or a run of 8 of its bytes, put into any text raw or
// in any encoding, never survives.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "%", `\u00`, "&#x2", "…", `{"a":"\\u0073k-"}`, "%%2F%2f", "&amp;&#47;&#x2F;"} {
		f.Add(s, s, uint8(0), uint8(0))
	}
	secrets := Secrets(testKey, nil, nil)
	f.Fuzz(func(t *testing.T, before, after string, enc, at uint8) {
		_ = String(secrets, before+after) // never panics
		e := redacttest.Encodings[int(enc)%len(redacttest.Encodings)]
		i := int(at) % (len(testKey) - 8)
		for _, piece := range []string{testKey, testKey[i:], testKey[i : i+8]} {
			got := String(secrets, before+" "+e.Enc(piece)+" "+after)
			if strings.Contains(redacttest.Decode(got), piece) {
				t.Errorf("%s: %q survives in %q", e.Name, piece, got)
			}
		}
	})
}

// benchEvents are SSE events of a chat stream: a common one, one with
// escapes, and one whose content echoes the key's last 28 bytes.
var benchEvents = []struct{ name, data string }{
	{"plain", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":null}]}`},
	{"escapes", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"\n\n\"quoted\" 50% \u00e9"},"finish_reason":null}]}`},
}

// BenchmarkRedactEvent is the cost of the redaction every SSE event pays:
// with no secret, and with three (key, header value, query value), on a
// common chunk, one with escapes, and one that holds key[3:].
func BenchmarkRedactEvent(b *testing.B) {
	u, _ := url.Parse("https://api.test/v1?api-key=" + url.QueryEscape("q/hostile-QUERY+77"))
	secrets := Secrets(testKey, http.Header{"X-Org": {"org-hostile-HEADER-4242"}}, u)
	events := append(benchEvents, struct{ name, data string }{"key[3:]",
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"` + testKey[3:] + `"},"finish_reason":null}]}`})
	for _, with := range []bool{false, true} {
		list := secrets
		if !with {
			list = nil
		}
		for _, ev := range events {
			if !with && ev.name == "key[3:]" {
				continue
			}
			b.Run(fmt.Sprintf("secrets=%d/%s", len(list), ev.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					String(list, ev.data)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
			})
		}
	}
}

// BenchmarkRedactHostile is the redaction of 64 KiB (the most of an error
// body kept) of adversarial text: the base64 of the key repeated without a
// break (each copy a match inside one word), the key's hex repeated, cut
// marks, escapes. Linear in the text.
func BenchmarkRedactHostile(b *testing.B) {
	secrets := Secrets(testKey, nil, nil)
	b64 := base64.StdEncoding.EncodeToString([]byte(testKey + testKey + testKey))
	for name, s := range map[string]string{
		"base64 run":  strings.Repeat(b64, 64<<10/len(b64)),
		"hex run":     strings.Repeat(fmt.Sprintf("%x", testKey), 64<<10/62),
		"cut marks":   strings.Repeat("sk-Zq7…", 64<<10/9),
		"escapes":     strings.Repeat(`\u0041%41&#x41;`, 64<<10/16),
		"key[3:] run": strings.Repeat(testKey[3:]+" ", 64<<10/29),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				String(secrets, s)
			}
		})
	}
}

// For returns one Set per list of secrets (the same list, the same Set),
// a different one for a different list, and keeps working past the
// cache's size.
func TestForCaches(t *testing.T) {
	a := For([]string{"secret-aaaa-1111"})
	if For([]string{"secret-aaaa-1111"}) != a || For([]string{"secret-bbbb-2222"}) == a {
		t.Fatal("For does not cache by list")
	}
	defer func(n int) { maxSets = n }(maxSets)
	maxSets = 8
	for i := range 3*maxSets + 1 {
		key := fmt.Sprintf("per-call-key-%06d", i)
		if got := For([]string{key}).String("x " + key); got != "x [redacted]" {
			t.Fatalf("%d: %q", i, got)
		}
	}
	if s := For([]string{"secret-aaaa-1111"}); s.String("secret-aaaa-1111") != "[redacted]" {
		t.Error("after the cache started afresh")
	}
}

// URL keeps the scheme, host and path and drops what may hold a
// credential: user information, query and fragment.
func TestURL(t *testing.T) {
	for raw, want := range map[string]string{
		"http://user:pass@127.0.0.1:8080/v1?api_key=sk-1#frag": "http://127.0.0.1:8080/v1",
		"https://h.test/metrics":                               "https://h.test/metrics",
		"http://[::1]:80/x?token=t":                            "http://[::1]:80/x",
		"%zz":                                                  "(unparsable URL)",
	} {
		if got := URL(raw); got != want {
			t.Errorf("URL(%q) = %q, want %q", raw, got, want)
		}
	}
}
