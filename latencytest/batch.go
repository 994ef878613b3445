package latencytest

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

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/internal/machine"
	"github.com/tailguard/tailguard/internal/shard"
	"github.com/tailguard/tailguard/servermetrics"
)

// Batch is a closed-loop run: Warmup requests then Requests measured ones,
// at most Concurrency in flight, trace IDs "<Label>-0000" upward in
// submission order. The zero value of every field is its documented
// default.
type Batch struct {
	// Requests is the number of measured requests. Default 75, the
	// fewest that reliably expose cold starts (10-20 miss them).
	Requests int
	// Warmup requests are sent first and discarded by trace ID, in
	// submission order (never by completion order); they stay in the
	// Result, marked; a cold start among them (the first request, one
	// after an idle gap, or one a fake marks cold) is a candidate of
	// Result.ColdStarts, judged on its own (sloassert.MaxColdStart) rather
	// than hidden or averaged into steady state. Default 10 (published benchmarks sent
	// 310 and discarded the first 10); NoWarmup keeps every request.
	Warmup int
	// NoWarmup sends no warm-up request: every request is measured.
	NoWarmup bool
	// Concurrency is the number of requests in flight. Default 1.
	Concurrency int
	// Interval paces request starts: request i starts no earlier than
	// i×Interval after the run began. Default 0: as fast as slots free up.
	Interval time.Duration
	// Mix chooses each request's prompt size and cap. Default DefaultMix.
	Mix Mix
	// Repeat runs the same cell this many times, one after the other, and
	// reports the between-run gap per quantile: the noise floor. Default 1.
	Repeat int
	// Until, when set, makes the batch sequential: it sends Requests
	// measured requests, then, while Until(result so far) returns true (a
	// verdict is still open), sends more in stages that double the
	// measured count (see Stages), up to MaxRequests. Warm-up runs once,
	// first. The result passed to Until holds the records so far, with
	// Planned, Start and Partial set (no disclosure yet). Until requires
	// Repeat 1. sloassert.Sequential builds an Until from objectives and
	// splits their confidence across the stages.
	Until func(r *Result) bool
	// MaxRequests caps a sequential batch's measured requests. Default
	// 4×Requests (three stages: 300, 600, 1200 for Requests 300).
	MaxRequests int
	// RecordMode chooses full or compact records (see RecordMode).
	// Default RecordsAuto: compact above 100,000 planned requests.
	RecordMode RecordMode
	// Load holds the request shape, timeouts, label, location, content
	// keeping and shard (see Load). Sharded, the batch sends request i
	// (warm-up included) when i mod Count == Index, with
	// Concurrency/Count in flight; its Label defaults to "c<Concurrency>".
	Load
	ServerMetrics servermetrics.Source // with a URL: scraped before, during and after each run (each Sweep level) into Result.Server

	into  *Result   // where runRange puts its records (Run sets it)
	slots int       // requests in flight in this shard (normalized)
	align alignment // what Run did about StartAt
}

// Mix is a prompt mix: each request draws a class by weight, from a seeded
// generator keyed by the request's index, so a trace ID always gets the same
// class.
type Mix struct {
	Classes []PromptClass
	// Seed seeds the draws. A zero Mix is DefaultMix (seed 7).
	Seed uint64
}

// PromptClass is one size of prompt.
type PromptClass struct {
	Name         string
	Weight       float64
	PromptTokens int
	MaxTokens    int
}

func (m Mix) orDefault() Mix {
	if len(m.Classes) == 0 {
		return DefaultMix
	}
	return m
}

func (m Mix) validate() error {
	sum := 0.0
	for i, c := range m.Classes {
		switch {
		case c.Name == "":
			return fmt.Errorf("mix class %d has no name", i)
		case !(c.Weight > 0 && c.Weight <= 1):
			return fmt.Errorf("mix class %q: weight %v is outside (0,1]", c.Name, c.Weight)
		case c.PromptTokens < 1:
			return fmt.Errorf("mix class %q: prompt_tokens %d < 1", c.Name, c.PromptTokens)
		case c.MaxTokens < 0:
			return fmt.Errorf("mix class %q: max_tokens %d < 0", c.Name, c.MaxTokens)
		}
		sum += c.Weight
	}
	if len(m.Classes) > 0 && math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("mix weights sum to %v, not 1", sum)
	}
	return nil
}

