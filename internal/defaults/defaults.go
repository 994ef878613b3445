// Package defaults holds the defaults and limits latencytest applies when
// a field is left zero, for the module's packages that state or mirror
// them (slospec fills a spec's load from them, sloassert names them in
// its objectives). Users set the fields; they never need these values.
package defaults

import "time"

const (
	// Requests is the number of measured requests a Batch sends unless
	// told otherwise (Batch.Requests), and a spec's load per level: 75,
	// the fewest that reliably expose cold starts (10-20 miss them).
	Requests = 75
	// Warmup is the number of warm-up requests a Batch sends and
	// discards unless told otherwise (Warmup, NoWarmup).
	Warmup = 10
	// IdleGap is how long a provider must have had nothing in flight
	// from this client before a request counts as a cold-start
	// candidate: one minute. A server that unloads sooner needs a
	// shorter gap (sloassert.AfterIdle).
	IdleGap = time.Minute
	// ChainPrompt opens a chain unless Chain.Prompt is set.
	ChainPrompt = "You are an agent working through a task in steps. " +
		"Reply with one short sentence: the next step of planning a small database migration."
	// MaxWindows is the most windows Result.Windows makes: a window
	// length that would cut the run into more (6 ns written as a bare 6
	// where 6*time.Hour was meant) is refused.
	MaxWindows = 100_000
)

// Levels are one user, a few, a crowd: the levels of published
// benchmarks (docs/sources.md), a Sweep's levels when left empty. Each
// call returns a new slice.
func Levels() []int { return []int{1, 8, 50} }
