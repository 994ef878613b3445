package latencytest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailguard/tailguard/internal/h1"
	"github.com/tailguard/tailguard/internal/httpattempt"
	"github.com/tailguard/tailguard/protocol"
)

// callKey is the context key under which Func passes its call to
// Instrument.
type callKey struct{}

// Instrument wraps the transport of your own HTTP client (openai-go's,
// go-openai's, your application's), so that the requests it makes inside a
// Func call are measured as the OpenAI provider measures its own: time to
// the response headers, each SSE event as your client reads it (first
// token, first answer, every gap, the longest), token counts and usage
// from OpenAI-style chat-completion chunks when the body is
// text/event-stream (or, from a non-streamed chat.completion JSON answer,
// its usage, model, answer, tool calls and verdict), the end of the body,
// the status and an error class. Event streams are decoded in the
// protocol the request path names, as the built-in providers decode them:
// chat completions, OpenAI's Responses API (a path ending in /responses,
// as Responses times it) and Anthropic's Messages API (/messages, as
// Anthropic times it); on any other path the stream's first events tell
// (response.* or message_start and content_block_* types), else it is
// taken as chat completions. An AWS event stream
// (application/vnd.amazon.eventstream: Bedrock's ConverseStream, as
// aws-sdk-go-v2's bedrockruntime reads it) is decoded as Bedrock times it. A non-streamed JSON answer to a POST on
// /responses or /messages (or whose JSON is a response or message object)
// is read as WithoutStreaming reads one; a chat.completion too, but a
// JSON answer that holds none (an embeddings list) is not judged.
// Each request is an Attempt of the call (see Func); the body is never
// read ahead of your client, an early Close ends the attempt, and the
// transport is safe for concurrent requests. A Close after [DONE] reads
// what is left of the body (for at most 20 ms, untimed), as the OpenAI
// provider does, so that the connection is kept for the next request.
//
// A request whose context holds no Func call (made outside one, or after
// it returned) passes through untouched. Inside a call, a request without
// an X-Request-ID header gets one: the call's trace ID on the first
// attempt and "<trace ID>-a<n>" on the n-th (from 2). The fake provider
// keys its randomness and its script by that header, so a retry is a new
// draw (a request scripted to fail by trace ID fails once, and its retry
// can succeed), while the first attempt meets exactly what the OpenAI
// provider's request would meet. A header your client sets itself is kept
// (then every attempt draws the same fate from the fake).
//
// The bearer token of the Authorization header (any 8 bytes of its value:
// a SigV4 signature's access key ID too), the Api-Key, X-Api-Key and
// X-Amz-Security-Token
// headers and the URL's user info and query values (8 bytes or longer)
// are redacted from everything the record keeps, as WithAPIKey describes.
// rt nil means http.DefaultTransport.
func Instrument(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &instrumented{rt: rt}
}

type instrumented struct{ rt http.RoundTripper }

// RoundTrip times req when its context holds a Func call.
func (t *instrumented) RoundTrip(req *http.Request) (*http.Response, error) {
	c, _ := req.Context().Value(callKey{}).(*funcCall)
	if c == nil {
		return t.rt.RoundTrip(req)
	}
	a := c.begin(req)
	if a == nil { // the call already returned
		return t.rt.RoundTrip(req)
	}
	// A RoundTripper must not modify its request: the header and the
	// trace go on a clone, whose context is the attempt's own, so that
	// the read to the end after [DONE] can be cut off (see timedBody).
	ctx, cancel := context.WithCancelCause(req.Context())
	out := req.Clone(httptrace.WithClientTrace(ctx, c.trace(a)))
	if a.id == "" {
		a.id = out.Header.Get("X-Request-ID")
	} else if out.Header.Get("X-Request-ID") == "" {
		out.Header.Set("X-Request-ID", a.id)
	} else {
		a.id = out.Header.Get("X-Request-ID")
	}
	resp, err := t.rt.RoundTrip(out)
	if err != nil {
		cancel(nil)
		c.failed(a, err, req.Context())
		return nil, err
	}
	c.headers(a, resp)
	resp.Body = &timedBody{rc: resp.Body, c: c, a: a, reqCtx: req.Context(), cancel: cancel}
	return resp, nil
}

