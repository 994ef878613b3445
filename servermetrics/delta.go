package servermetrics

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tailguard/tailguard/internal/format"
)

// Interval is what the server measured between two scrapes: the
// distribution of each stage over the requests that finished in between,
// and the gauges at every scrape.
type Interval struct {
	// Server is the names the texts were read with.
	Server Server
	// Series says which series were read (Snapshot.Series).
	Series string
	// Start and End are the scrapes' instants (the client's clock).
	Start, End time.Time
	// Stages holds the stages both scrapes exported, in Stage order.
	Stages []Distribution
	// Points are the gauges at each scrape, in time order: the first and
	// the last scrape, and the windows in between (Source.Every).
	Points []Point
	// Problems says what could not be read: failed scrapes, counters that
	// went down (a restart), changed buckets. They never fail a run.
	Problems []string
}

// Point is the gauges one scrape read.
type Point struct {
	At     time.Time
	Values map[Gauge]float64
}

// Distribution is one stage's histogram over an interval: the requests
// the server finished in it, by bucket.
type Distribution struct {
	Stage Stage
	// Metric is the metric's name in the text.
	Metric string
	// Bounds are the buckets' upper bounds in seconds (ascending, +Inf
	// left out).
	Bounds []float64
	// Counts[i] counts the observations in (Bounds[i-1], Bounds[i]]
	// (Counts[0]: at most Bounds[0]); Counts[len(Bounds)] those above
	// the last bound.
	Counts []int
	// N counts the observations; Sum adds them.
	N   int
	Sum time.Duration
}

// Estimate is a quantile read from histogram buckets: the bucket that
// holds it bounds it, and Value interpolates linearly inside the bucket
// (as Prometheus's histogram_quantile does).
type Estimate struct {
	// Value is the interpolated estimate.
	Value time.Duration
	// Lo < the quantile <= Hi: the bucket's bounds (Lo is 0 for the first
	// bucket). Above reports a quantile beyond the last finite bound:
	// then Hi is unknown (0) and Value is Lo.
	Lo, Hi time.Duration
	Above  bool
	// OK is false when there was no observation (or q is not in (0,1)).
	OK bool
}

// String gives the estimate with its bucket: "1234.6ms (bucket
// 1s-1.5s)", "> 1m0s (above the last bucket)", or "no observation".
func (e Estimate) String() string {
	switch {
	case !e.OK:
		return "no observation"
	case e.Above:
		return "> " + e.Lo.String() + " (above the last bucket)"
	}
	return fmt.Sprintf("%s (bucket %s-%s)", format.Duration(e.Value), e.Lo, e.Hi)
}

// seconds converts a bound in seconds to a Duration.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// Quantile estimates the stage's q-quantile (q in (0,1)) from the
// buckets: the rank q·N falls in a bucket, which bounds it.
func (d Distribution) Quantile(q float64) Estimate {
	if d.N <= 0 || !(q > 0 && q < 1) {
		return Estimate{}
	}
	rank := q * float64(d.N)
	below := 0
	for i, c := range d.Counts {
		if float64(below+c) < rank || c == 0 {
			below += c
			continue
		}
		lo := 0.0
		if i > 0 {
			lo = d.Bounds[i-1]
		}
		if i == len(d.Bounds) {
			return Estimate{Value: seconds(lo), Lo: seconds(lo), Above: true, OK: true}
		}
		hi := d.Bounds[i]
		v := lo + (hi-lo)*(rank-float64(below))/float64(c)
		return Estimate{Value: seconds(v), Lo: seconds(lo), Hi: seconds(hi), OK: true}
	}
	return Estimate{} // unreachable when the counts add up to N
}

// Mean is Sum/N (0 with no observation).
func (d Distribution) Mean() time.Duration {
	if d.N == 0 {
		return 0
	}
	return d.Sum / time.Duration(d.N)
}

