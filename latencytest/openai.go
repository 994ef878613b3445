package latencytest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"
)

// Option configures the OpenAI provider.
type Option func(*openAI)

// WithHTTPClient sets the HTTP client (e.g. a fake provider's in-memory
// client). Default: a client with its own transport, which keeps up to
// DefaultMaxIdleConnsPerHost idle connections to the endpoint, so that a
// run at any concurrency up to that opens each connection once and no
// measured request pays for connection setup after warm-up (the
// disclosure counts the connections a run opened). A client of your own
// keeps its transport's setting: net/http's default keeps 2, and a run at
// concurrency 50 then opens new connections all along, their setup inside
// TTFT. Batch and Chain tell the
// default transport their concurrency, and a run opens at most that many
// connections. On the default transport a plain http:// endpoint that no
// proxy setting covers is spoken to by the provider's own HTTP/1.1 client,
// which costs less per SSE event than net/http and keeps the same
// connection bounds; an answer head it does not read itself (a redirect,
// an unknown encoding, an unusual header) is read by net/http's parser
// from the same connection, so the server sees every request once. The
// provider's own clients do not follow redirects: a 3xx fails the request
// as http_3xx, naming where it pointed (a followed redirect would time two
// requests as one; give the final URL as the base URL).
func WithHTTPClient(c *http.Client) Option { return func(o *openAI) { o.client = c } }

// WithAPIKey sets the bearer token, sent in the Authorization header. The
// key never appears in a record, a log line, an error or an artifact: it
// is never printed, and wherever a server echoes it (in an error body, the
// model name, the answer, even split across chunks) it is replaced by
// "[redacted]". So are the values of WithHeader and of the base URL's
// query parameters. Values shorter than 8 bytes are not searched for (a
// header value "1" cannot be told from a digit of a number; no real
// credential is that short), though they are never printed either.
func WithAPIKey(key string) Option { return func(o *openAI) { o.key = key } }

// DefaultModel is the model ID requested unless WithModel names another:
// the fake provider's.
const DefaultModel = "fake-model"

// WithModel sets the model ID requested. Default (and for ""):
// DefaultModel.
func WithModel(model string) Option {
	return func(o *openAI) {
		o.model = model
		if model == "" {
			o.model = DefaultModel
		}
	}
}

// WithHeader adds a header to every request (e.g. an organisation ID). Its
// value is treated as a secret, as the API key is (see WithAPIKey).
func WithHeader(key, value string) Option {
	return func(o *openAI) { o.header.Add(key, value) }
}

// WithoutStreamOptions never sends stream_options (by default every request
// asks for usage with stream_options.include_usage). Without it most
// servers send no usage, and decode rates count token events (see
// Record.DecodeRateUnit). A server that refuses stream_options is handled
// without it: see OpenAI.
func WithoutStreamOptions() Option { return func(o *openAI) { o.noStreamOptions.Store(true) } }

// OpenAI returns a Provider that streams chat completions from an
// OpenAI-compatible endpoint: baseURL is the API root ("https://host/v1");
// requests go to baseURL + "/chat/completions" with stream true and
// stream_options.include_usage. It panics if baseURL is not an http(s) URL.
//
// Some servers refuse stream_options (Mistral's API with 422
// extra_forbidden, Azure OpenAI api-versions before 2024-09-01-preview
// with 400 unknown_parameter). The first answer of status 400 or 422 whose
// body names stream_options turns it off for this provider from then on,
// and that request is sent once more without it: its record times the
// resent request only, and carries a note saying why and how long the
// refused one took; the run's disclosure counts such requests. Requests
// in flight when the refusal came are each resent the same way, once.
// WithoutStreamOptions never sends it.
func OpenAI(baseURL string, opts ...Option) Provider {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		panic(fmt.Sprintf("latencytest: OpenAI base URL %q is not an http(s) URL", redactURL(baseURL)))
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions" // a query (api-version=…) stays
	u.RawPath = ""
	o := &openAI{url: u.String(), model: DefaultModel, header: http.Header{}}
	for _, opt := range opts {
		opt(o)
	}
	if o.client == nil {
		o.client = &http.Client{Transport: o.transport(), CheckRedirect: noRedirects}
		o.ownTransport = true
		if !o.noFastPath {
			o.h1Head, o.h1Addr, _ = o.h1Request(u)
		}
	}
	o.bodyTail = appendBodyTail(nil, o.model, true)
	o.bodyTailPlain = appendBodyTail(nil, o.model, false)
	o.endpoint = redactURL(o.url)
	o.secrets = secretsOf(o.key, o.header, u)
	return o
}

// Environment variables read by OpenAIFromEnv.
const (
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvModel   = "OPENAI_MODEL"
)

// OpenAIFromEnv returns the OpenAI provider for OPENAI_BASE_URL,
// OPENAI_API_KEY and OPENAI_MODEL. The error names the variables that are
// unset. The key must be set but may be empty (for a local server without
// keys); the others must not be empty.
func OpenAIFromEnv(opts ...Option) (Provider, error) {
	base, model := os.Getenv(EnvBaseURL), os.Getenv(EnvModel)
	key, hasKey := os.LookupEnv(EnvAPIKey)
	var missing []string
	if base == "" {
		missing = append(missing, EnvBaseURL)
	}
	if !hasKey {
		missing = append(missing, EnvAPIKey+" (set it empty for a server without keys)")
	}
	if model == "" {
		missing = append(missing, EnvModel)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("latencytest: %s not set", strings.Join(missing, ", "))
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("latencytest: %s=%q is not an http(s) URL", EnvBaseURL, redactURL(base))
	}
	all := append([]Option{WithModel(model), WithAPIKey(key)}, opts...)
	return OpenAI(base, all...), nil
}

// DefaultMaxIdleConnsPerHost is how many idle connections the OpenAI
// provider's default transport keeps per host (see WithHTTPClient): more
// than any concurrency a run is likely to use. The provider does not know
// a run's concurrency up front; a run above it opens new connections.
const DefaultMaxIdleConnsPerHost = 1024

