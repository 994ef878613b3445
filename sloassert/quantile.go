package sloassert

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/cancel"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/stats"
	"github.com/tailguard/tailguard/latencytest"
)

// MinSamples is the fewest samples a q-quantile objective needs:
// ceil(1/min(q, 1-q)) (p95: 20, p99: 100, p99.9: 1,000, p99.99: 10,000;
// low quantiles too: p5: 20, p1: 100). With fewer, the "quantile" is an
// interpolation between the extreme values, not a tail. A q outside (0,1)
// needs more than any sample: math.MaxInt.
func MinSamples(q float64) int {
	if !(q > 0 && q < 1) {
		return math.MaxInt
	}
	return stats.CeilInverse(math.Min(q, 1-q))
}

// ConfidenceBounds returns one-sided distribution-free bounds on the
// q-quantile at this confidence, from the sorted sample X(1..n): hi = X(k)
// for the smallest k with P(Binomial(n,q) <= k-1) >= confidence; lo = X(j)
// for the largest j with P(Binomial(n,q) >= j) >= confidence. ok is false
// when either does not exist (p99 at 0.95: hi needs n >= 299, lo n >= 1;
// MinBoundSamples says how many each needs).
func ConfidenceBounds(s latencytest.Sample, q, confidence float64) (lo, hi time.Duration, ok bool) {
	lo, okLo := lowerBound(s, q, confidence)
	hi, okHi := upperBound(s, q, confidence)
	if !okLo || !okHi {
		return 0, 0, false
	}
	return lo, hi, true
}

// lowerBound is ConfidenceBounds' lo on its own: X(j) for the largest j
// with P(Binomial(n,q) >= j) >= confidence. It exists when
// 1-(1-q)^n >= confidence. The caller's sample is not reordered.
func lowerBound(s latencytest.Sample, q, confidence float64) (time.Duration, bool) {
	j, ok := stats.LowerRank(len(s), q, confidence)
	if !ok {
		return 0, false
	}
	return sortedCopy(s)[j-1], true
}

// upperBound is ConfidenceBounds' hi on its own: X(k) for the smallest k
// with P(Binomial(n,q) <= k-1) >= confidence. It exists when
// 1-q^n >= confidence. The caller's sample is not reordered.
func upperBound(s latencytest.Sample, q, confidence float64) (time.Duration, bool) {
	k, ok := stats.UpperRank(len(s), q, confidence)
	if !ok {
		return 0, false
	}
	return sortedCopy(s)[k-1], true
}

func sortedCopy(s latencytest.Sample) latencytest.Sample {
	x := slices.Clone(s)
	slices.Sort(x)
	return x
}

// clusters describes a pooled sample whose values come in groups that
// move together (ITL: the gaps of one request share its decode pace), for
// bounds that count what the groups are worth rather than every value.
type clusters struct {
	groups [][]time.Duration // each group's values (a failed request adds one Failed)
	sizes  []int             // each group's size, where only sizes are known (compact records)
	n      int               // groups with at least one value
	values int               // values pooled
	deff   float64           // design effect (see effective)
	eff    int               // effective sample size: values/deff
}

// itlClusters groups the gaps of r's measured requests, a failed request
// adding one Failed value to its gaps.
func itlClusters(r *latencytest.Result) *clusters {
	c := &clusters{}
	if r.Records == nil && r.Len() > 0 { // compacted: gaps pooled in a sketch: the group sizes, so the largest design effect
		for _, rec := range r.All() {
			m := max(rec.TokenEvents-1, 0)
			if !rec.OK() {
				m++
			}
			if !rec.Warmup && m > 0 {
				c.sizes = append(c.sizes, m)
				c.values += m
			}
		}
		c.n = len(c.sizes)
		return c
	}
	for _, rec := range r.All() {
		if rec.Warmup {
			continue
		}
		g := rec.Gaps.All()
		if !rec.OK() {
			g = append(g, latencytest.Failed)
		}
		if len(g) == 0 {
			continue
		}
		c.groups = append(c.groups, g)
		c.values += len(g)
	}
	c.n = len(c.groups)
	return c
}

// deffAt is the design effect of the share of values over t: the
// cluster-robust variance of the pooled share p = sum(o)/sum(m) (group i
// has m_i values, o_i over t; a ratio estimator over independent groups:
// n/(n-1) sum((o_i - p m_i)^2) / sum(m)^2) against a binomial's
// p(1-p)/sum(m). ok is false where p is 0 or 1 (nothing to measure).
func (c *clusters) deffAt(t time.Duration) (float64, bool) {
	if c.n < 2 {
		return 0, false
	}
	sm, so := 0.0, 0.0
	os := make([]float64, c.n)
	for i, g := range c.groups {
		for _, v := range g {
			if v > t {
				os[i]++
			}
		}
		sm, so = sm+float64(len(g)), so+os[i]
	}
	p := so / sm
	if !(p > 0 && p < 1) {
		return 0, false
	}
	v := 0.0
	for i, g := range c.groups {
		d := os[i] - p*float64(len(g))
		v += d * d
	}
	v *= float64(c.n) / float64(c.n-1) / (sm * sm)
	return v / (p * (1 - p) / sm), true
}

