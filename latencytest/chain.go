package latencytest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/internal/machine"
	"github.com/tailguard/tailguard/internal/shard"
	"github.com/tailguard/tailguard/servermetrics"
)

// Chain runs agent-style chains: Chains chains of Length sequential calls,
// each call's answer joining the conversation that feeds the next (as an
// agent loop does), up to Concurrency chains at once. Trace IDs are
// "<Label>03-call04". Every call and each chain's measured total are
// recorded. A call the client cancels on purpose (Load.Cancel) ends its
// chain, cancelled (ChainRun.Err "cancelled"): the user abandoned the
// task. The zero value of every field is its documented default.
type Chain struct {
	// Chains is the number of chains. Default 30.
	Chains int
	// Length is the calls per chain. Default 10.
	Length int
	// Concurrency is the chains run at once. Default 1.
	Concurrency int
	// FollowUp is the user message after each answer. Default "Continue.".
	FollowUp string
	// Load holds the request shape, timeouts, label, location, content
	// keeping and shard (see Load). For a chain, Prompt opens each chain
	// (default: one sentence asking for the next step of a plan), NoNonce turns off the per-chain
	// nonce, MaxTokens caps each call (default 64) and Label defaults to
	// "chain". Sharded, this process runs chain i when i mod Count ==
	// Index, Concurrency/Count at once (see Shard).
	Load
	// Tool, when set, is a tool step run after each call of a chain but
	// the last, as an agent runs the tool a model asked for before the
	// next call; chain is the chain's index, call the call just answered.
	// Its wall time (measured around it, so in a synctest bubble a
	// time.Sleep inside it is measured exactly) counts in the chain's
	// Total and ToolTime. An error from it ends the chain, failed with
	// class ClassToolError (its text in ChainRun.ToolErr); an error once
	// ctx has ended cuts the chain short as a canceled call does. With
	// Concurrency above 1 it is called from several goroutines at once.
	// Nil: no tool steps.
	Tool func(ctx context.Context, chain, call int) error
	// Queueing, when set, tells how long the server queued the call with
	// trace ID id (fakeprovider.Fake.QueueTime knows it for a fake); the
	// chain's sum is ChainRun.QueueTime. Nil: unknown, 0 in every run.
	Queueing func(id string) time.Duration
	// ServerMetrics is scraped around the run, as Batch.ServerMetrics, into ChainResult.Server.
	ServerMetrics servermetrics.Source

	slots int       // chains at once in this shard (normalized)
	align alignment // what Run did about StartAt
}

func (c Chain) normalized() (Chain, error) {
	if c.Chains == 0 {
		c.Chains = 30
	}
	if c.Length == 0 {
		c.Length = 10
	}
	if c.Concurrency == 0 {
		c.Concurrency = 1
	}
	if c.Prompt == "" {
		c.Prompt = defaultChainPrompt
	}
	if c.FollowUp == "" {
		c.FollowUp = "Continue."
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = 64
	}
	var errs []error
	for _, x := range []struct {
		bad  bool
		what string
	}{
		{c.Chains < 0, fmt.Sprintf("count %d < 0", c.Chains)},
		{c.Length < 0, fmt.Sprintf("calls %d < 0", c.Length)},
		{c.Concurrency < 0, fmt.Sprintf("concurrency %d < 0", c.Concurrency)},
	} {
		if x.bad {
			errs = append(errs, errors.New(x.what))
		}
	}
	c.Load, errs = c.Load.normalized("chain", errs)
	if sh := c.Shard; sh.Check() == nil {
		if sh.Sharded() && c.Chains < sh.Count {
			errs = append(errs, fmt.Errorf("%d chains cannot give each of %d shards one (%s %s)", c.Chains, sh.Count, c.shardSrc, sh))
		}
		if c.Concurrency > 0 {
			slots, err := shard.Slots(c.Concurrency, sh, c.shardSrc, "concurrency")
			if err != nil {
				errs = append(errs, err)
			}
			c.slots = slots
		}
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("latencytest: chain: %w", errors.Join(errs...))
	}
	return c, nil
}

