package fit

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// prefillFit is the slope of TTFT on prompt tokens and its uncertainty.
type prefillFit struct {
	slope, se time.Duration // per 1k prompt tokens; se 0 when not computed
	t         float64       // slope / se
	n         int           // first tokens used
	lo, hi    int           // smallest and largest prompt
	why       string        // when no slope was computed
}

// minPrefillT is the t statistic a prefill slope needs to be kept: t > 2,
// about a 5% two-sided test (one-sided 2.3%) on the slope being 0.
const minPrefillT = 2

func (f prefillFit) keep() bool { return f.why == "" && f.slope > 0 && f.t > minPrefillT }

func (f prefillFit) String() string {
	if f.why != "" {
		return f.why
	}
	verdict := fmt.Sprintf("t = %.1f > %d: kept", f.t, minPrefillT)
	switch {
	case f.slope <= 0:
		verdict = fmt.Sprintf("t = %.1f: TTFT did not grow with the prompt", f.t)
	case !(f.t > minPrefillT):
		verdict = fmt.Sprintf("t = %.1f, not above %d: not significant", f.t, minPrefillT)
	}
	return fmt.Sprintf("least-squares slope of TTFT on usage prompt_tokens within each concurrency, %d requests with prompts of %d-%d tokens: %v ± %v per 1k prompt tokens (heteroscedasticity-robust standard error, HC1), %s",
		f.n, f.lo, f.hi, f.slope, f.se, verdict)
}

// prefillSlope fits TTFT = a_c + slope × prompt tokens / 1000 by least
// squares, one intercept per concurrency (prompts and TTFT are centred
// within each concurrency, so load does not pass for prefill), with the
// slope's heteroscedasticity-robust (HC1) standard error: TTFT spreads
// more at long prompts. It needs 10 or more first tokens and prompts that
// differ within a concurrency; whatever their absolute spread, the slope
// is kept when t > minPrefillT (prefillFit.keep).
func prefillSlope(ts []timing) prefillFit {
	f := prefillFit{n: len(ts)}
	if len(ts) < 10 {
		f.why = fmt.Sprintf("%d first tokens, fewer than 10 to fit a slope on", len(ts))
		return f
	}
	byC := map[int][]timing{}
	f.lo, f.hi = math.MaxInt, 0
	for _, t := range ts {
		c := max(t.rec.Concurrency, 1)
		byC[c] = append(byC[c], t)
		f.lo, f.hi = min(f.lo, t.rec.PromptTokens), max(f.hi, t.rec.PromptTokens)
	}
	var xs, ys []float64 // centred within each concurrency
	for _, c := range slices.Sorted(maps.Keys(byC)) {
		g := byC[c]
		var mx, my float64
		for _, t := range g {
			mx += float64(t.rec.PromptTokens) / 1000 / float64(len(g))
			my += float64(t.ttft) / float64(len(g))
		}
		for _, t := range g {
			xs = append(xs, float64(t.rec.PromptTokens)/1000-mx)
			ys = append(ys, float64(t.ttft)-my)
		}
	}
	var sxx, sxy float64
	for i := range xs {
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	switch {
	case f.hi == 0:
		f.why = "no prompt sizes recorded (usage prompt_tokens): no slope to fit"
		return f
	case f.lo == f.hi:
		f.why = fmt.Sprintf("every prompt has %d tokens: no slope to fit", f.lo)
		return f
	case sxx < 1e-12:
		f.why = fmt.Sprintf("prompts (%d-%d tokens) differ only between concurrencies: no slope within one", f.lo, f.hi)
		return f
	}
	b := sxy / sxx
	var meat float64
	for i := range xs {
		e := ys[i] - b*xs[i]
		meat += xs[i] * xs[i] * e * e
	}
	dof := len(xs) - len(byC) - 1
	if dof < 1 {
		f.why = fmt.Sprintf("%d first tokens over %d concurrencies: no degrees of freedom left for the slope's error", len(xs), len(byC))
		return f
	}
	se := math.Sqrt(meat*float64(len(xs))/float64(dof)) / sxx
	f.slope, f.se = time.Duration(b).Round(time.Microsecond), time.Duration(se).Round(time.Microsecond)
	f.t = b / se
	if se == 0 {
		f.t = math.Copysign(math.Inf(1), b)
	}
	return f
}