// effective sets the design effect and the effective sample size for
// judging at budget, from the sorted pooled values x. The design effect is
// the largest measured at the budget, the pooled median and the pooled
// p90: tail indicators of one request are no more alike than central ones
// for the shapes gaps take (a request's pace shifts all its gaps), and a
// share of a few values over the budget is too noisy on its own. It is
// kept within [1, sum(m^2)/sum(m)]: at most as if each group's values
// moved as one (where no threshold can measure it, that is the value).
func (c *clusters) effective(budget time.Duration, x latencytest.Sample) {
	c.deff, c.eff = 0, 0
	if c.n == 0 {
		return
	}
	found := false
	for _, t := range []time.Duration{budget, x.Quantile(0.5), x.Quantile(0.9)} {
		if d, ok := c.deffAt(t); ok {
			c.deff, found = max(c.deff, d), true
		}
	}
	// The most a design effect can be is when every group's values move
	// as one: sum(m^2)/sum(m) (Kish's effective size, sum(m)^2/sum(m^2),
	// is then the count of equally weighted groups).
	whole := 0.0
	for _, g := range c.groups {
		whole += float64(len(g)) * float64(len(g))
	}
	for _, m := range c.sizes {
		whole += float64(m) * float64(m)
	}
	whole /= float64(c.values)
	if !found {
		c.deff = whole
	}
	c.deff = min(max(c.deff, 1), whole)
	c.eff = max(int(float64(c.values)/c.deff), 1)
}

// judgeQuantile judges one quantile objective on a sample; nRule is the n
// the sample-size rule counts (requests, for pooled ITL gaps).
func judgeQuantile(name string, s latencytest.Sample, nRule int, q float64, budget time.Duration, o options) Outcome {
	return judgeClustered(name, s, nRule, q, budget, o, nil)
}

// judgeClustered is judgeQuantile; with cl, the bounds' ranks are those of
// cl.eff effective values, scaled to the pooled sample (an upper rank
// rounded up, a lower one down: never more evidence than the groups hold).
func judgeClustered(name string, s latencytest.Sample, nRule int, q float64, budget time.Duration, o options, cl *clusters) Outcome {
	out := Outcome{Objective: name, Budget: format.Duration(budget), Observed: "-"}
	n := len(s)
	switch {
	case !(q > 0 && q < 1):
		out.Note = fmt.Sprintf("quantile %v is outside (0,1): quantiles are fractions (0.99 for p99)", q)
		return out
	case budget <= 0:
		out.Note = fmt.Sprintf("budget %v is not positive", budget)
		return out
	case o.confidenceProblem() != "":
		out.Note = o.confidenceProblem()
		return out
	case n == 0:
		out.Observed, out.Note = "no data", "no values (no measured request, or no inter-token gap)"
		return out
	}
	x := sortedCopy(s)
	v := x.Quantile(q) // the same as s.Quantile, without sorting again
	conf := o.conf()
	j, hasLo := stats.LowerRank(n, q, conf)
	k, hasHi := stats.UpperRank(n, q, conf)
	if cl != nil {
		cl.effective(budget, x)
	}
	if cl != nil && cl.eff < n {
		je, okLo := stats.LowerRank(cl.eff, q, conf)
		ke, okHi := stats.UpperRank(cl.eff, q, conf)
		j, hasLo = int(float64(je)*float64(n)/float64(cl.eff)), okLo && je >= 1
		k, hasHi = int(math.Ceil(float64(ke)*float64(n)/float64(cl.eff))), okHi
		j, k = max(j, 1), min(k, n)
	}
	var lo, hi time.Duration
	if hasLo {
		lo = x[j-1]
	}
	if hasHi {
		hi = x[k-1]
	}
	u := format.UnitFor(v, budget)
	out.Observed, out.Budget = format.In(v, u), format.In(budget, u)
	out.Margin = margin(v, budget)
	out.Confidence = conf
	out.severity = ratioOf(v, budget)
	bound := func(d time.Duration, ok bool) string {
		switch {
		case !ok:
			return "?"
		case d == latencytest.Failed:
			return "failed"
		}
		return format.In(d, u)
	}
	out.Interval = "[" + bound(lo, hasLo) + ", " + bound(hi, hasHi) + "]"
	hint := func() string {
		if cl != nil { // SampleSize counts independent values
			return ""
		}
		return decideHint(&out, x, q, conf, budget)
	}
	if o.split != "" {
		out.addNote(o.split)
	}
	switch {
	case hasHi && within(hi, budget):
		out.Verdict = Pass
	case hasLo && lo > budget:
		out.Verdict = Fail
	default:
		out.Verdict = Inconclusive
	}
	if v == latencytest.Failed {
		out.addNote(failureShare(QuantileName(q), s.Failures(), n, 1-q))
	}
	if need := MinSamples(q); nRule < need && !o.allowSmall {
		out.addNote(fmt.Sprintf("%s needs n >= %d (have %d)", QuantileName(q), need, nRule))
		return out
	} else if nRule < need {
		out.addNote(fmt.Sprintf("small sample allowed: %s from n = %d (the rule asks %d)", QuantileName(q), nRule, need))
	}
	pct := share(conf)
	switch o.mode {
	case modePoint:
		out.OK = within(v, budget)
		if out.Verdict == Inconclusive {
			out.addNote(fmt.Sprintf("inconclusive at %s: %s", pct, out.Interval) + hint())
		}
	case modeDemonstrate:
		out.OK = out.Verdict == Pass
		out.Margin = margin(hi, budget)
		switch {
		case !hasHi:
			out.Margin = ""
			out.addNote(fmt.Sprintf("demonstrate: a %s upper bound on %s needs n >= %d (have %d)", pct, QuantileName(q), boundNeed(q, conf), effN(n, cl)))
		default:
			out.addNote(fmt.Sprintf("demonstrate: upper %s bound %s = X(%d) of %d", pct, bound(hi, true), k, n))
		}
		if out.Verdict == Inconclusive {
			out.addNote(fmt.Sprintf("inconclusive at %s: %s", pct, out.Interval) + hint())
		}
	case modeRefute:
		out.OK = hasLo && within(lo, budget)
		out.Margin = margin(lo, budget)
		switch {
		case !hasLo:
			out.Margin = ""
			out.addNote(fmt.Sprintf("refute: a %s lower bound on %s needs n >= %d (have %d)", pct, QuantileName(q), boundNeed(1-q, conf), effN(n, cl)))
		default:
			out.addNote(fmt.Sprintf("refute: lower %s bound %s = X(%d) of %d", pct, bound(lo, true), j, n))
		}
		if out.Verdict == Inconclusive && hasLo {
			out.addNote(fmt.Sprintf("inconclusive at %s: %s", pct, out.Interval) + hint())
		}
	}
	return out
}

