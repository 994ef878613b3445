package fit

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/stats"
)

// addTails fits a generalised Pareto tail (WithTail) to each interpolated
// TTFT and ITL distribution of p with enough values, and says so in rep.
func addTails(p *fakeprovider.Profile, rep *FitReport) {
	type target struct {
		key string
		d   *fakeprovider.Dist[time.Duration]
	}
	ts := []target{{"ttft", &p.TTFT}, {"itl", &p.ITL}}
	for i := range p.Load {
		ts = append(ts, target{fmt.Sprintf("load[%d].ttft", i), &p.Load[i].TTFT}, target{fmt.Sprintf("load[%d].itl", i), &p.Load[i].ITL})
	}
	var levels []string
	for _, t := range ts {
		if t.d.Kind != "empirical" || !t.d.Interpolate {
			continue
		}
		tail, why := FitTail(t.d.Values)
		if tail == nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s tail: not fitted: %s", t.key, why))
			continue
		}
		t.d.Tail = tail
		desc := fmt.Sprintf("tail: generalised Pareto over the top %d of %d values (share %g, above %v), fitted by probability-weighted moments (Hosking-Wallis, plotting positions (j-0.35)/k): shape %g, scale %v; draws past the largest value (%v) with probability %.2g",
			tail.Points, len(t.d.Values), tail.Share, tail.Threshold, tail.Shape, tail.Scale, slices.Max(t.d.Values), tail.Exceeds(slices.Max(t.d.Values)))
		if _, ok := rep.Sources[t.key]; ok {
			rep.Sources[t.key] += "; " + desc
		} else {
			levels = append(levels, t.key+" "+desc)
		}
	}
	if len(levels) > 0 {
		rep.Sources["load"] += "; " + strings.Join(levels, "; ")
	}
}

// Tail fitting (WithTail).
const (
	minTailValues = 30  // fewest values a distribution needs for a tail
	minTailPoints = 10  // fewest exceedances a tail is fitted from
	maxTailShape  = 0.9 // shape clamp: the tail keeps a finite mean
	minTailShape  = 0   // a latency tail is taken as unbounded: it passes the sample max
)

// FitTail fits a generalised Pareto tail to the top of values (see
// WithTail): k = max(10, n/10) exceedances over the values' (1-k/n)
// linear-interpolation quantile, shape and scale by probability-weighted
// moments (Hosking and Wallis 1987), the shape clamped to [0, 0.9] (a
// negative shape would bound the tail, possibly below the sample's
// maximum; at 0 it is exponential).
// Latencies are rounded to the microsecond. It returns nil and the reason
// when values has fewer than 30 values or the exceedances do not spread.
func FitTail(values []time.Duration) (*fakeprovider.Tail[time.Duration], string) {
	n := len(values)
	if n < minTailValues {
		return nil, fmt.Sprintf("%d values, fewer than %d", n, minTailValues)
	}
	s := durFloats(values)
	slices.Sort(s)
	k := max(minTailPoints, n/10)
	share := float64(k) / float64(n)
	u := stats.Quantile(s, 1-share)
	y := make([]float64, k)
	for j := range k {
		y[j] = s[n-k+j] - u
	}
	if !(mean(y) > 0) {
		return nil, fmt.Sprintf("the top %d values do not rise above %v", k, time.Duration(u))
	}
	xi, sigma := gpdPWM(y)
	if math.IsNaN(xi) || xi > maxTailShape || xi < minTailShape {
		// Clamped (NaN: heavier than PWM can tell, shape 1 or more);
		// the scale keeps the exceedances' mean, sigma / (1 - xi).
		if math.IsNaN(xi) {
			xi = maxTailShape
		}
		xi = min(max(xi, minTailShape), maxTailShape)
		sigma = mean(y) * (1 - xi)
	}
	t := &fakeprovider.Tail[time.Duration]{Share: share, Threshold: time.Duration(u).Round(time.Microsecond),
		Shape: math.Round(xi*1e4) / 1e4, Scale: max(time.Duration(sigma).Round(time.Microsecond), time.Microsecond), Points: k}
	return t, ""
}

// gpdPWM is the probability-weighted-moments estimate of a generalised
// Pareto's shape and scale from exceedances y (sorted ascending):
// a0 = mean(y), a1 = mean((1-p_j) y_j) with p_j = (j-0.35)/k; shape
// 2 - a0/(a0-2 a1), scale 2 a0 a1/(a0-2 a1) (Hosking and Wallis 1987,
// with their k = -shape).
func gpdPWM(y []float64) (shape, scale float64) {
	k := float64(len(y))
	var a0, a1 float64
	for j, v := range y {
		p := (float64(j+1) - 0.35) / k
		a0 += v / k
		a1 += (1 - p) * v / k
	}
	d := a0 - 2*a1
	if d <= 0 {
		return math.NaN(), math.NaN()
	}
	return 2 - a0/d, 2 * a0 * a1 / d
}
