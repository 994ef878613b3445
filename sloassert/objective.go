package sloassert

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/stats"
	"github.com/tailguard/tailguard/latencytest"
)

// Metric names a latency clock of a Result.
type Metric string

// The metrics objectives can judge.
const (
	TTFT        Metric = "ttft"         // time to first token of any kind
	FirstAnswer Metric = "first_answer" // time to the first answer token
	Total       Metric = "total"        // time to the end of the response
	ITL         Metric = "itl"          // inter-token gaps, pooled over tokens
	MaxGap      Metric = "max_gap"      // each request's longest silence (stall)
	// FromSchedule is an open-loop request's total from its scheduled
	// send, its start delay included: coordinated omission cannot hide a
	// stall. A request not sent by an open loop is Failed in it.
	FromSchedule Metric = "from_schedule"
	// TTFTFromSchedule is the first token from the scheduled send.
	TTFTFromSchedule Metric = "ttft_from_schedule"
)

// allMetrics lists the latency metrics.
var allMetrics = []Metric{TTFT, FirstAnswer, Total, ITL, MaxGap, FromSchedule, TTFTFromSchedule}

// Sample returns the metric's sample from r: one value per measured
// request (ITL: every gap, pooled), a failed request as
// latencytest.Failed. A successful request that never saw a token event
// and reports a zero TTFT (a custom Provider that does not time tokens)
// did not observe its TTFT or first answer: they count as Failed too, so
// an unmeasured clock cannot pass.
func (m Metric) Sample(r *latencytest.Result) (latencytest.Sample, error) {
	switch m {
	case TTFT:
		return r.TTFT(), nil
	case FirstAnswer:
		return r.FirstAnswer(), nil
	case Total:
		return r.Total(), nil
	case ITL:
		return r.ITL(), nil
	case MaxGap:
		return r.MaxGap(), nil
	case FromSchedule:
		return r.FromSchedule(), nil
	case TTFTFromSchedule:
		return r.TTFTFromSchedule(), nil
	}
	return nil, fmt.Errorf("sloassert: unknown metric %q (want ttft, first_answer, total, itl, max_gap, from_schedule or ttft_from_schedule)", string(m))
}

// Option changes how an objective is judged. Q, ChainQ and Task.Objective
// take options; Objective.With adds them to any objective.
type Option func(*options)

type options struct {
	notes        []string
	allowSmall   bool
	allowPartial bool
	allowShard   bool
	mode         mode
	confidence   float64 // of Demonstrate/Refute, and of the interval shown
	split        string  // how Sequential split the confidence, for the report
	window       time.Duration
	idle         time.Duration // MaxColdStart's idle gap, when idleSet
	idleSet      bool
}

type mode int

const (
	modePoint       mode = iota // the observed quantile against the budget
	modeDemonstrate             // the upper confidence bound must be within budget
	modeRefute                  // fails only when the lower bound is over budget
)

// defaultConfidence is the confidence of the interval every quantile row
// shows, and of the point policy's inconclusive verdict: 95%.
const defaultConfidence = 0.95

// AllowSmallSample judges a quantile on fewer samples than the rule
// n >= ceil(1/min(q, 1-q)) asks (p99: 100; p1: 100). The report says so.
func AllowSmallSample() Option { return func(o *options) { o.allowSmall = true } }

// AllowPartial judges a result that its run cut short (Result.Partial: a
// deadline stopped it before it sent every request) on what did run. By
// default a partial result fails every objective, and the report says how
// much ran and why it stopped. It is also how Compare.Evaluate and
// Regression accept a partial run on either side.
func AllowPartial() Option { return func(o *options) { o.allowPartial = true } }

// Demonstrate passes only when the distribution-free upper bound on the
// quantile at this confidence (a fraction: 0.95) is within budget: the
// data show the SLO is met. An inconclusive row fails. p99 at 0.95 needs
// n >= 299 (below that the bound does not exist and the row fails).
func Demonstrate(confidence float64) Option {
	return func(o *options) { o.mode, o.confidence = modeDemonstrate, confidence }
}

