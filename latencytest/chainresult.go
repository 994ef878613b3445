package latencytest

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tailguard/tailguard/internal/chaincurve"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/stats"
	"github.com/tailguard/tailguard/sample"
	"github.com/tailguard/tailguard/servermetrics"
)

// ChainResult is what a chain run measured.
type ChainResult struct {
	Chains []ChainRun `json:"chains"`
	Run
	// PlannedCalls is how many calls those chains meant to make (Planned
	// times Chain.Length): Calls counts the calls sent against it. 0 (a
	// result that does not say) counts the calls that ran.
	PlannedCalls int `json:"planned_calls,omitempty"`
	// Server is the server's own metrics over the run (Chain.ServerMetrics), or nil.
	Server *servermetrics.Interval `json:"server,omitempty"`
}

// ChainRun is one chain: its calls in order and its measured total.
type ChainRun struct {
	ID    string   `json:"id"`
	Calls []Record `json:"calls"`
	// Total is measured around the whole chain: its calls and its tool
	// steps (Chain.Tool).
	Total time.Duration `json:"total_ns"`
	// ModelTime is the sum of the calls' Total; ToolTime the sum of the
	// tool steps' wall times (0 without Chain.Tool), over ToolSteps steps.
	ModelTime time.Duration `json:"model_ns,omitempty"`
	ToolTime  time.Duration `json:"tool_ns,omitempty"`
	ToolSteps int           `json:"tool_steps,omitempty"`
	// QueueTime is the part of ModelTime the server kept the calls queued,
	// as Chain.Queueing tells it (0 without).
	QueueTime time.Duration `json:"queue_ns,omitempty"`
	// ToolErr is the error of the tool step that failed the chain (Err
	// "tool_error"), "" otherwise.
	ToolErr string `json:"tool_err,omitempty"`
	// Err is the class of the first failed call ("" when all succeeded;
	// "canceled" when the run's deadline cut the chain short; "cancelled"
	// when the client cancelled a call on purpose, which ends the chain:
	// neither failed nor done, see Cancel).
	Err string `json:"err,omitempty"`
	// Cut says why the chain stopped before its last call ("" when it ran
	// them all).
	Cut string `json:"cut,omitempty"`
}

// OK reports whether every call of the chain succeeded.
func (c *ChainRun) OK() bool { return c.Err == "" }

// Totals is the measured total of each chain; a chain with a failed call
// (an empty answer included) or a cancelled one is Failed: the task did
// not get done.
func (cr *ChainResult) Totals() Sample {
	s := make(Sample, 0, len(cr.Chains))
	for i := range cr.Chains {
		if cr.Chains[i].OK() {
			s = append(s, cr.Chains[i].Total)
		} else {
			s = append(s, Failed)
		}
	}
	return s
}

// Calls returns every call of every chain as one Result, for per-call
// figures, planned as PlannedCalls. A chain run cut short gives a Partial
// result.
func (cr *ChainResult) Calls() *Result {
	r := &Result{Run: cr.Run, Server: cr.Server}
	for _, c := range cr.Chains {
		r.Records = append(r.Records, c.Calls...)
	}
	r.Planned = max(cr.PlannedCalls, len(r.Records))
	return r
}

// ErrorRate is the fraction of chains with a failed call, among those
// not cut short by the run's end (see ChainRun.CutShort) nor cancelled by
// the client (in neither part, as a cancelled request); NaN when there
// are none.
func (cr *ChainResult) ErrorRate() float64 {
	n, finished := 0, 0
	for i := range cr.Chains {
		if !cr.Chains[i].CutShort() && cr.Chains[i].Err != classCancelled {
			finished++
			if !cr.Chains[i].OK() {
				n++
			}
		}
	}
	if finished == 0 {
		return math.NaN()
	}
	return float64(n) / float64(finished)
}

// CutShort reports whether the run's end (its deadline or cancellation)
// cut the chain short (Cut set) before any of its calls failed for
// another reason: such a chain is partial, not failed, and sloassert's
// chain objectives leave it out of chain error rates and totals, saying
// how many (the run is Partial). A chain with a failed call counts as
// failed, cut short or not.
func (c *ChainRun) CutShort() bool {
	if c.Cut == "" {
		return false
	}
	for i := range c.Calls {
		if !c.Calls[i].OK() && c.Calls[i].Err != ClassCanceled {
			return false
		}
	}
	return true
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

// LengthCurve is the chain-length curve: for each length 1..maxLen, the
// p50, p95 and p99 of chain totals predicted from the run's call totals
// drawn independently (10,000 chains a length, seeded; a failed draw
// fails its chain), labelled a prediction, beside the chains measured at
// that length (Measured.N 0 where none was; cut-short and cancelled chains left out,
// failed ones failed; with tool steps, their model time): where the two
// disagree the measured chains are the ground truth. It panics when
// maxLen is not in [1, 1000].
func (cr *ChainResult) LengthCurve(maxLen int, seed uint64) chaincurve.Curve {
	tools, measured := slices.ContainsFunc(cr.Chains, func(c ChainRun) bool { return c.ToolSteps > 0 }), map[int][]time.Duration{}
	for _, ch := range cr.Chains {
		v := map[bool]time.Duration{false: ch.Total, true: ch.ModelTime}[tools]
		if !ch.OK() {
			v = Failed
		}
		if !ch.CutShort() && ch.Err != classCancelled { // a cancelled chain stopped short of its length
			measured[len(ch.Calls)] = append(measured[len(ch.Calls)], v)
		}
	}
	return chaincurve.Compute(cr.Calls().Total(), measured, maxLen, seed)
}

// PredictionCheck sets a chain run's measured totals beside the totals
// predicted from its own calls drawn independently: where the measured
// tail is heavier than predicted, the calls of a chain are correlated and
// a prediction from single calls would have flattered the provider.
type PredictionCheck struct {
	Length   int
	Measured sample.Summary
	// Predicted is the distribution of the bootstrapped chains' totals:
	// always a prediction from independent draws, never a measurement.
	Predicted          sample.Summary
	MeasuredOverP95    float64 // measured p95 / predicted p95
	CorrelationWarning string  // set when the measured p95 is 10% or more above the prediction
	// ModelOnly says the chains ran tool steps (Chain.Tool): Measured is
	// then their model time (ChainRun.ModelTime), the part of a chain
	// that its calls predict.
	ModelOnly bool
}