// effN is the n a bound counts: the effective n of clustered values.
func effN(n int, cl *clusters) int {
	if cl != nil && cl.eff < n {
		return cl.eff
	}
	return n
}

// MinBoundSamples returns the fewest samples for which the one-sided
// bounds on the q-quantile exist at this confidence: lower (Refute) needs
// 1-(1-q)^n >= confidence, upper (Demonstrate) 1-q^n >= confidence (p99 at
// 0.95: 1 and 299). math.MaxInt stands for "never" (arguments outside
// (0,1)).
func MinBoundSamples(q, confidence float64) (lower, upper int) {
	return boundNeed(1-q, confidence), boundNeed(q, confidence)
}

// boundNeed is the smallest n for which a one-sided bound exists: the
// upper bound on q needs 1-q^n >= c (pass q), the lower bound needs
// 1-(1-q)^n >= c (pass 1-q).
func boundNeed(p, c float64) int {
	if !(p > 0 && p < 1 && c > 0 && c < 1) {
		return math.MaxInt
	}
	x := math.Log1p(-c) / math.Log(p)
	if !(x < 1<<40) {
		return math.MaxInt
	}
	n := max(int(math.Ceil(x)), 1)
	for n > 1 && 1-math.Pow(p, float64(n-1)) >= c { // the logarithms may be off by one
		n--
	}
	for 1-math.Pow(p, float64(n)) < c {
		n++
	}
	return n
}

// decideHint estimates, for an inconclusive row, how many requests would
// decide it: SampleSize at 80% power with the budget where the observed
// distribution puts it (the share of values at or under it). It sets
// out.Need and returns "; about N requests would decide it", or "".
func decideHint(out *Outcome, x latencytest.Sample, q, conf float64, budget time.Duration) string {
	at := 0
	for at < len(x) && within(x[at], budget) {
		at++
	}
	level := float64(at) / float64(len(x))
	// Keep the level off 0, 1 and q: the observed share is an estimate.
	level = min(max(level, 0.5/float64(len(x))), 1-0.5/float64(len(x)))
	if level == q || !(level > 0 && level < 1) {
		return ""
	}
	limit := max(100_000, 20*len(x))
	n := sampleSize(q, conf, 0.8, level, limit)
	if n == math.MaxInt {
		return fmt.Sprintf("; more than %d requests would be needed to decide it", limit)
	}
	out.Need = n
	return fmt.Sprintf("; about %d requests would decide it (80%% power, budget at the observed %s)", n, QuantileName(math.Round(level*1000)/1000))
}

