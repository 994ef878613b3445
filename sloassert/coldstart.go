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
// (the larger of their p95 and a lognormal 95% prediction bound) above the
// fastest class's warm median, so neither a long prompt nor a widely
// spread class reads as a cold start, and the row says so. A class with
// fewer than coldstart.MinWarm warm requests is extrapolated along
// the warm classes' prefill per prompt token; the row names it, and a
// verdict over budget that rests only on such candidates is
// inconclusive (it still fails the gate). A run with no candidate has
// nothing to judge and fails; a failed candidate fails it.
//
// Measured by seeded simulation (TestColdStartErrorRates: lognormal
// classes with medians 200 ms, 800 ms and 3 s and five sets of unequal
// sigmas from 0.2 to 1.2, the default 70/20/10 mix, whose first request is
// a long prompt, 100 to 300 measured requests after 10 warm-up, 2,000
// seeds each): with no cold start, budgets of 600 ms and 1 s fail 1.4-4.7%
// and 0.6-4.2% of runs (a median shift failed 12-45%). A cold start on
// the first request is caught at 1 s in 4.8-47% of runs at 2 s, 7.6-100%
// at 5 s and 48-100% at 30 s: a cold start shorter than the long class's
// own spread cannot be told from it in one request, and the fewer and
// wider the warm long prompts, the less it is.
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
			out.addNote("like with like: a candidate's TTFT less how far its class's warm requests reach (p95 or lognormal 95% bound) over the fastest class's warm median, e.g. " + strings.Join(adjusted, ", "))
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
