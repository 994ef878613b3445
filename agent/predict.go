package agent

import (
	"fmt"
	randv2 "math/rand/v2"
	"time"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sample"
)

// predictDraws is the number of tasks a prediction draws.
const predictDraws = 10_000

// Prediction sets a run's measured task totals beside the totals
// predicted from its own single copies drawn independently through the
// graph: where the measured tail is heavier than predicted, the calls of
// a task are correlated, and a prediction from single calls would have
// flattered the provider.
type Prediction struct {
	// Measured is the measured task totals (tasks cut short left out).
	Measured sample.Summary
	// Predicted is the distribution of the drawn tasks' totals: always a
	// prediction from independent draws, never a measurement.
	Predicted sample.Summary
	// Draws is the tasks drawn, from Seed.
	Draws int
	Seed  uint64
	// MeasuredOverP95 is the measured p95 over the predicted p95.
	MeasuredOverP95 float64
	// CorrelationWarning is set when the measured p95 is 10% or more
	// above the predicted one.
	CorrelationWarning string
}

// Predict draws 10,000 tasks through r's graph, each model or tool copy
// drawn from the measured copies of the same step (its path, every task
// and branch pooled; a failed copy is drawn as failed), each fan-out's
// copies from its distribution; seeded: the same seed gives the same
// prediction. Abandoned copies are not drawn (their times are cut
// short). It returns false when there is nothing to compare: no task
// finished, or a step has no measured copy to draw from.
func Predict(r *Result, seed uint64) (Prediction, bool) {
	if r == nil || r.Graph.Validate() != nil {
		return Prediction{}, false
	}
	pools := map[string][]time.Duration{}
	for i := range r.Tasks {
		t := &r.Tasks[i]
		if t.CutShort() {
			continue
		}
		for _, s := range t.Steps {
			if s.Kind == KindAgent || s.Abandoned {
				continue
			}
			d := s.Time()
			if s.Err != "" {
				d = latencytest.Failed
			}
			pools[s.Path] = append(pools[s.Path], d)
		}
	}
	measured := r.Totals()
	if len(measured) == 0 || !leavesIn(&r.Graph, pools, "") {
		return Prediction{}, false
	}
	m := &sim{rng: randv2.New(randv2.NewPCG(seed, 0x70726564)), counts: map[string]int{},
		leaf: func(rng *randv2.Rand, _ *Step, path string) time.Duration {
			p := pools[path]
			return p[rng.IntN(len(p))]
		}}
	pred := make(latencytest.Sample, predictDraws)
	for i := range pred {
		pred[i] = m.task(&r.Graph)
	}
	pc := Prediction{Measured: measured.Summarize(), Predicted: pred.Summarize(), Draws: predictDraws, Seed: seed}
	if mp, pp := pc.Measured.P95, pc.Predicted.P95; mp != latencytest.Failed && pp != latencytest.Failed && pp > 0 {
		pc.MeasuredOverP95 = float64(mp) / float64(pp)
		if pc.MeasuredOverP95 >= 1.1 {
			pc.CorrelationWarning = fmt.Sprintf("measured task p95 %s is %.0f%% above the %s predicted from independent calls: the calls of a task are correlated (a slow conversation stays slow), so predictions from single calls understate the tail",
				format.Duration(mp), (pc.MeasuredOverP95-1)*100, format.Duration(pp))
		}
	}
	return pc, true
}

// leavesIn reports whether every model and tool step of g (at path) has
// a pool to draw from.
func leavesIn(g *Graph, pools map[string][]time.Duration, path string) bool {
	for _, s := range g.Steps {
		p := join(path, s.Name)
		if s.Agent != nil {
			if !leavesIn(s.Agent, pools, p) {
				return false
			}
		} else if len(pools[p]) == 0 {
			return false
		}
	}
	return true
}

// Note is the prediction as a report line: labelled a prediction, with
// the correlation warning when there is one.
func (p Prediction) Note() string {
	s := fmt.Sprintf("task total p95: measured %s; predicted from the same copies drawn independently through the graph %s (a prediction, not a measurement; %d draws, seed %d)",
		format.Duration(p.Measured.P95), format.Duration(p.Predicted.P95), p.Draws, p.Seed)
	if p.CorrelationWarning != "" {
		s += "; " + p.CorrelationWarning
	}
	return s
}
