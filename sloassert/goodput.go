package sloassert

import (
	"fmt"
	"math"
	"time"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/stats"
	"github.com/tailguard/tailguard/latencytest"
)

// MinGoodput is the objective "at least the fraction share of measured
// requests were good": they succeeded, their first token came within ttft
// and their time per output token after the first, (last token - first
// token)/(tokens - 1), was within tpot — goodput as DistServe and vLLM
// define it. Tokens are the usage's completion tokens (SSE token events
// without usage); a one-token answer is judged on TTFT alone; a request
// that never observed a token is not good. Like a quantile it needs
// n >= ceil(1/min(share, 1-share)) requests (AllowSmallSample opts out),
// carries a one-sided exact (Clopper-Pearson) interval on the good share
// at its confidence (default 95%), and follows the same policies: point
// (the observed share gates; a limit inside the interval is
// inconclusive), Demonstrate (the lower bound must reach share) and
// Refute (fails only when the upper bound is below it). share must be in
// (0,1], ttft and tpot positive.
func MinGoodput(share float64, ttft, tpot time.Duration, opts ...Option) Objective {
	name := fmt.Sprintf("goodput (ttft <= %s, tpot <= %s) >= %s", format.Duration(ttft), format.Duration(tpot), percent(share))
	return Objective{Name: name, opts: collect(opts), judge: func(r *latencytest.Result, o options) Outcome {
		out := Outcome{Objective: name, Budget: percent(share), Observed: "-"}
		switch {
		case !(share > 0 && share <= 1):
			if share > 1 && share <= 100 {
				out.Note = fmt.Sprintf("share %v is above 1: it is a fraction (write %g for %g%%)", share, share/100, share)
			} else {
				out.Note = fmt.Sprintf("share %v is not a fraction in (0,1]", share)
			}
			return out
		case ttft <= 0 || tpot <= 0:
			out.Note = fmt.Sprintf("budgets ttft %v and tpot %v must be positive", ttft, tpot)
			return out
		case o.confidenceProblem() != "":
			out.Note = o.confidenceProblem()
			return out
		}
		n, good := 0, 0
		for _, rec := range r.All() {
			if rec.Warmup {
				continue
			}
			n++
			if isGood(rec, ttft, tpot) {
				good++
			}
		}
		if n == 0 {
			out.Observed, out.Note = "no data", "no measured request"
			return out
		}
		if k := eventRated(r); k > 0 {
			out.addNote(fmt.Sprintf("%d of %d requests reported no usage: their time per output token counts SSE events, not tokens", k, n))
		}
		g := float64(good) / float64(n)
		out.Observed = fmt.Sprintf("%s (%d of %d)", share4(g), good, n)
		out.Margin = fmt.Sprintf("%+.2f pts", (g-share)*100)
		out.severity = share / math.Max(g, 1e-12)
		conf := o.conf()
		lo, hi := proportionBounds(good, n, conf)
		out.Confidence = conf
		out.Interval = fmt.Sprintf("[%s, %s]", share4(lo), share4(hi))
		switch {
		case lo >= share:
			out.Verdict = Pass
		case hi < share:
			out.Verdict = Fail
		default:
			out.Verdict = Inconclusive
		}
		if share < 1 {
			if need := MinSamples(share); n < need && !o.allowSmall {
				out.addNote(fmt.Sprintf("a goodput of %s needs n >= %d (have %d)", percent(share), need, n))
				return out
			}
		}
		switch o.mode {
		case modePoint:
			out.OK = g >= share
			if out.Verdict == Inconclusive {
				out.addNote(fmt.Sprintf("inconclusive at %s: %s", share4(conf), out.Interval))
			}
		case modeDemonstrate:
			out.OK = out.Verdict == Pass
			out.addNote(fmt.Sprintf("demonstrate: lower %s bound %s", share4(conf), share4(lo)))
		case modeRefute:
			out.OK = hi >= share
			out.addNote(fmt.Sprintf("refute: upper %s bound %s", share4(conf), share4(hi)))
		}
		return out
	}}
}

// share4 is share with up to four significant digits near 100% ("99.67%").
func share4(f float64) string {
	if f > 0.9 && f < 1 {
		return fmt.Sprintf("%.4g%%", f*100)
	}
	return share(f)
}

// isGood reports whether a request meets both goodput budgets.
func isGood(rec *latencytest.Record, ttft, tpot time.Duration) bool {
	if !rec.OK() || rec.TokensUnobserved() || rec.TTFT < 0 || rec.TTFT > ttft {
		return false
	}
	tokens := rec.CompletionTokens
	if tokens == 0 {
		tokens = rec.TokenEvents
	}
	if tokens < 2 {
		return true
	}
	per := (rec.LastToken - rec.TTFT) / time.Duration(tokens-1)
	return per <= tpot
}

// proportionBounds returns one-sided exact (Clopper-Pearson) bounds on a
// binomial proportion from k successes in n trials, each at confidence c:
// lo is the p at which P(Binomial(n,p) >= k) = 1-c (0 when k = 0), hi
// the p at which P(Binomial(n,p) <= k) = 1-c (1 when k = n). Found by
// bisection on the exact binomial sums.
func proportionBounds(k, n int, c float64) (lo, hi float64) {
	alpha := 1 - c
	bisect := func(f func(p float64) bool) float64 { // the boundary of f over (0,1), f true below it
		a, b := 0.0, 1.0
		for range 60 {
			m := (a + b) / 2
			if f(m) {
				a = m
			} else {
				b = m
			}
		}
		return (a + b) / 2
	}
	lo, hi = 0, 1
	if k > 0 { // P(X >= k) grows with p: lo is where it reaches alpha
		lo = bisect(func(p float64) bool { return 1-stats.BinomCDF(k-1, n, p) < alpha })
	}
	if k < n { // P(X <= k) falls with p: hi is where it drops to alpha
		hi = bisect(func(p float64) bool { return stats.BinomCDF(k, n, p) > alpha })
	}
	return lo, hi
}