// Stage returns the interval's distribution of stage st, if it has one.
func (iv *Interval) Stage(st Stage) (Distribution, bool) {
	if iv == nil {
		return Distribution{}, false
	}
	for _, d := range iv.Stages {
		if d.Stage == st {
			return d, true
		}
	}
	return Distribution{}, false
}

// Peak returns the largest value gauge g took at the interval's scrapes.
func (iv *Interval) Peak(g Gauge) (float64, bool) {
	if iv == nil {
		return 0, false
	}
	peak, ok := 0.0, false
	for _, p := range iv.Points {
		if v, has := p.Values[g]; has && (!ok || v > peak) {
			peak, ok = v, true
		}
	}
	return peak, ok
}

// Delta turns two snapshots of one server into the interval between
// them: for each stage both hold, after's counts less before's (none
// when the two read different series: Snapshot.Series). A stage
// whose counts went down (the server restarted) or whose buckets changed
// is left out and named in Problems. The error is for snapshots that
// cannot be compared: of different servers, or after taken before before.
func Delta(before, after Snapshot) (*Interval, error) {
	if before.Server != after.Server {
		return nil, fmt.Errorf("servermetrics: delta of a %s and a %s snapshot", before.Server, after.Server)
	}
	if after.At.Before(before.At) {
		return nil, fmt.Errorf("servermetrics: delta: the after snapshot (%s) precedes the before one (%s)", after.At.Format(time.RFC3339Nano), before.At.Format(time.RFC3339Nano))
	}
	iv := &Interval{Server: before.Server, Series: after.Series, Start: before.At, End: after.At,
		Points: []Point{point(before), point(after)}}
	if before.Series != after.Series { // counts of different series do not subtract
		iv.Problems = append(iv.Problems, fmt.Sprintf("the series read changed between the scrapes (%s, then %s): no stage read", before.Series, after.Series))
		return iv, nil
	}
	for _, st := range stages {
		b, okb := before.Histograms[st]
		a, oka := after.Histograms[st]
		if !okb || !oka {
			continue
		}
		d, problem := diff(st, b, a)
		if problem != "" {
			iv.Problems = append(iv.Problems, problem)
			continue
		}
		iv.Stages = append(iv.Stages, d)
	}
	return iv, nil
}

// point is the gauges of s.
func point(s Snapshot) Point {
	vals := make(map[Gauge]float64, len(s.Gauges))
	for g, v := range s.Gauges {
		vals[g] = v
	}
	return Point{At: s.At, Values: vals}
}

// diff is a - b for one stage, or a problem that says why not.
func diff(st Stage, b, a Histogram) (Distribution, string) {
	if !slices.Equal(a.Bounds, b.Bounds) {
		return Distribution{}, fmt.Sprintf("%s: its buckets changed between the scrapes: not read", a.Metric)
	}
	if a.Count < b.Count || a.Sum < b.Sum {
		return Distribution{}, fmt.Sprintf("%s: its count went down between the scrapes (%v to %v: the server restarted?): not read", a.Metric, b.Count, a.Count)
	}
	d := Distribution{Stage: st, Metric: a.Metric, Bounds: slices.Clone(a.Bounds), Counts: make([]int, len(a.Bounds)+1)}
	prev := 0.0
	for i := range a.Bounds {
		c := a.Cumulative[i] - b.Cumulative[i]
		if c < prev {
			return Distribution{}, fmt.Sprintf("%s: its bucket le=%v went down between the scrapes (the server restarted?): not read", a.Metric, a.Bounds[i])
		}
		d.Counts[i] = int(math.Round(c - prev))
		prev = c
	}
	total := a.Count - b.Count
	if total < prev {
		return Distribution{}, fmt.Sprintf("%s: its count fell below its buckets between the scrapes: not read", a.Metric)
	}
	d.Counts[len(a.Bounds)] = int(math.Round(total - prev))
	d.N = int(math.Round(total))
	d.Sum = seconds(a.Sum - b.Sum)
	return d, ""
}
