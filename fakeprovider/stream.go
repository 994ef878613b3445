package fakeprovider

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailguard/tailguard/fakeprovider/internal/wire"
)

// session streams (or answers) one admitted request.
type session struct {
	f       *Fake
	w       http.ResponseWriter
	req     parsed
	pl      *plan
	ad      admission
	sv      *Served
	release func()

	out    []byte  // events due but not written yet (see sleep)
	outBuf *[]byte // out's pooled buffer
	header bool    // the header is written but not flushed
	timer  *time.Timer
	clock  *preciseClock // a Server's (see preciseClock); nil in memory
	tick   chan struct{} // the clock's wake-ups

	late    *latenessHist // the fake's, over real sockets; nil in memory
	dues    []time.Time   // due instants of the events in out (when late is set)
	duesBuf [4]time.Time
	ahead   *aheadWriter    // the clock writes the events (see ahead.go); nil: the session does
	ctx     context.Context // the request's

	enc wire.Encoder // the protocol's writer

	client  context.Context // the client's request: done when it closes (see watchClose)
	gen     atomic.Int64    // tokens generated so far (sv.Tokens, for watchClose)
	atClose atomic.Int64    // gen when the client closed; -1 until then
}

// watchClose notes how many tokens were generated when the client closed
// the request (not when the fake closed); stop ends the watch.
func (s *session) watchClose() (stop func()) {
	s.atClose.Store(-1)
	if s.client == nil {
		return func() {}
	}
	seen := make(chan struct{})
	stopf := context.AfterFunc(s.client, func() {
		s.atClose.Store(s.gen.Load())
		close(seen)
	})
	return func() {
		if !stopf() {
			<-seen // the close was seen: its note is being taken
		} else if s.client.Err() != nil {
			// Closed, and the request's own context (a child of the
			// client's, cancelled first) ended the stream before the watch
			// was told: the same note.
			s.atClose.Store(s.gen.Load())
		}
	}
}

// noteClose fills sv's ClientClosed and AfterClose (see Served) before
// it is recorded.
func (s *session) noteClose() {
	if at := s.atClose.Load(); at >= 0 && s.f.ctx.Err() == nil {
		s.sv.ClientClosed = true
		s.sv.AfterClose = max(0, s.sv.Tokens-int(at))
	}
}

