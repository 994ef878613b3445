package latencytest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailguard/tailguard/internal/h1"
	"github.com/tailguard/tailguard/internal/redact"
	"github.com/tailguard/tailguard/protocol"
)

// LLMProvider is the provider OpenAI, Responses and Anthropic return: an
// LLM API spoken over HTTP, one protocol each, streamed unless
// WithoutStreaming. Its methods are safe for concurrent use.
type LLMProvider struct {
	url, endpoint string
	ownTransport  bool // the client is the default one (see clientFor)
	mu            sync.Mutex
	bounded       map[int]*http.Client // by concurrency, on the default transport
	users         map[int]int          // runs using the pools of each concurrency (see hold)
	client        *http.Client
	h1req         *h1.Request                                                       // the fast path's fixed request; nil: net/http only (internal/h1)
	pools         map[int]*h1.Pool                                                  // the fast path's, by concurrency as bounded
	noFastPath    bool                                                              // net/http only (tests compare the two)
	dial          func(ctx context.Context, network, addr string) (net.Conn, error) // tests: both paths dial through it
	key, model    string
	header        http.Header
	secrets       []string // longest first
	body          []byte   // WithBody (HTTP only)
	bodyType      string
	// noStreamOptions is set once the protocol's usage field
	// (protocol.Protocol.UsageKey) is no longer sent (WithoutStreamOptions,
	// or a server's refusal: see OpenAI).
	noStreamOptions atomic.Bool
	chatStream      bool               // HTTP only: WithOpenAIStream
	api             *protocol.Protocol // the protocol spoken (nil: HTTP)
	noStream        bool               // WithoutStreaming (whole.go)
	signing         *protocol.Signing  // signs every request (protocol.Protocol.Signer); nil: unsigned
	u               *url.URL           // the request URL, for the signer
	bodies          bodyCache          // prebuilt bodies of mix prompts (promptbody.go)
}

// transport is defaultTransport, dialing through o.dial when a test set
// it, its connections stamping their reads (see h1.StampConn) and timing
// their lag (see lagDial).
func (o *LLMProvider) transport() *http.Transport {
	t := defaultTransport()
	if o.dial != nil {
		t.DialContext = o.dial
	}
	t.DialContext = h1.StampingDial(lagDial(t.DialContext)) // reads timed against the socket (readlag.go)
	return t
}

// hold counts a run using the pools for n requests in flight.
func (o *LLMProvider) hold(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.users == nil {
		o.users = map[int]int{}
	}
	o.users[n]++
}

// release ends a run's use of the pools for n requests in flight; the
// last run's end closes their idle connections (a connection returned
// later is closed, not kept: see h1.Pool.CloseIdle and net/http's
// CloseIdleConnections).
func (o *LLMProvider) release(n int) {
	o.mu.Lock()
	o.users[n]--
	if o.users[n] > 0 {
		o.mu.Unlock()
		return
	}
	delete(o.users, n)
	c, p := o.bounded[n], o.pools[n]
	o.mu.Unlock()
	if c != nil {
		c.CloseIdleConnections()
	}
	if p != nil {
		p.CloseIdle()
	}
}

