package latencytest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/tailguard/tailguard/internal/arrivals"
	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/machine"
	"github.com/tailguard/tailguard/servermetrics"
)

// OpenLoop is an open-loop run: requests start on a schedule (generated
// arrivals at Rate per second, or a replayed Schedule or trace), whether
// or not earlier ones have finished, as independent users do. Each record
// keeps when it was due (Record.Scheduled) and how late it started
// (Record.StartDelay), and Result.FromSchedule measures from the schedule,
// so a stall that makes the client wait (coordinated omission) shows in
// the figures instead of hiding in fewer, later requests. Trace IDs are
// "<Label>-0000" upward in schedule order. The zero value of every field
// but Rate (or a schedule) and Requests or Duration is its documented
// default.
type OpenLoop struct {
	// Rate is the mean arrival rate in requests per second; required (> 0)
	// unless Schedule or Replay is given, and then it must be 0.
	Rate float64
	// Arrivals is the arrival process: "poisson" (the default:
	// exponential gaps of mean 1/Rate, seeded by Seed) or "constant"
	// (request i at exactly i/Rate). Request 0
	// is due at the start either way. It must be "" with a schedule.
	Arrivals string
	// Requests stops the run after this many requests; Duration stops it
	// at the first arrival due at or after this offset from the start.
	// Whichever comes first ends the run; with generated arrivals at least
	// one must be set. A schedule ends the run when it runs out too.
	// Requests in flight when the run stops sending are waited for. A run
	// that would plan more than 10,000,000 requests is refused.
	Requests int
	Duration time.Duration
	// MaxInFlight bounds the requests in flight. A request due while it is
	// full waits for a free slot, and its wait counts in
	// Record.StartDelay and FromSchedule. Default 0: 10,000, a
	// safety cap (a stalled provider at a high rate would otherwise pile up
	// goroutines without bound).
	MaxInFlight int
	// Seed seeds the Poisson gaps (one PCG stream, drawn in order), so the
	// same seed gives the same arrivals. Default 0: seed 7.
	Seed uint64
	// Schedule, when set, replaces the generated arrivals: request i is
	// due Schedule[i] after the start. Offsets must be >= 0 and must not
	// decrease. At most one of Schedule and Replay.
	Schedule []time.Duration
	// Replay, when set, replaces the generated arrivals with a trace
	// (LoadSchedule reads one from a file): request i is due Replay[i].At
	// after the start, with Replay[i]'s prompt size and answer cap when
	// they are set. Same rules as Schedule.
	Replay []Arrival

	// Mix chooses each request's prompt size and cap. Default DefaultMix.
	Mix Mix
	// Load holds the request shape, timeouts, label, location, content
	// keeping and shard (see Load); Label defaults to "ol". Sharded, the
	// run sends arrival i of the whole run's schedule when i mod Count ==
	// Index, so each shard sends at Rate/Count on average and the shards
	// together send exactly the unsharded run's arrivals and trace IDs
	// (see Shard). Requests, Duration and the limit of 10,000,000 requests count the
	// whole run; MaxInFlight bounds each shard.
	Load
	ServerMetrics servermetrics.Source // as Batch.ServerMetrics
	// RecordMode chooses full or compact records (see RecordMode).
	// Default RecordsAuto: compact above 100,000 planned requests.
	RecordMode RecordMode

	into  *Result   // where send puts its records (Run sets it)
	align alignment // what Run did about StartAt
}

