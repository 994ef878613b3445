package latencytest

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tailguard/tailguard/internal/format"
)

// BootstrapChains predicts the totals of n chains of length calls from a
// sample of single-call totals, drawing each call independently with
// replacement (seeded: the same seed gives the same prediction). A call
// drawn Failed makes its chain Failed. It is a prediction, not a
// measurement, and it assumes independent calls: real chains are often
// correlated (a slow conversation stays slow: the intraclass correlation
// of log call totals is 0.53 in measured llama-4-maverick chains), and
// then the prediction's tail is too thin. Judge chains on measured chain
// totals (ChainResult.Totals); use this to plan chain lengths never run.
// It panics when calls is empty or length or n is below 1.
func BootstrapChains(calls Sample, length, n int, seed int64) Sample {
	if len(calls) == 0 || length < 1 || n < 1 {
		panic(fmt.Sprintf("latencytest: BootstrapChains: %d calls, length %d, n %d (want calls, length >= 1, n >= 1)", len(calls), length, n))
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0xb007))
	out := make(Sample, n)
	for i := range out {
		var sum time.Duration
		for range length {
			d := calls[rng.IntN(len(calls))]
			if d == Failed || sum > Failed-d {
				sum = Failed
				break
			}
			sum += d
		}
		out[i] = sum
	}
	return out
}

// ChainPrediction is the predicted distribution of chain totals at one
// length (BootstrapChains): always a prediction from independent draws.
type ChainPrediction struct {
	Length        int
	P50, P95, P99 time.Duration
}

// String labels the figures as predicted.
func (p ChainPrediction) String() string {
	return fmt.Sprintf("%d calls (predicted, independent draws): p50 %s, p95 %s, p99 %s",
		p.Length, format.Duration(p.P50), format.Duration(p.P95), format.Duration(p.P99))
}

// PredictChainCurve predicts p50/p95/p99 of chain totals for every length
// from 1 to maxLength, n bootstrap chains each (10,000 is plenty), from
// single-call totals. See BootstrapChains for what the prediction assumes.
func PredictChainCurve(calls Sample, maxLength, n int, seed int64) []ChainPrediction {
	out := make([]ChainPrediction, 0, maxLength)
	for l := 1; l <= maxLength; l++ {
		s := BootstrapChains(calls, l, n, seed+int64(l))
		out = append(out, ChainPrediction{Length: l, P50: s.Quantile(0.5), P95: s.Quantile(0.95), P99: s.Quantile(0.99)})
	}
	return out
}

// PredictionCheck sets a chain run's measured totals beside the totals
// predicted from its own calls drawn independently: where the measured
// tail is heavier than predicted, the calls of a chain are correlated and
// a prediction from single calls would have flattered the provider.
type PredictionCheck struct {
	Length             int
	Measured           Summary
	Predicted          ChainPrediction
	MeasuredOverP95    float64 // measured p95 / predicted p95
	CorrelationWarning string  // set when the measured p95 is 10% or more above the prediction
	// ModelOnly says the chains ran tool steps (Chain.Tool): Measured is
	// then their model time (ChainRun.ModelTime), the part of a chain
	// that its calls predict.
	ModelOnly bool
}

// CheckPrediction compares cr's measured chain totals with
// BootstrapChains over its own call totals (n = 10,000 chains, seeded).
// It returns false when there is nothing to compare (no chain, or chains
// of different lengths). When the chains ran tool steps, it compares
// their model time (the sum of their calls) instead of their totals, and
// says so in ModelOnly.
func (cr *ChainResult) CheckPrediction(seed int64) (PredictionCheck, bool) {
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
	pred := BootstrapChains(calls, length, 10_000, seed)
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
	pc := PredictionCheck{Length: length, Measured: measured.Summarize(), ModelOnly: modelOnly,
		Predicted: ChainPrediction{Length: length, P50: pred.Quantile(0.5), P95: pred.Quantile(0.95), P99: pred.Quantile(0.99)}}
	if m, p := pc.Measured.P95, pc.Predicted.P95; m != Failed && p != Failed && p > 0 {
		pc.MeasuredOverP95 = float64(m) / float64(p)
		if pc.MeasuredOverP95 >= 1.1 {
			pc.CorrelationWarning = fmt.Sprintf("measured chain p95 %s is %.0f%% above the %s predicted from independent calls: the calls of a chain are correlated (a slow conversation stays slow), so predictions from single calls understate the tail",
				format.Duration(m), (pc.MeasuredOverP95-1)*100, format.Duration(p))
		}
	}
	return pc, true
}
