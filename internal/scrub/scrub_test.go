package scrub

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	key := "sk-proj-abcdefghijklmnopqrstuvwxyz0123"
	tests := []struct {
		name, in, want string
	}{
		{"clean text unchanged", "429 Too Many Requests", "429 Too Many Requests"},
		{"query api_key", "GET http://127.0.0.1:8000/v1?api_key=s3cr3tvalue&model=m failed", "GET http://127.0.0.1:8000/v1?api_key=[redacted]&model=m failed"},
		{"query key", "https://h/v1beta/models/g:stream?alt=sse&key=AIzaSyA-1234567890abcdefghijklmnopqrstu", "https://h/v1beta/models/g:stream?alt=sse&key=[redacted]"},
		{"access_token", "callback?access_token=abc.def.ghi", "callback?access_token=[redacted]"},
		{"bearer", "Authorization: Bearer " + key, "Authorization: Bearer [redacted]"},
		{"bearer alone", "sent Bearer abcdefgh12345678", "sent Bearer [redacted]"},
		{"header x-api-key", "x-api-key: 0123456789abcdef", "x-api-key: [redacted]"},
		{"json api_key", `{"api_key": "hunter2hunter2"}`, `{"api_key": "[redacted]"}`},
		{"userinfo", "dial http://bob:pa55word@127.0.0.1:9/v1: refused", "dial http://bob:[redacted]@127.0.0.1:9/v1: refused"},
		{"openai key shape", "invalid key " + key + " given", "invalid key [redacted] given"},
		{"aws key shape", "AKIAABCDEFGHIJKLMNOP denied", "[redacted] denied"},
		{"max_tokens kept", "max_tokens=64 exceeded", "max_tokens=64 exceeded"},
		{"metric name kept", "metrics.time_to_first_token: unit \"ms\"", "metrics.time_to_first_token: unit \"ms\""},
		{"prose after token kept", "token generation failed", "token generation failed"},
		{"newline and tab", "line one\nline\ttwo\r", "line one line two "},
		{"CSI colour", "\x1b[31mred\x1b[0m", "red"},
		{"OSC title, BEL", "a\x1b]0;pwned\x07b", "ab"},
		{"OSC title, ST", "a\x1b]8;;http://x\x1b\\b", "ab"},
		{"C1 CSI", "a\u009b2Jb", "ab"},
		{"bidi override", "abc\u202edcba", "abcdcba"},
		{"invalid UTF-8", "a\xffb", "a\ufffdb"},
		{"DEL and NUL", "a\x7fb\x00c", "a b c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Text(tt.in); got != tt.want {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzText: the output never holds a control character, and Text is
// idempotent.
func FuzzText(f *testing.F) {
	f.Add("a\x1b[31mb\nc?api_key=xyz")
	f.Add("Bearer abcdefghijk")
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		for _, r := range out {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
				t.Fatalf("Text(%q) = %q holds control %U", s, out, r)
			}
		}
		if again := Text(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if strings.Contains(s, "api_key=secretvalue1") && strings.Contains(out, "secretvalue1") {
			t.Fatalf("key kept: %q", out)
		}
	})
}