// Refute fails only when the distribution-free lower bound on the quantile
// at this confidence (a fraction: 0.95) is over budget: the data show the
// SLO is broken. An inconclusive row passes. For noisy shared CI runners.
// The lower bound needs only 1-(1-q)^n >= confidence, so Refute at p99
// works from the sample-size rule's n = 100 (at 0.95 its bound is X(97)).
func Refute(confidence float64) Option {
	return func(o *options) { o.mode, o.confidence = modeRefute, confidence }
}

// PerWindow judges the objective on every window of length d of the run
// (latencytest.Result.Windows: a 48-hour soak in 6-hour windows gives 8),
// for drift over time: it passes only when every window passes, and the
// row names the worst window and lists each window's figure. Each window
// is judged on its own requests, with every rule (sample size, interval)
// applied per window, and the confidence c of a quantile's interval,
// Demonstrate or Refute split over the k windows (Bonferroni: each window
// at 1-(1-c)/k), so the run's verdict is wrong with probability at most
// 1-c, as for one look. A d that is not positive, or that would cut the run
// into more than 100,000 windows (PerWindow(6) is 6 ns),
// fails the objective and says why.
func PerWindow(d time.Duration) Option { return func(o *options) { o.window = d } }

// Note adds a line to the objective's outcome (a planning figure, where a
// spec wrote it); it changes nothing that gates.
func Note(s string) Option { return func(o *options) { o.notes = append(o.notes, s) } }

// Confidence sets the confidence of the interval shown for a quantile
// under the point policy (default 0.95), without changing
// what gates.
func Confidence(c float64) Option {
	return func(o *options) {
		if o.mode == modePoint {
			o.confidence = c
		}
	}
}

