package sloassert

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// MinSamples is the fewest samples a q-quantile objective needs:
// ceil(1/(1-q)) (p95: 20, p99: 100, p99.9: 1,000). With fewer, the
// "quantile" is an interpolation between the top values, not a tail.
func MinSamples(q float64) int {
	if q <= 0 {
		return 1
	}
	if q >= 1 {
		return math.MaxInt
	}
	// 1/(1-0.99) is 100.00000000000009 in floating point: round first.
	return int(math.Ceil(math.Round(1/(1-q)*1e9) / 1e9))
}

// ConfidenceBounds returns one-sided distribution-free bounds on the
// q-quantile at this confidence, from the sorted sample X(1..n): hi = X(k)
// for the smallest k with P(Binomial(n,q) <= k-1) >= confidence; lo = X(j)
// for the largest j with P(Binomial(n,q) >= j) >= confidence. ok is false
// when either does not exist (p99 at 0.95 needs n >= 299).
func ConfidenceBounds(s latencytest.Sample, q, confidence float64) (lo, hi time.Duration, ok bool) {
	j, k, ok := boundRanks(len(s), q, confidence)
	if !ok {
		return 0, 0, false
	}
	x := slices.Clone(s)
	slices.Sort(x)
	return x[j-1], x[k-1], true
}

// boundRanks returns the 1-based ranks (j, k) of ConfidenceBounds.
func boundRanks(n int, q, confidence float64) (j, k int, ok bool) {
	if n == 0 || !(q > 0 && q < 1) || !(confidence > 0 && confidence < 1) {
		return 0, 0, false
	}
	pmf := binomialPMF(n, q)
	// cdf[i] = P(B <= i); upper[i] = P(B >= i), summed from the top so that
	// small tails keep their precision.
	cdf := make([]float64, n+1)
	upper := make([]float64, n+2)
	acc := 0.0
	for i, p := range pmf {
		acc += p
		cdf[i] = acc
	}
	for i := n; i >= 0; i-- {
		upper[i] = upper[i+1] + pmf[i]
	}
	k = -1
	for kk := 1; kk <= n; kk++ {
		if cdf[kk-1] >= confidence {
			k = kk
			break
		}
	}
	j = -1
	for jj := n; jj >= 1; jj-- {
		if upper[jj] >= confidence {
			j = jj
			break
		}
	}
	if j < 1 || k < 1 {
		return 0, 0, false
	}
	return j, k, true
}

// binomialPMF returns P(B = i) for i = 0..n, B ~ Binomial(n, q), computed
// in log space.
func binomialPMF(n int, q float64) []float64 {
	out := make([]float64, n+1)
	lq, l1q := math.Log(q), math.Log1p(-q)
	lgn, _ := math.Lgamma(float64(n + 1))
	for i := 0; i <= n; i++ {
		lgi, _ := math.Lgamma(float64(i + 1))
		lgni, _ := math.Lgamma(float64(n - i + 1))
		out[i] = math.Exp(lgn - lgi - lgni + float64(i)*lq + float64(n-i)*l1q)
	}
	return out
}

// judgeQuantile judges one quantile objective on a sample.
func judgeQuantile(name string, s latencytest.Sample, q float64, budget time.Duration, o options) Outcome {
	out := Outcome{Objective: name, Budget: latencytest.FormatDuration(budget)}
	n := len(s)
	if !(q > 0 && q < 1) {
		out.Observed, out.Note = "-", fmt.Sprintf("quantile %v is outside (0,1): quantiles are fractions (0.99 for p99)", q)
		return out
	}
	if n == 0 {
		out.Observed, out.Note = "no data", "no values (no measured request, or no inter-token gap)"
		return out
	}
	v := s.Quantile(q)
	u := latencytest.UnitFor(v, budget)
	out.Observed, out.Budget = latencytest.FormatIn(v, u), latencytest.FormatIn(budget, u)
	out.Margin = margin(v, budget)
	if need := MinSamples(q); n < need && !o.allowSmall {
		out.Note = fmt.Sprintf("%s needs n >= %d (have %d)", QuantileName(q), need, n)
		return out
	} else if n < need {
		out.Note = fmt.Sprintf("small sample allowed: %s from n = %d (the rule asks %d)", QuantileName(q), n, need)
	}
	switch o.mode {
	case modePoint:
		out.OK = v <= budget
	case modeDemonstrate, modeRefute:
		j, k, ok := boundRanks(n, q, o.confidence)
		if !ok {
			out.Note = fmt.Sprintf("a %g%% bound on %s needs more samples (have %d)", o.confidence*100, QuantileName(q), n)
			return out
		}
		x := slices.Clone(s)
		slices.Sort(x)
		if o.mode == modeDemonstrate {
			hi := x[k-1]
			out.OK = hi <= budget
			out.Note = fmt.Sprintf("demonstrate: upper %g%% bound %s = X(%d) of %d", o.confidence*100, latencytest.FormatIn(hi, u), k, n)
			out.Margin = margin(hi, budget)
		} else {
			lo := x[j-1]
			out.OK = lo <= budget
			out.Note = fmt.Sprintf("refute: lower %g%% bound %s = X(%d) of %d", o.confidence*100, latencytest.FormatIn(lo, u), j, n)
			out.Margin = margin(lo, budget)
		}
	}
	return out
}

