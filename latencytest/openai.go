package latencytest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/tailguard/tailguard/internal/h1"
)

// WithHTTPClient sets the HTTP client (e.g. a fake provider's in-memory
// client). Default: a client with its own transport, which keeps up to
// 1024 idle connections to the endpoint, so that a
// run at any concurrency up to that opens each connection once and no
// measured request pays for connection setup after warm-up (the
// disclosure counts the connections a run opened). A client of your own
// keeps its transport's setting: net/http's default keeps 2, and a run at
// concurrency 50 then opens new connections all along, their setup inside
// TTFT. Batch and Chain tell the
// default transport their concurrency, and a run opens at most that many
// connections. On the default transport, on unix, a plain http://
// endpoint that no proxy setting covers is spoken to by the provider's own
// HTTP/1.1 client (unless WithNetHTTP), which costs less per SSE event
// than net/http, sends the same bytes and keeps the same connection
// bounds; an answer head it does not read itself (a redirect, an unknown
// transfer encoding, an unusual header) is read by net/http's parser from
// the same connection, so the server sees every request once. The
// provider's own clients do not follow redirects: a 3xx fails the request
// as http_3xx, naming where it pointed (a followed redirect would time two
// requests as one; give the final URL as the base URL).
func WithHTTPClient(c *http.Client) Option { return allOption(func(o *LLMProvider) { o.client = c }) }

// WithNetHTTP makes the provider's default transport speak net/http for
// every request, never its own HTTP/1.1 client (see WithHTTPClient); the
// own client costs less CPU per event. Which client measured a run is in
// Description.Client and disclosure box 1.
//
// Both send the same request bytes (Accept-Encoding: identity unless
// WithHeader sets one: a compressing layer buffers a compressed answer
// before it sends anything, so asking for gzip, as net/http does by
// default, would time that buffer rather than the server's stream; a
// gzip or deflate answer is decoded all the same, and one in another
// encoding fails as bad_stream), resend a request only when no byte of
// it was written, and time alike: TTFB at the socket read that brought
// the answer's head (after 1xx answers, the read that completed the
// final head), each event at the socket read that brought its last
// bytes, for http:// and, under TLS, https://. A client of your own
// (WithHTTPClient) is timed when its body reads return.
func WithNetHTTP() LLMOption { return llmOption(func(o *LLMProvider) { o.noFastPath = true }) }

// WithAPIKey sets the bearer token, sent in the Authorization header. The
// key never appears in a record, a log line, an error or an artifact: it
// is never printed, and wherever a server echoes it (in an error body, the
// model name, the answer, even split across chunks) it is replaced by
// "[redacted]". So are the values of WithHeader and of the base URL's
// query parameters. Values shorter than 8 bytes are not searched for (a
// header value "1" cannot be told from a digit of a number; no real
// credential is that short), though they are never printed either.
func WithAPIKey(key string) Option { return allOption(func(o *LLMProvider) { o.key = key }) }

// defaultModel is the model ID requested unless WithModel names another:
// the fake provider's.
const defaultModel = "fake-model"

// WithModel sets the model ID requested. Default (and for ""):
// "fake-model", the fake provider's.
func WithModel(model string) LLMOption {
	return llmOption(func(o *LLMProvider) {
		o.model = model
		if model == "" {
			o.model = defaultModel
		}
	})
}

// WithHeader adds a header to every request (e.g. an organisation ID). Its
// value is treated as a secret, as the API key is (see WithAPIKey).
func WithHeader(key, value string) Option {
	return allOption(func(o *LLMProvider) { o.header.Add(key, value) })
}

// WithoutStreamOptions never sends stream_options (by default every request
// asks for usage with stream_options.include_usage). Without it most
// servers send no usage, and decode rates count token events (see
// Record.DecodeRateUnit). A server that refuses stream_options is handled
// without it: see OpenAI.
func WithoutStreamOptions() OpenAIOption {
	return chatOption(func(o *LLMProvider) { o.noStreamOptions.Store(true) })
}

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
//
// WithoutStreaming asks for whole chat.completion answers instead (stream
// false, no stream_options) and times them as that option describes.
func OpenAI(baseURL string, opts ...OpenAIOption) *LLMProvider {
	return newOpenAI(baseURL, chatAPI, func(o *LLMProvider) {
		for _, opt := range opts {
			opt.applyOpenAI(o)
		}
	})
}

