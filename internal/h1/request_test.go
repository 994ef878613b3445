package h1

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The bytes of a Request are those net/http's Request.Write writes for the
// same POST: the escaped path (%2F stays) and query, Host as net/http
// writes it (no empty port, no IPv6 zone), User-Agent (Go's default unless
// set, trimmed), Content-Length, then every header sorted by name with
// values trimmed, X-Request-Id in its sorted place, then the body.
func TestRequestWritesWhatNetHTTPWrites(t *testing.T) {
	for _, tc := range []struct {
		url    string
		header http.Header
	}{
		{"http://127.0.0.1:9/v1/chat/completions", nil},
		{"http://127.0.0.1:9/v1/chat/completions?api-version=2024-10-21", http.Header{"X-Org": {" org-1 "}}},
		{"http://127.0.0.1:9/openai/deployments/a%2Fb/chat/completions", http.Header{"X-Two": {"a", "b"}}},
		{"http://127.0.0.1:/v1/chat/completions", http.Header{"User-Agent": {"tester/1"}, "Zz-After": {"after the trace ID"}}},
		{"http://[fe80::1%25eth0]:8080/v1/chat/completions", http.Header{"Accept-Encoding": {"identity"}}},
		{"http://[::1]:/v1/chat/completions", http.Header{"A-First": {"before the trace ID"}, "User-Agent": {" me/2\t"}}},
		{"http://localhost/v1/messages", http.Header{"Anthropic-Version": {"2023-06-01"}}},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		set := func(h http.Header) {
			h.Set("Content-Type", "application/json")
			h.Set("Authorization", "Bearer sk-1")
		}
		r, ok := NewRequest(u, tc.header, set)
		if !ok {
			t.Fatalf("%s: no request", tc.url)
		}
		payload := []byte(`{"model":"m-1","stream":true}`)
		got := r.Append(nil, "send-1", payload)

		want, err := http.NewRequest(http.MethodPost, tc.url, bytes.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		for k, vs := range tc.header {
			want.Header[k] = vs
		}
		set(want.Header)
		want.Header.Set("X-Request-Id", "send-1")
		var b bytes.Buffer
		if err := want.Write(&b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, b.Bytes()) {
			t.Errorf("%s:\nh1:       %q\nnet/http: %q", tc.url, got, b.Bytes())
		}
		if host := want.URL.Host; strings.HasSuffix(host, ":") && !strings.Contains(r.Addr, ":80") {
			t.Errorf("%s: dials %q, want port 80", tc.url, r.Addr)
		}
	}
}

// NewRequest leaves to net/http what it cannot write as net/http would:
// https, user info, a header net/http treats specially (an
// Idempotency-Key makes net/http resend a POST after a read error), a
// value or a key net/http would refuse; a header net/http writes as
// given is fine.
func TestNewRequestRefuses(t *testing.T) {
	none := func(http.Header) {}
	for _, tc := range []struct {
		url    string
		header http.Header
		set    func(http.Header)
		ok     bool
	}{
		{"http://127.0.0.1:8000/v1", nil, none, true},
		{"http://localhost/v1?api-version=1", http.Header{"X-Org": {"o"}}, none, true},
		{"http://127.0.0.1/v1", http.Header{"Accept-Encoding": {"gzip"}}, none, true},
		{"https://api.example.test/v1", nil, none, false},
		{"http://user:pw@127.0.0.1/v1", nil, none, false},
		{"http://127.0.0.1/v1", http.Header{"Connection": {"close"}}, none, false},
		{"http://127.0.0.1/v1", http.Header{"Idempotency-Key": {"k-1"}}, none, false},
		{"http://127.0.0.1/v1", http.Header{"X-Bad": {"a\r\nInjected: 1"}}, none, false},
		{"http://127.0.0.1/v1", http.Header{"Bad Key": {"v"}}, none, false},
		{"http://127.0.0.1/v1", nil, func(h http.Header) { h.Set("Authorization", "Bearer k\ney") }, false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := NewRequest(u, tc.header, tc.set); ok != tc.ok {
			t.Errorf("%s %v: ok %v, want %v", u.Redacted(), tc.header, ok, tc.ok)
		}
	}
}
