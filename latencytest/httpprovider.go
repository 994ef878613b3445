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
)

// WithBody sends body, with the Content-Type contentType, in every request
// of an HTTP provider (the same bytes each time). The OpenAI provider
// ignores it: it builds its own body.
func WithBody(contentType string, body []byte) Option {
	return func(o *openAI) { o.bodyType, o.body = contentType, bytes.Clone(body) }
}

// HTTP returns a Provider for a plain HTTP endpoint, any API (not only
// LLMs): each Call sends one method request to url (with the options'
// headers, API key as a bearer token, and WithBody's body) and reads the
// whole response body. It is Func around a client whose transport is
// wrapped with Instrument, so the record holds the time to first byte
// (TTFB: the response headers), Total (the body read to its end) and the
// status, and the request is the record's single Attempt, sent with the
// trace ID as X-Request-ID. A status of 400 or more is the class
// "http_<status>" with the error body's message in Detail; a redirect the
// client follows is an attempt of its own. An answer that is a 2xx
// text/event-stream is timed as an OpenAI-style chat-completions stream
// (first token, gaps, usage) and judged as one. WithModel is ignored; the
// key and header values are secrets, as for OpenAI. HTTP panics when the
// method is not a valid HTTP method token or url is not an http(s) URL.
func HTTP(method, rawURL string, opts ...Option) Provider {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		panic(fmt.Sprintf("latencytest: HTTP URL %q is not an http(s) URL", redactURL(rawURL)))
	}
	if _, err := http.NewRequest(method, "http://x/", nil); err != nil || method == "" {
		panic(fmt.Sprintf("latencytest: HTTP method %q is not valid", method))
	}
	o := &openAI{url: rawURL, header: http.Header{}}
	for _, opt := range opts {
		opt(o)
	}
	if o.client == nil {
		// Enough idle connections for any concurrency; a run's own
		// concurrency also bounds the connections it opens (clientFor).
		o.client, o.ownTransport = &http.Client{Transport: defaultTransport()}, true
	}
	o.endpoint = redactURL(rawURL)
	o.secrets = secretsOf(o.key, o.header, u)
	hc := *o.client
	hc.Transport = Instrument(hc.Transport)
	return &httpProvider{o: o, method: method, client: &hc}
}

type httpProvider struct {
	o      *openAI
	method string
	client *http.Client
}

// Describe names the method and endpoint (never a credential).
func (h *httpProvider) Describe() Description {
	return Description{Kind: "http " + h.method, Endpoint: h.o.endpoint}
}

// CloseIdleConnections closes the idle connections of the provider's own
// transports (a client given with WithHTTPClient is yours to close).
func (h *httpProvider) CloseIdleConnections() { h.o.CloseIdleConnections() }

// Call sends one request and measures it.
func (h *httpProvider) Call(ctx context.Context, req Request) Record {
	rec := runFunc(ctx, req, h.do)
	h.o.scrub(&rec)
	return rec
}

// do is the call: send, then read the body to its end.
func (h *httpProvider) do(ctx context.Context, _ Request) error {
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
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}