// clientFor returns the client for a run of n requests in flight (0:
// unknown): with the default transport, one bounded to n connections.
func (o *LLMProvider) clientFor(ctx context.Context) *http.Client {
	if !o.ownTransport {
		return o.client
	}
	n := concurrencyOf(ctx, o)
	if n < 1 {
		return o.client
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.bounded[n]
	if c == nil {
		t := o.transport()
		t.MaxConnsPerHost, t.MaxIdleConnsPerHost = n, max(n, defaultMaxIdleConnsPerHost)
		c = &http.Client{Transport: t, CheckRedirect: noRedirects}
		if o.bounded == nil {
			o.bounded = map[int]*http.Client{}
		}
		o.bounded[n] = c
	}
	return c
}

// poolFor returns the fast path's pool for a run of n requests in flight
// (0: unknown, no bound), as clientFor does for net/http.
func (o *LLMProvider) poolFor(ctx context.Context) *h1.Pool {
	n := concurrencyOf(ctx, o)
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.pools[n]
	if p == nil {
		p = &h1.Pool{Addr: o.h1req.Addr, Limit: n, MaxIdle: max(n, defaultMaxIdleConnsPerHost), Dialer: lagDial(o.dial)}
		if o.pools == nil {
			o.pools = map[int]*h1.Pool{}
		}
		o.pools[n] = p
	}
	return p
}

// CloseIdleConnections closes the idle connections of the provider's own
// transports (see WithHTTPClient); a client of your own is yours to close.
// A run closes those of the pool it used when it ends (see
// withConcurrency); call it when a test ends against a server that stays
// up, so that no connection of calls outside a run outlives the test
// (goleak).
func (o *LLMProvider) CloseIdleConnections() {
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
		p.CloseIdle()
	}
}

// Describe names the endpoint, model and client (never the key).
func (o *LLMProvider) Describe() Description {
	kind := cmp.Or(o.api.Kind, string(o.api.Name)) + " (streaming)"
	if o.noStream {
		kind = cmp.Or(o.api.Kind, string(o.api.Name)) + " (not streaming)"
	}
	client := o.clientName()
	if o.signing != nil {
		client += "; each request signed (" + o.signing.Describe + ") before its clock starts: signing is in no latency"
	}
	return Description{Kind: kind, Endpoint: o.endpoint, Model: o.model, Client: client}
}

// clientName says which client measures the provider's requests and what
// it times (see Description.Client).
func (o *LLMProvider) clientName() string {
	switch {
	case !o.ownTransport:
		return "your http.Client (events timed when its body reads return)"
	case o.h1req != nil:
		return "tailguard's HTTP/1.1 client (events timed at the socket read that brought them)"
	case o.noFastPath:
		return "net/http, as WithNetHTTP asks (events timed at the socket read that brought them)"
	}
	return "net/http (events timed at the socket read that brought them)"
}

// payload encodes the request body with the protocol's Body.
func (o *LLMProvider) payload(req Request, streamOptions bool) ([]byte, error) {
	return o.api.Body(protocol.Request{Model: o.model, Messages: req.Messages, MaxTokens: req.MaxTokens,
		Temperature: req.Temperature, Stream: !o.noStream, Usage: streamOptions})
}

// Call sends one request (see OpenAI, Responses, Anthropic) and measures
// it. Every string the
// record keeps is scrubbed of the provider's secrets (see WithAPIKey).
func (o *LLMProvider) Call(parent context.Context, req Request) Record {
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
	enforceLimits(req, &rec) // deadlines.go: a request past its limit is no success
	o.scrub(&rec)
	return rec
}

