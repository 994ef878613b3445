// Package agent runs agent workloads against a latencytest.Provider:
// multi-turn conversations (Conversation) whose history grows turn by
// turn, judged per turn index and per session.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	randv2 "math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/tailguard/tailguard/internal/cancel"
	"github.com/tailguard/tailguard/internal/resultbuild"
	"github.com/tailguard/tailguard/latencytest"
)

// Conversation runs multi-turn chat sessions, as a chat product's users
// hold them: each turn sends the whole history so far (the opening
// message, every answer, every later user message, oldest first) plus a
// new user message, so prompt tokens grow turn by turn and every earlier
// turn is a byte-identical prefix a server's prefix cache can serve;
// between turns the user thinks for a time drawn from ThinkTime. Sessions
// sessions of Turns turns run, up to Concurrency at once. Trace IDs are
// "<Label>003-turn01" (session from 0, turn from 1), and each Record
// carries Session and Turn. A failed turn ends its session (Session.Err);
// a turn the client cancelled on purpose (Cancel) does not: its partial
// answer joins the history, as a chat window keeps it, and the session is
// cancelled (Err "cancelled" unless a turn failed): its total, cut short
// by the cancel, is no whole session's, so session objectives count it
// as a cancelled chain (Failed in totals, in neither part of the error
// rate). No turn is
// discarded as warm-up: a session's first turn is judged as turn 1. The
// zero value of every field is its documented default.
type Conversation struct {
	// Sessions is the number of sessions. Default 10.
	Sessions int
	// Turns is the turns per session. Default 10.
	Turns int
	// Concurrency is the sessions in flight. Default 1.
	Concurrency int
	// ThinkTime is the user's pause after each answer but the last, before
	// the next turn is sent. Default: none.
	ThinkTime ThinkTime
	// OpenTokens is the size of a session's opening message in tokens
	// (about 4 characters each, its nonce included). Default 200.
	OpenTokens int
	// TurnTokens is the size of each later user message. Default 50.
	TurnTokens int
	// MaxTokens caps each answer. Default 64.
	MaxTokens int
	// Temperature is sent when set (in [0, 2]).
	Temperature *float64
	// FirstTokenTimeout, TotalTimeout and HardCap bound each turn as in
	// latencytest.Load (0: none; the hard cap latencytest.DefaultHardCap).
	FirstTokenTimeout, TotalTimeout, HardCap time.Duration
	// NoNonce turns off the unique leading nonce of each session (one per
	// session, so its own turns share their prefix and no other session's
	// or run's can). Default: a nonce.
	NoNonce bool
	// Cancel makes the client cancel some turns on purpose (see
	// latencytest.Cancel). Zero: none.
	Cancel latencytest.Cancel
	// Label prefixes trace IDs, without white space. Default "conv".
	Label string
	// Seed seeds the think-time draws (one per session and turn, so
	// concurrency never changes them). Default 0.
	Seed uint64
}

// ThinkTime is a distribution of think times: fixed at Median when P99 is
// 0, else lognormal with that median and 99th percentile.
type ThinkTime struct {
	Median time.Duration
	P99    time.Duration
}

// check says what is wrong with t ("" when nothing).
func (t ThinkTime) check() string {
	switch {
	case t.Median < 0:
		return fmt.Sprintf("think_time median %v < 0", t.Median)
	case t.P99 != 0 && t.P99 < t.Median:
		return fmt.Sprintf("think_time p99 %v < median %v", t.P99, t.Median)
	case t.P99 > 0 && t.Median == 0:
		return fmt.Sprintf("think_time p99 %v without a median", t.P99)
	}
	return ""
}

// draw is the think time after turn of session, from seed.
func (t ThinkTime) draw(seed uint64, session, turn int) time.Duration {
	if t.P99 == 0 || t.P99 == t.Median {
		return t.Median
	}
	r := randv2.New(randv2.NewPCG(seed, uint64(session)<<32|uint64(turn)))
	sigma := math.Log(float64(t.P99)/float64(t.Median)) / z99
	return time.Duration(float64(t.Median) * math.Exp(sigma*r.NormFloat64()))
}

// z99 is the standard normal's 0.99 quantile.
const z99 = 2.3263478740408408

// ConversationResult is what a conversation run measured.
type ConversationResult struct {
	// Sessions holds each session as a chain of turns: Calls are its
	// turns in order, Total is measured around the whole session (think
	// times included; they are its ToolTime, over ToolSteps pauses, so a
	// prediction from single turns compares the turns' ModelTime), Err
	// the class of the turn that failed it
	// ("cancelled" for a session with a turn the client cancelled and
	// none failed), so sloassert.ChainQ and MaxChainErrorRate judge
	// sessions.
	Sessions *latencytest.ChainResult
	// Think is each session's think times: Think[s][k] was waited after
	// turn k+1 of session s.
	Think [][]time.Duration
}

