package fit_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/fit"
)

// gpdSample draws n values of 200ms + a generalised Pareto (shape xi,
// scale sigma): a heavy tail when xi > 0.
func gpdSample(r *rand.Rand, n int, xi float64, sigma time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		u := r.Float64()
		out[i] = 200*time.Millisecond + time.Duration(float64(sigma)/xi*(math.Pow(1-u, -xi)-1))
	}
	return out
}

// beyondMax draws n values from d and returns the share above max.
func beyondMax(d fakeprovider.Dist[time.Duration], max time.Duration, n int, seed uint64) float64 {
	r := rand.New(rand.NewPCG(seed, 99))
	k := 0
	for range n {
		if d.Sample(r) > max {
			k++
		}
	}
	return float64(k) / float64(n)
}

// TestTailDrawsBeyondMax: a tail fitted (WithTail's FitTail) to a
// heavy-tailed sample (200 values of a GPD with shape 0.3) makes an
// interpolated distribution draw past the sample's maximum at the rate
// the fitted GPD predicts (Tail.Exceeds at the maximum): over 200,000
// seeded draws the observed share is within 3.29 binomial standard
// errors (99.9%) of the prediction. Without the tail no draw passes the
// maximum.
func TestTailDrawsBeyondMax(t *testing.T) {
	vals := gpdSample(rand.New(rand.NewPCG(7, 1)), 200, 0.3, 100*time.Millisecond)
	tail, why := fit.FitTail(vals)
	if tail == nil {
		t.Fatalf("no tail: %s", why)
	}
	d := fakeprovider.Interpolated(vals...)
	top := slices.Max(vals)
	if got := beyondMax(d, top, 10_000, 1); got != 0 {
		t.Fatalf("without a tail %.4f of draws pass the maximum, want 0", got)
	}
	d.Tail = tail
	if err := (fakeprovider.Profile{TTFT: d}).Validate(); err != nil {
		t.Fatal(err)
	}
	const draws = 200_000
	want := tail.Exceeds(top)
	got := beyondMax(d, top, draws, 2)
	band := 3.29 * math.Sqrt(want*(1-want)/draws)
	t.Logf("tail: share %g over %v, shape %g (true 0.3), scale %v (true 100ms), %d points; beyond the max %v: predicted %.5f, drawn %.5f (±%.5f)",
		tail.Share, tail.Threshold, tail.Shape, tail.Scale, tail.Points, top, want, got, band)
	if !(want > 0) || math.Abs(got-want) > band {
		t.Errorf("draws beyond the sample's maximum: %.5f, the GPD predicts %.5f (99.9%% band ±%.5f)", got, want, band)
	}
}

// TestTailRates reports, over many seeded samples of 200 values, how
// often a fitted tail draws past the sample's maximum against the true
// GPD's chance of passing it, for shapes 0.1, 0.3 and 0.5. The empirical
// distribution alone never passes it; every fitted tail must (a positive
// rate in every sample). The fitted rate is a plug-in estimate and runs
// below the truth on average (measured: about half; PWM's shape is biased
// low with 20 exceedances): the log says by how much.
func TestTailRates(t *testing.T) {
	samples := 200
	if testing.Short() {
		samples = 40
	}
	for _, xi := range []float64{0.1, 0.3, 0.5} {
		r := rand.New(rand.NewPCG(uint64(xi*1000), 5))
		var pred, truth, shapes []float64
		for range samples {
			vals := gpdSample(r, 200, xi, 100*time.Millisecond)
			tail, why := fit.FitTail(vals)
			if tail == nil {
				t.Fatalf("shape %v: no tail: %s", xi, why)
			}
			top := slices.Max(vals)
			y := float64(top-200*time.Millisecond) / float64(100*time.Millisecond)
			pred = append(pred, tail.Exceeds(top))
			truth = append(truth, math.Pow(1+xi*y, -1/xi))
			shapes = append(shapes, tail.Shape)
		}
		mp, mt := meanOf(pred), meanOf(truth)
		t.Logf("shape %.1f, %d samples of 200: mean fitted shape %.3f; P(draw > sample max): fitted tail %.5f, true %.5f (ratio %.2f)",
			xi, samples, meanOf(shapes), mp, mt, mp/mt)
		if slices.Min(pred) <= 0 {
			t.Errorf("shape %.1f: a fitted tail never passes its sample's maximum (rate %v)", xi, slices.Min(pred))
		}
	}
}

func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestFitTailBadInput: too few values, or values that do not rise at the
// top, give no tail and a reason; WithTail is off by default.
func TestFitTailBadInput(t *testing.T) {
	if tail, why := fit.FitTail(make([]time.Duration, 29)); tail != nil || why == "" {
		t.Errorf("29 values: tail %+v, reason %q; want none and a reason", tail, why)
	}
	flat := make([]time.Duration, 100)
	for i := range flat {
		flat[i] = time.Second
	}
	if tail, why := fit.FitTail(flat); tail != nil || why == "" {
		t.Errorf("equal values: tail %+v, reason %q; want none and a reason", tail, why)
	}
}