// defaultTransport is net/http's default transport keeping
// DefaultMaxIdleConnsPerHost idle connections per host (and no overall
// limit).
func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0
	t.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	return t
}

// noRedirects makes the provider's own clients return a redirect as the
// answer: a request that followed it would time two requests as one, and
// a redirected endpoint is a base URL to correct (the record says where
// it pointed). A client of your own (WithHTTPClient) keeps its policy.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// transport is defaultTransport, dialing through o.dial when a test set
// it.
func (o *openAI) transport() *http.Transport {
	t := defaultTransport()
	if o.dial != nil {
		t.DialContext = o.dial
	}
	return t
}

// concurrencyKey is the context key under which a runner tells the
// provider how many requests it keeps in flight (see WithConcurrency).
type concurrencyKey struct{}

// withConcurrency tells providers that a run keeps at most n requests in
// flight. The OpenAI provider, on its default transport, then uses a
// transport that opens at most n connections (MaxConnsPerHost n) and keeps
// them all idle between requests, so that a run opens at most n
// connections: without the bound, a request that starts while the first
// round's dials are still pending dials too, and when a finished
// request's connection reaches it first, its own dial is a connection too
// many, its setup inside a measured TTFT. n < 1 says nothing.
func withConcurrency(ctx context.Context, n int) context.Context {
	if n < 1 {
		return ctx
	}
	return context.WithValue(ctx, concurrencyKey{}, n)
}

// clientFor returns the client for a run of n requests in flight (0:
// unknown): with the default transport, one bounded to n connections.
func (o *openAI) clientFor(ctx context.Context) *http.Client {
	n, _ := ctx.Value(concurrencyKey{}).(int)
	if !o.ownTransport || n < 1 {
		return o.client
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.bounded[n]
	if c == nil {
		t := o.transport()
		t.MaxConnsPerHost, t.MaxIdleConnsPerHost = n, max(n, DefaultMaxIdleConnsPerHost)
		c = &http.Client{Transport: t, CheckRedirect: noRedirects}
		if o.bounded == nil {
			o.bounded = map[int]*http.Client{}
		}
		o.bounded[n] = c
	}
	return c
}

// CloseIdleConnections closes the idle connections of the provider's own
// transports (see WithHTTPClient); a client of your own is yours to close.
// Call it when a test ends against a server that stays up, so that no
// connection's goroutines outlive the test (goleak).
func (o *openAI) CloseIdleConnections() {
	if !o.ownTransport {
		return
	}
	o.client.CloseIdleConnections()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.bounded {
		c.CloseIdleConnections()
	}
	for _, p := range o.pools {
		p.closeIdle()
	}
}

// readBuffers holds the 32 KiB buffers calls read their bodies through.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

type openAI struct {
	url, endpoint string
	bodyTail      []byte // the request body after the messages (see payload)
	ownTransport  bool   // the client is the default one (see clientFor)
	mu            sync.Mutex
	bounded       map[int]*http.Client // by concurrency, on the default transport
	client        *http.Client
	h1Head        []byte                                                            // the fast path's fixed request head; nil: net/http only (see http1.go)
	h1Addr        string                                                            // the fast path's host:port
	pools         map[int]*h1Pool                                                   // the fast path's, by concurrency as bounded
	noFastPath    bool                                                              // net/http only (tests compare the two)
	dial          func(ctx context.Context, network, addr string) (net.Conn, error) // tests: both paths dial through it
	key, model    string
	header        http.Header
	secrets       []string // longest first
	body          []byte   // WithBody (HTTP only)
	bodyType      string
	// bodyTailPlain is bodyTail without stream_options, sent once
	// noStreamOptions is set (WithoutStreamOptions, or a server's refusal:
	// see OpenAI).
	bodyTailPlain   []byte
	noStreamOptions atomic.Bool
}

// Describe names the endpoint and model (never the key).
func (o *openAI) Describe() Description {
	return Description{Kind: "openai-chat-completions (streaming)", Endpoint: o.endpoint, Model: o.model}
}

// payload encodes the request body as json.Marshal encodes the map
// {"max_tokens", "messages", "model", "stream", "stream_options",
// "temperature"} (keys sorted, max_tokens and temperature only when set,
// stream_options only with streamOptions), without reflection: the part
// after the messages is built once.
func (o *openAI) payload(req Request, streamOptions bool) ([]byte, error) {
	tail := o.bodyTail
	if !streamOptions {
		tail = o.bodyTailPlain
	}
	n := 32 + len(tail)
	for _, m := range req.Messages {
		n += 32 + len(m.Role) + len(m.Content)
	}
	b := make([]byte, 0, n+n/8)
	b = append(b, '{')
	if req.MaxTokens > 0 {
		b = append(b, `"max_tokens":`...)
		b = strconv.AppendInt(b, int64(req.MaxTokens), 10)
		b = append(b, ',')
	}
	b = append(b, `"messages":`...)
	if req.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range req.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"role":`...)
			b = appendJSONString(b, m.Role)
			b = append(b, `,"content":`...)
			b = appendJSONString(b, m.Content)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, tail...)
	if req.Temperature != nil {
		t, err := json.Marshal(*req.Temperature)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"temperature":`...)
		b = append(b, t...)
	}
	return append(b, '}'), nil
}

// appendBodyTail appends what follows the messages in every request body,
// stream_options included or not.
func appendBodyTail(b []byte, model string, streamOptions bool) []byte {
	b = append(b, `,"model":`...)
	b = appendJSONString(b, model)
	b = append(b, `,"stream":true`...)
	if streamOptions {
		b = append(b, `,"stream_options":{"include_usage":true}`...)
	}
	return b
}

// appendJSONString appends s as encoding/json writes it: printable ASCII
// other than " \ < > & as it is, anything else through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7F || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Causes of a call's end, told apart after the fact.
var (
	errFirstTokenTimeout = errors.New("no token before the first-token timeout")
	errTotalTimeout      = errors.New("not done before the total timeout")
)

