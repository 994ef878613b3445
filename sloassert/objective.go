package sloassert

import (
	"fmt"
	"math"
	"time"

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
)

// Metrics lists the latency metrics.
var Metrics = []Metric{TTFT, FirstAnswer, Total, ITL, MaxGap}

// Sample returns the metric's sample from r.
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
	}
	return nil, fmt.Errorf("sloassert: unknown metric %q (want ttft, first_answer, total, itl or max_gap)", string(m))
}

// Option changes how an objective is judged.
type Option func(*options)

type options struct {
	allowSmall bool
	mode       mode
	confidence float64
}

type mode int

const (
	modePoint       mode = iota // the observed quantile against the budget
	modeDemonstrate             // the upper confidence bound must be within budget
	modeRefute                  // fails only when the lower bound is over budget
)

// AllowSmallSample judges a quantile on fewer samples than the rule
// n >= ceil(1/(1-q)) asks (p99: 100). The report says so.
func AllowSmallSample() Option { return func(o *options) { o.allowSmall = true } }

// Demonstrate passes only when the distribution-free upper bound on the
// quantile at this confidence is within budget: the data show the SLO is
// met (p99 at 0.95 needs n >= 299).
func Demonstrate(confidence float64) Option {
	return func(o *options) { o.mode, o.confidence = modeDemonstrate, confidence }
}

// Refute fails only when the lower bound at this confidence is over budget:
// the data show the SLO is broken. For noisy shared CI runners.
func Refute(confidence float64) Option {
	return func(o *options) { o.mode, o.confidence = modeRefute, confidence }
}

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Objective is one thing a result is judged on. Build it with Q, MaxCV, MaxTailRatio, MaxErrorRate, MinDecodeRate, NoCacheHits or
// MaxStall.
type Objective struct {
	// Name says what is judged: "ttft p99 <= 1.5s".
	Name  string
	judge func(r *latencytest.Result) Outcome
}

// Outcome is the verdict on one objective.
type Outcome struct {
	Objective string
	// Observed, Budget and Margin are rendered in the objective's unit.
	Observed string
	Budget   string
	Margin   string
	OK       bool
	// Note explains a verdict that is not a plain comparison: too few
	// samples, a confidence bound, NaN.
	Note string
}

// Q is the objective "the q-quantile of metric is within budget".
func Q(metric Metric, q float64, budget time.Duration, opts ...Option) Objective {
	o := collect(opts)
	name := fmt.Sprintf("%s %s <= %s", metric, QuantileName(q), latencytest.FormatDuration(budget))
	return Objective{Name: name, judge: func(r *latencytest.Result) Outcome {
		s, err := metric.Sample(r)
		if err != nil {
			return Outcome{Objective: name, Note: err.Error()}
		}
		return judgeQuantile(name, s, q, budget, o)
	}}
}

// MaxCV is the objective "the CV of metric is at most maxPercent percent".
func MaxCV(metric Metric, maxPercent float64) Objective {
	name := fmt.Sprintf("%s CV <= %g%%", metric, maxPercent)
	return Objective{Name: name, judge: func(r *latencytest.Result) Outcome {
		s, err := metric.Sample(r)
		if err != nil {
			return Outcome{Objective: name, Note: err.Error()}
		}
		return judgeCV(name, s, maxPercent)
	}}
}

// MaxTailRatio is the objective "p99/p50 of metric is at most max".
func MaxTailRatio(metric Metric, max float64) Objective {
	name := fmt.Sprintf("%s p99/p50 <= %g", metric, max)
	return Objective{Name: name, judge: func(r *latencytest.Result) Outcome {
		s, err := metric.Sample(r)
		if err != nil {
			return Outcome{Objective: name, Note: err.Error()}
		}
		return judgeTailRatio(name, s, max)
	}}
}