// Turns returns every turn of every session as one Result (sessions in
// order, each turn's Record with Session and Turn set).
func (r *ConversationResult) Turns() *latencytest.Result {
	return r.Sessions.Calls()
}

// Turn returns turn k (from 1) of every session that sent it as one
// Result, so objectives judge a turn index: sloassert.Evaluate(r.Turn(10),
// sloassert.Q(sloassert.TTFT, 0.95, budget)). It is empty when no
// session reached turn k.
func (r *ConversationResult) Turn(k int) *latencytest.Result {
	b := resultbuild.New().(builder)
	for _, s := range r.Sessions.Chains {
		for i := range s.Calls {
			if s.Calls[i].Turn == k {
				b.Add(&s.Calls[i])
			}
		}
	}
	res := b.Result("")
	res.CPUPerWall = r.Sessions.CPUPerWall
	return res
}

// builder is the methods of resultbuild's builder used here.
type builder interface {
	Add(*latencytest.Record)
	Box(n int, answer string, missing bool)
	Result(partial string) *latencytest.Result
}

// normalized fills the defaults and checks the configuration.
func (c Conversation) normalized() (Conversation, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Sessions, 10)
	def(&c.Turns, 10)
	def(&c.Concurrency, 1)
	def(&c.OpenTokens, 200)
	def(&c.TurnTokens, 50)
	def(&c.MaxTokens, 64)
	if c.Label == "" {
		c.Label = "conv"
	}
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.Sessions < 0, "sessions %d < 0", c.Sessions)
	check(c.Turns < 0, "turns %d < 0", c.Turns)
	check(c.Concurrency < 0, "concurrency %d < 0", c.Concurrency)
	check(c.OpenTokens < 0, "open_tokens %d < 0", c.OpenTokens)
	check(c.TurnTokens < 0, "turn_tokens %d < 0", c.TurnTokens)
	check(c.MaxTokens < 0, "max_tokens %d < 0", c.MaxTokens)
	check(c.OpenTokens > maxMessageTokens || c.TurnTokens > maxMessageTokens, "a message of more than %d tokens", maxMessageTokens)
	check(c.Temperature != nil && !(*c.Temperature >= 0 && *c.Temperature <= 2), "temperature outside [0,2]")
	check(c.FirstTokenTimeout < 0 || c.TotalTimeout < 0 || c.HardCap < 0, "a negative timeout")
	check(strings.ContainsAny(c.Label, " \t\n"), "label %q contains white space", c.Label)
	if why := c.ThinkTime.check(); why != "" {
		errs = append(errs, errors.New(why))
	}
	if err := c.Cancel.Check(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("agent: conversation: %w", errors.Join(errs...))
	}
	return c, nil
}

// maxMessageTokens is the largest user message a conversation builds
// (1,000,000 tokens, 4 MB of text).
const maxMessageTokens = 1_000_000

// Run runs the sessions. It stops starting sessions when ctx ends; a
// session that ctx ends mid-turn ends with that turn's class. The error
// is for an invalid configuration only: a provider's failures are
// records.
func (c Conversation) Run(ctx context.Context, p latencytest.Provider) (*ConversationResult, error) {
	c, err := c.normalized()
	if err != nil {
		return nil, err
	}
	nonce := ""
	if !c.NoNonce {
		var b [6]byte
		_, _ = rand.Read(b[:])
		nonce = hex.EncodeToString(b[:])
	}
	cr := &latencytest.ChainResult{Run: latencytest.Run{Planned: c.Sessions, Start: time.Now(), CPUPerWall: math.NaN()}, PlannedCalls: c.Sessions * c.Turns}
	out := &ConversationResult{Sessions: cr, Think: make([][]time.Duration, c.Sessions)}
	runs := make([]latencytest.ChainRun, c.Sessions)
	sem := make(chan struct{}, c.Concurrency)
	var wg sync.WaitGroup
	started := 0
	for s := range c.Sessions {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			cr.Partial, cr.PartialReason = true, fmt.Sprintf("started %d of %d sessions: the context ended (%v)", s, c.Sessions, context.Cause(ctx))
			break
		}
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			runs[s], out.Think[s] = c.session(ctx, p, s, nonce)
		}()
	}
	wg.Wait()
	cr.Chains, out.Think = runs[:started], out.Think[:started]
	cr.End = time.Now()
	cr.Disclosure = c.disclose(out)
	return out, nil
}

