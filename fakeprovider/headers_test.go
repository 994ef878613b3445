package fakeprovider

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The headers OpenAI sends with a chat completion, and the fake's values.
func TestResponseHeaders(t *testing.T) {
	// A 40-character prompt is 10 tokens; with max_tokens 20 OpenAI would
	// charge 30 tokens up front: 10,000,000 - 30 remain, and 30 tokens of a
	// 10M-per-minute quota come back in 180 µs, "0s" at ms precision.
	prompt := strings.Repeat("abcd", 10)
	ok := map[string]string{
		"X-Ratelimit-Limit-Requests":     "10000",
		"X-Ratelimit-Remaining-Requests": "9999",
		"X-Ratelimit-Reset-Requests":     "6ms", // a minute / 10,000 requests
		"X-Ratelimit-Limit-Tokens":       "10000000",
		"X-Ratelimit-Remaining-Tokens":   "9999970",
		"X-Ratelimit-Reset-Tokens":       "0s",
	}
	for _, tc := range []struct {
		name   string
		id     string
		status int // scripted status; 0 for none
		want   map[string]string
		absent []string
		reason string
	}{
		{name: "echo", id: "trace-7", want: merge(ok, map[string]string{"X-Request-Id": "trace-7"}),
			absent: []string{"Retry-After"}, reason: "the client's X-Request-ID comes back as x-request-id"},
		{name: "generated", want: merge(ok, map[string]string{"X-Request-Id": "req_fake_0"}),
			reason: "without one, the fake names the request after its arrival count (#0)"},
		{name: "429", id: "rl", status: 429, want: merge(ok, map[string]string{
			"X-Request-Id": "rl", "Retry-After": "3", "Retry-After-Ms": "2500",
			"X-Ratelimit-Remaining-Requests": "0", "X-Ratelimit-Reset-Requests": "2.5s",
		}), reason: "no request left until faults.retry_after (2.5 s, rounded up to 3 in Retry-After)"},
		{name: "503", id: "down", status: 503, want: map[string]string{"Retry-After": "3", "Retry-After-Ms": "2500", "X-Request-Id": "down"},
			reason: "a 503 says when to come back, as HTTP means it to"},
		{name: "529", id: "busy", status: 529, want: map[string]string{"X-Request-Id": "busy"}, absent: []string{"Retry-After", "Retry-After-Ms"},
			reason: "Anthropic's overloaded answer carries no Retry-After"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := Profile{OutputTokens: Fixed(2), Faults: Faults{RetryAfter: 2500 * time.Millisecond}}
				if tc.status != 0 {
					p.Script = []ScriptEntry{{Request: 0, Status: tc.status}}
				}
				f := mustNew(t, p)
				r := do(t, f.Client(), "http://fake", reqOpts{id: tc.id, prompt: prompt, maxTokens: 20})
				require.NoError(t, r.readErr)
				if tc.status != 0 {
					require.Equal(t, tc.status, r.status, r.body)
				} else {
					require.Equal(t, http.StatusOK, r.status, r.body)
				}
				for k, v := range tc.want {
					assert.Equal(t, v, r.header.Get(k), "%s: %s", k, tc.reason)
				}
				for _, k := range tc.absent {
					assert.Empty(t, r.header.Get(k), "%s: %s", k, tc.reason)
				}
			})
		})
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// Served keeps the last ServedLimit requests and counts the others.
func TestServedIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{ServedLimit: 3, OutputTokens: Fixed(1)})
		for _, id := range []string{"a", "b", "c", "d", "e"} {
			r := do(t, f.Client(), "http://fake", reqOpts{id: id})
			require.Equal(t, 200, r.status)
		}
		var ids []string
		for _, s := range f.Served() {
			ids = append(ids, s.ID)
		}
		// 5 requests, room for 3: the first two are dropped, the order
		// stays arrival order.
		assert.Equal(t, []string{"c", "d", "e"}, ids)
		assert.Equal(t, 2, f.ServedDropped())

		resp, err := f.Client().Get("http://fake/fake/served")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, "2", resp.Header.Get(HeaderServedDropped), "GET /fake/served says how many it no longer holds")
	})
	f := mustNew(t, Profile{})
	assert.Equal(t, 100_000, f.Profile().ServedLimit, "the default")
}