// MaxErrorRate is the objective "at most this fraction of measured
// requests failed", counting only the given classes when any are given.
func MaxErrorRate(max float64, classes ...string) Objective {
	name := fmt.Sprintf("error rate <= %s", percent(max))
	if len(classes) > 0 {
		name = fmt.Sprintf("error rate %v <= %s", classes, percent(max))
	}
	return Objective{Name: name, judge: func(r *latencytest.Result) Outcome {
		return judgeErrorRate(name, r, max, classes)
	}}
}

// MinDecodeRate is the objective "the q-quantile of decode speed is at
// least floor tokens/s" (lower is worse: use a low q, such as 0.05). Failed
// requests count as 0 tokens/s. A floor that is not positive judges
// nothing, so it fails; so does a result where every request failed.
func MinDecodeRate(q, floor float64) Objective {
	name := fmt.Sprintf("decode %s >= %g tok/s", QuantileName(q), floor)
	return Objective{Name: name, judge: func(r *latencytest.Result) Outcome {
		rates := r.DecodeRates()
		out := Outcome{Objective: name, Budget: fmt.Sprintf("%g tok/s", floor)}
		switch {
		case !(floor > 0):
			out.Observed, out.Note = "-", fmt.Sprintf("floor %g tok/s is not positive: it would pass anything", floor)
			return out
		case len(rates) == 0:
			out.Observed, out.Note = "no data", "no measured request"
			return out
		case r.Counts().Kept == 0:
			out.Observed, out.Note = "0 tok/s", "every measured request failed"
			return out
		}
		v := rates.Quantile(q)
		out.Observed = fmt.Sprintf("%.1f tok/s", v)
		out.Margin = fmt.Sprintf("%+.1f tok/s", v-floor)
		out.OK = v >= floor
		return out
	}}
}

// NoCacheHits is the objective "the provider reported no cached prompt
// tokens": proof that the nonce defeated the cache.
func NoCacheHits() Objective {
	name := "cache miss (cached tokens = 0)"
	return Objective{Name: name, judge: func(r *latencytest.Result) Outcome {
		n := r.CachedTokens()
		out := Outcome{Objective: name, Observed: fmt.Sprintf("%d cached tokens", n), Budget: "0", Margin: fmt.Sprint(-n), OK: n == 0}
		switch c := r.Counts(); {
		case c.Kept+c.Failed == 0:
			out.OK, out.Note = false, "no measured request"
		case c.Kept == 0:
			out.OK, out.Note = false, "every measured request failed: no usage to prove a miss"
		}
		return out
	}}
}

// MaxStall is the objective "no measured request went silent mid-stream for
// longer than budget" (the max of MaxGap; a failed request fails it).
func MaxStall(budget time.Duration) Objective {
	name := fmt.Sprintf("longest stall <= %s", latencytest.FormatDuration(budget))
	return Objective{Name: name, judge: func(r *latencytest.Result) Outcome {
		s := r.MaxGap()
		out := Outcome{Objective: name, Budget: latencytest.FormatDuration(budget)}
		if len(s) == 0 {
			out.Observed, out.Note = "no data", "no measured request"
			return out
		}
		v := s.Max()
		out.Observed = latencytest.FormatDuration(v)
		out.Margin = margin(v, budget)
		out.OK = v <= budget
		return out
	}}
}

// QuantileName renders a quantile as "p99", "p99.9", "p50".
func QuantileName(q float64) string {
	return "p" + fmt.Sprint(math.Round(q*100*1e6)/1e6)
}

func percent(f float64) string { return fmt.Sprintf("%g%%", math.Round(f*100*1e6)/1e6) }

// margin renders budget-observed with a sign: "+120.0ms" is headroom,
// "-80.0ms" is over budget.
func margin(observed, budget time.Duration) string {
	if observed == latencytest.Failed {
		return "-inf"
	}
	u := latencytest.UnitFor(observed, budget) // the unit of the row
	d := budget - observed
	if d < 0 {
		return "-" + latencytest.FormatIn(-d, u)
	}
	return "+" + latencytest.FormatIn(d, u)
}
