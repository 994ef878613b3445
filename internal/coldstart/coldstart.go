// Package coldstart finds the cold-start candidates of a run (its first
// request, one after an idle gap, one a fake server says it slowed) and
// judges each against the warm requests of its prompt class: a
// lognormal's upper prediction bound of their TTFTs, at the level that
// keeps a run's false alarms at 5% however many candidates it has
// (Level), or, for a class with too few, the fastest class's bound plus
// the warm classes' prefill cost per prompt token. It reads a small
// projection of the records (Rec).
package coldstart

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/stats"
)

// MinWarm is how many warm requests a prompt class needs to be judged
// against its own warm requests (3: two degrees of freedom for the
// spread).
const MinWarm = 3

// RunLevel is the share of runs with no cold start whose candidates may
// reach past their bounds: 5% a run, split over its candidates by Level.
const RunLevel = 0.05

// Level is the coverage of each candidate's bound in a run of k
// candidates: (1-RunLevel)^(1/k), Šidák's split of the run's 5% (0.95 for
// one candidate, 0.99744 for 20). The candidates of a run are judged
// against the same warm requests, so their exceedances are positively
// dependent and the product bound holds: a run of k warm candidates
// passes all k bounds with probability 95% or more.
func Level(k int) float64 {
	if k <= 1 {
		return 1 - RunLevel
	}
	return math.Pow(1-RunLevel, 1/float64(k))
}

// Failed is the TTFT of a failed or unobserved first token (the
// largest Duration, as latencytest.Failed).
const Failed = time.Duration(math.MaxInt64)

// Rec is what the algorithm reads of one record.
type Rec struct {
	ID string
	// Start is when it was sent; Total how long it took (below 0: none).
	Start time.Time
	Total time.Duration
	// TTFT is its time to first token, valid when OK.
	TTFT time.Duration
	// OK is set for a success whose tokens were observed.
	OK bool
	// Warmup marks a warm-up request.
	Warmup bool
	// Injected is the server's Tailguard-Injected note ("stall,cold_start=3s").
	Injected string
	// Class and PromptTokens are its prompt class and the prompt tokens
	// the server reported (0: none).
	Class        string
	PromptTokens int
}

// Candidate is one cold-start candidate (latencytest.ColdStart says
// what each field means).
type Candidate struct {
	ID           string
	Index        int
	Class        string
	TTFT         time.Duration
	Why          string
	Warm         int
	WarmReach    time.Duration
	ClassExcess  time.Duration
	Compared     time.Duration
	Extrapolated bool
}

// sample is a class's values, for quantiles.
type sample []time.Duration

// Quantile is latencytest.Sample.Quantile: numpy's linear interpolation,
// rounded to the nanosecond; Failed for an empty sample.
func (s sample) Quantile(q float64) time.Duration {
	if len(s) == 0 {
		return Failed
	}
	x := slices.Clone(s)
	sort.Slice(x, func(i, j int) bool { return x[i] < x[j] })
	lo, frac := stats.Rank(len(x), q)
	if frac == 0 {
		return x[lo]
	}
	if x[lo+1] == Failed {
		return Failed
	}
	return x[lo] + time.Duration(math.Round(stats.Lerp(0, float64(x[lo+1]-x[lo]), frac)))
}

// injectedColdStart returns the "cold_start=…" part of a server's
// Tailguard-Injected note ("stall,cold_start=30s"), or "".
func injectedColdStart(injected string) string {
	for part := range strings.SplitSeq(injected, ",") {
		if p := strings.TrimSpace(part); strings.HasPrefix(p, "cold_start=") {
			return p
		}
	}
	return ""
}

// warmClass is what the warm requests of one prompt class show.
type warmClass struct {
	ttft   sample
	tokens sample // prompt tokens, as durations for Quantile
	median time.Duration
	medTok float64
	reach  time.Duration
}

