package latencytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tailguard/tailguard/internal/redact"
)

// WithBody sends body, with the Content-Type contentType, in every request
// of an HTTP provider (the same bytes each time). It is HTTP's only: the
// other providers build their own bodies.
func WithBody(contentType string, body []byte) Option {
	return httpOnly("WithBody", func(o *LLMProvider) { o.bodyType, o.body = contentType, bytes.Clone(body) })
}

// HTTP returns a Provider for a plain HTTP endpoint, any API (not only
// LLMs): each Call sends one method request to url (with the options'
// headers, API key as a bearer token, and WithBody's body) and reads the
// whole response body. It is Func around a client whose transport is
// wrapped with Instrument, so the request is the record's single Attempt,
// sent with the trace ID as X-Request-ID, and the record holds the status
// and the body timed as bytes, whatever its Content-Type (JSON, an event
// stream, NDJSON, a download): TTFB is the response headers, TTFT and
// FirstAnswer the first body byte, LastToken the last one, MaxGap the
// longest silence between two reads of the body, and Total the end of
// the body. Only with WithOpenAIStream is a 2xx text/event-stream timed
// and judged as an OpenAI-style chat-completions stream (first token,
// gaps, usage). A status of 400 or more is the class "http_<status>" with
// the error body's message in Detail.
//
// Redirects: the provider's own client does not follow them, and neither
// does HTTP follow any 3xx answer a client returns: it fails as
// "http_<status>" naming where it pointed (credentials and query left
// out), since a redirect to a slow page, or to itself, answered fast is
// no measure of the endpoint; give the final URL instead. A client given
// with WithHTTPClient that follows redirects itself has each hop timed as
// an Attempt of its own, the record timed to the final answer (a loop
// ends in the client's error, a failure). The key and header values are
// secrets, as for OpenAI. HTTP panics when the
// method is not a valid HTTP method token or url is not an http(s) URL.
func HTTP(method, rawURL string, opts ...Option) *HTTPProvider {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		panic(fmt.Sprintf("latencytest: HTTP URL %s is not an http(s) URL", shownURL(rawURL)))
	}
	if _, err := http.NewRequest(method, "http://x/", nil); err != nil || method == "" {
		panic(fmt.Sprintf("latencytest: HTTP method %q is not valid", method))
	}
	o := &LLMProvider{url: rawURL, header: http.Header{}}
	apply(o, "HTTP", opts)
	if o.client == nil {
		// Enough idle connections for any concurrency; a run's own
		// concurrency also bounds the connections it opens (clientFor).
		o.client, o.ownTransport = &http.Client{Transport: defaultTransport(), CheckRedirect: noRedirects}, true
	}
	o.endpoint = redact.URL(rawURL)
	o.secrets = secretsOf(o.key, o.header, u)
	hc := *o.client
	hc.Transport = Instrument(hc.Transport)
	return &HTTPProvider{o: o, method: method, client: &hc}
}

// HTTPProvider is the provider HTTP returns: a plain endpoint timed
// through Instrument.
type HTTPProvider struct {
	o      *LLMProvider
	method string
	client *http.Client
}

// Describe names the method and endpoint (never a credential).
func (h *HTTPProvider) Describe() Description {
	return Description{Kind: "http " + h.method, Endpoint: h.o.endpoint}
}

// CloseIdleConnections closes the idle connections of the provider's own
// transports (a client given with WithHTTPClient is yours to close).
func (h *HTTPProvider) CloseIdleConnections() { h.o.CloseIdleConnections() }

// WithOpenAIStream makes an HTTP provider time a 2xx text/event-stream
// answer as an OpenAI-style chat-completions stream (first token, gaps,
// usage) and judge it as one (empty_stream, truncated, bad_stream...), as
// the OpenAI provider does. Without it HTTP times every body as bytes.
// It is HTTP's only: OpenAI always does so.
func WithOpenAIStream() Option {
	return httpOnly("WithOpenAIStream", func(o *LLMProvider) { o.chatStream = true })
}

// redirected is a 3xx answer HTTP does not follow.
type redirected struct {
	status int
	detail string
}

func (r *redirected) Error() string { return r.detail }

// Call sends one request and measures it.
func (h *HTTPProvider) Call(ctx context.Context, req Request) Record {
	var redirect *redirected
	rec := runFunc(ctx, req, func(ctx context.Context, req Request) error {
		err := h.do(ctx, req)
		errors.As(err, &redirect)
		return err
	})
	if redirect != nil && rec.Err == ClassCallError {
		// The answer was the redirect: its status is the class, of the
		// record and of the attempt that got it.
		rec.Err = HTTPClass(redirect.status)
		if n := len(rec.Attempts); n > 0 && rec.Attempts[n-1].OK() {
			rec.Attempts[n-1].Err, rec.Attempts[n-1].Detail = rec.Err, rec.Detail
		}
	}
	h.o.scrub(&rec)
	return rec
}

// do is the call: send, then read the body to its end.
func (h *HTTPProvider) do(ctx context.Context, _ Request) error {
	if c, ok := ctx.Value(callKey{}).(*funcCall); ok && !h.o.chatStream {
		c.mu.Lock()
		c.bytes = true
		c.mu.Unlock()
	}
	var body io.Reader
	if h.o.body != nil {
		body = bytes.NewReader(h.o.body)
	}
	hreq, err := http.NewRequestWithContext(ctx, h.method, h.o.url, body)
	if err != nil {
		return err
	}
	for k, vs := range h.o.header {
		hreq.Header[k] = vs
	}
	if h.o.bodyType != "" {
		hreq.Header.Set("Content-Type", h.o.bodyType)
	}
	if h.o.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+h.o.key)
	}
	client := h.client
	if h.o.ownTransport {
		c := *h.o.clientFor(ctx) // bounded to the run's requests in flight
		c.Transport = Instrument(c.Transport)
		client = &c
	}
	resp, err := client.Do(hreq)
	if err != nil {
		// net/http names the URL, query included: name the endpoint.
		var ue *url.Error
		if errors.As(err, &ue) {
			return fmt.Errorf("%s %s: %w", strings.ToUpper(ue.Op), h.o.endpoint, ue.Err)
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, errorMessage([]byte(h.o.redact(string(b)))))
	}
	if resp.StatusCode/100 == 3 {
		where := "no Location"
		if loc, err := resp.Location(); err == nil { // resolved against the request's URL
			where = redact.URL(h.o.redact(loc.String()))
		}
		return &redirected{status: resp.StatusCode, detail: fmt.Sprintf("HTTP %d: redirected to %s (not followed: give the final URL to HTTP)", resp.StatusCode, where)}
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}