// outBuffers holds streams' output buffers between requests.
var outBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// run plays the request's timeline: first token at admission + TTFT, then
// one event per chunk, stalls and faults where planned; the slot is released
// when generation ends.
func (s *session) run(ctx context.Context) {
	p := &s.f.p
	pl, req, sv := s.pl, s.req, s.sv
	if pl.keep { // the client's close does not end it (afterclose.go)
		gen, stop := generating(ctx, s.f.ctx)
		defer stop()
		ctx = gen
	}
	s.ctx = ctx
	sv.Queued, sv.ColdStart, sv.CacheHit = s.ad.queued, s.ad.coldStart, s.ad.cacheHit
	sv.InFlight = s.ad.inflight
	pl.underLoad(p, s.ad.inflight)
	sv.CachedTokens = min(s.ad.cachedBlocks*cacheBlockChars/4, req.PromptTokens)
	sv.Stall = pl.stall
	sv.Status = http.StatusOK
	var faults []string
	if pl.fault != "" {
		faults = append(faults, pl.fault)
	}
	if pl.stall > 0 {
		faults = append(faults, FaultStall)
	}
	sv.Fault = strings.Join(faults, "+")
	recorded := false
	stopWatch := s.watchClose()
	defer func() {
		stopWatch()
		if !recorded {
			s.noteClose()
			s.f.record(*sv)
		}
	}()

	// Token counts and finish reason under the cap (without max_tokens the
	// cap is the largest max_tokens a request may ask for, as a context
	// limit would be).
	reasoning, content, finish := pl.answerShape(req.MaxTokens)
	total := reasoning + content
	usage, cachedUsage := p.Prefill.usage(req.PromptTokens, sv.CachedTokens) // in the profile's unit
	s.enc = wires[req.proto].Encoder(&wire.State{
		Index: sv.Index, Created: sv.Arrival, Model: p.Model,
		PromptTokens: usage, CachedTokens: cachedUsage, MaxTokens: req.MaxTokens,
		Reasoning: reasoning, OneCall: req.OneCall, IncludeUsage: req.IncludeUsage,
		ToolCall: pl.toolCall, ToolArgs: pl.toolArgs, ToolName: req.ToolName,
	})

	slow := 1 + p.SlowdownPerInflight*float64(s.ad.inflight-1)
	ttft := pl.forcedTTFT
	if ttft == 0 {
		// Prefill is paid per prompt token; a cache hit makes the cached
		// tokens' prefill (scope prefill) or the whole TTFT (scope ttft)
		// cheaper by the factor.
		f := p.PrefixCache.TTFTFactor
		cached, cf := 0, 1.0
		if s.ad.cacheHit && p.PrefixCache.Scope == CacheScopePrefill {
			cached, cf = sv.CachedTokens, f
		}
		x := float64(pl.ttft) + prefillTime(p, pl, req.PromptTokens, cached, cf)
		if s.ad.cacheHit && p.PrefixCache.Scope == CacheScopeTTFT {
			x *= f
		}
		ttft = saturate(x * slow)
	}
	t := s.ad.start.Add(ttft)
	if total > 0 {
		sv.TTFT = t.Sub(sv.Arrival)
	}

	if inj := injected(sv); inj != "" {
		s.w.Header().Set(HeaderInjected, inj)
	}
	if req.Stream {
		ct := "text/event-stream"
		if c, ok := s.enc.(interface{ ContentType() string }); ok {
			ct = c.ContentType() // a protocol that frames its own stream (Bedrock)
		}
		s.w.Header().Set("Content-Type", ct)
		s.w.Header().Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
		s.header = true // flushed before the first wait, or with the first events
		s.initChunks()
	}
	if s.ahead = newAheadWriter(ctx, s); s.ahead != nil {
		// The header (and a protocol's opening events) leave now, through
		// net/http, as before the first wait; the events, through the clock.
		if !s.flushOut() {
			s.ahead = nil
			return
		}
	}
	defer func(a *aheadWriter) {
		if a != nil {
			s.stopAhead(a)
		}
		if s.timer != nil {
			s.timer.Stop()
		}
		s.freeOut()
	}(s.ahead)
	faultAt, stallAt := pl.cuts(total)
	// at applies what is planned before the event that follows `sent`
	// tokens: a stall stretches t; a fault fires. It reports false when the
	// request ended.
	at := func(sent, k int) bool {
		if stallAt >= sent && stallAt < sent+max(k, 1) {
			t = t.Add(pl.stall)
			stallAt = -1
		}
		if faultAt >= sent && faultAt < sent+max(k, 1) {
			faultAt = -1
			if !s.sleep(ctx, t) {
				return false
			}
			if !s.flushOut() {
				return false
			}
			switch pl.fault {
			case FaultDisconnect:
				s.release()
				panic(http.ErrAbortHandler)
			case FaultErrorEvent:
				s.release()
				s.errorEvent(sent)
				return false
			}
			if req.Stream && !s.write(s.enc.Malformed()) {
				return false
			}
		}
		return true
	}

	sent := 0
	first := true
	for sent < total {
		inReasoning := sent < reasoning
		k := pl.chunk(p, sent, reasoning, total)
		if !first {
			for range k {
				t = t.Add(saturate(float64(pl.nextITL(p)) * slow))
			}
		}
		if s.ahead != nil {
			if !at(sent, k) { // the event is handed to the clock below
				return
			}
		} else if !at(sent, k) || !s.sleep(ctx, t) {
			return
		}
		kind := wire.KindText
		switch {
		case inReasoning:
			kind = wire.KindReasoning
		case pl.toolCall:
			kind = wire.KindTool
			sv.ToolCalls, _, _ = pl.toolAt(sent - reasoning)
			sv.ToolCalls++
		}
		if req.Stream {
			s.out = s.enc.Tokens(s.out, sent, k, kind)
		}
		if req.Stream && s.late != nil && s.ahead == nil {
			if s.dues == nil {
				s.dues = s.duesBuf[:0]
			}
			s.dues = append(s.dues, t)
		}
		first = false
		sent += k
		sv.Tokens = sent
		s.gen.Store(int64(sent))
		sv.ReasoningTokens = min(sent, reasoning)
		if s.ahead != nil && !s.handAhead(ctx, t, sent, sv.ReasoningTokens, sv.ToolCalls) {
			return
		}
	}
	if !at(total, 0) || !s.sleep(ctx, t) {
		return
	}
	s.release()
	sv.FinishReason = finish
	s.f.metrics.observe(sv.Arrival, s.ad.start, sv.TTFT, t) // GET /metrics (metrics.go)
	// Generated to the end for nobody: recorded as closed.
	if gone(s) {
		sv.Canceled = true
		return
	}
	// Record before the last write: a client that has seen the end (or
	// [DONE]) finds its request in Served.
	s.f.record(*sv)
	recorded = true
	if !req.Stream {
		s.answer(total, reasoning, finish)
		return
	}
	s.out = s.enc.End(s.out, reasoning, total-reasoning, finish)
	// Not flushed: the handler returns at once, and the server sends the
	// end of the chunked body in the same write, so that a client that
	// reads to the end after [DONE] finds it there and keeps its
	// connection.
	s.noteWrite()
	if _, err := s.w.Write(s.out); err != nil {
		s.sv.Canceled = true
	}
}