// normalized fills defaults and checks the configuration; every error
// names its field.
func (o OpenLoop) normalized() (OpenLoop, error) {
	if o.MaxInFlight == 0 {
		o.MaxInFlight = defaultMaxInFlight
	}
	if o.Seed == 0 {
		o.Seed = defaultArrivalSeed
	}
	o.Mix = o.Mix.orDefault()
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	scheduled := o.Schedule != nil || o.Replay != nil
	check(o.Schedule != nil && o.Replay != nil, "schedule and replay are both set (use one)")
	check(o.Schedule != nil && len(o.Schedule) == 0, "schedule is empty")
	check(o.Replay != nil && len(o.Replay) == 0, "replay is empty")
	if scheduled {
		check(o.Rate != 0, "rate %v is set with a schedule (the schedule replaces the arrivals; leave rate 0)", o.Rate)
		check(o.Arrivals != "", "arrivals %q is set with a schedule (the schedule replaces the arrivals; leave it empty)", o.Arrivals)
	} else {
		check(!(o.Rate > 0) || math.IsInf(o.Rate, 0), "rate %v: want requests per second > 0 (or a schedule)", o.Rate)
		check(o.Arrivals != "" && o.Arrivals != arrivalsPoisson && o.Arrivals != arrivalsConstant,
			"arrivals %q: want %q or %q", o.Arrivals, arrivalsPoisson, arrivalsConstant)
		check(o.Requests == 0 && o.Duration == 0, "requests and duration are both 0 (set one: the run needs an end)")
	}
	for i, d := range o.Schedule {
		if d < 0 {
			check(true, "schedule[%d] %v < 0", i, d)
			break
		}
		if i > 0 && d < o.Schedule[i-1] {
			check(true, "schedule[%d] %v is before schedule[%d] %v (offsets must not decrease)", i, d, i-1, o.Schedule[i-1])
			break
		}
	}
	for i, a := range o.Replay {
		check(a.PromptTokens < 0, "replay[%d]: prompt_tokens %d < 0", i, a.PromptTokens)
		check(a.MaxTokens < 0, "replay[%d]: max_tokens %d < 0", i, a.MaxTokens)
		check(a.PromptTokens > defaults.MaxReplayPromptTokens || a.MaxTokens > defaults.MaxReplayMaxTokens, "replay[%d]: %s", i, overLimit(a))
		if a.At < 0 {
			check(true, "replay[%d]: at %v < 0", i, a.At)
			break
		}
		if i > 0 && a.At < o.Replay[i-1].At {
			check(true, "replay[%d]: at %v is before replay[%d]'s %v (offsets must not decrease)", i, a.At, i-1, o.Replay[i-1].At)
			break
		}
	}
	check(o.Requests < 0, "requests %d < 0", o.Requests)
	check(o.Duration < 0, "duration %v < 0", o.Duration)
	check(o.MaxInFlight < 0, "max_in_flight %d < 0", o.MaxInFlight)
	o.Load, errs = o.Load.normalized("ol", errs)
	if err := o.Mix.validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return o, fmt.Errorf("latencytest: open loop: %w", errors.Join(errs...))
	}
	return o, nil
}

// shardArrivals yields this shard's share of the whole run's arrivals,
// with their indexes in the whole run.
type shardArrivals struct {
	all   *arrivals.Seq
	shard Shard
}

// take returns the next arrival of this shard; ok is false when the
// whole run has none left.
func (s shardArrivals) take() (i int, at time.Duration, ok bool) {
	for {
		i, at, ok = s.all.Take()
		if !ok || s.shard.Owns(i) {
			return i, at, ok
		}
	}
}

// mine returns this shard's arrivals (o normalized).
func (o OpenLoop) mine() shardArrivals { return shardArrivals{all: o.arrivals(), shard: o.Shard} }

// arrivals returns the whole run's schedule from its start (o normalized).
func (o OpenLoop) arrivals() *arrivals.Seq {
	a := &arrivals.Seq{Limit: o.Requests, Until: o.Duration, Constant: o.Arrivals == arrivalsConstant, Rate: o.Rate}
	switch {
	case o.Schedule != nil:
		a.Given = given(len(o.Schedule), func(i int) time.Duration { return o.Schedule[i] })
	case o.Replay != nil:
		a.Given = given(len(o.Replay), func(i int) time.Duration { return o.Replay[i].At })
	case !a.Constant:
		a.Rng = arrivals.Rand(o.Seed)
	}
	return a
}

// batch is a Batch with o's request fields, to build requests with.
func (o OpenLoop) batch() Batch { return Batch{Mix: o.Mix, Load: o.Load} }

// loopStats is what the dispatcher saw.
type loopStats struct {
	fullFor time.Duration // time spent waiting for a free slot under MaxInFlight
	stopped string        // why the run stopped early ("" when it did not)
}

// Run sends the requests on their schedule and returns every record, in
// schedule order. It stops starting requests when ctx ends or its deadline
// leaves less than one request's limit (TotalTimeout or the hard cap)
// after the next request is due, and says so in Result.Partial. The error
// is for an invalid configuration only (it names the field): provider
// failures are records.
func (o OpenLoop) Run(ctx context.Context, p Provider) (*Result, error) {
	o, err := o.normalized()
	if err != nil {
		return nil, err
	}
	// The provider's own transport keeps as many connections as requests
	// may be in flight, so connection setup stays out of the latencies; the
	// idle ones are closed when the run ends.
	ctx, endConns := withConcurrency(ctx, o.MaxInFlight)
	defer endConns()
	// One goroutine ends the requests past their deadlines (deadlines.go).
	ctx, endWatch := watchDeadlines(ctx)
	defer endWatch()
	whole := o.arrivals().Count(maxOpenLoopRequests + 1)
	if whole > maxOpenLoopRequests {
		return nil, fmt.Errorf("latencytest: open loop: the arrivals plan more than %d requests (maxOpenLoopRequests): lower rate or duration, or set requests", maxOpenLoopRequests)
	}
	al, stopped, err := o.waitStart(ctx)
	if err != nil {
		return nil, err
	}
	o.align = al
	res := &Result{Run: Run{Planned: o.Shard.Share(whole), Shard: o.Shard.Mark()}}
	defer func(w *servermetrics.Watch) { res.Server = w.Stop() }(o.ServerMetrics.WithModel(describe(p).Model).Watch(ctx)) // nil without a URL
	meter := machine.StartMeter()
	res.Start = time.Now()
	if err := res.keep(ctx, o.RecordMode); err != nil {
		return nil, fmt.Errorf("latencytest: open loop: %w", err)
	}
	o.into = res
	var st loopStats
	if stopped != "" {
		st.stopped = fmt.Sprintf("sent 0 of %d planned requests: %s", res.Planned, stopped)
	} else {
		res.Records, st = o.send(ctx, p, res.Start, res.Planned)
	}
	res.End = time.Now()
	res.CPUPerWall = meter.PerWall()
	res.Machine = meter.Stop()
	if st.stopped != "" {
		res.Partial, res.PartialReason = true, st.stopped
	}
	res.Disclosure = o.disclose(p, res, st)
	noteMachine(&res.Disclosure, res.Machine)
	return res, nil
}