// class draws the class of request index i.
func (m Mix) class(i int) PromptClass {
	r := randv2.New(randv2.NewPCG(m.Seed, uint64(i)))
	u := r.Float64()
	for _, c := range m.Classes {
		if u < c.Weight {
			return c
		}
		u -= c.Weight
	}
	return m.Classes[len(m.Classes)-1]
}

// String describes the mix for the disclosure.
func (m Mix) String() string {
	parts := make([]string, len(m.Classes))
	for i, c := range m.Classes {
		parts[i] = fmt.Sprintf("%g%% %s (~%d prompt tokens, cap %d)", c.Weight*100, c.Name, c.PromptTokens, c.MaxTokens)
	}
	return strings.Join(parts, ", ") + fmt.Sprintf("; seed %d", m.Seed)
}

// normalized fills defaults and checks the configuration.
func (b Batch) normalized() (Batch, error) {
	if b.Requests == 0 {
		b.Requests = defaultRequests
	}
	switch {
	case b.NoWarmup && b.Warmup > 0:
		return b, fmt.Errorf("latencytest: batch: warmup %d with NoWarmup: choose one", b.Warmup)
	case b.NoWarmup:
		b.Warmup = 0
	case b.Warmup == 0:
		b.Warmup = defaultWarmup
	}
	if b.Concurrency == 0 {
		b.Concurrency = 1
	}
	if b.Repeat == 0 {
		b.Repeat = 1
	}
	b.Mix = b.Mix.orDefault()
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(b.Requests < 0, "requests %d < 0", b.Requests)
	check(b.MaxRequests < 0, "max_requests %d < 0", b.MaxRequests)
	check(b.MaxRequests > 0 && b.MaxRequests < b.Requests, "max_requests %d < requests %d", b.MaxRequests, b.Requests)
	check(b.Until != nil && b.Repeat > 1, "a sequential batch (Until) cannot repeat (repeat %d)", b.Repeat)
	check(b.Warmup < 0, "warmup %d < 0", b.Warmup)
	check(b.Concurrency < 0, "concurrency %d < 0", b.Concurrency)
	check(b.Repeat < 0, "repeat %d < 0", b.Repeat)
	check(b.Interval < 0, "interval %v < 0", b.Interval)
	b.Load, errs = b.Load.normalized(fmt.Sprintf("c%d", b.Concurrency), errs)
	if err := b.Mix.validate(); err != nil {
		errs = append(errs, err)
	}
	if sh := b.Shard; sh.Check() == nil {
		check(b.Until != nil && sh.Sharded(), "a sequential batch (Until) cannot be sharded (%s %s): its stopping rule needs every shard's records", b.shardSrc, sh)
		check(sh.Sharded() && b.Warmup+b.Requests < sh.Count, "%d requests (warm-up included) cannot give each of %d shards one (%s %s)", b.Warmup+b.Requests, sh.Count, b.shardSrc, sh)
		if b.Concurrency > 0 {
			slots, err := shard.Slots(b.Concurrency, sh, b.shardSrc, "concurrency")
			if err != nil {
				errs = append(errs, err)
			}
			b.slots = slots
		}
	}
	if len(errs) > 0 {
		return b, fmt.Errorf("latencytest: batch: %w", errors.Join(errs...))
	}
	return b, nil
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Run sends the batch (Repeat times) and returns every record. It stops
// starting requests when ctx's deadline leaves less than one request's
// limit (TotalTimeout or the hard cap), and says so in Result.Partial. The
// error is for an invalid configuration only: provider failures are
// records.
func (b Batch) Run(ctx context.Context, p Provider) (*Result, error) {
	b, err := b.normalized()
	if err != nil {
		return nil, err
	}
	al, stopped, err := b.waitStart(ctx)
	if err != nil {
		return nil, err
	}
	b.align = al
	res := &Result{Run: Run{Planned: b.Shard.Share(b.Warmup+b.Requests) * b.Repeat, Start: time.Now(), Shard: b.Shard.Mark()}}
	if err := res.keep(ctx, b.RecordMode); err != nil {
		return nil, fmt.Errorf("latencytest: batch: %w", err)
	}
	b.into = res
	defer func(w *servermetrics.Watch) { res.Server = w.Stop() }(b.ServerMetrics.WithModel(describe(p).Model).Watch(ctx)) // nil without a URL
	meter := machine.StartMeter()
	// The provider's connection pool for this concurrency (openai.go),
	// its idle connections closed when the run ends (each sweep level's).
	ctx, endConns := withConcurrency(ctx, b.Concurrency)
	defer endConns()
	// One goroutine ends the requests past their deadlines (deadlines.go).
	ctx, endWatch := watchDeadlines(ctx)
	defer endWatch()
	nonce := newNonceSource(b.NoNonce)
	if stopped != "" {
		res.Partial, res.PartialReason = true, "sent 0 requests: "+stopped
	} else if b.Until != nil {
		b.runStages(ctx, p, nonce, res)
	} else {
		for run := range b.Repeat {
			recs, stopped := b.runOnce(ctx, p, run, nonce)
			res.Records = append(res.Records, recs...)
			if stopped != "" {
				res.Partial, res.PartialReason = true, stopped
				break
			}
		}
	}
	res.End = time.Now()
	res.CPUPerWall = meter.PerWall()
	res.Machine = meter.Stop()
	res.RepeatGaps = repeatGaps(res, b.Repeat)
	res.Disclosure = b.disclose(p, res)
	noteMachine(&res.Disclosure, res.Machine)
	return res, nil
}

// traceID names request i of run r.
func (b Batch) traceID(run, i int) string {
	if run == 0 {
		return fmt.Sprintf("%s-%04d", b.Label, i)
	}
	return fmt.Sprintf("%s-r%d-%04d", b.Label, run, i)
}

// request builds request i.
func (b Batch) request(id string, i int, nonce nonceSource) (Request, string) {
	req := b.Load.request(id, nil)
	class := ""
	var text string
	if b.Prompt != "" {
		text = b.Prompt
	} else {
		c := b.Mix.class(i)
		class = c.Name
		req.prompt = promptFor(c.PromptTokens * 4) // its body is prebuilt (promptbody.go)
		text = req.prompt.text
		if req.MaxTokens == 0 {
			req.MaxTokens = c.MaxTokens
		}
	}
	req.Messages = []Message{{Role: "user", Content: string(appendNonced(make([]byte, 0, defaults.NonceLen+len(text)), nonce, id, text))}}
	return req, class
}

// runOnce sends one run; stopped is non-empty when it stopped early.
func (b Batch) runOnce(ctx context.Context, p Provider, run int, nonce nonceSource) ([]Record, string) {
	return b.runRange(ctx, p, run, nonce, 0, b.Warmup+b.Requests, time.Now())
}

// Stages returns a sequential batch's cumulative measured counts:
// Requests, then doubling, up to MaxRequests (default 4×Requests), the last
// stage capped at MaxRequests: {300, 600, 1200}. Defaults apply (Requests
// 75). It is {Requests} when MaxRequests is not above Requests.
func (b Batch) Stages() []int {
	n := b.Requests
	if n <= 0 {
		n = defaultRequests
	}
	limit := b.MaxRequests
	if limit == 0 {
		limit = 4 * n
	}
	stages := []int{n}
	for n < limit {
		n = min(2*n, limit)
		stages = append(stages, n)
	}
	return stages
}

// runStages runs a sequential batch (Until set) into res.
func (b Batch) runStages(ctx context.Context, p Provider, nonce nonceSource, res *Result) {
	stages := b.Stages()
	start := time.Now()
	done := 0 // measured requests sent so far
	for i, target := range stages {
		if i > 0 && !b.Until(res.snapshot()) {
			return
		}
		res.Planned = b.Warmup + target
		from := 0
		if i > 0 {
			from = b.Warmup + done
		}
		recs, stopped := b.runRange(ctx, p, 0, nonce, from, b.Warmup+target, start)
		res.Records = append(res.Records, recs...)
		done = target
		if stopped != "" {
			res.Partial, res.PartialReason = true, fmt.Sprintf("stage %d of %d: %s", i+1, len(stages), stopped)
			return
		}
	}
}

// runRange sends requests [from, to) of one run (this shard's share of
// them), paced from start; stopped is non-empty when it stopped early.
func (b Batch) runRange(ctx context.Context, p Provider, run int, nonce nonceSource, from, to int, start time.Time) ([]Record, string) {
	var idx []int // the indexes this shard sends
	for i := from; i < to; i++ {
		if b.Shard.Owns(i) {
			idx = append(idx, i)
		}
	}
	recs := b.into.sink(len(idx))
	sem := make(chan struct{}, max(b.slots, 1))
	var wg sync.WaitGroup
	sent, stopped := 0, ""
	for k, i := range idx {
		if stopped = waitTurn(ctx, sem, start.Add(time.Duration(i)*b.Interval), b.limit()); stopped != "" {
			stopped = fmt.Sprintf("sent %d of %d requests in run %d%s: %s", b.Shard.Share(from)+k, b.Shard.Share(to), run, b.shardNote(), stopped)
			break
		}
		id := b.traceID(run, i)
		req, class := b.request(id, i, nonce)
		sent++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rec := p.Call(ctx, req)
			rec.ID, rec.Warmup, rec.Run, rec.Concurrency, rec.PromptClass = id, i < b.Warmup, run, b.Concurrency, class
			rec.PromptChars = promptChars(req)
			if rec.MaxTokens == 0 {
				rec.MaxTokens = req.MaxTokens
			}
			recs.put(k, rec)
		}()
	}
	wg.Wait()
	return recs.done(sent), stopped
}