// compareProblem names an option a baseline comparison does not take
// (all but AllowPartial and AllowShard), or is nil.
func (o options) compareProblem() error {
	var names []string
	for _, x := range []struct {
		set  bool
		name string
	}{
		{o.allowSmall, "AllowSmallSample"}, {o.mode == modeDemonstrate, "Demonstrate"}, {o.mode == modeRefute, "Refute"},
		{o.mode == modePoint && o.confidence != 0, "Confidence"}, {o.window != 0, "PerWindow"},
		{len(o.notes) > 0, "Note"}, {o.idleSet, "AfterIdle"},
	} {
		if x.set {
			names = append(names, x.name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("sloassert: compare: %s does not apply to a baseline comparison (AllowPartial and AllowShard do)", strings.Join(names, ", "))
}

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// confidenceProblem says what is wrong with a confidence, or "".
func (o options) confidenceProblem() string {
	c := o.confidence
	if c == 0 && o.mode == modePoint {
		return ""
	}
	if c > 0 && c < 1 {
		return ""
	}
	what := map[mode]string{modePoint: "Confidence", modeDemonstrate: "Demonstrate", modeRefute: "Refute"}[o.mode]
	if c >= 1 && c < 100 {
		return fmt.Sprintf("%s(%g): confidence is a fraction in (0,1), write %g for %g%%", what, c, c/100, c)
	}
	return fmt.Sprintf("%s(%g): confidence is a fraction in (0,1) (0.95 for 95%%)", what, c)
}

func (o options) conf() float64 {
	if o.confidence == 0 {
		return defaultConfidence
	}
	return o.confidence
}

// Objective is one thing a result, a sweep's levels or measured chains
// are judged on. Build it with Q, MaxCV, MaxTailRatio, MaxErrorRate,
// MinDecodeRate, NoCacheHits, MaxStall, MaxColdStart or MinGoodput (they
// judge a result's requests, and each level of a sweep), or with ChainQ or
// MaxChainErrorRate (they judge measured chains). An objective judged on
// the other kind of subject fails and says so, as does a zero-value
// Objective: it judges nothing.
type Objective struct {
	// Name says what is judged: "ttft p99 <= 1.5s".
	Name  string
	opts  options
	judge func(r *latencytest.Result, o options) Outcome
	// chains judges measured chains (ChainQ, MaxChainErrorRate); nil for
	// an objective on a result's requests.
	chains func(cr *latencytest.ChainResult, o options) Outcome
}

// With returns the objective with more options (AllowPartial,
// AllowSmallSample, Demonstrate, Refute, Confidence); options that do not
// apply to its kind are ignored.
func (o Objective) With(opts ...Option) Objective {
	for _, f := range opts {
		f(&o.opts)
	}
	return o
}

// Verdict is what the data say about an objective: pass, fail, or
// inconclusive (a quantile's budget lies inside its confidence interval).
// Outcome.OK is what gates; see Outcome.
type Verdict string

// The verdicts.
const (
	Pass         Verdict = "pass"
	Fail         Verdict = "fail"
	Inconclusive Verdict = "inconclusive"
)

// Outcome is the verdict on one objective.
type Outcome struct {
	Objective string
	// Observed, Budget and Margin are rendered in the objective's unit.
	Observed string
	Budget   string
	Margin   string
	// OK is the gate: whether the objective passed under its policy. Under
	// the default point policy an Inconclusive quantile passes or fails on
	// its point estimate; Demonstrate fails it, Refute passes it.
	OK bool
	// Verdict is pass, fail or inconclusive. For a quantile: pass when the
	// upper confidence bound is within budget, fail when the lower bound is
	// over it, inconclusive in between (and when a bound does not exist).
	// For other kinds it follows OK.
	Verdict Verdict
	// Interval is a quantile's distribution-free interval, each side a
	// one-sided bound at Confidence: "[1.20s, 1.61s]" ("?" where a bound
	// does not exist for this n). Empty for other kinds.
	Interval   string
	Confidence float64
	// Need, for an inconclusive quantile, is about how many requests
	// would decide it (SampleSize at 80% power, with the budget where the
	// observed distribution puts it); 0 when unknown.
	Need int
	// Note explains a verdict that is not a plain comparison: too few
	// samples, a confidence bound, NaN, a partial run.
	Note string
	// Server, for a failed TTFT, first-answer or total quantile of a run
	// that scraped its server's metrics (latencytest.Result.Server), is
	// where the time went by the server's own histograms: its stages at
	// the same quantile over the same interval, each with its bucket, the
	// rest (client + network), and the part that dominates; or, when the
	// responses carry the server's own latency (Record.ServerLatency,
	// Bedrock), from it, exactly per request. It never changes the
	// verdict. Empty otherwise.
	Server string

	// severity orders outcomes of one objective (PerWindow's worst window):
	// observed over budget for latencies, the rate over its limit, +Inf
	// for a failed value.
	severity float64
	// metric, q and budget are set by latency quantile objectives, for
	// charts that mark the budget.
	metric Metric
	q      float64
	budget time.Duration
}

func (o *Outcome) addNote(s string) {
	if o.Note == "" {
		o.Note = s
	} else {
		o.Note += "; " + s
	}
}

// Q is the objective "the q-quantile of metric is within budget". For ITL
// the quantile is of every gap pooled, and its confidence bounds rank the
// pooled gaps as the independent values they are worth: a request's gaps
// share its decode pace, so the bounds count the pooled gaps divided by
// their design effect at the budget (the largest of those measured at the
// budget, the pooled median and p90; at most sum(m^2)/sum(m) for requests
// of m gaps, as if each request's gaps moved as one). The row says what
// was ranked. Measured with the true pooled p99 at budget and 400
// requests: on four synthetic shapes (a request's gaps identical,
// independent, or both; 30-100 tokens; 300 seeds;
// TestITLVerdictsHoldTheirErrorRates) Demonstrate(0.95) passes 0-4.0% and
// Refute(0.95) fails 1.0-5.3% of runs, where the gaps ranked as
// independent values pass 30-48% and fail 28-37% once a request's gaps
// share a pace; on five presets' own ITL and lengths, gaps identical
// within a request or drawn anew (150 seeds; TestITLVerdictsOnPresets),
// 1.3-6.0% and 1.3-6.7%, each within sampling of 5%. 300 requests of
// varying length hold fewer than the 299 independent values a p99 upper
// bound at 95% needs, so Demonstrate on ITL p99 needs more.
func Q(metric Metric, q float64, budget time.Duration, opts ...Option) Objective {
	name := fmt.Sprintf("%s %s <= %s", metric, QuantileName(q), format.Duration(budget))
	return Objective{Name: name, opts: collect(opts), judge: func(r *latencytest.Result, o options) Outcome {
		s, err := metric.Sample(r)
		if err != nil {
			return Outcome{Objective: name, Observed: "-", Note: err.Error()}
		}
		n := len(s)
		var cl *clusters
		if metric == ITL { // the rule counts requests: gaps of one request are not independent
			n = measuredRequests(r)
			cl = itlClusters(r)
		}
		out := judgeClustered(name, s, n, q, budget, o, cl)
		out.metric, out.q, out.budget = metric, q, budget
		if metric == ITL && len(s) > 0 {
			out.addNote(fmt.Sprintf("ranked %d gaps pooled from %d requests as %d effective values (design effect %.1f: a request's gaps share its decode pace)",
				len(s), cl.n, effN(len(s), cl), cl.deff))
		}
		if metric == TTFT || metric == FirstAnswer {
			if k := countUnobserved(r); k > 0 {
				out.addNote(fmt.Sprintf("%d of %d requests never observed a token (no token event, TTFT 0): counted as failed", k, len(s)))
			}
		}
		return out
	}}
}

func measuredRequests(r *latencytest.Result) int {
	c := r.Counts()
	return c.Kept + c.Failed
}

func countUnobserved(r *latencytest.Result) int {
	k := 0
	for _, rec := range r.All() {
		if !rec.Warmup && rec.TokensUnobserved() {
			k++
		}
	}
	return k
}

// MaxCV is the objective "the CV of metric is at most maxPercent percent".
func MaxCV(metric Metric, maxPercent float64) Objective {
	name := fmt.Sprintf("%s CV <= %g%%", metric, maxPercent)
	return Objective{Name: name, judge: func(r *latencytest.Result, _ options) Outcome {
		s, err := metric.Sample(r)
		if err != nil {
			return Outcome{Objective: name, Observed: "-", Note: err.Error()}
		}
		return judgeCV(name, s, maxPercent)
	}}
}

// MaxTailRatio is the objective "p99/p50 of metric is at most max".
func MaxTailRatio(metric Metric, max float64) Objective {
	name := fmt.Sprintf("%s p99/p50 <= %g", metric, max)
	return Objective{Name: name, judge: func(r *latencytest.Result, o options) Outcome {
		s, err := metric.Sample(r)
		if err != nil {
			return Outcome{Objective: name, Observed: "-", Note: err.Error()}
		}
		n := len(s)
		if metric == ITL {
			n = measuredRequests(r)
		}
		return judgeTailRatio(name, s, n, max, o)
	}}
}

// MaxErrorRate is the objective "at most the fraction max (0.01 for 1%) of
// measured requests failed", counting only the given classes when any are
// given. A max outside [0,1) (a percent written where a fraction belongs,
// or 1, which would let every request fail) or an unknown class fails and
// says so; a run where every measured request failed fails whatever the
// limit and classes. It needs n >= ceil(1/max)
// measured requests: with fewer, a single failure already breaks it and a
// clean run shows nothing about a rate of max.
func MaxErrorRate(max float64, classes ...string) Objective {
	name := fmt.Sprintf("error rate <= %s", percent(max))
	if len(classes) > 0 {
		name = fmt.Sprintf("error rate [%s] <= %s", strings.Join(classes, ", "), percent(max))
	}
	classes = slices.Clone(classes)
	return Objective{Name: name, judge: func(r *latencytest.Result, o options) Outcome {
		return judgeErrorRate(name, r, max, classes, o)
	}}
}

// MinDecodeRate is the objective "the q-quantile of decode speed is at
// least floor tokens/s" (lower is worse: use a low q, such as 0.05). Failed
// requests count as 0 tokens/s. It needs n >= ceil(1/min(q, 1-q))
// measured requests (p5: 20, p1: 100). A floor that is not positive judges
// nothing, so it fails; so does a result where every request failed.
// When some requests reported no usage, their rate counts SSE events, not
// tokens, and the row says so.
func MinDecodeRate(q, floor float64) Objective {
	name := fmt.Sprintf("decode %s >= %g tok/s", QuantileName(q), floor)
	return Objective{Name: name, judge: func(r *latencytest.Result, o options) Outcome {
		rates := decodeRates(r)
		out := Outcome{Objective: name, Budget: fmt.Sprintf("%g tok/s", floor), Observed: "-"}
		switch {
		case !(q > 0 && q < 1):
			out.Note = fmt.Sprintf("quantile %v is outside (0,1): quantiles are fractions (0.05 for p5)", q)
			return out
		case !(floor > 0) || math.IsInf(floor, 1):
			out.Note = fmt.Sprintf("floor %g tok/s is not a positive number: it would judge nothing", floor)
			return out
		case len(rates) == 0 && r.Counts().Kept > 0:
			out.Observed, out.Note = "no data", fmt.Sprintf("none of the %d successful requests streamed two token events: a decode rate needs two (one-token answers have none)", r.Counts().Kept)
			return out
		case len(rates) == 0:
			out.Observed, out.Note = "no data", "no measured request"
			return out
		case r.Counts().Kept == 0:
			out.Observed, out.Note = "0 tok/s", "every measured request failed"
			return out
		}
		v := stats.Quantile(slices.Sorted(slices.Values(rates)), q)
		out.Observed = fmt.Sprintf("%.1f tok/s", v)
		out.Margin = fmt.Sprintf("%+.1f tok/s", v-floor)
		if need := MinSamples(q); len(rates) < need && !o.allowSmall {
			out.Note = fmt.Sprintf("%s needs n >= %d (have %d)", QuantileName(q), need, len(rates))
			return out
		} else if len(rates) < need {
			out.Note = fmt.Sprintf("small sample allowed: %s from n = %d (the rule asks %d)", QuantileName(q), len(rates), need)
		}
		if k := eventRated(r); k > 0 {
			out.addNote(fmt.Sprintf("%d of %d requests reported no usage: their rate is SSE events/s, not tokens/s", k, len(rates)))
		}
		out.OK = v >= floor
		return out
	}}
}

// eventRated counts measured successful requests whose decode rate came
// from SSE events (no completion tokens in usage).
func eventRated(r *latencytest.Result) int {
	k := 0
	for _, rec := range r.All() {
		if !rec.Warmup && rec.OK() && rec.CompletionTokens == 0 && rec.TokenEvents > 0 {
			k++
		}
	}
	return k
}

// NoCacheHits is the objective "the provider reported no cached prompt
// tokens": proof that the nonce defeated the cache. It passes only when
// every measured request succeeded with usage that reports cached tokens
// (0 or more), and fails when any reported a cached token. A count the
// server did not report is not a zero: when no successful request
// reported one (servers such as Ollama never do) the verdict is
// inconclusive, "the server reports no cached tokens: nothing to show",
// and when only some did it is inconclusive for the rest; an inconclusive
// row does not pass (nothing proves a miss). Every request failed: it
// fails.
func NoCacheHits() Objective {
	name := "cache miss (cached tokens = 0)"
	return Objective{Name: name, judge: func(r *latencytest.Result, _ options) Outcome {
		n := cachedTokens(r)
		out := Outcome{Objective: name, Observed: fmt.Sprintf("%d cached tokens", n), Budget: "0", Margin: fmt.Sprint(-n), OK: n == 0}
		c := r.Counts()
		unproven := 0
		for _, rec := range r.All() {
			if !rec.Warmup && rec.OK() && !rec.CachedReported {
				unproven++
			}
		}
		switch {
		case c.Kept+c.Failed == 0:
			out.OK, out.Note = false, "no measured request"
		case c.Kept == 0:
			out.OK, out.Note = false, "every measured request failed: no usage to prove a miss"
		case n > 0: // a reported hit is a hit, whatever the others said
			out.Note = fmt.Sprintf("cached tokens reported by %d of %d successful requests", c.Kept-unproven, c.Kept)
		case unproven == c.Kept:
			out.OK, out.Verdict = false, Inconclusive
			out.Observed, out.Margin = "not reported", ""
			out.Note = fmt.Sprintf("the server reports no cached tokens: nothing to show (none of %d successful requests reported usage.prompt_tokens_details.cached_tokens)", c.Kept)
		case unproven > 0:
			out.OK, out.Verdict = false, Inconclusive
			out.Note = fmt.Sprintf("%d of %d successful requests reported no cached-token count (usage.prompt_tokens_details.cached_tokens): nothing proves a miss for them", unproven, c.Kept)
		case c.Failed > 0 && out.OK:
			out.Note = fmt.Sprintf("%d failed requests not counted", c.Failed)
		}
		return out
	}}
}

// within reports v <= budget for a value that is not Failed: a budget as
// large as Failed itself (math.MaxInt64, "no limit") never lets a failed
// request pass.
func within(v, budget time.Duration) bool { return v != latencytest.Failed && v <= budget }

// ratioOf is observed/budget, +Inf for a failed value.
func ratioOf(v, budget time.Duration) float64 {
	if v == latencytest.Failed {
		return math.Inf(1)
	}
	return float64(v) / float64(budget)
}

// MaxStall is the objective "no measured request went silent mid-stream for
// longer than budget" (the max of MaxGap; a failed request fails it, and
// so does a request without token events: it cannot vouch for its
// silences).
func MaxStall(budget time.Duration) Objective {
	name := fmt.Sprintf("longest stall <= %s", format.Duration(budget))
	return Objective{Name: name, judge: func(r *latencytest.Result, _ options) Outcome {
		s := r.MaxGap()
		out := Outcome{Objective: name, Budget: format.Duration(budget)}
		if len(s) == 0 {
			out.Observed, out.Note = "no data", "no measured request"
			return out
		}
		if budget <= 0 {
			out.Observed, out.Note = "-", fmt.Sprintf("budget %v is not positive", budget)
			return out
		}
		v := s.Max()
		out.Observed = format.Duration(v)
		out.Margin = margin(v, budget)
		out.OK = within(v, budget)
		if f := s.Failures(); f > 0 {
			out.Note = failureShare("the longest stall", f, len(s), -1)
		}
		return out
	}}
}

// Invalid returns an objective that never passes and says why, on a
// result and on chains alike: for a configuration error found where an
// objective is built (a spec, say).
func Invalid(name, why string) Objective {
	out := func() Outcome { return Outcome{Objective: name, Observed: "-", Note: why} }
	return Objective{Name: name,
		judge:  func(*latencytest.Result, options) Outcome { return out() },
		chains: func(*latencytest.ChainResult, options) Outcome { return out() }}
}

// String renders the outcome as a one-row objectives table with its
// header, as the report prints it.
func (o Outcome) String() string { return strings.TrimRight(outcomeTable([]Outcome{o}), "\n") }

// QuantileName renders a quantile as "p99", "p99.9", "p50".
func QuantileName(q float64) string {
	return "p" + fmt.Sprint(math.Round(q*100*1e6)/1e6)
}

// percent renders a fraction given by the user (a limit) as a percent,
// exactly: "1%", "0.5%", "99.488%".
func percent(f float64) string { return fmt.Sprintf("%g%%", math.Round(f*100*1e6)/1e6) }

// share renders a measured fraction as a percent to a sensible precision:
// two significant digits below 10% ("3.7%", "0.33%"), one decimal above
// ("12.5%"), and "0%"/"100%" exactly.
func share(f float64) string {
	p := f * 100
	switch {
	case math.IsNaN(p):
		return "n/a"
	case p == 0 || p == 100 || p == math.Trunc(p):
		return fmt.Sprintf("%.0f%%", p)
	case p >= 10:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", p), ".0") + "%"
	}
	d := max(1, 1-int(math.Floor(math.Log10(p))))
	s := fmt.Sprintf("%.*f", min(d, 6), p)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + "%"
}

// failureShare explains a figure that reaches a failed request by the
// failures behind it: "p99 is a failed request: 11 of 300 requests failed
// (3.7%) > 1%". allowed is the tail the quantile leaves (1-q), or < 0.
func failureShare(what string, failed, n int, allowed float64) string {
	s := fmt.Sprintf("%s is a failed request: %d of %d requests failed (%s)", what, failed, n, share(float64(failed)/float64(n)))
	if allowed >= 0 {
		s += " > " + percent(allowed)
	}
	return s
}

// margin renders budget-observed with a sign: "+120.0ms" is headroom,
// "-80.0ms" is over budget.
func margin(observed, budget time.Duration) string {
	if observed == latencytest.Failed {
		return "-inf"
	}
	u := format.UnitFor(observed, budget) // the unit of the row
	d := budget - observed
	if d < 0 {
		return "-" + format.In(-d, u)
	}
	return "+" + format.In(d, u)
}

// judgeOn judges r, window by window when the objective asks (PerWindow).
func (o Objective) judgeOn(r *latencytest.Result) Outcome {
	if o.judge == nil && o.chains != nil {
		return Outcome{Objective: o.Name, Observed: "-", Note: "judges measured chains, not a result's requests: judge it with the chain result"}
	}
	if o.judge == nil {
		return zeroObjective(o.Name, "Q, MaxCV, MaxTailRatio, MaxErrorRate, MinDecodeRate, NoCacheHits, MaxStall, MaxColdStart or MinGoodput")
	}
	if o.opts.window == 0 {
		return o.judge(r, o.opts)
	}
	out := Outcome{Objective: fmt.Sprintf("%s per %v window", o.Name, o.opts.window), Observed: "-"}
	if o.opts.window < 0 {
		out.Note = fmt.Sprintf("PerWindow(%v): the window length is not positive", o.opts.window)
		return out
	}
	if err := r.CheckWindows(o.opts.window); o.opts.window > 0 && err != nil {
		out.Note = fmt.Sprintf("PerWindow(%v): %s", o.opts.window, strings.TrimPrefix(err.Error(), "latencytest: "))
		return out
	}
	wins := r.Windows(o.opts.window)
	if len(wins) == 0 {
		out.Observed, out.Note = "no data", "no request, so no window"
		return out
	}
	inner := o.opts
	inner.window = 0
	if k := len(wins); k > 1 && inner.confidenceProblem() == "" {
		// Every window is a look: split the confidence (Bonferroni), so a
		// verdict on the run is wrong with probability at most 1-c.
		c := inner.conf()
		inner.confidence = 1 - (1-c)/float64(k)
		split := fmt.Sprintf("confidence %s split over %d windows (Bonferroni)", percent(c), k)
		if inner.split != "" {
			split = inner.split + "; " + split
		}
		inner.split = split
	}
	worst, failed := -1, 0
	outs := make([]Outcome, len(wins))
	figures := make([]string, len(wins))
	for i, w := range wins {
		outs[i] = finalize(o.judge(w.Result, inner), inner, w.Partial, w.PartialReason)
		if !outs[i].OK {
			failed++
		}
		figures[i] = fmt.Sprintf("%v %s", w.From, outs[i].Observed)
		if worst < 0 || worse(outs[i], outs[worst]) {
			worst = i
		}
	}
	w := outs[worst]
	out.Observed, out.Budget, out.Margin, out.Interval, out.Confidence = w.Observed, w.Budget, w.Margin, w.Interval, w.Confidence
	out.OK, out.severity = failed == 0, w.severity
	switch {
	case failed > 0:
		out.Verdict = Fail
	case w.Verdict == Inconclusive:
		out.Verdict = Inconclusive
	default:
		out.Verdict = Pass
	}
	out.Note = fmt.Sprintf("worst window %d of %d %s: %s", worst, len(wins), wins[worst], w.Observed)
	if w.Note != "" {
		out.Note += " (" + w.Note + ")"
	}
	out.Note += fmt.Sprintf("; %d of %d windows failed; by window: %s", failed, len(wins), strings.Join(figures, ", "))
	return out
}

// judgeChains judges cr; an objective on a result's requests, or a
// zero-value Objective, fails and says so.
func (o Objective) judgeChains(cr *latencytest.ChainResult) Outcome {
	if o.chains == nil && o.judge != nil {
		return Outcome{Objective: o.Name, Observed: "-", Note: "judges a result's requests, not chains: judge the chain calls (ChainResult.Calls) with it"}
	}
	if o.chains == nil {
		return zeroObjective(o.Name, "ChainQ or MaxChainErrorRate")
	}
	return o.chains(cr, o.opts)
}