// send runs the dispatcher: it waits for each request's due time and a
// free slot, then hands it to an idle worker goroutine (or a new one).
func (o OpenLoop) send(ctx context.Context, p Provider, start time.Time, planned int) ([]Record, loopStats) {
	var st loopStats
	recs := o.into.sink(planned)
	b := o.batch()
	nonce := newNonceSource(o.NoNonce)
	replay := newReplayPrompts(o.Replay) // the requests as the trace sizes them (schedule.go)
	sem := make(chan struct{}, o.MaxInFlight)
	jobs := make(chan func()) // to an idle worker
	workers := 0
	var wg sync.WaitGroup
	work := func(job func()) { // a worker: its first job, then others until the run ends
		defer wg.Done()
		for ; job != nil; job = <-jobs {
			job()
		}
	}
	limit := o.limit()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	sent := 0
	shard := ""
	if o.Shard.Sharded() {
		shard = " (shard " + o.Shard.String() + ")"
	}
	k := 0 // this shard's requests so far
	stop := func(_ int, why string) {
		st.stopped = fmt.Sprintf("sent %d of %d planned requests%s: %s", k, planned, shard, why)
	}
	for arr := o.mine(); ; k++ {
		i, at, ok := arr.take()
		if !ok || k >= planned {
			break
		}
		due := start.Add(at)
		if dl, ok := ctx.Deadline(); ok && ctx.Err() == nil && dl.Sub(due) < limit {
			stop(i, fmt.Sprintf("the deadline leaves less than one request's limit (%v) after request %d is due (%v after the start)", limit, i, at))
			break
		}
		if d := time.Until(due); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				stop(i, "the context ended ("+context.Cause(ctx).Error()+")")
			}
		}
		if st.stopped != "" {
			break
		}
		select {
		case sem <- struct{}{}:
		default: // every slot is taken: wait, and the wait counts
			full := time.Now()
			select {
			case sem <- struct{}{}:
				st.fullFor += time.Since(full)
			case <-ctx.Done():
				stop(i, "the context ended ("+context.Cause(ctx).Error()+")")
			}
		}
		if st.stopped != "" {
			break
		}
		if why := timeLeft(ctx, limit); why != "" {
			<-sem
			stop(i, why)
			break
		}
		id := fmt.Sprintf("%s-%04d", o.Label, i)
		req, class := replay.request(b, id, i, nonce)
		sent++
		slot := k
		job := func() {
			defer func() { <-sem }()
			began := time.Now()
			rec := p.Call(ctx, req)
			delay := max(began.Sub(due), 0)
			rec.ID, rec.PromptClass, rec.PromptChars = id, class, promptChars(req)
			rec.OpenLoop, rec.Scheduled, rec.StartDelay, rec.FromSchedule = true, at, delay, delay+rec.Total
			if rec.MaxTokens == 0 {
				rec.MaxTokens = req.MaxTokens
			}
			recs.put(slot, rec)
		}
		// An idle worker takes the request, else a new one: workers are
		// reused, so each request does not pay for a new goroutine's
		// stack growing through the call. Holding a slot, this request is
		// at most the MaxInFlight-th in flight: with MaxInFlight workers,
		// one is idle or about to be.
		select {
		case jobs <- job:
		default:
			if workers < o.MaxInFlight {
				workers++
				wg.Add(1)
				go work(job)
			} else {
				jobs <- job
			}
		}
	}
	close(jobs)
	wg.Wait()
	return recs.done(sent), st
}