// call sends one request (with stream_options or not) and measures it;
// it sets *refused when the server refused stream_options (see OpenAI).
func (o *LLMProvider) call(parent context.Context, req Request, streamOptions bool, refused *bool) Record {
	rec := Record{ID: req.ID, MaxTokens: req.MaxTokens, TTFB: NotObserved, TTFT: NotObserved,
		FirstAnswer: NotObserved, LastToken: NotObserved}
	payload, err := o.requestBody(req, streamOptions)
	if err != nil {
		rec.Err, rec.Detail = ClassTransport, "encoding the request: "+err.Error()
		return rec
	}
	// Signed before the clock starts: signing is in no latency.
	signed, err := o.sign(parent, req.ID, payload)
	if err != nil {
		rec.Err, rec.Detail = ClassTransport, "signing the request: "+err.Error()
		return rec
	}

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	// start is taken before the timers are armed, so that a request its
	// timeout ended has a Total of at least its limit (a timer armed
	// first would give it less under a busy scheduler); the trace and the
	// closures below cost well under a microsecond of it.
	start := time.Now()
	rec.Start = start
	total := afterFunc(parent, req.limit(), func() { cancel(errTotalTimeout) })
	defer total.Stop()
	var first pendingFunc // zero: no first-token timeout
	if req.FirstTokenTimeout > 0 {
		first = afterFunc(parent, req.FirstTokenTimeout, func() { cancel(errFirstTokenTimeout) })
		defer first.Stop()
	}
	// A cancel on purpose (Cancel): its instant, from start (cancel.go).
	var cancelAt atomic.Int64
	var byTime pendingFunc // zero: no cancel by time
	if req.CancelAfter > 0 {
		byTime = afterFunc(parent, req.CancelAfter, func() { cancelAt.Store(int64(time.Since(start))); cancel(errCancelled) })
		defer byTime.Stop()
	}
	var body io.Closer // the answer's body, once there is one

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
	// cancelled ends a call the client cancelled on purpose at at: it
	// closes the connection and times the close.
	cancelled := func(at time.Duration) Record {
		if body != nil {
			_ = body.Close()
		}
		closed := time.Since(start)
		end(closed)
		rec.CancelAt, rec.CancelClose = at, max(closed-at, 0)
		rec.Err, rec.Detail = classCancelled, fmt.Sprintf("cancelled by the client on purpose at %v (after %d token events); the connection closed %v later", at, rec.TokenEvents, rec.CancelClose)
		return rec
	}
	// failed classifies a failure by what ended the call.
	failed := func(err error) Record {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errCancelled):
			return cancelled(time.Duration(cancelAt.Load()))
		case errors.Is(cause, errFirstTokenTimeout):
			return fail(ClassFirstTokenTimeout, fmt.Sprintf("no token within %v", req.FirstTokenTimeout))
		case errors.Is(cause, errTotalTimeout):
			return fail(ClassTotalTimeout, fmt.Sprintf("not done within %v", req.limit()))
		case parent.Err() != nil:
			return fail(ClassCanceled, "the run ended: "+context.Cause(parent).Error())
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fail(ClassTruncated, "the connection closed mid-stream")
		case errors.As(err, new(*h1.EncodingError)):
			return fail(ClassBadStream, err.Error())
		}
		// net/http names the URL, query included (where some APIs carry a
		// key): name the redacted endpoint instead.
		var ue *url.Error
		if errors.As(err, &ue) {
			return fail(ClassTransport, ue.Op+" "+o.endpoint+": "+ue.Err.Error())
		}
		return fail(ClassTransport, err.Error())
	}

	// The fast path (internal/h1) where it applies, else net/http.
	var resp h1.Reply
	if o.h1req != nil && h1.ValidHeaderValue(req.ID) {
		resp, err = o.fastSend(ctx, parent, req.ID, payload, trace, signed)
	} else {
		resp, err = o.send(ctx, parent, req.ID, payload, trace, signed)
	}
	setup()
	if err != nil {
		return failed(err)
	}
	// Closing without draining: after [DONE] the client does not wait for
	// a server that keeps the connection open.
	defer resp.Body.Close()
	body = resp.Body
	rec.Status = resp.Status
	rec.Injected = resp.Injected
	if !resp.HeadAt.IsZero() {
		rec.TTFB = resp.HeadAt.Sub(start) // the final head's read (see reply)
	} else if rec.TTFB < 0 {
		rec.TTFB = time.Since(start) // transports without httptrace (in-memory)
	}
	// Bodies are redacted before they are cut short, so that no part of
	// a secret survives a cut.
	if resp.Status/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if k := o.api.UsageKey; streamOptions && k != "" && (resp.Status == 400 || resp.Status == 422) && bytes.Contains(b, []byte(k)) {
			*refused = true
		}
		msg := protoErrorMessage(o.api, []byte(o.redact(string(b))))
		if resp.Status/100 == 3 && resp.Location != "" {
			// Not followed: a redirected POST would time two requests as one.
			msg = "redirected to " + redact.URL(o.redact(resp.Location)) + " (not followed: give that URL as the base URL)"
		}
		return fail(HTTPClass(resp.Status), msg)
	}
	if o.noStream {
		return o.callWhole(&rec, resp.Body, start, end, fail, failed)
	}
	if ct := resp.ContentType; o.api.Framing == protocol.SSE && o.api.NewFramer == nil && !isEventStream(ct) {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if err != nil && ctx.Err() != nil {
			return failed(err) // a timeout or the run's end, not the answer's fault
		}
		return fail(ClassBadStream, fmt.Sprintf("the answer is %s, not text/event-stream: %s", ct, protoErrorMessage(o.api, []byte(o.redact(string(b))))))
	}
	if st := o.api.StreamType; st != "" && o.api.NewFramer != nil && resp.ContentType != "" && !o.api.IsStream(resp.ContentType) {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if err != nil && ctx.Err() != nil {
			return failed(err)
		}
		return fail(ClassBadStream, fmt.Sprintf("the answer is %s, not %s: %s", resp.ContentType, st, protoErrorMessage(o.api, []byte(o.redact(string(b))))))
	}

	st := newStreamTimer(&rec, o.api, o.redact, first.Stop)
	bp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bp)
	buf := *bp
	eof := false
	clock := resp.Clock
	for !st.stopped() {
		n, err := resp.Body.Read(buf)
		eof = err == io.EOF
		var now time.Duration
		if clock != nil {
			now = clock.ReadAt().Sub(start) // when the bytes left the socket (see readClock)
		} else {
			now = time.Since(start)
		}
		if perr := st.feed(buf[:n], now); perr != nil {
			st.finish()
			return fail(ClassBadStream, perr.Error())
		}
		if st.stopped() {
			break
		}
		if k := req.CancelAfterTokens; k > 0 && rec.TokenEvents >= k {
			at := time.Since(start)
			cancelAt.Store(int64(at))
			cancel(errCancelled)
			st.finish()
			return cancelled(at)
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
	byTime.Stop() // the answer is whole: a cancel now would cut the drain only
	if st.st.done && !eof {
		drain(parent, resp.Body, buf, cancel)
	}
	st.finish()
	if class, detail := st.verdict(); class != "" {
		return fail(class, detail)
	}
	return rec
}

// setHeaders sets the provider's headers on h, which holds the user's
// (WithHeader): Content-Type, Accept (text/event-stream, or
// application/json with WithoutStreaming), X-Request-ID, the key's
// Authorization, and Accept-Encoding: identity unless the user set one.
// Both paths send these (see h1.NewRequest). Identity, because a compressed
// answer is what a compressing layer buffers before it sends anything, so
// asking for gzip (as net/http does by default) times that layer's buffer,
// not the server's stream; an encoded answer is decoded all the same (see
// decodeBody).
func (o *LLMProvider) setHeaders(h http.Header, id string) {
	h.Set("Content-Type", "application/json")
	switch {
	case o.noStream:
		h.Set("Accept", "application/json")
	case o.api.StreamType != "":
		h.Set("Accept", o.api.StreamType)
	case o.api.Framing == protocol.Lines:
		h.Set("Accept", "application/x-ndjson, application/json")
	default:
		h.Set("Accept", "text/event-stream")
	}
	h.Set("X-Request-ID", id)
	if h.Get("Accept-Encoding") == "" {
		h.Set("Accept-Encoding", "identity")
	}
	if o.key == "" {
		return
	}
	if o.api.Auth != nil {
		o.api.Auth(h, o.key)
		return
	}
	h.Set("Authorization", "Bearer "+o.key)
}

// protoErrorMessage extracts the message of an error body with p's ErrorText
// (p may be nil), else as errorMessage does.
func protoErrorMessage(p *protocol.Protocol, b []byte) string {
	if p != nil && p.ErrorText != nil {
		if msg, ok := p.ErrorText(b); ok {
			return truncate(msg, 200)
		}
	}
	return errorMessage(b)
}

// send sends the request through net/http. On the provider's own
// transport the reply says when the head and each body read left the
// socket (see stampConn); on any client, a 1xx answer does not stamp
// TTFB (the final head's time, as near as the client lets us see, does).
func (o *LLMProvider) send(ctx, parent context.Context, id string, payload []byte, trace *httptrace.ClientTrace, signed http.Header) (h1.Reply, error) {
	var mu sync.Mutex
	var sc *h1.StampConn
	var first time.Time
	informational := false
	t := *trace
	t.GotConn = func(ci httptrace.GotConnInfo) {
		mu.Lock()
		sc = h1.StampOf(ci.Conn)
		mu.Unlock()
		if trace.GotConn != nil {
			trace.GotConn(ci)
		}
	}
	t.GotFirstResponseByte = func() {
		mu.Lock()
		if sc != nil {
			first = sc.ReadAt()
		}
		mu.Unlock()
		if trace.GotFirstResponseByte != nil {
			trace.GotFirstResponseByte()
		}
	}
	t.Got1xxResponse = func(code int, h textproto.MIMEHeader) error {
		mu.Lock()
		informational = true
		mu.Unlock()
		if trace.Got1xxResponse != nil {
			return trace.Got1xxResponse(code, h)
		}
		return nil
	}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, &t), http.MethodPost, o.url, bytes.NewReader(payload))
	if err != nil {
		return h1.Reply{}, err
	}
	if signed != nil {
		hreq.Header = signed
	} else {
		for k, vs := range o.header {
			hreq.Header[k] = vs
		}
		o.setHeaders(hreq.Header, id)
	}
	resp, err := o.clientFor(parent).Do(hreq)
	if err != nil {
		return h1.Reply{}, err
	}
	a := h1.ReplyOf(resp)
	mu.Lock()
	defer mu.Unlock()
	switch {
	case informational && sc != nil:
		a.HeadAt = sc.ReadAt() // the read that completed the final head
	case informational:
		a.HeadAt = time.Now()
	default:
		a.HeadAt = first
	}
	if sc != nil {
		a.Clock = sc
	}
	return h1.DecodeBody(a), nil
}