// streamOptionsNote begins the note of a request resent without
// stream_options (see OpenAI); the disclosure counts the records that
// carry it.
const streamOptionsNote = "resent without stream_options: the server refused it"

// Call streams one chat completion and measures it. Every string the
// record keeps is scrubbed of the provider's secrets (see WithAPIKey).
func (o *openAI) Call(parent context.Context, req Request) Record {
	refused := false
	rec := o.call(parent, req, !o.noStreamOptions.Load(), &refused)
	if refused {
		o.noStreamOptions.Store(true)
		note := fmt.Sprintf("%s (%s: %s); the refused request took %v and is not timed",
			streamOptionsNote, rec.Err, truncate(rec.Detail, 120), rec.Total)
		rec = o.call(parent, req, false, &refused)
		if len(rec.Notes) >= maxNotes {
			rec.Notes = append(rec.Notes[:maxNotes-2:maxNotes-2], "(further notes dropped)")
		}
		rec.Notes = append([]string{note}, rec.Notes...)
	}
	o.scrub(&rec)
	return rec
}

// call sends one request (with stream_options or not) and measures it;
// it sets *refused when the server refused stream_options (see OpenAI).
func (o *openAI) call(parent context.Context, req Request, streamOptions bool, refused *bool) Record {
	rec := Record{ID: req.ID, MaxTokens: req.MaxTokens, TTFB: NotObserved, TTFT: NotObserved,
		FirstAnswer: NotObserved, LastToken: NotObserved}
	payload, err := o.payload(req, streamOptions)
	if err != nil {
		rec.Err, rec.Detail = ClassTransport, "encoding the request: "+err.Error()
		return rec
	}

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	// start is taken last, just before the request goes out: the timers,
	// the trace and the closures below are the client's own work, not the
	// request's time.
	var start time.Time
	total := time.AfterFunc(req.limit(), func() { cancel(errTotalTimeout) })
	defer total.Stop()
	var first *time.Timer
	if req.FirstTokenTimeout > 0 {
		first = time.AfterFunc(req.FirstTokenTimeout, func() { cancel(errFirstTokenTimeout) })
		defer first.Stop()
	}

	// Trace callbacks may run on the transport's goroutines (a dial that
	// loses a race can even finish after Do returns): they write under mu.
	var mu sync.Mutex
	var dnsStart, connStart, tlsStart time.Time
	var dns, conn, tlsd, ttfb time.Duration = 0, 0, 0, NotObserved
	at := func(f func()) { mu.Lock(); f(); mu.Unlock() }
	trace := &httptrace.ClientTrace{
		DNSStart:             func(httptrace.DNSStartInfo) { at(func() { dnsStart = time.Now() }) },
		DNSDone:              func(httptrace.DNSDoneInfo) { at(func() { dns = time.Since(dnsStart) }) },
		ConnectStart:         func(string, string) { at(func() { connStart = time.Now() }) },
		ConnectDone:          func(string, string, error) { at(func() { conn = time.Since(connStart) }) },
		TLSHandshakeStart:    func() { at(func() { tlsStart = time.Now() }) },
		TLSHandshakeDone:     func(tls.ConnectionState, error) { at(func() { tlsd = time.Since(tlsStart) }) },
		GotFirstResponseByte: func() { at(func() { ttfb = time.Since(start) }) },
	}
	setup := func() {
		mu.Lock()
		rec.DNS, rec.Connect, rec.TLS, rec.TTFB = dns, conn, tlsd, ttfb
		mu.Unlock()
	}
	ended := false // rec.Total is final
	end := func(at time.Duration) {
		if !ended {
			rec.Total, ended = at, true
		}
	}
	fail := func(class, detail string) Record {
		end(time.Since(start))
		if rec.Err == "" {
			rec.Err, rec.Detail = class, detail
		}
		if rec.LastToken >= 0 {
			rec.MaxGap = max(rec.MaxGap, rec.Total-rec.LastToken)
		}
		return rec
	}
	// failed classifies a failure by what ended the call.
	failed := func(err error) Record {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errFirstTokenTimeout):
			return fail(ClassFirstTokenTimeout, fmt.Sprintf("no token within %v", req.FirstTokenTimeout))
		case errors.Is(cause, errTotalTimeout):
			return fail(ClassTotalTimeout, fmt.Sprintf("not done within %v", req.limit()))
		case parent.Err() != nil:
			return fail(ClassCanceled, "the run ended: "+context.Cause(parent).Error())
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fail(ClassTruncated, "the connection closed mid-stream")
		}
		// net/http names the URL, query included (where some APIs carry a
		// key): name the redacted endpoint instead.
		var ue *url.Error
		if errors.As(err, &ue) {
			return fail(ClassTransport, ue.Op+" "+o.endpoint+": "+ue.Err.Error())
		}
		return fail(ClassTransport, err.Error())
	}

	// The fast path (http1.go) where it applies, else net/http.
	var resp reply
	start = time.Now()
	rec.Start = start
	if o.h1Head != nil && validHeaderValue(req.ID) {
		resp, err = o.fastSend(ctx, parent, req.ID, payload, trace)
	} else {
		resp, err = o.send(ctx, parent, req.ID, payload, trace)
	}
	setup()
	if err != nil {
		return failed(err)
	}
	// Closing without draining: after [DONE] the client does not wait for
	// a server that keeps the connection open.
	defer resp.body.Close()
	rec.Status = resp.status
	rec.Injected = resp.injected
	if rec.TTFB < 0 {
		rec.TTFB = time.Since(start) // transports without httptrace (in-memory)
	}
	// Bodies are redacted before they are cut short, so that no part of
	// a secret survives a cut.
	if resp.status/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.body, 64<<10))
		if streamOptions && (resp.status == 400 || resp.status == 422) && bytes.Contains(b, []byte("stream_options")) {
			*refused = true
		}
		msg := errorMessage([]byte(o.redact(string(b))))
		if resp.status/100 == 3 && resp.location != "" {
			// Not followed: a redirected POST would time two requests as one.
			msg = "redirected to " + redactURL(o.redact(resp.location)) + " (not followed: give that URL as the base URL)"
		}
		return fail(HTTPClass(resp.status), msg)
	}
	if ct := resp.contentType; !isEventStream(ct) {
		b, err := io.ReadAll(io.LimitReader(resp.body, 64<<10))
		if err != nil && ctx.Err() != nil {
			return failed(err) // a timeout or the run's end, not the answer's fault
		}
		return fail(ClassBadStream, fmt.Sprintf("the answer is %s, not text/event-stream: %s", ct, errorMessage([]byte(o.redact(string(b))))))
	}

	st := newStreamTimer(&rec, o.redact, func() {
		if first != nil {
			first.Stop()
		}
	})
	bp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bp)
	buf := *bp
	eof := false
	fast, _ := resp.body.(*h1Body)
	for !st.stopped() {
		n, err := resp.body.Read(buf)
		eof = err == io.EOF
		now := time.Since(start)
		if fast != nil {
			now = fast.at.Sub(start) // when the bytes left the socket (see h1Body)
		}
		if perr := st.feed(buf[:n], now); perr != nil {
			st.finish()
			return fail(ClassBadStream, perr.Error())
		}
		if st.stopped() {
			break
		}
		if err == io.EOF {
			st.end() // "data: [DONE]" without its blank line
			break
		}
		if err != nil {
			st.finish()
			return failed(err)
		}
	}
	end(st.now())
	if st.st.done && !eof {
		drain(resp.body, buf, cancel)
	}
	st.finish()
	if class, detail := st.verdict(); class != "" {
		return fail(class, detail)
	}
	return rec
}