// describeArrivals renders the arrivals for the disclosure's box 7.
func (o OpenLoop) describeArrivals(planned int) string {
	inFlight := fmt.Sprintf("at most %d in flight", o.MaxInFlight)
	if o.MaxInFlight == defaultMaxInFlight {
		inFlight += " (the default safety cap)"
	}
	var offsets []time.Duration
	switch {
	case o.Schedule != nil:
		offsets = o.Schedule
	case o.Replay != nil:
		offsets = make([]time.Duration, len(o.Replay))
		for i, a := range o.Replay {
			offsets[i] = a.At
		}
	default:
		kind := o.Arrivals
		if kind == "" {
			kind = arrivalsPoisson
		}
		seed := ""
		if kind == arrivalsPoisson {
			seed = fmt.Sprintf(" (seed %d)", o.Seed)
		}
		return fmt.Sprintf("open loop: %s arrivals at %g/s%s, %s", kind, o.Rate, seed, inFlight)
	}
	what := "a replayed schedule"
	if o.Replay != nil {
		what = "a replayed trace"
	}
	n := min(planned, len(offsets))
	if n < 2 || offsets[n-1] == offsets[0] {
		return fmt.Sprintf("open loop: %s of %d arrival(s), %s", what, n, inFlight)
	}
	span := offsets[n-1] - offsets[0]
	return fmt.Sprintf("open loop: %s of %d arrivals over %v (%.3g/s on average), %s",
		what, n, span.Round(time.Millisecond), float64(n-1)/span.Seconds(), inFlight)
}

// disclose fills an open loop's disclosure.
func (o OpenLoop) disclose(p Provider, res *Result, st loopStats) Disclosure {
	var d Disclosure
	common(&d, describe(p), res.models(), res.Start, res.End, res.CPUPerWall, o.Location, o.align)
	c := res.Counts()
	partial := partialNote(res.Partial, res.PartialReason)
	whole := ""
	if o.Shard.Sharded() {
		whole = shardIDs(o.Shard, o.shardSrc, o.arrivals().Count(maxOpenLoopRequests), "arrival", "trace IDs")
	}
	d.Set(2, fmt.Sprintf("planned %d, sent %d: %d kept, %d failed; 1 run%s%s", c.Planned, c.Sent, c.Kept, c.Failed, whole, partial), false)
	d.Set(4, "no: every request counts (an open loop has no warm-up)", false)
	d.Set(6, "kept: no request was discarded, so a cold start stays in the figures", false)
	if o.NoNonce {
		d.Set(5, fmt.Sprintf("NO NONCE: prompts repeat, so the provider's cache may serve them (%d cached prompt tokens reported)", res.cachedTokens()), false)
	} else {
		d.Set(5, fmt.Sprintf("every prompt starts with a unique nonce; %d cached prompt tokens reported", res.cachedTokens()), false)
	}
	arrivals := o.describeArrivals(o.arrivals().Count(maxOpenLoopRequests))
	if o.Shard.Sharded() {
		arrivals += fmt.Sprintf("; shared by %d shards, each sending one arrival in %d of that schedule", o.Shard.Count, o.Shard.Count)
		if o.Rate > 0 {
			arrivals += fmt.Sprintf(" (%g/s on average)", o.Rate/float64(o.Shard.Count))
		}
	}
	d.Set(7, arrivals, false)
	d.Set(8, "only one arrival pattern tested (run open loops at several rates for three load levels)", true)
	prompts := o.Mix.String()
	if o.Prompt != "" {
		prompts = fmt.Sprintf("one fixed prompt of %d characters (no mix)", len(o.Prompt))
	}
	replayed, capped := 0, 0
	for _, a := range o.Replay {
		if a.PromptTokens > 0 {
			replayed++
		}
		if a.MaxTokens > 0 {
			capped++
		}
	}
	if o.Replay != nil && (replayed > 0 || capped > 0) {
		prompts = fmt.Sprintf("prompt sizes from the trace for %d of %d arrivals, answer caps for %d; otherwise %s", replayed, len(o.Replay), capped, prompts)
	}
	d.Set(10, prompts, false)
	caps := "the mix's caps"
	if o.MaxTokens > 0 || o.Prompt != "" {
		caps = fmt.Sprintf("max_tokens %d", o.MaxTokens)
	}
	if capped > 0 {
		caps += " (the trace's caps where it has them)"
	}
	d.Set(11, fmt.Sprintf("temperature %s; %s; hard cap %v per request", o.temperatureNote(), caps, o.HardCap), o.Temperature == nil)
	b13 := d.Box(13)
	d.Set(13, b13.Answer+"; "+res.lagNote(o, st), b13.Missing)
	d.Set(15, "one run, kept whole; no repeat, so no noise floor (run it twice)", true)
	noteUsage(&d, res)
	return d
}