func judgeCV(name string, s latencytest.Sample, maxPercent float64) Outcome {
	out := Outcome{Objective: name, Budget: fmt.Sprintf("%g%%", maxPercent)}
	cv := s.CV()
	switch {
	case len(s) == 0:
		out.Observed, out.Note = "no data", "no measured request"
	case math.IsInf(cv, 1):
		out.Observed, out.Note = "inf", fmt.Sprintf("%d failed requests: the spread is unbounded", s.Failures())
	case math.IsNaN(cv):
		out.Observed, out.Note = "n/a", "CV needs at least 2 values and a non-zero mean"
	default:
		out.Observed = fmt.Sprintf("%.1f%%", cv)
		out.Note = string(CVBandOf(cv))
		out.Margin = fmt.Sprintf("%+.1f pts", maxPercent-cv)
		out.OK = cv <= maxPercent
	}
	return out
}

func judgeTailRatio(name string, s latencytest.Sample, max float64) Outcome {
	out := Outcome{Objective: name, Budget: fmt.Sprintf("%g", max)}
	tr := s.TailRatio()
	switch {
	case len(s) == 0:
		out.Observed, out.Note = "no data", "no measured request"
	case math.IsInf(tr, 1):
		out.Observed, out.Note = "inf", "p99 reaches a failed request"
	case math.IsNaN(tr):
		out.Observed, out.Note = "n/a", "p50 is zero"
	default:
		out.Observed = fmt.Sprintf("%.2f", tr)
		out.Margin = fmt.Sprintf("%+.2f", max-tr)
		out.OK = tr <= max
		if need := MinSamples(0.99); len(s) < need {
			out.OK, out.Note = false, fmt.Sprintf("p99 needs n >= %d (have %d)", need, len(s))
		}
	}
	return out
}

func judgeErrorRate(name string, r *latencytest.Result, max float64, classes []string) Outcome {
	out := Outcome{Objective: name, Budget: percent(max)}
	c := r.Counts()
	n := c.Kept + c.Failed
	if n == 0 {
		out.Observed, out.Note = "no data", "no measured request"
		return out
	}
	failed := c.Failed
	if len(classes) > 0 {
		failed = 0
		for cl, k := range r.Errors() {
			if slices.Contains(classes, cl) {
				failed += k
			}
		}
	}
	rate := float64(failed) / float64(n)
	out.Observed = fmt.Sprintf("%s (%d of %d)", percent(rate), failed, n)
	out.Margin = fmt.Sprintf("%+.2f pts", (max-rate)*100)
	out.OK = rate <= max
	return out
}

// CVBand is a named level of the coefficient of variation, from the
// studies.
type CVBand string

// The CV bands: under 40% solid; 40-100% tolerable; over 100% the
// bimodality of cold starts and queueing; over 300% not fit for
// latency-sensitive production.
const (
	CVSolid      CVBand = "solid"
	CVTolerable  CVBand = "tolerable"
	CVColdStarts CVBand = "cold starts"
	CVNotFit     CVBand = "not fit for latency-sensitive production"
)

// CVBand limits in percent.
const (
	CVSolidMax     = 40.0
	CVTolerableMax = 100.0
	CVColdMax      = 300.0
)

// CVBandOf names the band of a CV in percent.
func CVBandOf(cvPercent float64) CVBand {
	switch {
	case cvPercent < CVSolidMax:
		return CVSolid
	case cvPercent <= CVTolerableMax:
		return CVTolerable
	case cvPercent <= CVColdMax:
		return CVColdStarts
	}
	return CVNotFit
}

// MaxPercent is the CV ceiling of the band, for CV objectives: a test that
// asks for "tolerable" asks CV <= 100%.
func (b CVBand) MaxPercent() float64 {
	switch b {
	case CVSolid:
		return CVSolidMax
	case CVTolerable:
		return CVTolerableMax
	case CVColdStarts:
		return CVColdMax
	}
	return math.Inf(1)
}