// fastSend sends the request through the fast path (internal/h1); the error
// names the endpoint as net/http's does.
func (o *LLMProvider) fastSend(ctx, parent context.Context, id string, payload []byte, trace *httptrace.ClientTrace, signed http.Header) (h1.Reply, error) {
	r := o.h1req
	if signed != nil {
		// A signed request's headers are its own: its fixed part is built
		// for it (the bytes net/http would write for the same headers).
		var ok bool
		if r, ok = h1.NewRequest(o.u, signed, func(http.Header) {}); !ok {
			return o.send(ctx, parent, id, payload, trace, signed)
		}
	}
	bp := requestBuffers.Get().(*[]byte)
	b := r.Append((*bp)[:0], id, payload)
	resp, err := o.poolFor(parent).RoundTrip(ctx, b, trace)
	clear(b) // the key is in it
	*bp = b[:0]
	requestBuffers.Put(bp)
	if err != nil {
		return resp, &url.Error{Op: "Post", URL: o.endpoint, Err: err}
	}
	return h1.DecodeBody(resp), nil
}

// requestBody is the body of req: a copy of its prebuilt body with the
// nonce in place when req is built from a prompt template, else what
// payload encodes. The bytes are the same either way.
func (o *LLMProvider) requestBody(req Request, streamOptions bool) ([]byte, error) {
	nonce, ok := templated(req)
	if !ok {
		return o.payload(req, streamOptions)
	}
	k := bodyKey{prompt: req.prompt, nonceLen: len(nonce), maxTokens: req.MaxTokens, streamOptions: streamOptions}
	if req.Temperature != nil {
		k.temperature, k.hasTemp = math.Float64bits(*req.Temperature), true
	}
	o.bodies.mu.Lock()
	t, found := o.bodies.m[k]
	full := len(o.bodies.m) >= maxBodyTemplates || o.bodies.bytes >= maxBodyBytes
	o.bodies.mu.Unlock()
	if !found && full {
		return o.payload(req, streamOptions)
	}
	if found {
		if t.body == nil {
			return o.payload(req, streamOptions)
		}
		b := make([]byte, len(t.body))
		copy(b, t.body)
		copy(b[t.at:], nonce)
		return b, nil
	}
	// The first request of its shape: encode it in full, and keep the
	// encoding as the shape's template when its nonce is found exactly
	// once (a nonce is random: it is).
	b, err := o.payload(req, streamOptions)
	if err != nil {
		return nil, err
	}
	t = &bodyTemplate{}
	if nonce == "" {
		t.body = b
	} else if at := bytes.Index(b, []byte(nonce)); at >= 0 && bytes.LastIndex(b, []byte(nonce)) == at {
		t.body, t.at = b, at
	}
	o.bodies.mu.Lock()
	if o.bodies.m == nil {
		o.bodies.m = map[bodyKey]*bodyTemplate{}
	}
	if len(o.bodies.m) < maxBodyTemplates && o.bodies.bytes+len(t.body) <= maxBodyBytes {
		o.bodies.m[k] = t
		o.bodies.bytes += len(t.body)
	}
	o.bodies.mu.Unlock()
	if t.body == nil {
		return b, nil
	}
	return append([]byte(nil), b...), nil // the template is never sent (fastSend clears what it sends)
}

