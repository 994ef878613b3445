package fit

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
)

// curveFit is the fitted prefill curve (fakeprovider.Prefill) and how each
// record's base TTFT (the prefill taken out) is computed from it.
type curveFit struct {
	c    fakeprovider.Prefill // unit (CharsPerToken, TemplateTokens) set by the caller
	desc string               // how the curve was chosen, for the profile's comment
}

// base is t's TTFT with the curve's prefill taken out: less the prefill
// (additive), or divided by 1 + prefill/TTFTScale (proportional).
func (f curveFit) base(t timing) time.Duration {
	u := float64(t.rec.PromptTokens)
	if !f.c.IsSet() {
		return t.ttft
	}
	d := f.c.Add(u, float64(f.c.TTFTScale)) // at base = TTFTScale, the proportional prefill is the curve's own
	if f.c.TTFTScale > 0 {
		return time.Duration(float64(t.ttft) / (1 + d/float64(f.c.TTFTScale)))
	}
	return t.ttft - time.Duration(d)
}

// curveForm is one candidate curve: TTFT = a_c + A·k^P (+ B·k² when quad),
// k the prompt's tokens / 1,000, one intercept per concurrency.
type curveForm struct {
	p    float64
	quad bool
}

func (f curveForm) String() string {
	switch {
	case f.quad:
		return "quadratic (a·k + b·k²)"
	case f.p == 1:
		return "linear (a·k)"
	}
	return fmt.Sprintf("power (a·k^%.2f)", f.p)
}

func (f curveForm) terms(k float64) (float64, float64) {
	if f.quad {
		return k, k * k
	}
	return math.Pow(k, f.p), 0
}

// curveData are the first tokens a curve is fitted on.
type curveData struct {
	k, y, w []float64 // prompt tokens / 1000, TTFT (ns), weight
	conc    []int
}

// coefs fits form f by weighted least squares on the rows in idx, the
// intercepts per concurrency; ok is false when a coefficient comes out
// negative (a prefill that shrinks with the prompt is not one).
func (d curveData) coefs(f curveForm, idx []int) (a, b float64, icept map[int]float64, ok bool) {
	type acc struct{ w, x1, x2, y float64 }
	means := map[int]*acc{}
	for _, i := range idx {
		x1, x2 := f.terms(d.k[i])
		m := means[d.conc[i]]
		if m == nil {
			m = &acc{}
			means[d.conc[i]] = m
		}
		m.w += d.w[i]
		m.x1 += d.w[i] * x1
		m.x2 += d.w[i] * x2
		m.y += d.w[i] * d.y[i]
	}
	var s11, s12, s22, s1y, s2y float64
	for _, i := range idx {
		m := means[d.conc[i]]
		x1, x2 := f.terms(d.k[i])
		c1, c2, cy := x1-m.x1/m.w, x2-m.x2/m.w, d.y[i]-m.y/m.w
		s11 += d.w[i] * c1 * c1
		s12 += d.w[i] * c1 * c2
		s22 += d.w[i] * c2 * c2
		s1y += d.w[i] * c1 * cy
		s2y += d.w[i] * c2 * cy
	}
	if f.quad {
		det := s11*s22 - s12*s12
		if !(det > 1e-12*s11*s22) {
			return 0, 0, nil, false
		}
		a, b = (s22*s1y-s12*s2y)/det, (s11*s2y-s12*s1y)/det
	} else {
		if !(s11 > 0) {
			return 0, 0, nil, false
		}
		a = s1y / s11
	}
	if !(a >= 0 && b >= 0) || (a == 0 && b == 0) {
		return 0, 0, nil, false
	}
	icept = map[int]float64{}
	for c, m := range means {
		icept[c] = (m.y - a*m.x1 - b*m.x2) / m.w
	}
	return a, b, icept, true
}

// cvError is form f's weighted mean squared error (in units of the local
// spread, squared: about 1 for a curve that fits) over 5 folds (row i in
// fold i mod 5), each fold predicted from a fit to the others; +Inf when
// a fold's fit fails.
func (d curveData) cvError(f curveForm) float64 {
	var sum, n float64
	for fold := range 5 {
		var train, test []int
		for i := range d.k {
			if i%5 == fold {
				test = append(test, i)
			} else {
				train = append(train, i)
			}
		}
		a, b, icept, ok := d.coefs(f, train)
		if !ok {
			return math.Inf(1)
		}
		for _, i := range test {
			c, ok := icept[d.conc[i]]
			if !ok {
				return math.Inf(1)
			}
			x1, x2 := f.terms(d.k[i])
			e := d.y[i] - (c + a*x1 + b*x2)
			sum += d.w[i] * e * e
			n++
		}
	}
	return sum / n
}

