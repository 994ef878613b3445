package latencytest_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// studyChains reads the chained session of one model of source 000's
// raw data (the fit package's copy of serverless-tail-study/) as a
// ChainResult: each call's total_ms, each chain's total_chain_ms (measured
// around the chain), every call a success as the study counted them; and
// the study's own chain summary (p50, p95, p99).
func studyChains(t *testing.T, model string) (*latencytest.ChainResult, [3]time.Duration) {
	t.Helper()
	data, err := os.ReadFile("../fit/testdata/serverless-tail-study/results_" + model + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Chained struct {
			Summary struct {
				P50 float64 `json:"p50_ms"`
				P95 float64 `json:"p95_ms"`
				P99 float64 `json:"p99_ms"`
			} `json:"chain_summary"`
			Chains []struct {
				Index int     `json:"chain_index"`
				Total float64 `json:"total_chain_ms"`
				Calls []struct {
					Total float64 `json:"total_ms"`
				} `json:"calls"`
			} `json:"chains"`
		} `json:"chained_session"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	ms := func(x float64) time.Duration { return time.Duration(math.Round(x * 1e6)) }
	cr := &latencytest.ChainResult{}
	for _, ch := range raw.Chained.Chains {
		run := latencytest.ChainRun{ID: "chain", Total: ms(ch.Total)}
		for k, c := range ch.Calls {
			run.Calls = append(run.Calls, latencytest.Record{Chain: ch.Index, Call: k, Total: ms(c.Total), Status: 200})
		}
		cr.Chains = append(cr.Chains, run)
	}
	s := raw.Chained.Summary
	return cr, [3]time.Duration{ms(s.P50), ms(s.P95), ms(s.P99)}
}

// The study's figure on its own raw records: chain totals against chain
// length 1..10, predicted from the 300 chain calls drawn independently,
// with the 30 measured 10-call chains beside the prediction at length 10.
// The measured point is the study's published chain summary; the
// predicted points at length 1 are the calls' own quantiles (within the
// bootstrap's sampling error); the prediction orders the three models as
// the measured chains do (the study's "the stars confirm the ordering").
func TestLengthCurveStudy(t *testing.T) {
	var predicted, measured []time.Duration
	for _, model := range []string{"mistral-3-14B", "openai-gpt-oss-120b", "llama-4-maverick"} {
		cr, published := studyChains(t, model)
		curve := cr.LengthCurve(10, 42)
		if len(curve.Points) != 10 || curve.Calls != 300 || curve.Draws != 10_000 || curve.Seed != 42 || curve.Label == "" {
			t.Fatalf("%s: %d points from %d calls, %d draws, seed %d, label %q", model, len(curve.Points), curve.Calls, curve.Draws, curve.Seed, curve.Label)
		}
		for _, p := range curve.Points[:9] {
			if p.Measured.N != 0 {
				t.Errorf("%s: length %d measured by %d chains; only 10-call chains ran", model, p.Length, p.Measured.N)
			}
		}
		at10 := curve.Points[9]
		// The study published its summary rounded to 0.1 ms.
		r := func(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
		if got := [3]time.Duration{r(at10.Measured.P50), r(at10.Measured.P95), r(at10.Measured.P99)}; at10.Measured.N != 30 || got != published {
			t.Errorf("%s: measured at 10: n=%d %v, the study published %v", model, at10.Measured.N, got, published)
		}
		// Length 1: the bootstrap's q-quantile of 10,000 single draws lies
		// between the calls' quantiles at q ± 4 standard errors
		// (sqrt(q(1-q)/10,000): 0.005 at p50, 0.001 at p99).
		calls := cr.Calls().Total()
		for i, q := range []float64{0.5, 0.95, 0.99} {
			se := math.Sqrt(q * (1 - q) / 10_000)
			lo, hi := calls.Quantile(max(q-4*se, 0)), calls.Quantile(min(q+4*se, 1))
			got := []time.Duration{curve.Points[0].Predicted.P50, curve.Points[0].Predicted.P95, curve.Points[0].Predicted.P99}[i]
			if got < lo || got > hi {
				t.Errorf("%s: predicted q%v at length 1 = %v, outside the calls' [%v, %v]", model, q, got, lo, hi)
			}
		}
		for i := 1; i < 10; i++ {
			if a, b := curve.Points[i-1].Predicted.P50, curve.Points[i].Predicted.P50; b <= a {
				t.Errorf("%s: predicted p50 falls from %v at length %d to %v", model, a, i, b)
			}
		}
		t.Logf("%s at length 10: predicted p50 %v p95 %v p99 %v; measured p50 %v p95 %v p99 %v", model,
			at10.Predicted.P50, at10.Predicted.P95, at10.Predicted.P99, at10.Measured.P50, at10.Measured.P95, at10.Measured.P99)
		predicted, measured = append(predicted, at10.Predicted.P50), append(measured, at10.Measured.P50)
	}
	order := func(xs []time.Duration) []int {
		idx := []int{0, 1, 2}
		slices.SortFunc(idx, func(a, b int) int { return int(xs[a] - xs[b]) })
		return idx
	}
	if p, m := order(predicted), order(measured); !slices.Equal(p, m) {
		t.Errorf("at length 10 the prediction orders the models %v, the measured chains %v", p, m)
	}
}

// The same seed gives the same curve, a longer curve keeps the shorter
// one's points, and chains of several lengths are each measured at their
// own; a failed call fails its measured chain.
func TestLengthCurveSeedsAndLengths(t *testing.T) {
	cr, _ := studyChains(t, "mistral-3-14B")
	a, b := cr.LengthCurve(5, 7), cr.LengthCurve(12, 7)
	if !slices.Equal(a.Points, b.Points[:5]) {
		t.Errorf("curve to 12 changes the points to 5:\n%v\n%v", a.Points, b.Points[:5])
	}
	if c := cr.LengthCurve(5, 8); slices.Equal(a.Points, c.Points) {
		t.Error("seeds 7 and 8 give the same curve")
	}
	cr.Chains[0].Calls = cr.Chains[0].Calls[:3]
	cr.Chains[1].Calls[2].Err = latencytest.ClassTotalTimeout
	cr.Chains[1].Err = latencytest.ClassTotalTimeout
	c := cr.LengthCurve(10, 7)
	if m := c.Points[2].Measured; m.N != 1 || m.P50 != cr.Chains[0].Total {
		t.Errorf("length 3: measured %+v, want the one 3-call chain (%v)", m, cr.Chains[0].Total)
	}
	if m := c.Points[9].Measured; m.N != 29 || m.Failed != 1 || m.P99 != latencytest.Failed {
		t.Errorf("length 10: measured %+v, want 29 chains, one failed, p99 failed", m)
	}
	if c.Failed != 1 || c.Points[9].Predicted.Failed == 0 {
		t.Errorf("a failed call: %d failed of the calls, %d predicted chains failed", c.Failed, c.Points[9].Predicted.Failed)
	}
	for _, bad := range []int{0, -1, 1001} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("LengthCurve(%d) did not panic", bad)
				}
			}()
			cr.LengthCurve(bad, 1)
		}()
	}
}
