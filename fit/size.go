package fit

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/stats"
)

// maxParts is the most distinct counts a fitted count distribution lists
// (categorical): beyond it, the counts are kept as maxParts quantiles.
const maxParts = 256

// categorical is the distribution of observed counts: fixed when they are
// all equal, else a mixture of fixed values weighted by their shares; with
// more than maxParts distinct counts, an empirical distribution of
// maxParts quantiles of them (each drawn with equal chance, at the
// midpoint of its share: (k+0.5)/maxParts), so the profile's size does
// not grow with the records'.
func categorical(xs []int) fakeprovider.Dist[int] {
	counts := map[int]int{}
	for _, x := range xs {
		counts[x]++
	}
	if len(counts) == 1 {
		return fakeprovider.Fixed(xs[0])
	}
	if len(counts) > maxParts {
		s := slices.Sorted(slices.Values(xs))
		points := make([]int, maxParts)
		for k := range points {
			points[k] = s[min(len(s)-1, int(float64(len(s))*(float64(k)+0.5)/maxParts))]
		}
		return fakeprovider.Empirical(points...)
	}
	var parts []fakeprovider.Part[int]
	for _, v := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fakeprovider.Weighted(float64(counts[v])/float64(len(xs)), fakeprovider.Fixed(v)))
	}
	return fakeprovider.Mixture(parts...)
}

// Fitted profiles stay loadable: fakeprovider's loader refuses profiles
// over 1 MiB, and an interpolated distribution that kept every record's
// value would pass that at about 50,000 records.
const (
	// maxPoints is the most values an interpolated distribution of a
	// fitted profile keeps: beyond it, maxPoints quantiles at
	// k/(maxPoints-1), from the minimum to the maximum, which an
	// interpolated draw reproduces exactly at those levels (p50, p99,
	// p99.9 included) and linearly between them.
	maxPoints = 1001
	// maxFittedBytes is the most a fitted profile may take, written
	// without its comments: half the loader's limit, the rest left for the
	// comments WriteProfile adds.
	maxFittedBytes = 512 << 10
)

// fitInSize thins p's interpolated distributions (TTFT, ITL, stall
// lengths, each load level's) and its conversation shape to maxPoints
// quantiles, then to half as many until p, written, takes at most
// maxFittedBytes; it notes what it did in rep. It fails when even 8
// points per distribution do not fit (thousands of load levels).
func fitInSize(p fakeprovider.Profile, rep *FitReport) (fakeprovider.Profile, error) {
	size := func(q fakeprovider.Profile) int {
		var b strings.Builder
		_ = WriteProfile(&b, q, FitReport{Sources: map[string]string{}})
		return b.Len()
	}
	for points := maxPoints; ; points = (points-1)/2 + 1 {
		q := p
		q.TTFT, q.ITL, q.Stall.Duration = thin(p.TTFT, points), thin(p.ITL, points), thin(p.Stall.Duration, points)
		q.Load = slices.Clone(p.Load)
		for i := range q.Load {
			q.Load[i].TTFT, q.Load[i].ITL = thin(q.Load[i].TTFT, points), thin(q.Load[i].ITL, points)
		}
		if sh := p.Conversation.Shape; len(sh) > points {
			q.Conversation.Shape = thinFloats(sh, points)
			for i, x := range q.Conversation.Shape {
				q.Conversation.Shape[i] = math.Round(x*1000) / 1000 // as fitted
			}
		}
		n := size(q)
		if n <= maxFittedBytes {
			if !reflect.DeepEqual(q, p) {
				rep.Notes = append(rep.Notes, fmt.Sprintf("distributions with more than %d values are kept as %d quantiles (minimum to maximum), so that the profile stays loadable", points, points))
			}
			return q, nil
		}
		if points <= 9 {
			return p, fmt.Errorf("fit: the fitted profile takes %d bytes even at %d points per distribution, above %d (%d load levels)", n, points, maxFittedBytes, len(p.Load))
		}
	}
}

// thin keeps points quantiles of an interpolated distribution with more
// values (see maxPoints); other distributions are returned as they are.
func thin(d fakeprovider.Dist[time.Duration], points int) fakeprovider.Dist[time.Duration] {
	if d.Kind != "empirical" || !d.Interpolate || len(d.Values) <= points {
		return d
	}
	v := make([]float64, len(d.Values))
	for i, x := range d.Values {
		v[i] = float64(x)
	}
	out := make([]time.Duration, points)
	for k, x := range thinFloats(v, points) {
		out[k] = time.Duration(x).Round(time.Microsecond)
	}
	th := fakeprovider.Interpolated(out...)
	th.Tail = d.Tail // fitted on every value; the thinned body meets it at its threshold
	return th
}

// thinFloats returns points linear-interpolation quantiles of xs, at
// k/(points-1) for k from 0 to points-1.
func thinFloats(xs []float64, points int) []float64 {
	s := slices.Sorted(slices.Values(xs))
	out := make([]float64, points)
	for k := range out {
		out[k] = stats.Quantile(s, float64(k)/float64(points-1))
	}
	return out
}