// shardNote is " (shard i/n)" for a sharded batch, else "".
func (b Batch) shardNote() string {
	if !b.Shard.Sharded() {
		return ""
	}
	return " (shard " + b.Shard.String() + ")"
}

// waitTurn waits for the pacing instant and a free slot; it returns why the
// run must stop instead, if it must.
func waitTurn(ctx context.Context, sem chan struct{}, at time.Time, limit time.Duration) string {
	if d := time.Until(at); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return "the context ended (" + context.Cause(ctx).Error() + ")"
		}
	}
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return "the context ended (" + context.Cause(ctx).Error() + ")"
	}
	if why := timeLeft(ctx, limit); why != "" {
		<-sem
		return why
	}
	return ""
}

// timeLeft says why no request may start now: ctx ended, or its deadline
// leaves less than one request's limit; "" when one may.
func timeLeft(ctx context.Context, limit time.Duration) string {
	if ctx.Err() != nil {
		return "the context ended (" + context.Cause(ctx).Error() + ")"
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < limit {
		return fmt.Sprintf("the deadline (%v away) leaves less than one request's limit (%v)", time.Until(dl).Round(time.Millisecond), limit)
	}
	return ""
}

// nonceSource makes the unique leading nonce: a random per-run ID plus a
// hash of the trace ID, of fixed length, so a real provider's cache cannot
// serve one run's prompts to the next, while the prompt's length (and so
// the fake's prefill cost) never varies.
type nonceSource struct {
	run string // empty: no nonce
}

func newNonceSource(off bool) nonceSource {
	if off {
		return nonceSource{}
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	return nonceSource{run: hex.EncodeToString(b[:])}
}

// prefix returns "[nonce <run>-<hash>] " (38 bytes), or "" when off.
func (n nonceSource) prefix(traceID string) string {
	return string(n.appendPrefix(nil, traceID))
}

// appendPrefix appends prefix(traceID) to b.
func (n nonceSource) appendPrefix(b []byte, traceID string) []byte {
	if n.run == "" {
		return b
	}
	h := uint64(fnvOffset64)
	for i := range len(traceID) {
		h = (h ^ uint64(traceID[i])) * fnvPrime64
	}
	b = append(b, "[nonce "...)
	b = append(b, n.run...)
	b = append(b, '-')
	const hexDigits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[h>>uint(shift)&0xF])
	}
	return append(b, "] "...)
}