// send sends the request through net/http.
func (o *openAI) send(ctx, parent context.Context, id string, payload []byte, trace *httptrace.ClientTrace) (reply, error) {
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, o.url, bytes.NewReader(payload))
	if err != nil {
		return reply{}, err
	}
	for k, vs := range o.header {
		hreq.Header[k] = vs
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("X-Request-ID", id)
	if o.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.key)
	}
	resp, err := o.clientFor(parent).Do(hreq)
	if err != nil {
		return reply{}, err
	}
	return replyOf(resp), nil
}

// requestBuffers holds the buffers the fast path writes requests from.
var requestBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// fastSend sends the request through the fast path (http1.go); the error
// names the endpoint as net/http's does.
func (o *openAI) fastSend(ctx, parent context.Context, id string, payload []byte, trace *httptrace.ClientTrace) (reply, error) {
	bp := requestBuffers.Get().(*[]byte)
	b := o.fastRequest((*bp)[:0], id, payload)
	resp, err := o.poolFor(parent).roundTrip(ctx, b, trace)
	clear(b) // the key is in it
	*bp = b[:0]
	requestBuffers.Put(bp)
	if err != nil {
		return resp, &url.Error{Op: "Post", URL: o.endpoint, Err: err}
	}
	return resp, err
}

// doneGrace is how long a call waits, after [DONE], for the end of the
// body, and doneDrain how many bytes it reads: a body read to its end
// returns its connection to the pool, while a body closed early closes
// it, and the next request would pay for a new connection inside its
// TTFT. The record is final before: a server that holds the connection
// open costs the call up to doneGrace, never measured time.
const (
	doneGrace = 20 * time.Millisecond
	doneDrain = 64 << 10
)

var errDrained = errors.New("the body did not end within the grace after [DONE]")

// drain reads what follows [DONE] (the chunked body's end, most often
// already received) and discards it, for at most doneGrace and doneDrain
// bytes; then the body's end is reached or the request is canceled.
func drain(body io.Reader, buf []byte, cancel context.CancelCauseFunc) {
	t := time.AfterFunc(doneGrace, func() { cancel(errDrained) })
	defer t.Stop()
	for n := 0; n < doneDrain; {
		k, err := body.Read(buf)
		if err != nil {
			return
		}
		n += k
	}
}

// streamTimer times an OpenAI-style chat-completions event stream as its
// bytes arrive, into a Record whose durations count from the request's
// start: TTFT, first answer, every gap and the longest, token events,
// usage, model, finish reason and the answer. It is the one decoder behind
// both the OpenAI provider (which reads the body itself) and Instrument
// (which times the bytes as the user's client reads them).
type streamTimer struct {
	parser  sseParser
	st      stream
	redact  func(string) string
	onFirst func() // called at the first token; may be nil
	emit    rawEmit
}

// newStreamTimer times a stream into rec, whose token clocks must start
// NotObserved. redact scrubs event data before anything keeps or cuts it.
func newStreamTimer(rec *Record, redact func(string) string, onFirst func()) *streamTimer {
	t := &streamTimer{st: stream{rec: rec}, redact: redact, onFirst: onFirst}
	t.emit = t.onRaw
	return t
}

// feed parses bytes that a read returned at now (from the request's
// start); now is kept even when b is empty, as the time the stream ended.
// The error is for an event beyond the size limit (a bad stream).
func (t *streamTimer) feed(b []byte, now time.Duration) error {
	t.st.now = now
	if len(b) == 0 {
		return nil
	}
	return t.parser.feed(b, t.emit)
}

// end is called at EOF: it dispatches an event left without its blank
// line ("data: [DONE]" at the very end).
func (t *streamTimer) end() { t.parser.end(t.emit) }

// stopped reports [DONE] or an error: nothing after it counts.
func (t *streamTimer) stopped() bool { return t.st.stop }

// now is the time of the last read fed.
func (t *streamTimer) now() time.Duration { return t.st.now }

// finish stores the answer (see stream.finish).
func (t *streamTimer) finish() { t.st.finish() }