// localScale is each first token's spread for the weights: the median
// absolute deviation (× 1.4826, a standard deviation for normal data) of
// vals (TTFTs, then a first fit's residuals) of the first tokens whose
// prompts are within 25% of its own (the minLocal nearest in prompt size
// when fewer are), at least 0.1% of its TTFT and 1µs;
// so each prompt size's error counts against its own noise (weighted
// least squares).
func localScale(ts []timing, vals []float64) []float64 {
	const minLocal = 15
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ts[order[a]].rec.PromptTokens < ts[order[b]].rec.PromptTokens })
	out := make([]float64, len(ts))
	done := map[[2]int]float64{}
	lo, hi := 0, 0
	for rank, i := range order {
		u := float64(ts[i].rec.PromptTokens)
		for float64(ts[order[lo]].rec.PromptTokens) < u/1.25 {
			lo++
		}
		for hi < len(order) && float64(ts[order[hi]].rec.PromptTokens) <= u*1.25 {
			hi++
		}
		a, b := lo, hi
		if b-a < minLocal { // too few: the minLocal nearest by rank
			a = max(0, min(rank-minLocal/2, len(order)-minLocal))
			b = min(len(order), a+minLocal)
		}
		mad, ok := done[[2]int{a, b}] // prompts of one size share a window
		if !ok {
			ys := make([]float64, 0, b-a)
			for _, j := range order[a:b] {
				ys = append(ys, vals[j])
			}
			med := quantile(ys, 0.5)
			for j := range ys {
				ys[j] = math.Abs(ys[j] - med)
			}
			mad = 1.4826 * quantile(ys, 0.5)
			done[[2]int{a, b}] = mad
		}
		out[i] = max(mad, 1e-3*float64(ts[i].ttft), 1e3)
	}
	return out
}

// fitCurve chooses the prefill curve of ts (first tokens with prompt sizes
// in the curve's tokens, usage prompt_tokens): linear, quadratic or a
// power of 0.5-3 (steps of 0.05) in the prompt's tokens, with one
// intercept per concurrency, each fitted by least squares weighted by
// 1/localScale² (the local variance), and the one with the smallest
// 5-fold held-out error kept; twice: the second time the local spread
// is that of the first choice's residuals (the TTFTs of a range of
// prompt sizes spread by the curve itself too). The curve starts at the smallest prompt (Prefill.FromTokens).
// Then the mode: additive (the prefill an amount) or proportional (a
// share of the base TTFT, Prefill.TTFTScale), whichever leaves base
// TTFTs most alike across prompt sizes (the largest KS distance between
// a prompt-size group's bases and all bases of its concurrency); additive
// only when no base comes out below 0. ok is false, with why, when no
// curve fits.
func fitCurve(ts []timing) (f curveFit, why string) {
	var d curveData
	from := math.MaxInt
	for _, t := range ts {
		d.k = append(d.k, float64(t.rec.PromptTokens)/1000)
		d.y = append(d.y, float64(t.ttft))
		d.conc = append(d.conc, max(t.rec.Concurrency, 1))
		if t.rec.PromptTokens > 0 {
			from = min(from, t.rec.PromptTokens)
		}
	}
	if from == math.MaxInt {
		return f, "no prompt sizes"
	}
	all := make([]int, len(ts))
	for i := range all {
		all[i] = i
	}
	vals := d.y
	var best curveForm
	var bestErr, linErr, a, b float64
	var icept map[int]float64
	for range 2 {
		d.w = d.w[:0]
		for _, s := range localScale(ts, vals) {
			d.w = append(d.w, 1/(s*s))
		}
		best, bestErr, linErr = d.choose()
		if math.IsInf(bestErr, 1) {
			return f, "no curve with a prefill that grows with the prompt fits every fold"
		}
		a, b, icept, _ = d.coefs(best, all)
		vals = make([]float64, len(ts))
		for i := range vals {
			x1, x2 := best.terms(d.k[i])
			vals[i] = d.y[i] - (icept[d.conc[i]] + a*x1 + b*x2)
		}
	}
	c := fakeprovider.Prefill{FromTokens: from}
	if best.quad {
		c.Per1kTokens, c.Per1kTokensSquared = time.Duration(math.Round(a)), time.Duration(math.Round(b))
	} else {
		c.Per1kTokens, c.Exponent = time.Duration(math.Round(a)), best.p
	}
	if !c.IsSet() {
		return f, "the fitted curve rounds to 0"
	}
	lowest := slices.Min(slices.Collect(maps.Keys(icept)))
	add := curveFit{c: c}
	prop := c
	prop.TTFTScale = time.Duration(math.Round(icept[lowest] + c.Curve(float64(from))))
	modes := []struct {
		name string
		f    curveFit
		ok   bool
	}{{"additive", add, true}, {"proportional", curveFit{c: prop}, prop.TTFTScale > 0}}
	var scores [2]float64
	chosen := -1
	for m := range modes {
		scores[m] = math.Inf(1)
		if !modes[m].ok {
			continue
		}
		bases := make([]float64, len(ts))
		negative := false
		for i, t := range ts {
			bases[i] = float64(modes[m].f.base(t))
			negative = negative || bases[i] < 0
		}
		if negative {
			continue
		}
		scores[m] = baseSpread(ts, bases)
		if chosen < 0 || scores[m] < scores[chosen] {
			chosen = m
		}
	}
	if chosen < 0 {
		return f, fmt.Sprintf("the %s curve leaves base TTFTs below 0 and no typical TTFT to scale by", best)
	}
	f = modes[chosen].f
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s in prompt tokens (k = tokens/1,000) chosen by 5-fold held-out error among linear, quadratic and powers 0.5-3 (weighted by 1/local variance, one intercept per concurrency): held-out RMSE in local standard deviations %.3f vs linear's %.3f; ", best, math.Sqrt(bestErr), math.Sqrt(linErr))
	fmt.Fprintf(&sb, "from %d tokens (the smallest prompt: its TTFTs stay as measured); %s", from, modes[chosen].name)
	if chosen == 1 {
		fmt.Fprintf(&sb, " (scaled by each request's base TTFT / %v)", prop.TTFTScale)
	}
	fmt.Fprintf(&sb, ": largest KS distance of a prompt-size group's base TTFTs from all, additive %s, proportional %s",
		fmtScore(scores[0]), fmtScore(scores[1]))
	f.desc = sb.String()
	return f, ""
}