// maxErrorBody is how much of an error body an attempt keeps for its
// detail, and maxCompletionBody how much of a 2xx JSON answer it keeps to
// read (a longer one is cut, fails to decode, and is judged no further).
const (
	maxErrorBody      = 64 << 10
	maxCompletionBody = 4 << 20
)

// funcCall is the state of one Func call, shared by its attempts (which
// may run concurrently): mu guards everything below it.
type funcCall struct {
	req          Request // its ID, and its limits binding every attempt (finish)
	start        time.Time
	ctx, parent  context.Context
	firstTimeout pendingFunc // zero without a first-token timeout

	mu       sync.Mutex
	attempts []*attempt
	secrets  []string // longest first
	returned bool     // fn returned: nothing more is recorded
	token    bool     // a token arrived in some attempt
	bytes    bool     // time bodies as bytes, never as event streams (HTTP)
}

// attempt is one request of a call being timed; its rec counts from its
// own start.
type attempt struct {
	n       int
	id      string
	start   time.Time
	offset  time.Duration
	rec     Record
	sse     *streamTimer // nil unless the answer is a 2xx event stream
	errBody []byte       // the start of a body of status 400 or more, or a JSON answer
	keep    bool         // keep the body in errBody
	json    bool         // a 2xx JSON answer, kept in errBody (see stream.completion)
	done    bool
	path    string // the request's URL path: its protocol (protocol.go)
	post    bool   // the request is a POST

	dnsStart, connStart, tlsStart time.Time
}

// newCall starts a call's record keeping for req.
func newCall(req Request, ctx, parent context.Context) *funcCall {
	return &funcCall{req: req, start: time.Now(), ctx: ctx, parent: parent}
}

// begin registers a new attempt for req, or returns nil after the call
// returned.
func (c *funcCall) begin(req *http.Request) *attempt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.returned {
		return nil
	}
	a := &attempt{n: len(c.attempts) + 1, start: time.Now(), path: req.URL.Path, post: req.Method == http.MethodPost}
	a.offset = a.start.Sub(c.start)
	a.rec = Record{TTFB: NotObserved, TTFT: NotObserved, FirstAnswer: NotObserved, LastToken: NotObserved}
	if c.req.ID != "" {
		a.id = c.req.ID
		if a.n > 1 {
			a.id = fmt.Sprintf("%s-a%d", c.req.ID, a.n)
		}
	}
	c.attempts = append(c.attempts, a)
	c.addSecrets(req)
	return a
}

// addSecrets adds the credentials req carries to the call's secrets.
func (c *funcCall) addSecrets(req *http.Request) {
	h := http.Header{}
	if auth := req.Header.Get("Authorization"); auth != "" {
		if _, tok, ok := cutFold(auth, "bearer "); ok {
			h.Add("Authorization", tok)
		}
		h.Add("Authorization", auth)
	}
	for _, k := range []string{"Api-Key", "X-Api-Key", "X-Amz-Security-Token"} {
		for _, v := range req.Header.Values(k) {
			h.Add(k, v)
		}
	}
	for _, s := range secretsOf("", h, req.URL) {
		c.secrets = appendSecret(c.secrets, s)
	}
}

// cutFold is strings.CutPrefix ignoring ASCII case.
func cutFold(s, prefix string) (before, after string, ok bool) {
	if len(s) >= len(prefix) && equalFoldASCII(s[:len(prefix)], prefix) {
		return "", s[len(prefix):], true
	}
	return s, "", false
}

