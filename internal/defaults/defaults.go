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

	// The defaults (what a run does when a field is left zero) and the
	// limits: input beyond a limit is refused with an error that names
	// it, since a typo (an extra digit, a bare number where a duration
	// belongs) would otherwise grow a run to gigabytes or make it wait
	// for hours.

	// HardCap is the longest any call may take unless told
	// otherwise.
	HardCap = 150 * time.Second
	// MaxReplayPromptTokens is the largest PromptTokens of a replayed
	// arrival: 10,000,000 tokens (about 40 MB of prompt text), beyond the
	// largest context windows. Each replayed prompt is built in memory.
	MaxReplayPromptTokens = 10_000_000
	// MaxReplayMaxTokens is the largest MaxTokens of a replayed arrival:
	// 1,048,576 (1<<20, the largest max_tokens the fake provider accepts).
	MaxReplayMaxTokens = 1 << 20
	// MaxStartWait is how far ahead of a runner's start a start instant
	// (Load.StartAt, TAILGUARD_START_AT) may be: 10 minutes. A later instant is a
	// typo (or a time zone mistake), not a plan.
	MaxStartWait = 10 * time.Minute
	// MaxStartLate is how long before a runner's start a start instant
	// may be: 1 minute. A shard that starts later than that did not run
	// alongside the others, and its merged figures would say they did.
	MaxStartLate = time.Minute
	// NonceLen is the length of the nonce prefix in bytes.
	NonceLen = 38
	// BusyClient is the client CPU/wall above which the client is part
	// of the tail it measured (box 13 and the reports warn).
	BusyClient = 0.7
)

// Levels are one user, a few, a crowd: the levels of published
// benchmarks (docs/sources.md), a Sweep's levels when left empty. Each
// call returns a new slice.
func Levels() []int { return []int{1, 8, 50} }