// onRaw decodes one event (its data valid only during the call) and times
// it: the common chunk through the fast path (chunk.go), anything else,
// and any event that holds a secret, through encoding/json (stream.event).
func (t *streamTimer) onRaw(typ string, data []byte, id string) {
	st, rec := &t.st, t.st.rec
	if st.stop {
		return // nothing after [DONE] or an error counts
	}
	var token bool
	fast := false
	redacted, clean := t.clean(data)
	if clean && typ != "error" {
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			st.done, st.stop = true, true
			return
		}
		token, fast = st.fastEvent(data)
		if fast && fastPathCheck != nil {
			fastPathCheck(data)
		}
	}
	if !fast {
		if clean {
			redacted = string(data)
		}
		token = st.event(Event{Type: typ, Data: redacted, ID: id}) // redacted before any note or detail cuts it
	}
	if !token {
		return
	}
	if rec.TTFT < 0 {
		rec.TTFT = st.now
		if t.onFirst != nil {
			t.onFirst()
		}
	} else {
		gap := st.now - rec.LastToken
		rec.Gaps.Add(gap)
		rec.MaxGap = max(rec.MaxGap, gap)
	}
	rec.LastToken = st.now
	rec.TokenEvents++
}

// clean reports whether data holds no secret (redaction leaves it as it
// is); otherwise it returns the redacted text. The redactor is handed a
// view of data that it does not keep (redactSecrets only searches it),
// so that the common case allocates nothing.
func (t *streamTimer) clean(data []byte) (redacted string, clean bool) {
	if len(data) == 0 {
		return "", true
	}
	view := unsafe.String(&data[0], len(data))
	r := t.redact(view)
	if len(r) == len(view) && unsafe.StringData(r) == unsafe.StringData(view) {
		return "", true
	}
	return strings.Clone(r), false
}

// fastPathCheck, when set (by the package's tests), is called with every
// event the fast path decoded, to check it against encoding/json.
var fastPathCheck func(data []byte)

// verdict judges a stream that ended (EOF or [DONE]; call finish first):
// the error class and detail, or "" for a good answer.
func (t *streamTimer) verdict() (class, detail string) {
	st, rec := &t.st, t.st.rec
	switch {
	case st.bad != "":
		return ClassBadStream, st.bad
	case !st.done:
		return ClassTruncated, "the stream ended without [DONE]"
	case rec.FinishReason == "content_filter":
		return ClassContentFilter, fmt.Sprintf("the provider's content filter stopped the answer (finish_reason content_filter) after %d token events: a policy outcome, not latency", rec.TokenEvents)
	case st.refusal.Len() > 0:
		return ClassRefusal, "refused: " + truncate(t.redact(st.refusal.String()), 200)
	case rec.TokenEvents == 0:
		return ClassEmptyStream, "the stream ended without a token"
	case rec.FirstAnswer < 0:
		return ClassEmptyAnswer, fmt.Sprintf("%d token events but no answer content or tool call (finish_reason %q)", rec.TokenEvents, rec.FinishReason)
	}
	return "", ""
}

// isEventStream reports whether a Content-Type is text/event-stream (in any
// case, parameters allowed). A response without a Content-Type is given
// the benefit of the doubt.
func isEventStream(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
	}
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

// isJSON reports whether a Content-Type is application/json or a +json
// type (in any case, parameters allowed).
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// stream is the state of one chat-completions stream being decoded.
type stream struct {
	rec      *Record
	now      time.Duration // time of the read being parsed
	content  strings.Builder
	refusal  strings.Builder
	bad      string // why the stream is bad ("" when it is not)
	done     bool   // [DONE] seen
	stop     bool   // stop reading: [DONE] or an error
	others   bool   // a choice other than index 0 was seen
	notesCut bool
	last     chunkTemplate // the last chunk scanned whole (chunk.go)
	// toolAt is the tool call each tool-call index is on (see toolDelta);
	// nil until the first tool-call delta.
	toolAt    map[int64]toolSlot
	toolNamed bool // the first tool call's name arrived (Record.FirstToolCall)
}

// toolSlot is the tool call a tool-call index is on: its number (from 1,
// in the order the calls began), its id and whether its name arrived.
type toolSlot struct {
	call  int
	id    string
	named bool
}

// toolDelta applies one element of a delta's tool_calls: its index, its
// id ("" when absent) and whether it carried a non-empty function name
// and arguments. It reports whether the element carried anything (an id,
// a name or arguments): then it is a token of the answer. A call is
// counted at its index's first element that carries anything; an
// element with a name and an id other than the one its index already
// has, on an index whose call was named, begins a new call there (some
// servers, Ollama's among them, send parallel calls all at index 0).
// The first call's name sets FirstToolCall, and each of its arguments
// deltas ToolArgsDone.
func (s *stream) toolDelta(index int64, id string, name, args bool) (token bool) {
	if id == "" && !name && !args {
		return false
	}
	rec := s.rec
	slot, ok := s.toolAt[index]
	if !ok || name && slot.named && id != "" && slot.id != "" && id != slot.id {
		rec.ToolCalls++
		slot = toolSlot{call: rec.ToolCalls}
	}
	if id != "" {
		slot.id = id
	}
	if name {
		slot.named = true
	}
	if s.toolAt == nil {
		s.toolAt = map[int64]toolSlot{}
	}
	s.toolAt[index] = slot
	if slot.call == 1 {
		if name && !s.toolNamed {
			rec.FirstToolCall, s.toolNamed = s.now, true
		}
		if args {
			rec.ToolArgsDone = s.now
		}
	}
	if rec.FirstAnswer < 0 {
		rec.FirstAnswer = s.now
	}
	return true
}

// maxNotes bounds Record.Notes.
const maxNotes = 10

// note adds a line to the record's notes, once.
func (s *stream) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if slices.Contains(s.rec.Notes, n) || s.notesCut {
		return
	}
	if len(s.rec.Notes) == maxNotes-1 {
		s.rec.Notes, s.notesCut = append(s.rec.Notes, "(further notes dropped)"), true
		return
	}
	s.rec.Notes = append(s.rec.Notes, n)
}