// Run runs the chains. Like Batch.Run it stops starting calls when ctx's
// deadline leaves less than one call's limit (TotalTimeout or the hard
// cap): no new chain starts, and a chain cut short (by that, or by ctx
// ending during a call) says why in Cut and ends with Err "canceled"
// unless a call failed before; the result says so in Partial. Such a
// chain is partial, not failed (ChainRun.CutShort): sloassert's chain
// objectives judge the finished chains and say how many were cut. The
// error is for an invalid configuration only.
func (c Chain) Run(ctx context.Context, p Provider) (*ChainResult, error) {
	c, err := c.normalized()
	if err != nil {
		return nil, err
	}
	al, waitStopped, err := c.waitStart(ctx)
	if err != nil {
		return nil, err
	}
	c.align = al
	mine := make([]int, 0, c.Shard.Share(c.Chains)) // the chains this shard runs
	for i := range c.Chains {
		if c.Shard.Owns(i) {
			mine = append(mine, i)
		}
	}
	res := &ChainResult{Run: Run{Planned: len(mine), Start: time.Now(), Shard: c.Shard.Mark()}, PlannedCalls: len(mine) * c.Length}
	defer func(w *servermetrics.Watch) { res.Server = w.Stop() }(c.ServerMetrics.WithModel(describe(p).Model).Watch(ctx)) // nil without a URL
	meter := machine.StartMeter()
	// The provider's connection pool (openai.go), its idle connections
	// closed when the run ends.
	ctx, endConns := withConcurrency(ctx, c.Concurrency)
	defer endConns()
	// One goroutine ends the requests past their deadlines (deadlines.go).
	ctx, endWatch := watchDeadlines(ctx)
	defer endWatch()
	nonce := newNonceSource(c.NoNonce)
	limit := c.limit()
	runs := make([]ChainRun, len(mine))
	sem := make(chan struct{}, max(c.slots, 1))
	var wg sync.WaitGroup
	started := 0
	if waitStopped != "" {
		res.Partial, res.PartialReason = true, "started 0 chains: "+waitStopped
		mine = nil
	}
	for k, i := range mine {
		if why := waitTurn(ctx, sem, time.Time{}, limit); why != "" {
			shard := ""
			if c.Shard.Sharded() {
				shard = " (shard " + c.Shard.String() + ")"
			}
			res.Partial, res.PartialReason = true, fmt.Sprintf("started %d of %d chains%s: %s", k, len(mine), shard, why)
			break
		}
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			runs[k] = c.runChain(ctx, p, i, nonce, limit)
		}()
	}
	wg.Wait()
	res.Chains = runs[:started]
	for i := range res.Chains {
		if ch := &res.Chains[i]; ch.Cut != "" && !stoppedByCancel(ch) {
			cut := fmt.Sprintf("chain %s stopped after %d of %d calls: %s", ch.ID, len(ch.Calls), c.Length, ch.Cut)
			if res.Partial {
				cut = res.PartialReason + "; " + cut
			}
			res.Partial, res.PartialReason = true, cut
		}
	}
	res.End = time.Now()
	res.CPUPerWall = meter.PerWall()
	res.Machine = meter.Stop()
	res.Disclosure = c.disclose(p, res)
	noteMachine(&res.Disclosure, res.Machine)
	return res, nil
}

// stoppedByCancel reports whether ch stopped at a call the client
// cancelled on purpose: a planned end, not a partial run.
func stoppedByCancel(ch *ChainRun) bool {
	n := len(ch.Calls)
	return n > 0 && cancelled(&ch.Calls[n-1])
}

// runChain runs chain i: each answer joins the history of the next call.
func (c Chain) runChain(ctx context.Context, p Provider, i int, nonce nonceSource, limit time.Duration) ChainRun {
	run := ChainRun{ID: fmt.Sprintf("%s%02d", c.Label, i)}
	history := []Message{{Role: "user", Content: nonce.prefix(run.ID) + c.Prompt}}
	start := time.Now()
	for k := range c.Length {
		if why := timeLeft(ctx, limit); why != "" {
			run.Cut = why
			if run.Err == "" {
				run.Err = ClassCanceled
			}
			break
		}
		id := fmt.Sprintf("%s-call%02d", run.ID, k)
		req := c.request(id, history)
		if k == 0 { // the opening prompt behind the nonce: its body is prebuilt (promptbody.go)
			req.prompt = templateFor(c.Prompt)
		}
		rec := p.Call(ctx, req)
		rec.ID, rec.Chain, rec.Call, rec.Concurrency, rec.PromptChars = id, i, k, c.Concurrency, promptChars(req)
		if rec.MaxTokens == 0 {
			rec.MaxTokens = c.MaxTokens
		}
		if !rec.OK() && run.Err == "" {
			run.Err = rec.Err
		}
		run.Calls = append(run.Calls, rec)
		if c.Queueing != nil {
			run.QueueTime += c.Queueing(id)
		}
		if rec.Err == ClassCanceled {
			// The run is over; the next call would be canceled too.
			run.Cut = fmt.Sprintf("the run ended during call %d", k)
			break
		}
		if cancelled(&rec) { // the client's cancel ends its task (cancel.go)
			if k < c.Length-1 {
				run.Cut = fmt.Sprintf("call %d cancelled by the client on purpose", k)
			}
			break
		}
		if c.Tool != nil && k < c.Length-1 {
			if stop := c.runTool(ctx, &run, i, k); stop {
				break
			}
		}
		answer := rec.Content
		if answer == "" {
			answer = "(no answer)"
		}
		// A new slice each call: the request just sent keeps its own.
		history = append(history[:len(history):len(history)],
			Message{Role: "assistant", Content: answer}, Message{Role: "user", Content: c.FollowUp})
	}
	run.Total = time.Since(start)
	for j := range run.Calls {
		run.ModelTime += run.Calls[j].Total
	}
	return run
}

