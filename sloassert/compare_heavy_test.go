package sloassert_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tailguard/tailguard/sloassert"
)

// heavyShape is a TTFT distribution with the figures Compare's doc gives
// for it.
type heavyShape struct {
	name   string
	draw   func(*rand.Rand) float64
	power  float64 // the doc's figure for a doubled slowest 5%
	falses float64 // the doc's figure for two runs of one distribution
}

// heavyShapes are heavy-tailed TTFT distributions for Compare's power,
// each with the share of pairs whose doubled slowest 5% Compare's doc
// says it flags (measured: TestComparePowerOnHeavyTails).
var heavyShapes = []heavyShape{
	{"lognormal sigma 1", func(r *rand.Rand) float64 { return 200 * math.Exp(1.0*r.NormFloat64()) }, 0.572, 0.005},
	{"lognormal sigma 2", func(r *rand.Rand) float64 { return 200 * math.Exp(2.0*r.NormFloat64()) }, 0.210, 0.028},
	{"pareto alpha 2.5", func(r *rand.Rand) float64 { return 150 * math.Pow(1-r.Float64(), -1/2.5) }, 0.570, 0.005},
	{"pareto alpha 1.5", func(r *rand.Rand) float64 { return 150 * math.Pow(1-r.Float64(), -1/1.5) }, 0.275, 0.008},
}

// TestComparePowerOnHeavyTails measures how often Compare's defaults flag
// a current run of 300 requests whose slowest 5% doubled, against a
// baseline of 300 from the same heavy-tailed distribution, and how often
// two runs of one distribution are flagged: the figures in Compare's doc.
// Measured with 400 pairs a shape (TAILGUARD_SIMULATIONS=full, 128 s on
// 2 cores): doubled tail flagged 57.2% (lognormal sigma 1), 21.0%
// (sigma 2), 57.0% (Pareto alpha 2.5), 27.5% (alpha 1.5); one
// distribution flagged 0.5%, 2.8%, 0.5%, 0.8%. Each count must lie where
// a binomial with the doc's rate puts it 99% of the time (simMinFlags,
// simMaxFlags); without the full setting, 12 pairs of the two heaviest
// shapes check the doubled tail alone.
func TestComparePowerOnHeavyTails(t *testing.T) {
	pairs, shapes, checkSame := 12, []heavyShape{heavyShapes[1], heavyShapes[3]}, false
	if simFull() {
		pairs, shapes, checkSame = 400, heavyShapes, true
	}
	for _, sh := range shapes {
		var same, doubled int
		for i := range pairs {
			rb := rand.New(rand.NewPCG(uint64(2*i+1), 0x4e))
			rc := rand.New(rand.NewPCG(uint64(2*i+2), 0x4e))
			base, cur := untunedRun(rb, sh.draw, 0), untunedRun(rc, sh.draw, 0)
			if checkSame && !(sloassert.Compare{}).Evaluate(base, cur).OK() {
				same++
			}
			if !(sloassert.Compare{}).Evaluate(base, simDoubleTail(cur)).OK() {
				doubled++
			}
		}
		line := fmt.Sprintf("%-18s %d pairs: doubled slowest 5%% flagged %5.1f%%", sh.name, pairs, 100*float64(doubled)/float64(pairs))
		if checkSame {
			line += fmt.Sprintf(", one distribution flagged %5.1f%%", 100*float64(same)/float64(pairs))
		}
		t.Log(line)
		if doubled < simMinFlags(pairs, sh.power) || doubled > simMaxFlags(pairs, sh.power) {
			t.Errorf("%s: doubled tail flagged %d of %d: not what the doc's %.1f%% gives", sh.name, doubled, pairs, 100*sh.power)
		}
		if checkSame && (same < simMinFlags(pairs, sh.falses) || same > simMaxFlags(pairs, sh.falses)) {
			t.Errorf("%s: one distribution flagged %d of %d: not what the doc's %.1f%% gives", sh.name, same, pairs, 100*sh.falses)
		}
	}
}