// finish stores the answer text (without the builder's spare capacity).
func (s *stream) finish() {
	s.rec.Content = strings.Clone(s.content.String())
	if s.others {
		s.note("choices other than index 0 ignored (n > 1): only the first choice is measured")
	}
}

// rawChunk is a chat.completion.chunk decoded field by field, so that one
// field of an unexpected type loses that field only. Usage is read where
// vendors put it: "usage", or Groq's "x_groq": {"usage": ...} ("usage"
// wins when a chunk has both); a usage on every chunk (as Gemini sends
// it) is read on every chunk, the last one winning.
type rawChunk struct {
	Model   json.RawMessage `json:"model"`
	Choices json.RawMessage `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Object  json.RawMessage `json:"object"`
	Message json.RawMessage `json:"message"`
	XGroq   json.RawMessage `json:"x_groq"`
}

type rawChoice struct {
	Index        json.RawMessage `json:"index"`
	Delta        json.RawMessage `json:"delta"`
	FinishReason json.RawMessage `json:"finish_reason"`
}

type rawDelta struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	Refusal          json.RawMessage `json:"refusal"`
	ToolCalls        json.RawMessage `json:"tool_calls"`
}

// rawToolCall is one element of a delta's (or a message's) tool_calls.
type rawToolCall struct {
	Index    json.RawMessage `json:"index"`
	ID       json.RawMessage `json:"id"`
	Function json.RawMessage `json:"function"`
}

type rawFunction struct {
	Name      json.RawMessage `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type rawUsage struct {
	PromptTokens            json.RawMessage `json:"prompt_tokens"`
	CompletionTokens        json.RawMessage `json:"completion_tokens"`
	PromptTokensDetails     json.RawMessage `json:"prompt_tokens_details"`
	CompletionTokensDetails json.RawMessage `json:"completion_tokens_details"`
}

// absent reports whether a field was missing or null.
func absent(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// event decodes one SSE event and reports whether it carried a token of
// choice 0 (answer, reasoning or refusal).
func (s *stream) event(ev Event) (token bool) {
	if ev.Type == "error" {
		s.bad, s.stop = "error event: "+eventError(ev.Data), true
		return false
	}
	if strings.TrimSpace(ev.Data) == "[DONE]" {
		s.done, s.stop = true, true
		return false
	}
	var ch rawChunk
	if err := json.Unmarshal([]byte(ev.Data), &ch); err != nil {
		if s.bad == "" {
			s.bad = "malformed event: " + err.Error()
		}
		return false
	}
	if !absent(ch.Error) {
		s.bad, s.stop = "error event: "+errorText(ch.Error), true
		return false
	}
	var object string
	if json.Unmarshal(ch.Object, &object) == nil && object == "error" {
		s.bad, s.stop = "error event: "+errorText(ch.Message), true
		return false
	}
	if !absent(ch.Model) {
		var m string
		if json.Unmarshal(ch.Model, &m) != nil {
			s.note("model ignored: not a string (%s)", truncate(string(ch.Model), 40))
		} else if m != "" {
			s.rec.Model = m
		}
	}
	if !absent(ch.XGroq) {
		var xg struct {
			Usage json.RawMessage `json:"usage"`
		}
		if json.Unmarshal(ch.XGroq, &xg) != nil {
			s.note("x_groq ignored: not an object (%s)", truncate(string(ch.XGroq), 40))
		} else {
			s.usage(xg.Usage)
		}
	}
	s.usage(ch.Usage)
	if absent(ch.Choices) {
		return false
	}
	var choices []json.RawMessage
	if json.Unmarshal(ch.Choices, &choices) != nil {
		s.note("choices ignored: not an array (%s)", truncate(string(ch.Choices), 40))
		return false
	}
	for _, raw := range choices {
		var c rawChoice
		if json.Unmarshal(raw, &c) != nil {
			s.note("a choice ignored: not an object (%s)", truncate(string(raw), 40))
			continue
		}
		if !absent(c.Index) {
			var i int
			if json.Unmarshal(c.Index, &i) != nil {
				s.note("choice index ignored: not an integer (%s); taken as 0", truncate(string(c.Index), 40))
			} else if i != 0 {
				s.others = true
				continue
			}
		}
		if !absent(c.FinishReason) {
			var fr string
			if json.Unmarshal(c.FinishReason, &fr) != nil {
				s.note("finish_reason ignored: not a string (%s)", truncate(string(c.FinishReason), 40))
			} else {
				s.rec.FinishReason = fr
			}
		}
		if absent(c.Delta) {
			continue
		}
		var d rawDelta
		if json.Unmarshal(c.Delta, &d) != nil {
			s.note("delta ignored: not an object (%s)", truncate(string(c.Delta), 40))
			continue
		}
		if text := s.text("delta.content", d.Content); text != "" {
			token = true
			s.content.WriteString(text)
			if s.rec.FirstAnswer < 0 {
				s.rec.FirstAnswer = s.now
			}
		}
		if s.text("delta.reasoning_content", d.ReasoningContent) != "" || s.text("delta.reasoning", d.Reasoning) != "" {
			token = true
		}
		if text := s.text("delta.refusal", d.Refusal); text != "" {
			token = true
			s.refusal.WriteString(text)
			if s.rec.FirstAnswer < 0 {
				s.rec.FirstAnswer = s.now
			}
		}
		if s.toolCalls(d.ToolCalls) {
			token = true
		}
	}
	return token
}

// toolCalls applies a delta's tool_calls (see toolDelta) and reports
// whether any element carried a token. An element or field of an
// unexpected type is ignored with a note; an index that is absent or
// not an integer is taken as 0.
func (s *stream) toolCalls(raw json.RawMessage) (token bool) {
	if absent(raw) {
		return false
	}
	var calls []json.RawMessage
	if json.Unmarshal(raw, &calls) != nil {
		s.note("delta.tool_calls ignored: not an array (%s)", truncate(string(raw), 40))
		return false
	}
	for _, rc := range calls {
		var c rawToolCall
		if json.Unmarshal(rc, &c) != nil {
			s.note("a tool call ignored: not an object (%s)", truncate(string(rc), 40))
			continue
		}
		var index int64
		if !absent(c.Index) && json.Unmarshal(c.Index, &index) != nil {
			s.note("tool call index ignored: not an integer (%s); taken as 0", truncate(string(c.Index), 40))
			index = 0
		}
		id := s.plain("tool call id", c.ID)
		var name, args string
		if !absent(c.Function) {
			var f rawFunction
			if json.Unmarshal(c.Function, &f) != nil {
				s.note("tool call function ignored: not an object (%s)", truncate(string(c.Function), 40))
			} else {
				name = s.plain("tool call function.name", f.Name)
				args = s.plain("tool call function.arguments", f.Arguments)
			}
		}
		if s.toolDelta(index, id, name != "", args != "") {
			token = true
		}
	}
	return token
}

// plain decodes a field that must be a string (or absent, or null: "");
// anything else is ignored with a note.
func (s *stream) plain(field string, raw json.RawMessage) string {
	if absent(raw) {
		return ""
	}
	var str string
	if json.Unmarshal(raw, &str) != nil {
		s.note("%s ignored: not a string (%s)", field, truncate(string(raw), 40))
		return ""
	}
	return str
}

// text decodes a delta's text: a string, or an array of typed parts
// ([{"type":"text","text":"..."}]) whose texts are joined. Anything else
// is ignored with a note.
func (s *stream) text(field string, raw json.RawMessage) string {
	if absent(raw) {
		return ""
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) == nil {
		var sb strings.Builder
		for _, p := range parts {
			var part struct {
				Text json.RawMessage `json:"text"`
			}
			var t string
			if json.Unmarshal(p, &part) == nil && json.Unmarshal(part.Text, &t) == nil {
				sb.WriteString(t)
			}
		}
		return sb.String()
	}
	s.note("%s ignored: neither a string nor an array of parts (%s)", field, truncate(string(raw), 40))
	return ""
}

// completion reads a non-streamed chat.completion body (a JSON answer,
// as Instrument sees it from a client that did not stream) into the
// record, as the stream's decoder reads chunks: the model, usage (also in
// x_groq), finish_reason and choice 0's message: its content (a string or
// text parts), refusal and tool_calls (each element a call; the first
// one's name and arguments arrived with the body, at now, which sets
// FirstToolCall and ToolArgsDone). The token clocks stay NotObserved: a
// whole answer in one body has no first token to time. It returns the
// verdict: content_filter, refusal, empty_answer (no content and no tool
// call), bad_stream for an error object; "" for a good answer. ok is false,
// and nothing changed, when body is not a chat completion (not a JSON
// object with choices, or one cut short): then it judges nothing.
func (s *stream) completion(body []byte) (class, detail string, ok bool) {
	var c struct {
		rawChunk
		Choices []json.RawMessage `json:"choices"`
	}
	if json.Unmarshal(body, &c) != nil {
		return "", "", false
	}
	if !absent(c.Error) {
		return ClassBadStream, "error object in a 2xx answer: " + errorText(c.Error), true
	}
	if c.Choices == nil {
		return "", "", false
	}
	if !absent(c.Model) {
		var m string
		if json.Unmarshal(c.Model, &m) == nil && m != "" {
			s.rec.Model = m
		}
	}
	if !absent(c.XGroq) {
		var xg struct {
			Usage json.RawMessage `json:"usage"`
		}
		if json.Unmarshal(c.XGroq, &xg) == nil {
			s.usage(xg.Usage)
		}
	}
	s.usage(c.Usage)
	var message, refusal string
	for _, raw := range c.Choices {
		var ch struct {
			Index        json.RawMessage `json:"index"`
			Message      json.RawMessage `json:"message"`
			FinishReason json.RawMessage `json:"finish_reason"`
		}
		var i int
		if json.Unmarshal(raw, &ch) != nil || !absent(ch.Index) && (json.Unmarshal(ch.Index, &i) != nil || i != 0) {
			s.others = true
			continue
		}
		if !absent(ch.FinishReason) {
			s.rec.FinishReason = s.plain("finish_reason", ch.FinishReason)
		}
		var m struct {
			Content   json.RawMessage `json:"content"`
			Refusal   json.RawMessage `json:"refusal"`
			ToolCalls []rawToolCall   `json:"tool_calls"`
		}
		if absent(ch.Message) || json.Unmarshal(ch.Message, &m) != nil {
			s.note("message ignored: not an object")
			continue
		}
		message += s.text("message.content", m.Content)
		refusal += s.text("message.refusal", m.Refusal)
		for _, tc := range m.ToolCalls {
			var f rawFunction
			if !absent(tc.Function) && json.Unmarshal(tc.Function, &f) != nil {
				s.note("tool call function ignored: not an object (%s)", truncate(string(tc.Function), 40))
			}
			name, args := s.plain("tool call function.name", f.Name), s.plain("tool call function.arguments", f.Arguments)
			if s.plain("tool call id", tc.ID) == "" && name == "" && args == "" {
				continue
			}
			s.rec.ToolCalls++
			if s.rec.ToolCalls == 1 {
				s.rec.FirstToolCall, s.rec.ToolArgsDone = s.now, s.now
			}
		}
	}
	s.content.WriteString(message)
	s.refusal.WriteString(refusal)
	s.finish()
	switch {
	case s.rec.FinishReason == "content_filter":
		return ClassContentFilter, "the provider's content filter stopped the answer (finish_reason content_filter): a policy outcome, not latency", true
	case refusal != "":
		return ClassRefusal, "refused: " + truncate(refusal, 200), true
	case message == "" && s.rec.ToolCalls == 0:
		return ClassEmptyAnswer, fmt.Sprintf("no answer content or tool call (finish_reason %q)", s.rec.FinishReason), true
	}
	return "", "", true
}

// maxCount bounds a usage count: anything above is not a token count.
const maxCount = 1<<31 - 1

// usage takes the token counts of a usage object; a count that is not a
// whole number in [0, 2^31) is ignored with a note.
func (s *stream) usage(raw json.RawMessage) {
	if absent(raw) {
		return
	}
	var u rawUsage
	if json.Unmarshal(raw, &u) != nil {
		s.note("usage ignored: not an object (%s)", truncate(string(raw), 40))
		return
	}
	if n, ok := s.count("usage.prompt_tokens", u.PromptTokens); ok {
		s.rec.PromptTokens, s.rec.UsageReported = n, true
	}
	if n, ok := s.count("usage.completion_tokens", u.CompletionTokens); ok {
		s.rec.CompletionTokens, s.rec.UsageReported = n, true
	}
	var details struct {
		CachedTokens    json.RawMessage `json:"cached_tokens"`
		ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
	}
	if !absent(u.PromptTokensDetails) {
		if json.Unmarshal(u.PromptTokensDetails, &details) != nil {
			s.note("usage.prompt_tokens_details ignored: not an object")
		} else if n, ok := s.count("usage.prompt_tokens_details.cached_tokens", details.CachedTokens); ok {
			s.rec.CachedTokens, s.rec.CachedReported = n, true
		}
	}
	details.CachedTokens, details.ReasoningTokens = nil, nil
	if !absent(u.CompletionTokensDetails) {
		if json.Unmarshal(u.CompletionTokensDetails, &details) != nil {
			s.note("usage.completion_tokens_details ignored: not an object")
		} else if n, ok := s.count("usage.completion_tokens_details.reasoning_tokens", details.ReasoningTokens); ok {
			s.rec.ReasoningTokens = n
		}
	}
}

// count decodes a token count; ok is false when it is absent or not a
// count (noted).
func (s *stream) count(field string, raw json.RawMessage) (n int, ok bool) {
	if absent(raw) {
		return 0, false
	}
	v := string(raw)
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		if i >= 0 && i <= maxCount {
			return int(i), true
		}
	} else if f, err := strconv.ParseFloat(v, 64); err == nil && f == math.Trunc(f) && f >= 0 && f <= maxCount {
		return int(f), true
	}
	s.note("%s = %s ignored: not a token count", field, truncate(v, 40))
	return 0, false
}

// eventError is the message of an SSE error event's data: OpenAI's error
// object, or the data itself.
func eventError(data string) string {
	if msg, ok := jsonError([]byte(data)); ok {
		return msg
	}
	return truncate(strings.TrimSpace(data), 200)
}

// errorText renders an error field: a string, an object with a message
// (and type), or the raw JSON.
func errorText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return truncate(s, 200)
	}
	var e struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		if e.Type != "" {
			return truncate(e.Type+": "+e.Message, 200)
		}
		return truncate(e.Message, 200)
	}
	return truncate(string(raw), 200)
}