// The FNV-1a 64-bit hash's constants (hash/fnv's).
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

const filler = "Measure the tail, not the median: a clean median with a slow p99 means " +
	"some users wait every day. Report p50, p95 and p99 together with the spread, " +
	"the error rate and how the numbers were taken, so that anyone can check them. "

// repeatGaps computes the between-run gaps of TTFT and total time.
func repeatGaps(res *Result, runs int) []disclosure.RepeatGap {
	if runs < 2 {
		return nil
	}
	var out []disclosure.RepeatGap
	for _, metric := range []string{"ttft", "total"} {
		per := make([]Sample, runs)
		for _, rec := range res.All() {
			if rec.Warmup || rec.Run >= runs {
				continue
			}
			v := rec.TTFT
			if metric == "total" {
				v = rec.Total
			}
			if !rec.OK() || v < 0 {
				v = Failed
			}
			per[rec.Run] = append(per[rec.Run], v)
		}
		for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
			g := disclosure.RepeatGap{Metric: metric, Q: q}
			lo, hi := Failed, time.Duration(0)
			for _, s := range per {
				v := s.Quantile(q)
				g.Runs = append(g.Runs, v)
				lo, hi = min(lo, v), max(hi, v)
			}
			switch {
			case hi == Failed:
				g.Gap = math.Inf(1)
			case lo > 0:
				g.Gap = float64(hi-lo) / float64(lo)
			default:
				g.Gap = math.NaN()
			}
			out = append(out, g)
		}
	}
	return out
}

