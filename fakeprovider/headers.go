package fakeprovider

import (
	"net/http"
	"strconv"
	"time"
)

// The fake has no quota; it sends OpenAI's rate-limit headers with a fixed,
// generous one so that clients that read them find them (see the package
// doc, # Headers).
const (
	rateLimitRequests = 10_000     // requests per minute
	rateLimitTokens   = 10_000_000 // tokens per minute
)

// setRateLimitHeaders sets OpenAI's x-ratelimit-* headers for a chat
// request. retry > 0 marks a 429: no request is left until retry has passed.
func setRateLimitHeaders(h http.Header, req parsed, retry time.Duration) {
	// OpenAI charges a request its prompt and its max_tokens up front.
	tokens := req.PromptTokens + req.MaxTokens
	remainingRequests, resetRequests := rateLimitRequests-1, time.Minute/rateLimitRequests
	if retry > 0 {
		remainingRequests, resetRequests = 0, retry
	}
	h.Set("X-Ratelimit-Limit-Requests", strconv.Itoa(rateLimitRequests))
	h.Set("X-Ratelimit-Remaining-Requests", strconv.Itoa(remainingRequests))
	h.Set("X-Ratelimit-Reset-Requests", resetString(resetRequests))
	h.Set("X-Ratelimit-Limit-Tokens", strconv.Itoa(rateLimitTokens))
	h.Set("X-Ratelimit-Remaining-Tokens", strconv.Itoa(max(0, rateLimitTokens-tokens)))
	h.Set("X-Ratelimit-Reset-Tokens", resetString(time.Duration(min(tokens, rateLimitTokens))*time.Minute/rateLimitTokens))
}

// resetString renders a reset time as OpenAI does: "6ms", "1.5s", "6m0s".
func resetString(d time.Duration) string { return d.Round(time.Millisecond).String() }

// setRetryAfter sets Retry-After in whole seconds, rounded up (at least 1),
// and retry-after-ms, which OpenAI's SDKs prefer when present.
func setRetryAfter(h http.Header, d time.Duration) {
	h.Set("Retry-After", strconv.Itoa(max(1, int((d+time.Second-1)/time.Second))))
	h.Set("Retry-After-Ms", strconv.FormatInt(max(1, d.Milliseconds()), 10))
}