// runTool runs the tool step after call k of chain i, adding its wall
// time to run.ToolTime; it reports whether the chain stops.
func (c Chain) runTool(ctx context.Context, run *ChainRun, i, k int) (stop bool) {
	t0 := time.Now()
	err := c.Tool(ctx, i, k)
	run.ToolTime += time.Since(t0)
	run.ToolSteps++
	switch {
	case err == nil:
		return false
	case ctx.Err() != nil:
		run.Cut = fmt.Sprintf("the run ended during the tool step after call %d", k)
		if run.Err == "" {
			run.Err = ClassCanceled
		}
	default:
		if run.Err == "" {
			run.Err = ClassToolError
		}
		run.ToolErr = fmt.Sprintf("tool step after call %d: %v", k, err)
	}
	return true
}

// disclose fills a chain run's disclosure.
func (c Chain) disclose(p Provider, res *ChainResult) Disclosure {
	var d Disclosure
	calls := res.Calls()
	common(&d, describe(p), modelsOf(calls.Records), res.Start, res.End, res.CPUPerWall, c.Location, c.align)
	d.Set(1, disclosure.Measurement+"; chain total measured around each chain", false)
	cnt := calls.Counts()
	partial := partialNote(res.Partial, res.PartialReason)
	failedChains, cut, cancels := 0, 0, 0
	for i := range res.Chains {
		switch ch := &res.Chains[i]; {
		case ch.CutShort():
			cut++
		case ch.Err == classCancelled:
			cancels++
		case !ch.OK():
			failedChains++
		}
	}
	cutNote := ""
	if cut > 0 {
		cutNote = fmt.Sprintf(", %d cut short by the run's end (partial, not failed)", cut)
	}
	if cancels > 0 {
		cutNote += fmt.Sprintf(", %d cancelled by the client on purpose (neither failed nor done)", cancels)
	}
	d.Set(2, fmt.Sprintf("%d of %d chains run (%d with a failed call%s), %d of %d planned calls sent: %d kept, %d failed%s%s",
		len(res.Chains), res.Planned, failedChains, cutNote, cnt.Sent, cnt.Planned, cnt.Kept, cnt.Failed, shardIDs(c.Shard, c.shardSrc, c.Chains, "chain", "trace IDs"), partial), false)
	d.Set(4, "no: every call counts", false)
	d.Set(6, "kept: no call was discarded, so a cold start stays in the figures", false)
	if c.NoNonce {
		d.Set(5, fmt.Sprintf("NO NONCE; %d cached prompt tokens reported (a chain's history is a repeated prefix)", calls.cachedTokens()), false)
	} else {
		d.Set(5, fmt.Sprintf("a unique nonce opens each chain; the history within a chain is a repeated prefix the provider may cache (%d cached prompt tokens reported)", calls.cachedTokens()), false)
	}
	d.Set(7, fmt.Sprintf("%d chain(s) at once, calls within a chain sequential", c.Concurrency)+shardSlots(c.Shard, c.slots), false)
	d.Set(8, fmt.Sprintf("only %d chain(s) at once tested", c.Concurrency), true)
	tools := ""
	if c.Tool != nil {
		tools = "; a tool step (Chain.Tool) after each call but the last, its time in the chain total"
	}
	d.Set(10, fmt.Sprintf("chains of %d calls; fixed opening prompt (%d characters), follow-up %q; each answer joins the history%s", c.Length, len(c.Prompt), c.FollowUp, tools), false)
	d.Set(11, fmt.Sprintf("temperature %s; max_tokens %d per call; hard cap %v per call", c.temperatureNote(), c.MaxTokens, c.HardCap), c.Temperature == nil)
	d.Set(15, "one run, kept whole; no repeat, so no noise floor", true)
	noteUsage(&d, calls)
	return d
}
