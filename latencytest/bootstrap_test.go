package latencytest_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// Correlated chains (each chain's calls share a speed factor) have a
// heavier tail of totals than independent draws of the same calls
// predict, and CheckPrediction says so; independent chains do not.
func TestCheckPredictionSeesCorrelation(t *testing.T) {
	build := func(shared float64) *latencytest.ChainResult {
		rng := rand.New(rand.NewPCG(3, 4))
		cr := &latencytest.ChainResult{}
		for c := range 300 {
			f := math.Exp(shared * rng.NormFloat64())
			var ch latencytest.ChainRun
			ch.ID = fmt.Sprintf("chain%03d", c)
			for k := range 10 {
				d := time.Duration(f * math.Exp(0.5*rng.NormFloat64()) * float64(time.Second))
				ch.Calls = append(ch.Calls, latencytest.Record{ID: fmt.Sprintf("%s-call%02d", ch.ID, k), Total: d})
				ch.Total += d
			}
			cr.Chains = append(cr.Chains, ch)
		}
		return cr
	}
	corr, ok := build(0.7).CheckPrediction(1)
	if !ok || corr.CorrelationWarning == "" || corr.MeasuredOverP95 < 1.2 {
		t.Errorf("correlated: %+v", corr)
	}
	indep, ok := build(0).CheckPrediction(1)
	if !ok || indep.CorrelationWarning != "" || math.Abs(indep.MeasuredOverP95-1) > 0.1 {
		t.Errorf("independent: %+v", indep)
	}
	t.Logf("correlated: measured p95 %v vs predicted %v; independent: %v vs %v",
		corr.Measured.P95, corr.Predicted.P95, indep.Measured.P95, indep.Predicted.P95)
	if _, ok := (&latencytest.ChainResult{}).CheckPrediction(1); ok {
		t.Error("a prediction check of no chains")
	}
}