// newOpenAI builds the provider of one protocol (protocol.go), configured
// by the options.
func newOpenAI(baseURL string, api *protocol, configure func(*LLMProvider)) *LLMProvider {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		panic(fmt.Sprintf("latencytest: %s base URL %s is not an http(s) URL", api.name, shownURL(baseURL)))
	}
	// The escaped path: a %2F in the base URL stays %2F. A query
	// (api-version=…) stays.
	escaped := strings.TrimRight(u.EscapedPath(), "/") + api.path
	u.Path, _ = url.PathUnescape(escaped) // valid: EscapedPath escaped it
	u.RawPath = escaped
	o := &LLMProvider{url: u.String(), model: defaultModel, header: http.Header{}, api: api}
	configure(o)
	if o.noStream {
		o.noStreamOptions.Store(true) // nothing to refuse (see Call)
	}
	if api.prepare != nil {
		api.prepare(o)
	}
	if o.client == nil {
		o.client = &http.Client{Transport: o.transport(), CheckRedirect: noRedirects}
		o.ownTransport = true
		if !o.noFastPath && h1.Supported {
			o.h1req, _ = h1.NewRequest(u, o.header, func(h http.Header) { o.setHeaders(h, "") })
		}
	}
	o.bodyTail = appendBodyTail(nil, o.model, !o.noStream, !o.noStream)
	o.bodyTailPlain = appendBodyTail(nil, o.model, !o.noStream, false)
	o.endpoint = redactURL(o.url)
	o.secrets = secretsOf(o.key, o.header, u)
	if api.public != nil {
		o.secrets = withoutPublic(o.secrets, api.public(o))
	}
	return o
}

// OpenAIFromEnv returns the OpenAI provider for OPENAI_BASE_URL,
// OPENAI_API_KEY and OPENAI_MODEL. The error names the variables that are
// unset. The key must be set but may be empty (for a local server without
// keys); the others must not be empty.
func OpenAIFromEnv(opts ...OpenAIOption) (*LLMProvider, error) {
	base, _, key, model, err := fromEnv(EnvBaseURL, EnvAPIKey, EnvModel)
	if err != nil {
		return nil, err
	}
	all := append([]OpenAIOption{WithModel(model), WithAPIKey(key)}, opts...)
	return OpenAI(base, all...), nil
}

// fromEnv reads a provider's base URL, key and model variables: the error
// names the variables that are unset (the key must be set but may be
// empty, for a local server without keys; the others must not be empty),
// or a base URL that is not http(s) (shown without its credentials).
func fromEnv(baseVar, keyVar, modelVar string) (base string, u *url.URL, key, model string, err error) {
	base, model = os.Getenv(baseVar), os.Getenv(modelVar)
	key, hasKey := os.LookupEnv(keyVar)
	var missing []string
	if base == "" {
		missing = append(missing, baseVar)
	}
	if !hasKey {
		missing = append(missing, keyVar+" (set it empty for a server without keys)")
	}
	if model == "" {
		missing = append(missing, modelVar)
	}
	if len(missing) > 0 {
		return "", nil, "", "", fmt.Errorf("latencytest: %s not set", strings.Join(missing, ", "))
	}
	u, err = url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, "", "", fmt.Errorf("latencytest: %s=%s is not an http(s) URL", baseVar, shownURL(base))
	}
	return base, u, key, model, nil
}

// readBuffers holds the 32 KiB buffers calls read their bodies through.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// LLMProvider is the provider OpenAI, Responses and Anthropic return: an
// LLM API spoken over HTTP, one protocol each, streamed unless
// WithoutStreaming. Its methods are
// safe for concurrent use.
type LLMProvider struct {
	url, endpoint string
	bodyTail      []byte // the request body after the messages (see payload)
	ownTransport  bool   // the client is the default one (see clientFor)
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
	// bodyTailPlain is bodyTail without stream_options, sent once
	// noStreamOptions is set (WithoutStreamOptions, or a server's refusal:
	// see OpenAI).
	bodyTailPlain   []byte
	noStreamOptions atomic.Bool
	chatStream      bool      // HTTP only: WithOpenAIStream
	api             *protocol // chat, Responses or Messages (protocol.go)
	noStream        bool      // WithoutStreaming (whole.go)
	bodies          bodyCache // prebuilt bodies of mix prompts (promptbody.go)
}