func judgeCV(name string, s latencytest.Sample, maxPercent float64) Outcome {
	out := Outcome{Objective: name, Budget: fmt.Sprintf("%g%%", maxPercent)}
	cv := s.CV()
	switch {
	case !(maxPercent >= 0) || math.IsInf(maxPercent, 1):
		out.Observed, out.Note = "-", fmt.Sprintf("limit %g%% is not a percentage (CV is in percent: 40 for 40%%)", maxPercent)
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
		out.severity = cv / maxPercent
	}
	return out
}

func judgeTailRatio(name string, s latencytest.Sample, n int, max float64, o options) Outcome {
	out := Outcome{Objective: name, Budget: fmt.Sprintf("%g", max)}
	tr := s.TailRatio()
	switch {
	case !(max > 0) || math.IsInf(max, 1):
		out.Observed, out.Note = "-", fmt.Sprintf("limit %g is not a positive ratio", max)
	case len(s) == 0:
		out.Observed, out.Note = "no data", "no measured request"
	case math.IsInf(tr, 1):
		out.Observed, out.Note = "inf", failureShare("p99", s.Failures(), len(s), 0.01)
	case math.IsNaN(tr):
		out.Observed, out.Note = "n/a", "p50 is zero"
	default:
		out.Observed = fmt.Sprintf("%.2f", tr)
		out.Margin = fmt.Sprintf("%+.2f", max-tr)
		out.OK = tr <= max
		if need := MinSamples(0.99); n < need && !o.allowSmall {
			out.OK, out.Note = false, fmt.Sprintf("p99 needs n >= %d (have %d)", need, n)
		} else if n < need {
			out.Note = fmt.Sprintf("small sample allowed: p99 from n = %d (the rule asks %d)", n, need)
		}
	}
	return out
}

// rateLimitProblem says what is wrong with a rate limit (a fraction in
// [0,1]: a percent written where a fraction belongs is the usual slip),
// or "".
func rateLimitProblem(max float64) string {
	switch {
	case math.IsNaN(max) || max < 0:
		return fmt.Sprintf("max %v is not a fraction in [0,1]", max)
	case max > 1:
		return fmt.Sprintf("max %v is above 1: the rate is a fraction (write %g for %g%%)", max, max/100, max)
	case max == 1:
		return "max 1 (100%) lets every request fail, and an all-failed run never passes: give a limit below 1, or leave the error rate unjudged"
	}
	return ""
}

func judgeErrorRate(name string, r *latencytest.Result, max float64, classes []string, o options) Outcome {
	out := Outcome{Objective: name, Budget: percent(max), Observed: "-"}
	if out.Note = rateLimitProblem(max); out.Note != "" {
		return out
	}
	for _, c := range classes {
		if c == cancel.Class {
			out.Note = cancelledClass
			return out
		}
		if err := latencytest.CheckClass(c); err != nil {
			out.Note = strings.TrimPrefix(err.Error(), "latencytest: ")
			return out
		}
	}
	c := r.Counts()
	n := c.Kept + c.Failed
	if n == 0 {
		out.Observed, out.Note = "no data", "no measured request"
		return out
	}
	if c.Kept == 0 {
		out.Observed = fmt.Sprintf("100%% (%d of %d)", c.Failed, n)
		out.Note = "every measured request failed: an all-failed run never passes, whatever the limit or classes"
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
	out.Observed = fmt.Sprintf("%s (%d of %d)", share(rate), failed, n)
	out.Margin = fmt.Sprintf("%+.2f pts", (max-rate)*100)
	out.OK = rate <= max
	out.severity = rate / max
	if max > 0 && max < 1 {
		if need := stats.CeilInverse(max); n < need && !o.allowSmall {
			out.OK = false
			out.addNote(fmt.Sprintf("an error rate of %s needs n >= %d measured requests (have %d)", percent(max), need, n))
		}
	}
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
	cvSolidMax     = 40.0
	cvTolerableMax = 100.0
	cvColdMax      = 300.0
)

// CVBandOf names the band of a CV in percent.
func CVBandOf(cvPercent float64) CVBand {
	switch {
	case cvPercent < cvSolidMax:
		return CVSolid
	case cvPercent <= cvTolerableMax:
		return CVTolerable
	case cvPercent <= cvColdMax:
		return CVColdStarts
	}
	return CVNotFit
}

// MaxPercent is the CV ceiling of the band, for CV objectives: a test that
// asks for "tolerable" asks CV <= 100%.
func (b CVBand) MaxPercent() float64 {
	switch b {
	case CVSolid:
		return cvSolidMax
	case CVTolerable:
		return cvTolerableMax
	case CVColdStarts:
		return cvColdMax
	}
	return math.Inf(1)
}
