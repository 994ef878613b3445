package sloassert

import (
	"fmt"

	"github.com/tailguard/tailguard/internal/resultbuild"
	"github.com/tailguard/tailguard/latencytest"
)

// Turn is objective o judged on the requests of turn k alone (those whose
// Record.Turn is k, from 1: a conversation's turn, see package agent), so
// that a late turn, whose history is long, is judged on its own: Turn(10,
// Q(TTFT, 0.95, 2*time.Second)) is "turn 10: ttft p95 <= 2s". Every rule of
// o holds on those requests (sample size included). A result with no
// request of turn k fails and says so, as does a k below 1 or an o that
// judges chains.
func Turn(k int, o Objective) Objective {
	name := fmt.Sprintf("turn %d: %s", k, o.Name)
	switch {
	case k < 1:
		return Invalid(name, fmt.Sprintf("turn %d: turns count from 1", k))
	case o.judge == nil:
		return Invalid(name, "Turn judges a result's requests: give it Q, MaxCV, MaxErrorRate or another objective on requests")
	}
	inner := o.judge
	return Objective{Name: name, opts: o.opts, judge: func(r *latencytest.Result, opts options) Outcome {
		sub := turnOf(r, k)
		if sub.Len() == 0 {
			return Outcome{Objective: name, Observed: "no data", Note: fmt.Sprintf("no request of turn %d: only a conversation's records carry their turn", k)}
		}
		out := inner(sub, opts)
		out.Objective = name
		return out
	}}
}

// turnOf is r's requests of turn k as a Result (partial when r is).
func turnOf(r *latencytest.Result, k int) *latencytest.Result {
	b := resultbuild.New().(interface {
		Add(*latencytest.Record)
		Result(partial string) *latencytest.Result
	})
	for _, rec := range r.All() {
		if rec.Turn == k {
			b.Add(rec)
		}
	}
	reason := r.PartialReason
	if r.Partial && reason == "" {
		reason = "partial"
	}
	sub := b.Result(reason)
	sub.CPUPerWall, sub.Machine, sub.Disclosure = r.CPUPerWall, r.Machine, r.Disclosure
	return sub
}
