package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	randv2 "math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/internal/redact/redacttest"
)

// randomCase writes each letter of s in upper or lower case at random.
func randomCase(rng *randv2.Rand, s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c|0x20 && c|0x20 <= 'z' && rng.IntN(2) == 0 {
			b[i] ^= 0x20
		}
	}
	return string(b)
}

// percentEvery writes every byte of s as %XX, its hex digits in random
// case.
func percentEvery(rng *randv2.Rand, s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		b.WriteString(randomCase(rng, fmt.Sprintf("%%%02x", c)))
	}
	return b.String()
}

// A random run of a secret (8 bytes or more, at a random offset) in a
// random form: hex in random case (mixed: "aB3f…"), every byte
// percent-escaped in random case, query-escaped, JSON \u-escaped, and
// base64 (standard and URL alphabets, after 0 to 2 bytes of other data,
// so at every offset of a 3-byte group, raw and query-escaped). None of
// it is left: no 8 bytes of the secret in any decoding (redacttest.Runs),
// and no 8 base64 characters that only the run's bytes determine.
func TestRandomRunsInEveryForm(t *testing.T) {
	rng := randv2.New(randv2.NewPCG(30, 3))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_/+="
	keys := []string{testKey}
	for range 4 {
		b := make([]byte, 24+rng.IntN(24))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		keys = append(keys, string(b))
	}
	type form struct {
		name string
		b64  *base64.Encoding // the form is base64 of the run after pre bytes
		enc  func(run, pre string) string
	}
	forms := []form{
		{"hex, random case", nil, func(run, _ string) string { return randomCase(rng, hex.EncodeToString([]byte(run))) }},
		{"percent every byte, random case", nil, func(run, _ string) string { return percentEvery(rng, run) }},
		{"query-escaped", nil, func(run, _ string) string { return url.QueryEscape(run) }},
		{`JSON \u00XX`, nil, func(run, _ string) string { return redacttest.JSONUEscape(run) }},
		{"base64", base64.StdEncoding, func(run, pre string) string { return base64.StdEncoding.EncodeToString([]byte(pre + run)) }},
		{"base64url", base64.URLEncoding, func(run, pre string) string { return base64.URLEncoding.EncodeToString([]byte(pre + run)) }},
		{"base64, query-escaped", base64.StdEncoding, func(run, pre string) string {
			return url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(pre + run)))
		}},
	}
	n := 3000
	if testing.Short() {
		n = 600
	}
	for i := range n {
		key := keys[rng.IntN(len(keys))]
		from := rng.IntN(len(key) - 7)
		run := key[from : from+8+rng.IntN(len(key)-from-7)]
		pre := strings.Repeat("\x00", rng.IntN(3))
		f := forms[rng.IntN(len(forms))]
		enc := f.enc(run, pre)
		var text string
		switch rng.IntN(3) {
		case 0:
			text = "429 slow down " + enc + " please"
		case 1:
			text = `{"error":{"message":"bad key ` + enc + `"}}`
		default:
			text = "x" + enc
		}
		got := String(Secrets(key, nil, nil), text)
		if !strings.Contains(got, "[redacted]") {
			t.Fatalf("%d: %s of %q (key[%d:%d] of %q): %q kept whole", i, f.name, run, from, from+len(run), key, got)
		}
		if l := redacttest.Runs(got, key); len(l) > 0 {
			t.Fatalf("%d: %s of %q: %q leaves runs %q in %q", i, f.name, run, text, l, got)
		}
		if f.b64 == nil {
			continue
		}
		core := f.b64.EncodeToString([]byte(pre + run))
		lo, hi := (8*len(pre)+5)/6, 8*(len(pre)+len(run))/6
		decoded := redacttest.Decode(got)
		for j := lo; j+8 <= hi; j++ {
			if w := core[j : j+8]; strings.Contains(decoded, w) {
				t.Fatalf("%d: %s of %q after %d bytes: %q leaves %q in %q", i, f.name, run, len(pre), text, w, got)
			}
		}
	}
}
