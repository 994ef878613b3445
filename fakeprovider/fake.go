package fakeprovider

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tgprotocol "github.com/tailguard/tailguard/protocol"
)

// Fake is a simulated provider speaking OpenAI's chat completions and
// Responses API, Anthropic's Messages API, Google's Gemini API and Amazon
// Bedrock's Converse API. It is an http.Handler; use
// Transport or Client to reach it in memory (on synctest's fake clock), or
// NewServer for a real loopback server. Create it with New and end it with
// Close.
type Fake struct {
	p Profile // with defaults

	d      *dispatcher
	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the dispatcher and in-memory handler goroutines
	once   sync.Once
	seq    atomic.Uint64

	transport roundTripFunc

	clock      *preciseClock // times streams served over real sockets (see preciseClock): started by the first, stopped by Close
	clockTried bool
	late       latenessHist // events streamed over real sockets (see Lateness)

	metrics serverMetrics // GET /metrics (metrics.go)

	mu      sync.Mutex // guards served, dropped, closed and clock; never held while waiting
	served  []Served   // a ring of at most p.ServedLimit entries once full
	next    int        // where the next record goes when served is full
	dropped int        // records overwritten
	closed  bool
}

// Served is what happened to one request, as the fake saw it.
type Served struct {
	// ID is the request's trace ID (its X-Request-ID; "#N" when absent, N
	// counting every request the fake received from 0).
	ID string `json:"id"`
	// Index is the arrival index, from 0 (same-instant arrivals ordered by ID).
	Index int `json:"index"`
	// Arrival is when the request arrived.
	Arrival time.Time `json:"arrival"`
	// Queued is the wait for a free slot (beyond any cold start).
	Queued time.Duration `json:"queued_ns"`
	// InFlight is the requests in flight on the request's replica when it
	// was admitted, itself included (0 when it was answered at arrival
	// with an HTTP error): the load that picks its Profile.Load level.
	InFlight int `json:"in_flight"`
	// ColdStart is the wait for a model load.
	ColdStart time.Duration `json:"cold_start_ns"`
	// TTFT is the planned time from arrival to the first token (0 when no
	// token was planned).
	TTFT time.Duration `json:"ttft_ns"`
	// CacheHit reports a prefix-cache hit; CachedTokens how many tokens hit.
	CacheHit     bool `json:"cache_hit"`
	CachedTokens int  `json:"cached_tokens"`
	// Fault names what was injected: "http_529", "http_429", "http_500",
	// "http_503" (or http_N from a script), "empty", "disconnect",
	// "malformed", "error_event", "stall", joined by "+" when several; ""
	// for none.
	Fault string `json:"fault"`
	// Stall is the injected stall's length.
	Stall time.Duration `json:"stall_ns"`
	// Status is the HTTP status sent.
	Status int `json:"status"`
	// Tokens counts the tokens sent (reasoning included); ReasoningTokens
	// the reasoning ones.
	Tokens          int `json:"tokens"`
	ReasoningTokens int `json:"reasoning_tokens"`
	// FinishReason is "stop", "length" or "tool_calls" when the answer
	// finished, in chat-completions terms whatever the protocol (a
	// Messages answer's end_turn is "stop", max_tokens "length", tool_use
	// "tool_calls"; a Responses answer cut by max_output_tokens is
	// "length"; a Gemini answer's MAX_TOKENS is "length", its STOP "stop"
	// or, with function calls, "tool_calls").
	FinishReason string `json:"finish_reason,omitempty"`
	// ToolCalls counts the tool calls begun (Profile.ToolCalls): those
	// whose first event was sent (the whole answer's when not streamed).
	ToolCalls int `json:"tool_calls,omitempty"`
	// Protocol is the API the request spoke: "chat", "responses",
	// "messages", "gemini" or "bedrock" (see the Protocol* constants).
	Protocol tgprotocol.Name `json:"protocol,omitempty"`
	// Canceled reports that the client went away before the end.
	Canceled bool `json:"canceled"`
	// ClientClosed reports that the fake saw the client close the request
	// while it was generating (a client's cancel, not the fake's Close),
	// and AfterClose counts the tokens it generated after it saw that: 0,
	// or one event's worth when the close came as it generated one. A
	// server that keeps generating for nobody shows more: a cost.
	ClientClosed bool `json:"client_closed,omitempty"`
	AfterClose   int  `json:"after_close,omitempty"`
}

// New starts a fake provider for the profile; unset fields take their
// defaults. It panics if the profile is invalid (see Profile.Validate).
// Call Close when done (t.Cleanup(f.Close)).
func New(p Profile) *Fake {
	if err := p.Validate(); err != nil {
		panic("fakeprovider: " + err.Error())
	}
	p = p.withDefaults()
	p.Script = slices.Clone(p.Script)
	f := &Fake{p: p}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.d = newDispatcher(&f.p, time.Now())
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		f.d.run(f.ctx.Done())
	}()
	f.transport = f.respond
	return f
}

