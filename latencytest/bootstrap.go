package latencytest

import (
	"fmt"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/stats"
)

// PredictionCheck sets a chain run's measured totals beside the totals
// predicted from its own calls drawn independently: where the measured
// tail is heavier than predicted, the calls of a chain are correlated and
// a prediction from single calls would have flattered the provider.
type PredictionCheck struct {
	Length   int
	Measured Summary
	// Predicted is the distribution of the bootstrapped chains' totals:
	// always a prediction from independent draws, never a measurement.
	Predicted          Summary
	MeasuredOverP95    float64 // measured p95 / predicted p95
	CorrelationWarning string  // set when the measured p95 is 10% or more above the prediction
	// ModelOnly says the chains ran tool steps (Chain.Tool): Measured is
	// then their model time (ChainRun.ModelTime), the part of a chain
	// that its calls predict.
	ModelOnly bool
}

// CheckPrediction compares cr's measured chain totals with 10,000 chains
// bootstrapped from its own call totals, each call drawn independently
// (seeded: the same seed gives the same prediction; a call drawn Failed
// fails its chain).
// It returns false when there is nothing to compare (no chain, or chains
// of different lengths). When the chains ran tool steps, it compares
// their model time (the sum of their calls) instead of their totals, and
// says so in ModelOnly.
func (cr *ChainResult) CheckPrediction(seed uint64) (PredictionCheck, bool) {
	if len(cr.Chains) == 0 {
		return PredictionCheck{}, false
	}
	length := len(cr.Chains[0].Calls)
	for _, ch := range cr.Chains {
		if len(ch.Calls) != length || ch.Cut != "" {
			return PredictionCheck{}, false
		}
	}
	calls := cr.Calls().Total()
	if len(calls) == 0 || length == 0 {
		return PredictionCheck{}, false
	}
	pred := Sample(stats.BootstrapSums(calls, length, 10_000, seed))
	measured, modelOnly := cr.Totals(), false
	for i := range cr.Chains {
		modelOnly = modelOnly || cr.Chains[i].ToolSteps > 0
	}
	if modelOnly { // tool time is not in the calls: compare the calls' part
		for i := range cr.Chains {
			if cr.Chains[i].OK() {
				measured[i] = cr.Chains[i].ModelTime
			}
		}
	}
	pc := PredictionCheck{Length: length, Measured: measured.Summarize(), Predicted: pred.Summarize(), ModelOnly: modelOnly}
	if m, p := pc.Measured.P95, pc.Predicted.P95; m != Failed && p != Failed && p > 0 {
		pc.MeasuredOverP95 = float64(m) / float64(p)
		if pc.MeasuredOverP95 >= 1.1 {
			pc.CorrelationWarning = fmt.Sprintf("measured chain p95 %s is %.0f%% above the %s predicted from independent calls: the calls of a chain are correlated (a slow conversation stays slow), so predictions from single calls understate the tail",
				format.Duration(m), (pc.MeasuredOverP95-1)*100, format.Duration(p))
		}
	}
	return pc, true
}