func fmtScore(s float64) string {
	if math.IsInf(s, 1) {
		return "not possible"
	}
	return fmt.Sprintf("%.3f", s)
}

// baseSpread is the largest KS distance between the bases of one
// prompt-size group (prompts within 25% of the group's smallest, 5 or
// more first tokens) and all bases of its concurrency.
func baseSpread(ts []timing, bases []float64) float64 {
	byC := map[int][]int{}
	for i, t := range ts {
		c := max(t.rec.Concurrency, 1)
		byC[c] = append(byC[c], i)
	}
	worst := 0.0
	for _, c := range slices.Sorted(maps.Keys(byC)) {
		idx := byC[c]
		sort.SliceStable(idx, func(a, b int) bool { return ts[idx[a]].rec.PromptTokens < ts[idx[b]].rec.PromptTokens })
		pool := make([]float64, len(idx))
		for j, i := range idx {
			pool[j] = bases[i]
		}
		for start := 0; start < len(idx); {
			end := start
			first := float64(ts[idx[start]].rec.PromptTokens)
			for end < len(idx) && float64(ts[idx[end]].rec.PromptTokens) <= first*1.25 {
				end++
			}
			end = max(end, start+1)
			if end-start >= 5 && end-start < len(idx) {
				worst = max(worst, KolmogorovSmirnov(pool[start:end], pool).D)
			}
			start = end
		}
	}
	return worst
}

// choose returns the candidate form with the smallest held-out error, its
// error and the straight line's: linear, quadratic, then powers 0.5-3 in
// steps of 0.05 (the first of equal errors wins).
func (d curveData) choose() (best curveForm, bestErr, linErr float64) {
	forms := []curveForm{{p: 1}, {quad: true}}
	for p := 0.5; p <= 3.0001; p += 0.05 {
		if math.Abs(p-1) > 1e-9 {
			forms = append(forms, curveForm{p: math.Round(p*100) / 100})
		}
	}
	bestErr = math.Inf(1)
	for i, form := range forms {
		e := d.cvError(form)
		if i == 0 {
			linErr = e
		}
		if e < bestErr {
			best, bestErr = form, e
		}
	}
	return best, bestErr, linErr
}