// Profile returns the profile served, defaults filled in.
func (f *Fake) Profile() Profile { return f.p }

// Close ends every goroutine of the fake: open streams end at once and
// later requests get 503. It is safe to call more than once.
func (f *Fake) Close() {
	f.mu.Lock()
	f.closed = true
	clock := f.clock
	f.mu.Unlock()
	f.once.Do(f.cancel)
	f.wg.Wait()
	if clock != nil {
		clock.close() // after cancel: every session waiting on it has ended or will
	}
}

// preciseClock returns the fake's clock for streams served over real
// sockets, started by the first such stream; nil once the fake is closed
// (the session then ends on its context).
func (f *Fake) preciseClock() *preciseClock {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	if !f.clockTried {
		f.clock, f.clockTried = newPreciseClock(), true // nil where there is no kernel timer
	}
	return f.clock
}

// track counts one more goroutine for Close to wait for; false once closed.
func (f *Fake) track() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.wg.Add(1)
	return true
}

// Served returns a copy of what happened to each finished request, in
// arrival order: the last Profile.ServedLimit requests to finish (100,000
// by default); ServedDropped counts the older ones it no longer holds.
func (f *Fake) Served() []Served {
	out, _ := f.servedSnapshot()
	return out
}

// servedSnapshot returns Served and ServedDropped as of one instant.
func (f *Fake) servedSnapshot() ([]Served, int) {
	f.mu.Lock()
	out, dropped := slices.Clone(f.served), f.dropped
	f.mu.Unlock()
	slices.SortFunc(out, func(a, b Served) int {
		return cmp.Or(cmp.Compare(a.Index, b.Index), a.Arrival.Compare(b.Arrival), strings.Compare(a.ID, b.ID))
	})
	return out, dropped
}

// ServedDropped returns how many finished requests Served no longer holds
// because Profile.ServedLimit newer ones finished after them. GET
// /fake/served reports it in the X-Fake-Served-Dropped header.
func (f *Fake) ServedDropped() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dropped
}

func (f *Fake) record(s Served) {
	f.mu.Lock()
	if len(f.served) < f.p.ServedLimit {
		f.served = append(f.served, s)
	} else {
		f.served[f.next] = s
		f.next = (f.next + 1) % len(f.served)
		f.dropped++
	}
	f.mu.Unlock()
}

// HeaderServedDropped is the header of GET /fake/served that counts the
// requests no longer held (see ServedDropped).
const HeaderServedDropped = "X-Fake-Served-Dropped"

// ServeHTTP answers POST /v1/chat/completions, POST /v1/responses, POST
// /v1/messages, POST /v1beta/models/{model}:streamGenerateContent?alt=sse
// and :generateContent, POST /model/{modelId}/converse-stream and
// /model/{modelId}/converse (Bedrock, the model ID escaped or not), GET
// /v1/models, GET /v1/models/{id}, GET /healthz, GET /metrics (vLLM's
// metric names and buckets, from the fake's own timeline: see
// metrics.go) and GET /fake/served. Paths ending in /chat/completions,
// /responses, /messages, :streamGenerateContent, :generateContent,
// /converse-stream, /converse or /models, or holding /models/, are
// accepted under any prefix. Every answer carries x-request-id: the request's X-Request-ID
// (at most 256 bytes; a longer one gets 400), else "req_fake_N", N counting
// the requests the fake received from 0 (see the package doc, # Headers).
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.seq.Add(1) - 1
	id := r.Header.Get("X-Request-ID")
	if len(id) > maxRequestIDBytes {
		w.Header().Set("X-Request-Id", generatedRequestID(n))
		writeAPIError(w, badRequest("", "", "the X-Request-ID header is %d bytes; the limit is %d", len(id), maxRequestIDBytes))
		return
	}
	if id == "" {
		w.Header().Set("X-Request-Id", generatedRequestID(n))
	} else {
		w.Header().Set("X-Request-Id", id)
	}
	path := r.URL.Path
	proto, ok := route(path)
	switch {
	case ok:
		switch proto {
		case protoMessages:
			// Anthropic names each attempt by its own request-id.
			w.Header().Set(headerAnthropicRequestID, generatedRequestID(n))
		case protoBedrock:
			// Bedrock names each attempt by x-amzn-RequestId.
			w.Header().Set("X-Amzn-Requestid", generatedRequestID(n))
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, proto, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error",
				message: "method not allowed; use " + http.MethodPost})
			return
		}
		key := id
		if key == "" {
			key = "#" + strconv.FormatUint(n, 10)
		}
		f.chat(w, r, n+1, key, proto)
	case strings.HasSuffix(path, "/models"):
		if r.Method != http.MethodGet {
			methodNotAllowed(w, http.MethodGet)
			return
		}
		writeJSON(w, map[string]any{"object": "list", "data": []any{f.modelObject()}})
	case strings.Contains(path, "/models/"):
		if r.Method != http.MethodGet {
			methodNotAllowed(w, http.MethodGet)
			return
		}
		_, model, _ := strings.Cut(path, "/models/")
		if model != f.p.Model {
			writeAPIError(w, modelNotFound(model))
			return
		}
		writeJSON(w, f.modelObject())
	case path == "/healthz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	case path == "/metrics":
		f.metrics.serve(w, r, f.p.Model, f.p.Replicas*f.p.SlotsPerReplica)
	case path == "/fake/served":
		served, dropped := f.servedSnapshot()
		w.Header().Set(HeaderServedDropped, strconv.Itoa(dropped))
		writeJSON(w, served)
	default:
		writeAPIError(w, &apiError{status: http.StatusNotFound, typ: "invalid_request_error",
			message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, path)})
	}
}