// saturate converts nanoseconds to a Duration, saturating instead of
// wrapping around: a huge TTFT stays huge, never instant.
func saturate(ns float64) time.Duration {
	if !(ns < math.MaxInt64) {
		return math.MaxInt64
	}
	return time.Duration(max(ns, 0))
}

// HeaderInjected is the response header that tells a client what the fake
// injected into its request ("stall,cold_start=30s"), so that a failure
// report can name the cause next to the trace ID. Absent when nothing was.
// It is not the fake's own: any server may set it, and latencytest keeps
// it in Record.Injected from whichever server sends it.
const HeaderInjected = "Tailguard-Injected"

// injected renders what was injected: faults, then waits.
func injected(sv *Served) string {
	var parts []string
	if sv.Fault != "" {
		parts = append(parts, strings.Split(sv.Fault, "+")...)
	}
	if sv.ColdStart > 0 {
		parts = append(parts, "cold_start="+sv.ColdStart.Round(time.Millisecond).String())
	}
	if sv.Queued > 0 {
		parts = append(parts, "queued="+sv.Queued.Round(time.Millisecond).String())
	}
	return strings.Join(parts, ",")
}

// errorEvent ends the request with an in-band error after sent tokens, as
// vLLM does when generation fails mid-stream: one event
// data: {"error":{"message":...,"type":"InternalServerError","param":null,"code":500}}
// then data: [DONE]. A request that does not stream gets HTTP 500 with
// OpenAI's error body instead (its header was not sent yet).
func (s *session) errorEvent(sent int) {
	msg := errorMessage(sent)
	if s.req.proto == protoMessages && !s.req.Stream {
		s.sv.Status = 529
		writeAnthropicError(s.w, &apiError{status: 529, message: "Overloaded"})
		return
	}
	if !s.req.Stream {
		s.sv.Status = http.StatusInternalServerError
		writeError(s.w, s.req.proto, &apiError{status: http.StatusInternalServerError, typ: "server_error", message: msg})
		return
	}
	s.write(s.enc.ErrorEvent(nil, msg))
}

// sleep waits until t; false when the request ended first. Events already
// due stay queued (one write for all of them); before a wait they are
// written and flushed.
func (s *session) sleep(ctx context.Context, t time.Time) bool {
	if s.ahead != nil && !s.drainAhead() {
		return false
	}
	d := time.Until(t)
	if d <= 0 {
		if ctx.Err() != nil {
			s.sv.Canceled = true
			return false
		}
		return true
	}
	if !s.flushOut() {
		return false
	}
	if s.clock != nil {
		return s.sleepPrecise(ctx, s.clock, t)
	}
	// One timer per request: a stream sleeps once per event.
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	tm := s.timer
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		s.sv.Canceled = true
		return false
	}
}

// write writes the queued events and b, and flushes.
func (s *session) write(b []byte) bool {
	s.out = append(s.out, b...)
	return s.flushOut()
}

// flushOut writes the queued events (and a header not yet sent) and
// flushes; false when the client is gone.
func (s *session) flushOut() bool {
	if s.ahead != nil && !s.drainAhead() {
		return false
	}
	if len(s.out) == 0 && !s.header {
		return true
	}
	s.header = false
	if gone(s) { // generating for nobody: nothing is written
		s.out, s.dues = s.out[:0], s.dues[:0]
		return true
	}
	if len(s.out) > 0 {
		s.noteWrite()
		_, err := s.w.Write(s.out)
		s.out = s.out[:0]
		if err != nil && s.pl.keep { // the close, seen by the write first
			return true
		}
		if err != nil {
			s.sv.Canceled = true
			return false
		}
	}
	s.flush()
	return true
}

// noteWrite counts the lateness of the events about to be written.
func (s *session) noteWrite() {
	if len(s.dues) == 0 {
		return
	}
	now := time.Now()
	for _, t := range s.dues {
		s.late.add(now.Sub(t))
	}
	s.dues = s.dues[:0]
}

func (s *session) flush() {
	if fl, ok := s.w.(http.Flusher); ok {
		fl.Flush()
	}
}

func (s *session) initChunks() {
	s.outBuf = outBuffers.Get().(*[]byte)
	s.out = s.enc.Start((*s.outBuf)[:0])
}

// freeOut returns the output buffer to the pool (what it held was
// written: writers copy).
func (s *session) freeOut() {
	if s.outBuf != nil {
		*s.outBuf = s.out[:0]
		outBuffers.Put(s.outBuf)
		s.outBuf, s.out = nil, nil
	}
}

