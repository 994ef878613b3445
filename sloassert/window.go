package sloassert

import (
	"math"
)

// zeroObjective is the outcome of an objective built as a zero value (a
// struct literal, or a variable never assigned): it judges nothing, so it
// fails.
func zeroObjective(name, build string) Outcome {
	if name == "" {
		name = "(unnamed Objective)"
	}
	return Outcome{Objective: name, Observed: "-", Note: "a zero-value Objective judges nothing: build it with " + build}
}

// worse orders two outcomes of one objective: a failed one before a
// passed one, then an inconclusive one, then the higher severity.
func worse(a, b Outcome) bool {
	rank := func(o Outcome) int {
		switch {
		case !o.OK:
			return 2
		case o.Verdict == Inconclusive:
			return 1
		}
		return 0
	}
	if rank(a) != rank(b) {
		return rank(a) > rank(b)
	}
	sev := func(o Outcome) float64 { // nothing observed is the worst of all
		if math.IsNaN(o.severity) || o.Observed == "no data" || o.Observed == "-" {
			return math.Inf(1)
		}
		return o.severity
	}
	return sev(a) > sev(b)
}