// Find returns the cold-start candidates of recs, in recs order: a
// request is one when it is the first sent, starts at least idle (when
// above 0) after every earlier request ended, or its server injected a
// cold start.
func Find(r []Rec, idle time.Duration) []Candidate {
	idx, why := coldStartCandidates(r, idle)
	cand := make(map[int]bool, len(idx))
	cold := make([]span, 0, len(idx)) // while a candidate waited for its first token
	for _, i := range idx {
		cand[i] = true
		rec := r[i]
		wait := rec.TTFT
		if !rec.OK || rec.TTFT <= 0 {
			wait = max(rec.Total, 0)
		}
		cold = append(cold, span{rec.Start, rec.Start.Add(wait)})
	}
	cold = mergeSpans(cold)
	classes := map[string]*warmClass{}
	for i, rec := range r {
		if cand[i] || rec.Warmup || !rec.OK || rec.TTFT <= 0 || inSpans(cold, rec.Start) {
			continue
		}
		w := classes[rec.Class]
		if w == nil {
			w = new(warmClass)
			classes[rec.Class] = w
		}
		w.ttft = append(w.ttft, rec.TTFT)
		w.tokens = append(w.tokens, time.Duration(rec.PromptTokens))
	}
	names := slices.Sorted(maps.Keys(classes))
	level := Level(len(idx))
	var ref *warmClass // the fastest class with MinWarm warm requests
	for _, c := range names {
		w := classes[c]
		w.median, w.medTok = w.ttft.Quantile(0.5), float64(w.tokens.Quantile(0.5))
		if len(w.ttft) >= MinWarm {
			w.reach = warmReach(w.ttft, level)
			if ref == nil || w.median < ref.median {
				ref = w
			}
		}
	}
	// A class with too few warm requests (a short run whose one long
	// prompt is its first) is compared through the prefill cost per prompt
	// token the warm classes show: the slope from the fastest class to the
	// warm class with the most prompt tokens, when the server reports
	// prompt tokens.
	slope := 0.0 // TTFT per prompt token
	if ref != nil {
		far := ref
		for _, c := range names {
			if classes[c].medTok > far.medTok {
				far = classes[c]
			}
		}
		if dt := far.medTok - ref.medTok; dt > 0 && far.median > ref.median {
			slope = float64(far.median-ref.median) / dt
		}
	}
	out := make([]Candidate, 0, len(idx))
	for k, i := range idx {
		rec := r[i]
		c := Candidate{ID: rec.ID, Index: i, Class: rec.Class, TTFT: rec.TTFT, Why: why[k]}
		if !rec.OK || rec.TTFT < 0 {
			c.TTFT = Failed
		}
		if w := classes[c.Class]; w != nil {
			c.Warm = len(w.ttft)
		}
		switch {
		case c.Warm >= MinWarm:
			c.WarmReach = classes[c.Class].reach
		case ref != nil:
			c.Extrapolated, c.WarmReach = true, ref.reach
			if extra := float64(rec.PromptTokens) - ref.medTok; slope > 0 && rec.PromptTokens > 0 && extra > 0 {
				c.WarmReach += time.Duration(math.Min(slope*extra, float64(Failed/2)))
			}
		default:
			c.Extrapolated = true
		}
		if ref != nil {
			c.ClassExcess = max(c.WarmReach-ref.median, 0)
		}
		c.Compared = c.TTFT
		if c.TTFT != Failed {
			c.Compared = max(c.TTFT-c.ClassExcess, 0)
		}
		out = append(out, c)
	}
	return out
}

// warmReach is Candidate.WarmReach of a class's warm TTFTs (at least
// MinWarm of them, all positive) at the coverage level (Level): the
// larger of their p95 and the lognormal's upper prediction bound
// exp(mean + t(level, m-1) sqrt(1+1/m) sd) of the log TTFTs, which a new
// warm request of the class exceeds with probability 1-level.
func warmReach(s sample, level float64) time.Duration {
	m := len(s)
	mean, ss := 0.0, 0.0
	for _, v := range s {
		mean += math.Log(v.Seconds())
	}
	mean /= float64(m)
	for _, v := range s {
		d := math.Log(v.Seconds()) - mean
		ss += d * d
	}
	sd := math.Sqrt(ss / float64(m-1))
	bound := math.Exp(mean+stats.StudentT(level, float64(m-1))*math.Sqrt(1+1/float64(m))*sd) * float64(time.Second)
	return max(time.Duration(math.Min(bound, float64(Failed/2))), s.Quantile(0.95))
}

// span is [from, to) in time.
type span struct{ from, to time.Time }

// mergeSpans sorts spans and merges those that overlap.
func mergeSpans(s []span) []span {
	slices.SortFunc(s, func(a, b span) int { return a.from.Compare(b.from) })
	out := s[:0]
	for _, x := range s {
		if n := len(out); n > 0 && !x.from.After(out[n-1].to) {
			if x.to.After(out[n-1].to) {
				out[n-1].to = x.to
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

// inSpans reports whether t lies in one of the merged spans [from, to).
func inSpans(s []span, t time.Time) bool {
	i, _ := slices.BinarySearchFunc(s, t, func(x span, t time.Time) int {
		if x.from.After(t) {
			return 1
		}
		return -1
	})
	// i is the first span starting after t; the one before may hold it.
	return i > 0 && t.Before(s[i-1].to)
}

// coldStartCandidates returns the indexes of the cold-start candidates,
// in Records order, and why each is one. A warm-up request is one only
// for a reason of its own (first request, idle gap, injected): the
// warm-up's own slow prefills are not cold starts.
func coldStartCandidates(r []Rec, idle time.Duration) ([]int, []string) {
	type start struct {
		at  time.Time
		end time.Time
		i   int
	}
	order := make([]start, 0, len(r))
	warm := map[int]bool{}
	injected := map[int]string{}
	for i, rec := range r {
		order = append(order, start{rec.Start, rec.Start.Add(max(rec.Total, 0)), i})
		if rec.Warmup {
			warm[i] = true
		}
		if inj := injectedColdStart(rec.Injected); inj != "" {
			injected[i] = inj
		}
	}
	slices.SortStableFunc(order, func(a, b start) int { return a.at.Compare(b.at) })
	why := map[int]string{}
	var busyUntil time.Time // the latest end of a request sent so far
	for k, o := range order {
		i, end := o.i, o.end
		var w []string
		if k == 0 {
			w = append(w, "first request")
		} else if gap := o.at.Sub(busyUntil); idle > 0 && gap >= idle {
			w = append(w, fmt.Sprintf("after %v idle", gap.Round(time.Millisecond)))
		}
		if inj := injected[i]; inj != "" {
			w = append(w, "fake injected "+inj)
		}
		if len(w) > 0 {
			if warm[i] {
				w = append([]string{"warm-up"}, w...)
			}
			why[i] = strings.Join(w, ", ")
		}
		if end.After(busyUntil) {
			busyUntil = end
		}
	}
	out := slices.Sorted(maps.Keys(why))
	reasons := make([]string, len(out))
	for k, i := range out {
		reasons[k] = why[i]
	}
	return out, reasons
}
