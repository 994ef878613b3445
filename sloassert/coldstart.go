package sloassert

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/coldstart"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/latencytest"

	"github.com/tailguard/tailguard/internal/defaults"
)

// MaxColdStart is the objective "no cold start took longer than budget to
// its first token", judged on its own rather than hidden with the warm-up
// or averaged into steady state. The candidates are
// latencytest.Result.ColdStartCandidates: the run's first request, each
// request sent after an idle gap (one minute by default,
// unless AfterIdle sets another: a server that unloads after 2 s needs
// AfterIdle(2*time.Second)), and each request the fake provider says it
// cold-started, whatever the gap; a warm-up request only for one of those
// reasons. It compares like with like: a candidate's TTFT is judged less
// its ClassExcess, how far its own prompt class's warm requests reach
// (the larger of their p95 and a lognormal upper prediction bound) above
// the fastest class's warm median, so neither a long prompt nor a widely
// spread class reads as a cold start, and the row says so. The bound's
// level is per run, not per candidate: a run of k candidates judges each
// at the Šidák share of 5% (coverage 0.95^(1/k): 95% for one, 99.74% for
// 20), so a run with no cold start fails about 5% of the time at most
// however many idle gaps it has. A class with fewer than
// coldstart.MinWarm warm requests is extrapolated along the warm
// classes' prefill per prompt token; the row names it, and a verdict
// over budget that rests only on such candidates is inconclusive (it
// still fails the gate). A run with no candidate has nothing to judge
// and fails; a failed candidate fails it.
//
// Measured by seeded simulation (lognormal classes with medians 200 ms,
// 800 ms and 3 s and five sets of unequal sigmas from 0.2 to 1.2, the
// default 70/20/10 mix, whose first request is a long prompt, after 10
// warm-up): with no cold start, runs of 200 measured requests with 1 to
// 20 candidates (the first request and idle gaps; 1,000 seeds a cell,
// TestColdStartFalseAlarmsPerRun) fail budgets of 600 ms and 1 s in at
// most 4.0% and 3.8% of runs, 2.9% and 2.6% from 2 candidates on (a 95%
// bound per candidate failed 8.5% of runs of 11 candidates and 21% of 20
// at 600 ms, 200 seeds); runs of 100 to 300 with one candidate (2,000 seeds,
// TestColdStartErrorRates) in 1.4-4.7% and 0.6-4.2% (a median shift
// failed 12-45%). A 1 s cold start on every candidate of 2 to 20 is
// caught at 600 ms in 94-100% of runs when the short prompts are no wider
// than sigma 0.5, in 18-35% when they are as wide as 0.8; at 1 s in
// 14-23% with equal sigmas 0.5 and 77-100% where only the long class is
// wide. A cold start on the first request alone is caught at 1 s in
// 5-8% of runs when it lasts 1 s, 4.8-47% at 2 s, 7.6-100% at 5 s and
// 48-100% at 30 s:
// a cold start shorter than the long class's own spread cannot be told
// from it in one request, and the fewer and wider the warm long prompts,
// the less it is.
func MaxColdStart(budget time.Duration, opts ...Option) Objective {
	name := fmt.Sprintf("cold start ttft <= %s", format.Duration(budget))
	o := collect(opts)
	if o.idleSet {
		name += fmt.Sprintf(" (after %v idle)", o.idle)
	}
	return Objective{Name: name, opts: o, judge: func(r *latencytest.Result, o options) Outcome {
		out := Outcome{Objective: name, Budget: format.Duration(budget), Observed: "-"}
		idle := defaults.IdleGap
		if o.idleSet {
			idle = o.idle
		}
		switch {
		case budget <= 0:
			out.Note = fmt.Sprintf("budget %v is not positive", budget)
			return out
		case idle <= 0:
			out.Note = fmt.Sprintf("AfterIdle(%v): the idle gap is not positive", idle)
			return out
		}
		cs := r.ColdStartCandidates(idle)
		if len(cs) == 0 {
			out.Observed, out.Note = "no data", fmt.Sprintf("no cold-start candidate: no warm-up request, no idle gap of %v, no cold start the fake reported", idle)
			return out
		}
		var worst latencytest.ColdStart
		slow, slowExtrapolated := 0, 0
		var over, adjusted []string
		extrapolated := map[string][]string{} // class: candidate IDs
		for i, c := range cs {
			if i == 0 || c.Compared > worst.Compared {
				worst = c
			}
			if c.Extrapolated {
				extrapolated[c.Class] = append(extrapolated[c.Class], c.ID)
			}
			if !within(c.Compared, budget) {
				slow++
				if c.Extrapolated && c.TTFT != latencytest.Failed {
					slowExtrapolated++
				}
				if len(over) < 5 {
					over = append(over, fmt.Sprintf("%s %s (%s)", c.ID, format.Duration(c.Compared), c.Why))
				}
			}
			if c.ClassExcess > 0 && c.TTFT != latencytest.Failed && len(adjusted) < 3 {
				adjusted = append(adjusted, fmt.Sprintf("%s (%s, %d warm) %s less %s", c.ID, className(c), c.Warm, format.Duration(c.TTFT), format.Duration(c.ClassExcess)))
			}
		}
		v := worst.Compared
		out.Observed = format.Duration(v)
		out.Margin = margin(v, budget)
		out.OK = within(v, budget)
		out.severity = ratioOf(v, budget)
		out.Note = fmt.Sprintf("%d cold-start candidates (first request, after %v idle, fake-reported; a warm-up only for one of those)", len(cs), idle)
		if len(adjusted) > 0 {
			out.addNote(fmt.Sprintf("like with like: a candidate's TTFT less how far its class's warm requests reach (p95 or lognormal %.2f%% bound: 5%% a run split over its %d candidates) over the fastest class's warm median, e.g. %s",
				100*coldstart.Level(len(cs)), len(cs), strings.Join(adjusted, ", ")))
		}
		for _, class := range slices.Sorted(maps.Keys(extrapolated)) {
			ids := extrapolated[class]
			out.addNote(fmt.Sprintf("extrapolated: %s has fewer than %d warm requests, so %s judged along the warm classes' prefill per prompt token (a straight line; a prefill that grows faster reads as a cold start)",
				className(latencytest.ColdStart{Class: class}), coldstart.MinWarm, listIDs(ids)))
		}
		if slow > 0 {
			out.addNote(fmt.Sprintf("%d over budget: %s", slow, strings.Join(over, ", ")))
			if slow == slowExtrapolated {
				out.Verdict = Inconclusive
				out.addNote("inconclusive: every candidate over budget was judged by extrapolation")
			}
		}
		return out
	}}
}

// className names a candidate's prompt class in a note.
func className(c latencytest.ColdStart) string {
	if c.Class == "" {
		return "its prompt class"
	}
	return c.Class + " prompt"
}

// listIDs lists up to 3 trace IDs: "c1-0000 is", "c1-0000, c1-0004 are",
// "c1-0000, c1-0004, c1-0009 and 2 more are".
func listIDs(ids []string) string {
	if len(ids) == 1 {
		return ids[0] + " is"
	}
	s := strings.Join(ids[:min(len(ids), 3)], ", ")
	if len(ids) > 3 {
		s += fmt.Sprintf(" and %d more", len(ids)-3)
	}
	return s + " are"
}

// AfterIdle sets the idle gap after which MaxColdStart counts a request as
// a cold-start candidate (default one
// minute): the time the provider had nothing of this run in flight. A gap
// that is not positive fails the objective. Other objectives ignore it.
func AfterIdle(d time.Duration) Option {
	return func(o *options) { o.idle, o.idleSet = d, true }
}