// generatedRequestID is the x-request-id of the n-th request (from 0) when
// the client sent none.
func generatedRequestID(n uint64) string { return "req_fake_" + strconv.FormatUint(n, 10) }

// modelObject is the served model as OpenAI lists it.
func (f *Fake) modelObject() map[string]any {
	return map[string]any{"id": f.p.Model, "object": "model", "created": 0, "owned_by": "tailguard-fake"}
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeAPIError(w, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error",
		message: "method not allowed; use " + allow})
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeAPIError(w, &apiError{status: 500, typ: "server_error", message: err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// chat serves one chat completion, response or message (proto); seq
// identifies it to the dispatcher and key is its trace ID.
func (f *Fake) chat(w http.ResponseWriter, r *http.Request, seq uint64, key string, proto protocol) {
	req, aerr := parse(proto, r, f.p.Model)
	if aerr != nil {
		writeError(w, proto, aerr)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(f.ctx, cancel)
	defer stop()
	if f.ctx.Err() != nil {
		writeError(w, proto, &apiError{status: http.StatusServiceUnavailable, typ: "server_error", message: "fake provider closed"})
		return
	}

	switch proto {
	case protoMessages:
		setAnthropicRateLimitHeaders(w.Header(), req, 0)
	case protoBedrock: // Bedrock sends no rate-limit headers
	default:
		setRateLimitHeaders(w.Header(), req, 0)
	}
	a := &arrival{
		seq:    seq,
		at:     time.Now(),
		plan:   newPlan(&f.p, key),
		blocks: prefixBlocks(req.Prompt),
		reply:  make(chan admission, 2),
	}
	if req.NoTools {
		a.plan.withoutTools()
	} else if req.MustCall {
		a.plan.withTools(&f.p)
	}
	if req.OneCall {
		a.plan.oneToolCall()
	}
	sv := Served{ID: key, Index: -1, Arrival: a.at, Protocol: proto.name()}
	if !f.send(ctx, event{at: a.at, arr: a}) {
		sv.Canceled = true
		f.record(sv)
		return
	}
	f.metrics.gauge(1, 0) // waiting, until admitted or gone (metrics.go)
	admitted := false
	defer func() {
		if !admitted {
			f.metrics.gauge(-1, 0)
		}
	}()
	released := false
	release := func() {
		if !released {
			released = true
			f.send(f.ctx, event{at: time.Now(), seq: seq})
			if admitted {
				f.metrics.gauge(0, -1)
			}
		}
	}
	defer release()
	var ad admission
	select {
	case ad = <-a.reply:
	case <-ctx.Done():
		sv.Canceled = true
		f.record(sv)
		return
	}
	sv.Index = ad.index
	pl := a.plan
	if ad.reject {
		released = true // never queued
		sv.Fault, sv.Status = pl.fault, pl.status
		e := faultError(pl.status)
		w.Header().Set(HeaderInjected, injected(&sv))
		if proto == protoMessages {
			// Anthropic: retry-after on a 429 only; a 529 carries none.
			if pl.status == http.StatusTooManyRequests {
				setAnthropicRateLimitHeaders(w.Header(), req, f.p.Faults.RetryAfter)
			}
			f.record(sv)
			writeAnthropicError(w, e)
			return
		}
		if proto == protoBedrock {
			f.record(sv)
			writeError(w, proto, e)
			return
		}
		if pl.status == http.StatusTooManyRequests || pl.status == http.StatusServiceUnavailable {
			setRetryAfter(w.Header(), f.p.Faults.RetryAfter)
		}
		if pl.status == http.StatusTooManyRequests {
			setRateLimitHeaders(w.Header(), req, f.p.Faults.RetryAfter)
		}
		f.record(sv)
		writeError(w, proto, e)
		return
	}
	select {
	case ad2 := <-a.reply:
		ad2.index = ad.index
		ad = ad2
		admitted = true
		f.metrics.gauge(-1, 1)
	case <-ctx.Done():
		sv.Canceled = true
		f.record(sv)
		return
	}
	s := &session{f: f, w: w, req: req, pl: pl, ad: ad, sv: &sv, release: release, client: r.Context()}
	if ctx.Value(inMemoryKey{}) == nil {
		s.clock = f.preciseClock()
		s.late = &f.late
	}
	s.run(ctx)
}

// send delivers an event to the dispatcher unless ctx ends first.
func (f *Fake) send(ctx context.Context, ev event) bool {
	select {
	case f.d.events <- ev:
		return true
	case <-ctx.Done():
		return false
	case <-f.ctx.Done():
		return false
	}
}

// Transport returns an in-memory http.RoundTripper that serves every URL
// with the fake. The body streams through an in-memory
// pipe with a buffer (as a socket has one), so inside synctest.Test a 30 s
// cold start or a 20 min stall costs no real time and is measured exactly. Closing a response body or canceling the
// request's context ends that request's goroutine at once.
func (f *Fake) Transport() http.RoundTripper { return f.transport }

// Client returns an *http.Client that uses Transport.
func (f *Fake) Client() *http.Client { return &http.Client{Transport: f.transport} }

// respond runs the handler in its own goroutine, writing into a pipe, and
// returns the response as soon as the handler has written its header.
func (f *Fake) respond(req *http.Request) (*http.Response, error) {
	if !f.track() {
		return nil, errFakeClosed
	}
	ctx, cancel := context.WithCancel(req.Context())
	pr, pw := newPipe()
	// A canceled request unblocks a handler stuck writing to a reader that
	// no longer reads.
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	// So does Close: a client that never reads nor closes its body must not
	// hold Close forever.
	stopClose := context.AfterFunc(f.ctx, func() { pw.CloseWithError(errFakeClosed) })
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		defer f.wg.Done()
		defer stop()
		defer stopClose()
		defer func() {
			if v := recover(); v != nil {
				if v != http.ErrAbortHandler {
					_ = pw.CloseWithError(errors.New("fakeprovider: handler panic"))
					w.markReady()
					panic(v)
				}
				// A disconnect fault: the client sees the body end early.
				_ = pw.CloseWithError(io.ErrUnexpectedEOF)
			} else {
				// A canceled request or a closed fake must not look like
				// a clean end.
				err := ctx.Err()
				if err == nil && f.ctx.Err() != nil {
					err = errFakeClosed
				}
				_ = pw.CloseWithError(err) // nil: EOF
			}
			w.markReady()
		}()
		f.ServeHTTP(w, req.WithContext(context.WithValue(ctx, inMemoryKey{}, true)))
	}()
	select {
	case <-w.ready:
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
	if w.status == 0 { // the handler ended without a header: connection dropped
		cancel()
		return nil, io.ErrUnexpectedEOF
	}
	resp := &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent, // the handler's later changes go to another map
		Body:          &pipeBody{pr: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}
	return resp, nil
}

// Tool is a latencytest.Chain.Tool that waits as the profile's
// ToolLatency says (ToolSteps with the profile's Seed): chains run
// against the fake then spend the tool time the profile states.
func (f *Fake) Tool(ctx context.Context, chain, call int) error {
	return ToolSteps{Latency: f.p.ToolLatency, Seed: f.p.Seed}.Wait(ctx, chain, call)
}

// QueueTime is how long the fake kept the request with trace ID id waiting
// for a free slot (Served.Queued, beyond any cold start), summed over its
// attempts: the requests served with that ID, and with "<id>-a<n>" (the
// IDs latencytest.Instrument gives retries). 0 for an ID not served, or no
// longer held (Profile.ServedLimit). Set as latencytest.Chain.Queueing,
// it splits a chain's model time into queueing and the rest.
func (f *Fake) QueueTime(id string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var sum time.Duration
	for i := range f.served {
		sv := &f.served[i]
		if sv.ID == id || isAttempt(sv.ID, id) {
			sum += sv.Queued
		}
	}
	return sum
}

// Lateness returns the lateness of the events the fake has streamed over
// real sockets so far (a Server, or the Fake as any http.Server's
// handler).
func (f *Fake) Lateness() Lateness { return f.late.snapshot() }