// Describe names the endpoint, model and client (never the key).
func (o *LLMProvider) Describe() Description {
	kind := chatAPI.kind
	if o.api != nil {
		kind = o.api.kind
	}
	if o.noStream {
		kind = strings.Replace(kind, "(streaming)", "(not streaming)", 1)
	}
	return Description{Kind: kind, Endpoint: o.endpoint, Model: o.model, Client: o.clientName()}
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

// payload encodes the request body as json.Marshal encodes the map
// {"max_tokens", "messages", "model", "stream", "stream_options",
// "temperature"} (keys sorted, max_tokens and temperature only when set,
// stream_options only with streamOptions; stream false and no
// stream_options for WithoutStreaming), without reflection: the part
// after the messages is built once.
func (o *LLMProvider) payload(req Request, streamOptions bool) ([]byte, error) {
	if o.api != nil && o.api.payload != nil {
		return o.api.payload(o, req)
	}
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

// appendBodyTail appends what follows the messages in every request body:
// the model, stream true or false, stream_options included or not.
func appendBodyTail(b []byte, model string, stream, streamOptions bool) []byte {
	b = append(b, `,"model":`...)
	b = appendJSONString(b, model)
	b = strconv.AppendBool(append(b, `,"stream":`...), stream)
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
	defer resp.Body.Close()
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
		if streamOptions && (resp.Status == 400 || resp.Status == 422) && bytes.Contains(b, []byte("stream_options")) {
			*refused = true
		}
		msg := errorMessage([]byte(o.redact(string(b))))
		if resp.Status/100 == 3 && resp.Location != "" {
			// Not followed: a redirected POST would time two requests as one.
			msg = "redirected to " + redactURL(o.redact(resp.Location)) + " (not followed: give that URL as the base URL)"
		}
		return fail(HTTPClass(resp.Status), msg)
	}
	if o.noStream {
		return o.callWhole(&rec, resp.Body, start, end, fail, failed)
	}
	if ct := resp.ContentType; !isEventStream(ct) {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if err != nil && ctx.Err() != nil {
			return failed(err) // a timeout or the run's end, not the answer's fault
		}
		return fail(ClassBadStream, fmt.Sprintf("the answer is %s, not text/event-stream: %s", ct, errorMessage([]byte(o.redact(string(b))))))
	}

	st := newStreamTimer(&rec, o.redact, first.Stop)
	if o.api != nil && o.api.decoder != nil {
		st.st.proto = o.api.decoder()
	}
	bp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bp)
	buf := *bp
	eof := false
	clock := resp.Clock
	for !st.stopped() {
		n, err := resp.Body.Read(buf)
		eof = err == io.EOF
		now := time.Since(start)
		if clock != nil {
			now = clock.ReadAt().Sub(start) // when the bytes left the socket (see readClock)
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
	if o.noStream {
		h.Set("Accept", "application/json")
	} else {
		h.Set("Accept", "text/event-stream")
	}
	h.Set("X-Request-ID", id)
	if h.Get("Accept-Encoding") == "" {
		h.Set("Accept-Encoding", "identity")
	}
	if o.key != "" {
		h.Set("Authorization", "Bearer "+o.key)
	}
}

// send sends the request through net/http. On the provider's own
// transport the reply says when the head and each body read left the
// socket (see stampConn); on any client, a 1xx answer does not stamp
// TTFB (the final head's time, as near as the client lets us see, does).
func (o *LLMProvider) send(ctx, parent context.Context, id string, payload []byte, trace *httptrace.ClientTrace) (h1.Reply, error) {
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
	for k, vs := range o.header {
		hreq.Header[k] = vs
	}
	o.setHeaders(hreq.Header, id)
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

// requestBuffers holds the buffers the fast path writes requests from.
var requestBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// fastSend sends the request through the fast path (internal/h1); the error
// names the endpoint as net/http's does.
func (o *LLMProvider) fastSend(ctx, parent context.Context, id string, payload []byte, trace *httptrace.ClientTrace) (h1.Reply, error) {
	bp := requestBuffers.Get().(*[]byte)
	b := o.h1req.Append((*bp)[:0], id, payload)
	resp, err := o.poolFor(parent).RoundTrip(ctx, b, trace)
	clear(b) // the key is in it
	*bp = b[:0]
	requestBuffers.Put(bp)
	if err != nil {
		return resp, &url.Error{Op: "Post", URL: o.endpoint, Err: err}
	}
	return h1.DecodeBody(resp), nil
}

// doneGrace is how long a call waits, after [DONE], for the end of the
// body, and doneDrain how many bytes it reads: a body read to its end
// returns its connection to the pool, while a body closed early closes
// it, and the next request would pay for a new connection inside its
// TTFT. Both are generous (a loaded server may send the body's end well
// after [DONE]). The record is final before: a server that holds the
// connection open costs the call up to doneGrace, never measured time,
// and its connection is closed (the disclosure counts the new ones).
const (
	doneGrace = 2 * time.Second
	doneDrain = 4 << 20
)

var errDrained = errors.New("the body did not end within the grace after [DONE]")

// drain reads what follows [DONE] (the chunked body's end, most often
// already received) and discards it, for at most doneGrace and doneDrain
// bytes; then the body's end is reached or the request is canceled. The
// grace is waited on the run's deadline watcher when ctx carries one.
func drain(ctx context.Context, body io.Reader, buf []byte, cancel context.CancelCauseFunc) {
	t := afterFunc(ctx, doneGrace, func() { cancel(errDrained) })
	defer t.Stop()
	for n := 0; n < doneDrain; {
		k, err := body.Read(buf)
		if err != nil {
			return
		}
		n += k
	}
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

// redactURL drops credentials and the query from a URL for display.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