// jsonError extracts an error message from a JSON body: {"error": {...}},
// {"error": "..."}, or vLLM's {"object": "error", "message": ...}.
func jsonError(b []byte) (string, bool) {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Object  string          `json:"object"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(b, &e) != nil {
		return "", false
	}
	if !absent(e.Error) {
		return errorText(e.Error), true
	}
	if e.Object == "error" && !absent(e.Message) {
		return errorText(e.Message), true
	}
	return "", false
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut
// with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// errorMessage extracts the error message from a JSON error body (see
// jsonError), or gives the first 200 bytes of the body.
func errorMessage(b []byte) string {
	if msg, ok := jsonError(b); ok {
		return msg
	}
	return truncate(strings.TrimSpace(string(b)), 200)
}

// minSecretLen is the shortest secret searched for in what a server sends
// back: shorter values would mangle ordinary text (see WithAPIKey).
const minSecretLen = 8

// secretsOf lists the values to redact: the API key, every header value,
// the base URL's user info and every query value (decoded and as sent),
// each at least minSecretLen bytes, longest first (so that a secret that
// contains another is redacted whole).
func secretsOf(key string, h http.Header, u *url.URL) []string {
	var out []string
	add := func(v string) {
		if len(v) >= minSecretLen && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	add(key)
	for _, vs := range h {
		for _, v := range vs {
			add(v)
		}
	}
	if u.User != nil {
		add(u.User.Username())
		if pw, ok := u.User.Password(); ok {
			add(pw)
		}
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		_, raw, _ := strings.Cut(kv, "=")
		add(raw)
		if v, err := url.QueryUnescape(raw); err == nil {
			add(v)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// redact replaces every secret in s by "[redacted]".
func (o *openAI) redact(s string) string { return redactSecrets(o.secrets, s) }

// redactSecrets replaces every one of secrets (longest first) in s by
// "[redacted]".
func redactSecrets(secrets []string, s string) string {
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

// scrub redacts every string of a record that came from the server or
// the network: the model name, the answer (assembled, so a key split
// across chunks is caught), the detail, the notes, the finish reason and
// the fake's injection note.
func (o *openAI) scrub(rec *Record) { scrubRecord(o.secrets, rec) }

// scrubRecord redacts secrets from every string of rec that came from a
// server, the network or the user's code (see openAI.scrub), its attempts'
// details included.
func scrubRecord(secrets []string, rec *Record) {
	if len(secrets) == 0 {
		return
	}
	for _, p := range []*string{&rec.Model, &rec.Content, &rec.Detail, &rec.FinishReason, &rec.Injected} {
		*p = redactSecrets(secrets, *p)
	}
	for i := range rec.Notes {
		rec.Notes[i] = redactSecrets(secrets, rec.Notes[i])
	}
	for i := range rec.Attempts {
		rec.Attempts[i].Detail = redactSecrets(secrets, rec.Attempts[i].Detail)
	}
}

// redactURL drops credentials and the query from a URL for display.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