// answer writes a non-streaming answer in the protocol's shape.
func (s *session) answer(total, reasoning int, finish string) {
	if s.pl.fault == FaultMalformed {
		s.w.Header().Set("Content-Type", "application/json")
		_, _ = s.w.Write([]byte(`{"id":"chatcmpl-broken","choices":[{"message":`))
		return
	}
	writeJSON(s.w, s.enc.Answer(reasoning, total-reasoning, finish))
}

// sleepPrecise is session.sleep on the fake's clock.
func (s *session) sleepPrecise(ctx context.Context, c *preciseClock, t time.Time) bool {
	if s.tick == nil {
		s.tick = make(chan struct{}, 1)
	}
	select {
	case <-s.tick: // a wake-up left by a wait that ended otherwise
	default:
	}
	c.at(t, s.tick)
	select {
	case <-s.tick:
		return true
	case <-ctx.Done():
		s.sv.Canceled = true
		return false
	}
}

// handAhead hands the events in s.out, due at t, to the clock, and waits
// while the stream is aheadMax events ahead of the clock. If the stream
// left the clock (its client stopped reading), it writes what it handed
// over itself and goes on as a stream without one: it waits until t and
// leaves s.out for its next write. False when the request ended.
func (s *session) handAhead(ctx context.Context, t time.Time, tokens, reasoning, tool int) bool {
	if len(s.out) == 0 { // an empty chunk would end the body
		return true
	}
	a := s.ahead
	a.mu.Lock()
	if a.blocked {
		a.mu.Unlock()
		if !s.drainAhead() {
			return false
		}
		s.dues = append(s.dues[:0], t)
		return s.sleepPrecise(ctx, s.clock, t)
	}
	if a.head > 0 && (len(a.ents) == cap(a.ents) || len(a.buf)+len(s.out)+16 > cap(a.buf)) {
		a.compact()
	}
	a.buf = strconv.AppendInt(a.buf, int64(len(s.out)), 16)
	a.buf = append(a.buf, "\r\n"...)
	a.buf = append(a.buf, s.out...)
	a.buf = append(a.buf, "\r\n"...)
	a.ents = append(a.ents, aheadEntry{due: t, end: len(a.buf), tokens: tokens, reasoning: reasoning, tool: tool})
	s.out = s.out[:0]
	queue := !a.queued
	a.queued = true
	a.mu.Unlock()
	if queue {
		s.clock.atWriter(t, a)
	}
	for {
		a.mu.Lock()
		wait := a.pending() >= aheadMax && !a.blocked
		a.mu.Unlock()
		if !wait {
			return true
		}
		select {
		case <-a.room:
		case <-ctx.Done():
			s.sv.Canceled = true
			return false
		}
	}
}

// drainAhead waits until every event handed to the clock is written; if
// the stream left the clock, it writes them itself, each at its due
// instant or later, and the stream goes on without the clock's writes.
// False when the request ended or the client is gone.
func (s *session) drainAhead() bool {
	a := s.ahead
	for {
		a.mu.Lock()
		n, blocked := a.pending(), a.blocked
		a.mu.Unlock()
		if n == 0 && !blocked {
			return true
		}
		if blocked {
			break
		}
		select {
		case <-a.room:
		case <-s.ctx.Done():
			s.sv.Canceled = true
			return false
		}
	}
	// The clock has let go of the stream (it writes a blocked stream no
	// more): the fields are the goroutine's now.
	for a.head < len(a.ents) {
		e := a.ents[a.head]
		if d := time.Until(e.due); d > 0 && !s.sleepPrecise(s.ctx, s.clock, e.due) {
			return false
		}
		if _, err := a.conn.Write(a.buf[a.off:e.end]); err != nil {
			s.sv.Canceled = true
			return false
		}
		a.late.add(time.Since(e.due))
		a.off, a.head, a.written = e.end, a.head+1, e
	}
	s.ahead = nil // the stream writes its own events from now on
	return true
}

// stopAhead ends the clock's writes for the stream (it returns: its
// handler is done with the connection); a canceled stream's counts are
// those of the events written.
func (s *session) stopAhead(a *aheadWriter) {
	a.mu.Lock()
	a.dead = true
	w := a.written
	a.q.buf, a.q.ents = a.buf[:0], a.ents[:0]
	clear(a.q.ents[:cap(a.q.ents)])
	aheadQueues.Put(a.q)
	a.buf, a.ents, a.q = nil, nil, nil
	a.mu.Unlock()
	if s.ahead == a && s.sv.Canceled {
		s.sv.Tokens, s.sv.ReasoningTokens, s.sv.ToolCalls = w.tokens, w.reasoning, w.tool
	}
}
