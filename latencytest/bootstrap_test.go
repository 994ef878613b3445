package latencytest_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

func TestBootstrapChains(t *testing.T) {
	calls := latencytest.Sample{100 * time.Millisecond, 200 * time.Millisecond}
	s := latencytest.BootstrapChains(calls, 10, 2000, 1)
	// Each chain is 10 draws of 100 or 200 ms: between 1 s and 2 s, mean 1.5 s.
	if s.Min() < time.Second || s.Max() > 2*time.Second || math.Abs(s.Mean().Seconds()-1.5) > 0.01 {
		t.Errorf("min %v max %v mean %v", s.Min(), s.Max(), s.Mean())
	}
	// Deterministic by seed.
	first, again := latencytest.BootstrapChains(calls, 3, 5, 9), latencytest.BootstrapChains(calls, 3, 5, 9)
	if fmt.Sprint(first) != fmt.Sprint(again) {
		t.Error("not deterministic")
	}
	// A failed call fails its chain.
	if f := latencytest.BootstrapChains(latencytest.Sample{latencytest.Failed}, 2, 3, 1); f.Failures() != 3 {
		t.Errorf("%v", f)
	}
	curve := latencytest.PredictChainCurve(calls, 20, 1000, 1)
	if len(curve) != 20 || curve[0].P50 < 100*time.Millisecond || curve[19].P50 < 2*time.Second || !strings.Contains(curve[4].String(), "predicted") {
		t.Errorf("curve %v", curve)
	}
	for _, bad := range []func(){
		func() { latencytest.BootstrapChains(nil, 1, 1, 1) },
		func() { latencytest.BootstrapChains(calls, 0, 1, 1) },
		func() { latencytest.BootstrapChains(calls, 1, 0, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			bad()
		}()
	}
}

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