// session runs session s.
func (c Conversation) session(ctx context.Context, p latencytest.Provider, s int, nonce string) (latencytest.ChainRun, []time.Duration) {
	run := latencytest.ChainRun{ID: fmt.Sprintf("%s%03d", c.Label, s)}
	var think []time.Duration
	var msgs []latencytest.Message
	start := time.Now()
	for turn := 1; turn <= c.Turns; turn++ {
		if turn > 1 {
			d := c.ThinkTime.draw(c.Seed, s, turn-1)
			think = append(think, d)
			if !sleep(ctx, d) {
				run.Err, run.Cut = latencytest.ClassCanceled, fmt.Sprintf("the context ended before turn %d", turn)
				break
			}
		}
		msgs = append(msgs, latencytest.Message{Role: "user", Content: c.userMessage(nonce, s, turn)})
		req := c.request(fmt.Sprintf("%s-turn%02d", run.ID, turn), msgs)
		rec := p.Call(ctx, req)
		rec.ID, rec.Session, rec.Turn, rec.Concurrency, rec.PromptChars = req.ID, s, turn, c.Concurrency, promptChars(req)
		if rec.MaxTokens == 0 {
			rec.MaxTokens = req.MaxTokens
		}
		run.Calls = append(run.Calls, rec)
		run.ModelTime += rec.Total
		if rec.Err == cancel.Class && run.Err == "" {
			run.Err = cancel.Class // the session goes on, but its total is not a whole session's
		}
		if !rec.OK() && rec.Err != cancel.Class {
			run.Err = rec.Err
			if turn < c.Turns {
				run.Cut = fmt.Sprintf("turn %d failed (%s)", turn, rec.Err)
			}
			break
		}
		msgs = append(msgs, latencytest.Message{Role: "assistant", Content: rec.Content})
	}
	run.Total = time.Since(start)
	for _, d := range think { // the session's time outside the model, as a chain's tool steps
		run.ToolTime, run.ToolSteps = run.ToolTime+d, run.ToolSteps+1
	}
	return run, think
}

// request is the request of one turn.
func (c Conversation) request(id string, msgs []latencytest.Message) latencytest.Request {
	req := latencytest.Request{ID: id, Messages: append([]latencytest.Message(nil), msgs...), MaxTokens: c.MaxTokens,
		Temperature: c.Temperature, FirstTokenTimeout: c.FirstTokenTimeout, TotalTimeout: c.TotalTimeout, HardCap: c.HardCap}
	req.CancelAfter, req.CancelAfterTokens = c.Cancel.For(id)
	return req
}

// userMessage is the user's message of a turn: the opening message
// (OpenTokens×4 characters, starting with the session's nonce) or a
// later one (TurnTokens×4 characters). Its length never depends on the
// nonce.
func (c Conversation) userMessage(nonce string, s, turn int) string {
	n := c.TurnTokens * 4
	head := fmt.Sprintf("Turn %d. ", turn)
	if turn == 1 {
		n = c.OpenTokens * 4
		head = fmt.Sprintf("[nonce %12s-%06d] ", nonce, s%1_000_000)
		if c.NoNonce {
			head = ""
		}
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(head)
	for b.Len() < n {
		b.WriteString(filler)
	}
	return b.String()[:max(n, 0)]
}

const filler = "Keep the conversation going: answer the last question briefly and ask what the user wants to do next. "

// sleep waits d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// disclose says how the conversations were run: disclosure boxes 4
// (warm-up), 5 (nonce and cache), 7 (concurrency), 10 (prompt sizes) and
// 11 (sampling and caps).
func (c Conversation) disclose(r *ConversationResult) latencytest.Disclosure {
	b := resultbuild.New().(builder)
	b.Box(4, "no: every turn counts, the first turn of each session judged as turn 1", false)
	cached := 0
	for _, s := range r.Sessions.Chains {
		for i := range s.Calls {
			cached += s.Calls[i].CachedTokens
		}
	}
	nonce := "each session starts with a unique nonce, so only its own earlier turns can be cached"
	if c.NoNonce {
		nonce = "NO NONCE: sessions open alike, so a server's cache may serve one session's prefix to another"
	}
	b.Box(5, fmt.Sprintf("%s; each turn resends the history, its earlier turns a byte-identical prefix; %d cached prompt tokens reported", nonce, cached), false)
	load := fmt.Sprintf("%d session(s) in flight (closed loop), think time %s between turns (seed %d)", c.Concurrency, c.ThinkTime, c.Seed)
	if cs := c.Cancel.String(); cs != "" {
		load += "; " + cs
	}
	b.Box(7, load, false)
	b.Box(10, fmt.Sprintf("opening message ~%d tokens, each later user message ~%d tokens, plus the history", c.OpenTokens, c.TurnTokens), false)
	temp := "provider default (not sent)"
	if c.Temperature != nil {
		temp = fmt.Sprint(*c.Temperature)
	}
	b.Box(11, fmt.Sprintf("temperature %s; max_tokens %d per turn", temp, c.MaxTokens), c.Temperature == nil)
	return b.Result("").Disclosure
}

// String renders the distribution: "2s" fixed, "lognormal median 2s
// p99 20s", "none".
func (t ThinkTime) String() string {
	switch {
	case t.Median == 0:
		return "none"
	case t.P99 == 0 || t.P99 == t.Median:
		return t.Median.String()
	}
	return fmt.Sprintf("lognormal median %v p99 %v", t.Median, t.P99)
}