// disclose fills a batch's disclosure.
func (b Batch) disclose(p Provider, res *Result) Disclosure {
	var d Disclosure
	common(&d, describe(p), res.models(), res.Start, res.End, res.CPUPerWall, b.Location, b.align)
	c := res.Counts()
	partial := partialNote(res.Partial, res.PartialReason)
	d.Set(2, fmt.Sprintf("planned %d, sent %d: %d kept, %d discarded (warm-up), %d failed; %d run(s)%s%s",
		c.Planned, c.Sent, c.Kept, c.Discarded, c.Failed, b.Repeat, shardIDs(b.Shard, b.shardSrc, b.Warmup+b.Requests, "request", "trace IDs"), partial), false)
	switch warm := b.Shard.Share(b.Warmup); {
	case b.Warmup > 0 && b.Shard.Sharded() && warm == 0:
		d.Set(4, fmt.Sprintf("no: this shard (%s) sent none of the whole run's %d warm-up requests (more shards than warm-up requests), so its first measured request paid its own connection setup; raise Warmup to at least %d",
			b.Shard, b.Warmup, b.Shard.Count), true)
	case b.Warmup > 0 && b.Shard.Sharded():
		d.Set(4, fmt.Sprintf("yes: the whole run's first %d requests of each run, by submission order; this shard sent %d of them, its own first requests", b.Warmup, warm), false)
	case b.Warmup > 0:
		d.Set(4, fmt.Sprintf("yes: the first %d requests of each run, by submission order", b.Warmup), false)
	default:
		d.Set(4, "no: every request counts", false)
	}
	if b.Warmup > 0 {
		d.Set(6, fmt.Sprintf("the first %d requests are discarded from steady state; a cold start among them (the first request, one after an idle gap) is judged on its own (Result.ColdStarts, sloassert.MaxColdStart); NoWarmup keeps them measured", b.Warmup), false)
	} else {
		d.Set(6, "kept: no request was discarded, so a cold start stays in the figures", false)
	}
	if b.NoNonce {
		d.Set(5, fmt.Sprintf("NO NONCE: prompts repeat, so the provider's cache may serve them (%d cached prompt tokens reported)", res.cachedTokens()), false)
	} else {
		d.Set(5, fmt.Sprintf("every prompt starts with a unique nonce; %d cached prompt tokens reported", res.cachedTokens()), false)
	}
	d.Set(7, fmt.Sprintf("%d request(s) in flight (closed loop)", b.Concurrency)+shardSlots(b.Shard, b.slots), false)
	if b.Interval > 0 {
		d.Set(7, fmt.Sprintf("%d request(s) in flight at most, one started every %v", b.Concurrency, b.Interval)+shardSlots(b.Shard, b.slots), false)
	}
	d.Set(8, fmt.Sprintf("only concurrency %d tested (run a Sweep for three load levels)", b.Concurrency), true)
	if b.Prompt != "" {
		d.Set(10, fmt.Sprintf("one fixed prompt of %d characters (no mix)", len(b.Prompt)), false)
	} else {
		d.Set(10, b.Mix.String(), false)
	}
	caps := "the mix's caps"
	if b.MaxTokens > 0 || b.Prompt != "" {
		caps = fmt.Sprintf("max_tokens %d", b.MaxTokens)
	}
	d.Set(11, fmt.Sprintf("temperature %s; %s; hard cap %v per request", b.temperatureNote(), caps, b.HardCap), b.Temperature == nil)
	if b.Repeat > 1 {
		d.Set(15, fmt.Sprintf("all %d runs kept; run-to-run gap: %s", b.Repeat, gapSummary(res.RepeatGaps)), false)
	} else {
		d.Set(15, "one run, kept whole; no repeat, so no noise floor (set Repeat: 2)", true)
	}
	noteUsage(&d, res)
	return d
}
