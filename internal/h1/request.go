// The request the client writes: the bytes net/http writes for the same
// request.

package h1

import (
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Request is the fixed part of the POST requests a client sends to one
// URL with one set of headers: the bytes net/http writes for them, with
// the X-Request-Id and the body left to [Request.Append].
type Request struct {
	head   []byte
	around [2][]byte // the header lines sorted before and after X-Request-Id
	// Addr is the host:port to dial.
	Addr string
}

// NewRequest builds the fixed parts of the requests to u with the
// caller's headers (header) and those set adds (its own: content type,
// key, ...; set sees the caller's and may overwrite them), or returns ok
// false when the URL or the headers need net/http: https, user info in the URL, a proxy from the
// environment, a host net/http would not send, a header net/http treats
// specially (an Idempotency-Key makes net/http resend a POST after a
// read error: the fast path does not), or a value it would refuse.
//
// The head is what net/http's Request.Write writes for the same request:
// the request line (the escaped path as URL.RequestURI gives it), Host
// (the URL's host without an empty port or an IPv6 zone), User-Agent,
// then (see Append) Content-Length, then every other header sorted
// by name, values trimmed. around holds the header lines sorted before
// and after X-Request-Id.
func NewRequest(u *url.URL, header http.Header, set func(http.Header)) (r *Request, ok bool) {
	head, around, addr, ok := newRequest(u, header, set)
	if !ok {
		return nil, false
	}
	return &Request{head: head, around: around, Addr: addr}, true
}

func newRequest(u *url.URL, header http.Header, set func(http.Header)) (head []byte, around [2][]byte, addr string, ok bool) {
	if u.Scheme != "http" || u.User != nil || u.Host == "" || !isASCIIPrintable(u.Host) {
		return nil, around, "", false
	}
	host := strings.TrimSuffix(u.Host, ":") // net/http drops an empty port
	if !validHost(host) {
		return nil, around, "", false
	}
	addr = host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: u}); p != nil || err != nil {
		return nil, around, "", false
	}
	h := http.Header{}
	for k, vs := range header {
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer", "Connection",
			"Te", "Upgrade", "Expect", "Keep-Alive", "Proxy-Connection", "Idempotency-Key", "X-Idempotency-Key":
			return nil, around, "", false
		}
		if !isToken([]byte(k)) || k == "" {
			return nil, around, "", false
		}
		for _, v := range vs {
			if !ValidHeaderValue(v) {
				return nil, around, "", false
			}
		}
		h[k] = vs
	}
	set(h)
	if !ValidHeaderValue(h.Get("Authorization")) {
		return nil, around, "", false
	}
	head = append(head, "POST "...)
	head = append(head, u.RequestURI()...)
	head = append(head, " HTTP/1.1\r\nHost: "...)
	head = append(head, removeZone(host)...)
	head = append(head, "\r\n"...)
	ua := "Go-http-client/1.1"
	if _, set := h["User-Agent"]; set {
		ua = strings.Trim(h.Get("User-Agent"), " \t")
	}
	if ua != "" {
		head = append(head, "User-Agent: "...)
		head = append(head, ua...)
		head = append(head, "\r\n"...)
	}
	keys := slices.Sorted(maps.Keys(h))
	for _, k := range keys {
		if k == "User-Agent" || k == "X-Request-Id" {
			continue
		}
		side := 0
		if k > "X-Request-Id" {
			side = 1
		}
		for _, v := range h[k] {
			around[side] = append(around[side], k...)
			around[side] = append(around[side], ": "...)
			around[side] = append(around[side], strings.Trim(v, " \t")...) // as net/http writes a value
			around[side] = append(around[side], "\r\n"...)
		}
	}
	return head, around, addr, true
}

// removeZone drops an IPv6 zone from a host, as net/http does (RFC 6874).
func removeZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	i := strings.LastIndex(host, "]")
	if i < 0 {
		return host
	}
	j := strings.LastIndex(host[:i], "%")
	if j < 0 {
		return host
	}
	return host[:j] + host[i:]
}

// validHost reports whether net/http would send host as it is in the
// Host header (it sends an empty one otherwise): only the bytes of a
// host name, an IP literal (zone included) and a port.
func validHost(host string) bool {
	for i := range len(host) {
		c := host[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!$%&()*+,-.:;=[]_~'", c) >= 0) {
			return false
		}
	}
	return true
}

// Append appends one request to b: the fixed head, the length, the
// headers with the trace ID (id, which must pass ValidHeaderValue) in its
// sorted place, and the body.
func (r *Request) Append(b []byte, id string, payload []byte) []byte {
	b = append(b, r.head...)
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(payload)), 10)
	b = append(b, "\r\n"...)
	b = append(b, r.around[0]...)
	b = append(b, "X-Request-Id: "...)
	b = append(b, strings.Trim(id, " \t")...)
	b = append(b, "\r\n"...)
	b = append(b, r.around[1]...)
	b = append(b, "\r\n"...)
	return append(b, payload...)
}

// ValidHeaderValue reports whether v may be sent as a header value: no
// control bytes other than tab (net/http refuses the request otherwise).
func ValidHeaderValue(v string) bool {
	for i := range len(v) {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7F {
			return false
		}
	}
	return true
}

// isASCIIPrintable reports whether s is printable ASCII.
func isASCIIPrintable(s string) bool {
	for i := range len(s) {
		if s[i] <= ' ' || s[i] >= 0x7F {
			return false
		}
	}
	return true
}
