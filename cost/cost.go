package cost

import (
	"fmt"
	"math"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/latencytest"
)

// Prices are a model's token prices in dollars per million tokens.
type Prices struct {
	// InputPerMillion prices prompt tokens.
	InputPerMillion float64 `yaml:"input_per_million"`
	// OutputPerMillion prices completion tokens, reasoning tokens included
	// (usage's completion_tokens counts them, and they are billed as
	// output).
	OutputPerMillion float64 `yaml:"output_per_million"`
	// CachedDiscount is the fraction taken off InputPerMillion for cached
	// prompt tokens (usage's cached_tokens): 0.5 bills them at half price,
	// 1 makes them free. Default 0: no discount.
	CachedDiscount float64 `yaml:"cached_discount"`
}

// validate panics on a price that is negative or not a number, or a
// discount outside [0,1].
func (p Prices) validate() {
	for _, v := range []float64{p.InputPerMillion, p.OutputPerMillion} {
		if !(v >= 0) || math.IsInf(v, 1) {
			panic(fmt.Sprintf("cost: price %v per million tokens is not a price", v))
		}
	}
	if !(p.CachedDiscount >= 0 && p.CachedDiscount <= 1) {
		panic(fmt.Sprintf("cost: cached discount %v is outside [0,1]", p.CachedDiscount))
	}
}

// of prices one record's tokens; ok is false when it reported no usage.
func (p Prices) of(rec *latencytest.Record) (dollars float64, ok bool) {
	if !rec.UsageReported {
		return 0, false
	}
	cached := min(rec.CachedTokens, rec.PromptTokens)
	in := float64(rec.PromptTokens-cached)*p.InputPerMillion + float64(cached)*p.InputPerMillion*(1-p.CachedDiscount)
	return (in + float64(rec.CompletionTokens)*p.OutputPerMillion) / 1e6, true
}

// Report is what a run's answers cost, from the token counts the
// server reported. Dollars count only calls that reported usage
// (Unpriced says how many did not: their tokens are unknown, never zero).
type Report struct {
	// Calls is the measured calls (or chains, for Chains).
	Calls int `json:"calls"`
	// Useful is those that succeeded: an error, an empty answer or a
	// refusal is not a useful answer (nor is a chain with a failed call).
	Useful int `json:"useful"`
	// Total is the dollars spent on every measured call.
	Total float64 `json:"total_usd"`
	// Wasted is the dollars spent on calls that were not useful.
	Wasted float64 `json:"wasted_usd"`
	// PerUseful is Total / Useful: what one useful answer really costs,
	// the waste included. +Inf when money was spent and nothing was
	// useful; NaN when nothing was spent and nothing was useful.
	PerUseful float64 `json:"-"`
	// Unpriced is the calls that reported no usage, left out of the
	// dollars.
	Unpriced int `json:"unpriced"`
	// Unit names what Calls counts: "calls" or "chains".
	Unit string `json:"unit"`
}

// wastedShare is Wasted / Total as a fraction; NaN when nothing was spent.
func (c Report) wastedShare() float64 {
	if c.Total == 0 {
		return math.NaN()
	}
	return c.Wasted / c.Total
}

// String renders the report on one line: "$0.0120 for 300 calls; 4
// useful: $0.003000 each; $0.0116 (96.7%) on 296 not useful".
func (c Report) String() string {
	each := "$" + format.Float(c.PerUseful, "%.6f") + " each"
	if c.Useful == 0 {
		each = "no useful answer for the money"
	}
	s := fmt.Sprintf("$%.4f for %d %s; %d useful: %s; $%.4f (%s) on %d not useful",
		c.Total, c.Calls, c.Unit, c.Useful, each, c.Wasted,
		format.Float(c.wastedShare()*100, "%.1f%%"), c.Calls-c.Useful)
	if c.Unpriced > 0 {
		s += fmt.Sprintf("; %d call(s) reported no usage and are not priced", c.Unpriced)
	}
	return s
}

// perUseful is total/useful, +Inf or NaN when useful is 0.
func perUseful(total float64, useful int) float64 {
	switch {
	case useful > 0:
		return total / float64(useful)
	case total > 0:
		return math.Inf(1)
	}
	return math.NaN()
}

// price prices one call at p, counting it in Unpriced when p cannot.
func (c *Report) price(p Prices, rec *latencytest.Record) float64 {
	d, ok := p.of(rec)
	if !ok {
		c.Unpriced++
	}
	return d
}

// add counts one unit (a call, or a chain) that cost spent: useful when
// ok, wasted otherwise.
func (c *Report) add(spent float64, ok bool) {
	c.Calls++
	c.Total += spent
	if ok {
		c.Useful++
	} else {
		c.Wasted += spent
	}
}

// Calls prices the measured calls of r (warm-up requests are left out,
// as from every figure) at p: the total, the useful answers (calls that
// succeeded: see Report.Useful), the cost per useful answer and what the
// failed and empty calls cost. A call is priced by its record's usage
// (for a latencytest.Func call, its figures' attempt); attempts that
// failed before streaming cost nothing. It panics on an invalid price.
func Calls(r *latencytest.Result, p Prices) Report {
	p.validate()
	c := Report{Unit: "calls"}
	for _, rec := range r.All() {
		if !rec.Warmup {
			c.add(c.price(p, rec), rec.OK())
		}
	}
	c.PerUseful = perUseful(c.Total, c.Useful)
	return c
}

// Chains prices a chain run at p per chain: Calls counts chains, Useful
// the chains whose every call succeeded (a task done), Total every call
// of every chain, Wasted the calls of chains that failed, and PerUseful
// the cost of one completed task. Unpriced counts calls. It panics on an
// invalid price.
func Chains(cr *latencytest.ChainResult, p Prices) Report {
	p.validate()
	c := Report{Unit: "chains"}
	for i := range cr.Chains {
		ch := &cr.Chains[i]
		spent := 0.0
		for k := range ch.Calls {
			spent += c.price(p, &ch.Calls[k])
		}
		c.add(spent, ch.OK())
	}
	c.PerUseful = perUseful(c.Total, c.Useful)
	return c
}