func equalFoldASCII(a, b string) bool {
	for i := range len(a) {
		x, y := a[i]|0x20, b[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// appendSecret adds s to a longest-first list, once.
func appendSecret(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	i := len(list)
	for i > 0 && len(list[i-1]) < len(s) {
		i--
	}
	list = append(list, "")
	copy(list[i+1:], list[i:])
	list[i] = s
	return list
}

// redact scrubs the call's secrets from s; the caller holds mu.
func (c *funcCall) redact(s string) string { return redactSecrets(c.secrets, s) }

// trace times connection setup into the attempt (the callbacks may run on
// the transport's goroutines, even after RoundTrip returned).
func (c *funcCall) trace(a *attempt) *httptrace.ClientTrace {
	at := func(f func()) {
		c.mu.Lock()
		if !a.done {
			f()
		}
		c.mu.Unlock()
	}
	return &httptrace.ClientTrace{
		DNSStart:          func(httptrace.DNSStartInfo) { at(func() { a.dnsStart = time.Now() }) },
		DNSDone:           func(httptrace.DNSDoneInfo) { at(func() { a.rec.DNS = time.Since(a.dnsStart) }) },
		ConnectStart:      func(string, string) { at(func() { a.connStart = time.Now() }) },
		ConnectDone:       func(string, string, error) { at(func() { a.rec.Connect = time.Since(a.connStart) }) },
		TLSHandshakeStart: func() { at(func() { a.tlsStart = time.Now() }) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { at(func() { a.rec.TLS = time.Since(a.tlsStart) }) },
	}
}

// headers records the response headers of an attempt.
func (c *funcCall) headers(a *attempt, resp *http.Response) {
	now := time.Since(a.start)
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.done {
		return
	}
	a.rec.TTFB, a.rec.Status = now, resp.StatusCode
	a.rec.Injected = resp.Header.Get(h1.HeaderInjected)
	switch {
	case resp.StatusCode >= 400:
		a.keep = true
	case resp.StatusCode/100 == 2 && isEventStream(resp.Header.Get("Content-Type")) && resp.Header.Get("Content-Type") != "" && !c.bytes:
		// Only a declared event stream is decoded: a body without a
		// Content-Type may be anything.
		a.sse = newStreamTimer(&a.rec, protocol.ByPath(a.path), c.redact, c.firstToken)
	case resp.StatusCode/100 == 2 && protocol.ByStreamType(resp.Header.Get("Content-Type")) != nil && !c.bytes:
		// A stream the protocol frames itself (Bedrock's event stream).
		a.sse = newStreamTimer(&a.rec, protocol.ByStreamType(resp.Header.Get("Content-Type")), c.redact, c.firstToken)
	case resp.StatusCode/100 == 2 && isJSON(resp.Header.Get("Content-Type")):
		a.json = true
	}
}

// firstToken stops the first-token timeout; the caller holds mu.
func (c *funcCall) firstToken() {
	if !c.token {
		c.token = true
		c.firstTimeout.Stop()
	}
}

// boundByFirstToken reports whether the first-token timeout may end the
// call: it has sent a request through Instrument and seen no token.
func (c *funcCall) boundByFirstToken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.attempts) > 0 && !c.token && !c.returned
}

// failed ends an attempt that got no response.
func (c *funcCall) failed(a *attempt, err error, reqCtx context.Context) {
	now := time.Since(a.start)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !a.done {
		class, detail := c.classify(err, reqCtx)
		c.end(a, now, class, detail)
	}
}

// classify names what ended an attempt: the call's timeouts, the run's
// end, the client's own cancel, a connection cut mid-body, or the
// transport. The caller holds mu.
func (c *funcCall) classify(err error, reqCtx context.Context) (class, detail string) {
	switch cause := context.Cause(c.ctx); {
	case errors.Is(cause, errFirstTokenTimeout):
		return ClassFirstTokenTimeout, "no token before the first-token timeout"
	case errors.Is(cause, errTotalTimeout):
		return ClassTotalTimeout, "not done before the total timeout"
	case c.parent.Err() != nil:
		return ClassCanceled, "the run ended: " + context.Cause(c.parent).Error()
	case reqCtx.Err() != nil:
		return ClassCanceled, "the client canceled the request: " + context.Cause(reqCtx).Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ClassTruncated, "the connection closed mid-body"
	}
	return ClassTransport, c.redact(err.Error())
}

// end closes an attempt at now (from its start) with a class ("" for
// success); the caller holds mu.
// wholeProtocolOf tells the protocol of a 2xx JSON answer: by the path
// of a POST, else by the body (protocol.ByAnswer); nil when neither
// tells, or when chat's path holds no chat completion (then the answer
// is not judged).
func wholeProtocolOf(post bool, path string, body []byte) *protocol.Protocol {
	var p *protocol.Protocol
	if post {
		p = protocol.ByPath(path)
	}
	if p == nil {
		p = protocol.ByAnswer(body)
	}
	if p == nil || p == protocol.Chat && !p.IsAnswer(body) {
		return nil
	}
	return p
}

func (c *funcCall) end(a *attempt, now time.Duration, class, detail string) {
	if a.done {
		return
	}
	a.done = true
	a.rec.Total = now
	if a.sse != nil {
		a.sse.finish()
	}
	if class == "" && a.keep {
		class, detail = HTTPClass(a.rec.Status), protoErrorMessage(protocol.ByPath(a.path), []byte(c.redact(string(a.errBody))))
	}
	if class == "" && a.json {
		body := []byte(c.redact(string(a.errBody)))
		if p := wholeProtocolOf(a.post, a.path, body); p != nil {
			class, detail = decodeWhole(p, body, &a.rec, now) // whole.go
		}
	}
	if class != "" {
		a.rec.Err, a.rec.Detail = class, detail
		if a.rec.LastToken >= 0 {
			a.rec.MaxGap = max(a.rec.MaxGap, now-a.rec.LastToken)
		}
	}
}

// endStream closes an attempt whose event stream ended (EOF or [DONE])
// or was closed by the client before it ended (early): a stream the
// client closed is judged on what it read, without asking for [DONE].
func (c *funcCall) endStream(a *attempt, now time.Duration, early bool) {
	if a.done {
		return
	}
	a.sse.finish()
	if early && !a.sse.stopped() {
		a.sse.st.done = true
		a.sse.st.note("the client closed the stream before %s", a.sse.st.endMark())
	}
	class, detail := a.sse.verdict()
	c.end(a, now, class, detail)
}

// read times bytes the client read from an attempt's body.
func (c *funcCall) read(a *attempt, b []byte, err error, reqCtx context.Context) {
	now := time.Since(a.start)
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.done {
		return
	}
	if a.sse != nil {
		if perr := a.sse.feed(b, now); perr != nil {
			c.end(a, now, ClassBadStream, perr.Error())
			return
		}
		switch {
		case a.sse.stopped():
			c.endStream(a, now, false)
		case err == io.EOF && reqCtx.Err() != nil:
			// The stream ended short because the client canceled it
			// (a transport that ends the body cleanly on a cancel):
			// the client's doing, not a truncated answer.
			class, detail := c.classify(err, reqCtx)
			c.end(a, now, class, detail)
		case err == io.EOF:
			a.sse.end()
			c.endStream(a, now, false)
		case err != nil:
			class, detail := c.classify(err, reqCtx)
			c.end(a, now, class, detail)
		}
		return
	}
	if c.bytes && !a.keep && len(b) > 0 {
		a.byteAt(now)
	}
	if a.keep && len(a.errBody) < maxErrorBody {
		a.errBody = append(a.errBody, b[:min(len(b), maxErrorBody-len(a.errBody))]...)
	}
	if a.json && len(a.errBody) < maxCompletionBody {
		a.errBody = append(a.errBody, b[:min(len(b), maxCompletionBody-len(a.errBody))]...)
	}
	switch {
	case err == io.EOF:
		c.end(a, now, "", "")
	case err != nil:
		class, detail := c.classify(err, reqCtx)
		c.end(a, now, class, detail)
	}
}

// closed ends an attempt whose body the client closed.
func (c *funcCall) closed(a *attempt) {
	now := time.Since(a.start)
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.sse != nil {
		c.endStream(a, now, true)
	} else {
		c.end(a, now, "", "")
	}
}

// timedBody times a response body as the user's client reads it. When
// the client closes an event stream after [DONE] (as most SDKs do) before
// the body's end, Close reads the rest as the OpenAI provider does (see
// drain: at most doneGrace and doneDrain bytes, untimed), so that the
// connection returns to the transport's pool instead of being closed and
// the next request's TTFT paying for a new one.
type timedBody struct {
	rc     io.ReadCloser
	c      *funcCall
	a      *attempt
	reqCtx context.Context
	cancel context.CancelCauseFunc // the attempt's own context
	ended  atomic.Bool             // a Read returned an error (EOF included)
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.ended.Store(true)
	}
	b.c.read(b.a, p[:n], err, b.reqCtx)
	return n, err
}

func (b *timedBody) Close() error {
	rest := !b.ended.Load() && b.c.sawDone(b.a)
	b.c.closed(b.a)
	if rest {
		bp := readBuffers.Get().(*[]byte)
		drain(b.reqCtx, b.rc, *bp, b.cancel)
		readBuffers.Put(bp)
	}
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

// sawDone reports whether an attempt's event stream reached [DONE] (not
// a stream the client closed early, which endStream also marks done).
func (c *funcCall) sawDone(a *attempt) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return a.sse != nil && a.sse.st.done && a.sse.stopped() && a.sse.st.bad == ""
}

// finish ends the call at now (from its start), when fn has returned: an
// attempt still open ends here; nothing is recorded after. Every attempt is
// held to the request's limits on the call's clock (enforceLimits; c.req
// drops FirstTokenTimeout once a token came in time). It returns them.
func (c *funcCall) finish() []*attempt {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.returned = true
	for _, a := range c.attempts {
		if !a.done {
			now := time.Since(a.start)
			if a.sse != nil {
				c.endStream(a, now, true)
			} else {
				c.end(a, now, "", "")
			}
		}
		if a.rec.TTFT >= 0 && a.offset+a.rec.TTFT < c.req.FirstTokenTimeout {
			c.req.FirstTokenTimeout = 0 // a token in time stopped the timer
		}
	}
	for _, a := range c.attempts {
		r := a.rec
		r.TTFT, r.LastToken, r.Total = shift(r.TTFT, a.offset), shift(r.LastToken, a.offset), shift(r.Total, a.offset)
		if enforceLimits(c.req, &r); r.Err != a.rec.Err {
			a.rec.Err, a.rec.Detail, a.rec.MaxGap = r.Err, r.Detail, r.MaxGap
		}
	}
	return c.attempts
}

// export renders an attempt for the record.
func (a *attempt) export() httpattempt.Attempt {
	return httpattempt.Attempt{ID: a.id, Start: a.offset, TTFB: a.rec.TTFB, TTFT: a.rec.TTFT, Total: a.rec.Total,
		Status: a.rec.Status, Err: a.rec.Err, Detail: a.rec.Detail}
}

// shift moves an attempt-relative time to the call's clock.
func shift(d, offset time.Duration) time.Duration {
	if d < 0 {
		return d
	}
	return d + offset
}

// figures copies an attempt's measurements into the call's record, timed
// from the call's start.
func (a *attempt) figures(rec *Record) {
	r := &a.rec
	rec.DNS, rec.Connect, rec.TLS = r.DNS, r.Connect, r.TLS
	rec.TTFB, rec.TTFT = shift(r.TTFB, a.offset), shift(r.TTFT, a.offset)
	rec.FirstAnswer, rec.LastToken = shift(r.FirstAnswer, a.offset), shift(r.LastToken, a.offset)
	rec.MaxGap, rec.Gaps, rec.TokenEvents = r.MaxGap, r.Gaps, r.TokenEvents
	rec.PromptTokens, rec.CompletionTokens, rec.CachedTokens, rec.ReasoningTokens = r.PromptTokens, r.CompletionTokens, r.CachedTokens, r.ReasoningTokens
	rec.UsageReported, rec.CachedReported = r.UsageReported, r.CachedReported
	rec.ToolCalls = r.ToolCalls
	if r.ToolCalls > 0 {
		rec.FirstToolCall, rec.ToolArgsDone = shift(r.FirstToolCall, a.offset), shift(r.ToolArgsDone, a.offset)
	}
	rec.FinishReason, rec.Model, rec.Content, rec.Notes = r.FinishReason, r.Model, r.Content, r.Notes
	rec.ServerLatency = r.ServerLatency
	rec.Status, rec.Injected = r.Status, r.Injected
	rec.ToolCalls, rec.HostedTools = r.ToolCalls, r.HostedTools
	for _, d := range [][2]*time.Duration{{&rec.FirstToolCall, &r.FirstToolCall}, {&rec.ToolArgsDone, &r.ToolArgsDone}} {
		if *d[1] != 0 { // 0: none
			*d[0] = *d[1] + a.offset
		}
	}
}

// streamFailed reports an attempt whose 2xx event stream failed its
// verdict (or was cut): the answer the call got was not a good one.
func (a *attempt) streamFailed() bool { return (a.sse != nil || a.json) && !a.rec.OK() }

// byteAt times a read of body bytes at now (from the attempt's start):
// the first is TTFT and FirstAnswer, the last LastToken, and the longest
// silence between two reads MaxGap (see HTTP).
func (a *attempt) byteAt(now time.Duration) {
	r := &a.rec
	if r.TTFT < 0 {
		r.TTFT, r.FirstAnswer = now, now
	} else {
		r.MaxGap = max(r.MaxGap, now-r.LastToken)
	}
	r.LastToken = now
}
