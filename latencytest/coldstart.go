package latencytest

import (
	"time"

	"github.com/tailguard/tailguard/internal/coldstart"
)

// ColdStart is one cold-start candidate of a run (ColdStartCandidates),
// with what the warm requests of its prompt class reach. A class needs 3
// warm requests (two degrees of freedom for the spread) for its
// candidates to be judged against its own; a class with fewer is
// Extrapolated.
type ColdStart struct {
	// ID is the request's trace ID; Index its place in Result.Records.
	ID    string
	Index int
	// Class is the request's prompt class (Record.PromptClass).
	Class string
	// TTFT is the measured time to first token (Failed for a failed or
	// unobserved one).
	TTFT time.Duration
	// Why says what made it a candidate: "first request", "after 2m0s
	// idle", "fake injected cold_start=3s", with "warm-up" in front for a
	// warm-up request (joined by ", ").
	Why string
	// Warm is how many warm requests of its class it is judged against:
	// measured (not warm-up), successful, not candidates, and not sent
	// while a candidate waited for its first token (they may have waited
	// for the same load).
	Warm int
	// WarmReach is how slow a warm request of its class gets: the larger
	// of its class's warm p95 and the upper prediction bound of a
	// lognormal fitted to them (exp(mean + t(c, Warm-1) sqrt(1+1/Warm) sd)
	// of the log TTFTs) at the run's per-candidate coverage c =
	// 0.95^(1/k) for k candidates (Šidák), so all of a run's warm
	// candidates stay within their bounds with probability 95% or more,
	// however wide or small the classes.
	// For an Extrapolated class, see there; 0 when no class has
	// 3 warm requests.
	WarmReach time.Duration
	// ClassExcess is WarmReach less the median warm TTFT of the fastest
	// class (the class with 3 warm requests and the lowest
	// median), at least 0: the prefill and the spread its class shows
	// without a cold start.
	ClassExcess time.Duration
	// Compared is TTFT less ClassExcess (at least 0; Failed stays Failed):
	// the first token as a typical warm request of the fastest class would
	// have seen it, once all its own class's warm requests reach is taken
	// off, so a long or widely spread prompt class is compared like with
	// like.
	Compared time.Duration
	// Extrapolated is set when its class has fewer than 3 warm
	// requests: WarmReach is then the fastest class's reach plus the warm
	// classes' prefill cost per prompt token (median against median, from
	// the fastest class to the one with the most prompt tokens) times its
	// extra prompt tokens, or the fastest class's reach alone when the
	// server reports no prompt tokens or the warm requests show no such
	// cost. A straight line misses a prefill that grows faster than one, so
	// a verdict that rests on it says so.
	Extrapolated bool
}

// coldStartsOf is Result.ColdStartCandidates.
func coldStartsOf(r *Result, idle time.Duration) []ColdStart {
	recs := make([]coldstart.Rec, 0, r.Len())
	for _, rec := range r.All() {
		recs = append(recs, coldstart.Rec{ID: rec.ID, Start: rec.Start, Total: rec.Total, TTFT: rec.TTFT,
			OK: rec.OK() && !rec.TokensUnobserved(), Warmup: rec.Warmup, Injected: rec.Injected,
			Class: rec.PromptClass, PromptTokens: rec.PromptTokens})
	}
	found := coldstart.Find(recs, idle)
	out := make([]ColdStart, len(found))
	for i, c := range found {
		out[i] = ColdStart(c)
	}
	return out
}