// setSigning makes the provider sign its requests to u with sg (nil:
// unsigned), its secrets redacted as the key is.
func (o *LLMProvider) setSigning(sg *protocol.Signing, u *url.URL) {
	if sg == nil || sg.Sign == nil {
		return
	}
	o.signing, o.u = sg, u
	for _, s := range sg.Secrets {
		o.secrets = appendSecret(o.secrets, s)
	}
}

// sign returns the headers of a signed request (the provider's, the
// user's and the signature's; nil when the provider signs nothing): the
// body's hash, the same headers both paths send, signed by the
// protocol's signer.
func (o *LLMProvider) sign(ctx context.Context, id string, payload []byte) (http.Header, error) {
	if o.signing == nil {
		return nil, nil
	}
	h := o.header.Clone()
	o.setHeaders(h, id)
	u := *o.u
	r := (&http.Request{Method: http.MethodPost, URL: &u, Host: u.Host, Header: h, ContentLength: int64(len(payload))}).WithContext(ctx)
	sum := sha256.Sum256(payload)
	if err := o.signing.Sign(r, hex.EncodeToString(sum[:])); err != nil {
		return nil, err
	}
	return r.Header, nil
}

// redact replaces every secret in s by "[redacted]".
func (o *LLMProvider) redact(s string) string { return redactSecrets(o.secrets, s) }

// scrub redacts every string of a record that came from the server or
// the network: the model name, the answer (assembled, so a key split
// across chunks is caught), the detail, the notes, the finish reason and
// the fake's injection note.
func (o *LLMProvider) scrub(rec *Record) { scrubRecord(o.secrets, rec) }

// callWhole reads and judges a non-streamed 2xx answer (WithoutStreaming).
func (o *LLMProvider) callWhole(rec *Record, body io.Reader, start time.Time, end func(time.Duration),
	fail func(class, detail string) Record, failed func(error) Record) Record {
	b, err := io.ReadAll(io.LimitReader(body, maxCompletionBody))
	if err != nil {
		return failed(err)
	}
	end(time.Since(start))
	if class, detail := decodeWhole(o.api, []byte(o.redact(string(b))), rec, rec.Total); class != "" {
		return fail(class, detail)
	}
	return *rec
}
