// The session kinds: objectives on a conversation's whole sessions
// (agent.ConversationResult.Sessions, a ChainResult), written
// objectives.session.

package slospec

import (
	"fmt"
	"strings"

	"github.com/tailguard/tailguard/sloassert"
)

// The session kinds' names: "session_total" (the sessions' totals'
// Q-quantile <= Budget, think times included) and "session_error_rate"
// (sessions with a failed turn <= Limit; a session with a turn the client
// cancelled is in neither part) judge a conversation's sessions.
const (
	kindSessionTotal     ObjectiveKind = "session_total"
	kindSessionErrorRate ObjectiveKind = "session_error_rate"
)

// sessionKeys are the keys of objectives.session besides its quantiles.
var sessionKeys = []string{"error_rate", "allow_small_sample", "demonstrate", "refute"}

// parseSession parses session: {p95: 30s, error_rate: 5%}: quantiles of
// the sessions' totals (with the quantile options) and the share of
// sessions with a failed turn.
func parseSession(p *specParser, f specEntry, _ where, out *[]Objective) {
	entries, ok := p.mapping(f.v, f.path, false, sessionKeys, isQuantileKey)
	if !ok {
		return
	}
	sec := p.quantileSection(entries)
	n := 0
	for _, g := range entries {
		switch {
		case isQuantileKey(g.key):
			n++
			sec.quantile(p, g, Objective{Key: "session_" + g.key, Line: g.k.Line, Kind: kindSessionTotal}, out)
		case g.key == "error_rate":
			n++
			if v, ok := p.errorRateLimit(g); ok {
				p.objective(out, Objective{Key: "session_error_rate", Line: g.k.Line, Kind: kindSessionErrorRate, Limit: v}, g.path)
			}
		}
	}
	if n == 0 {
		p.errorf(f.k.Line, f.path, "no objective (want a quantile of session totals such as p95: 30s, or error_rate: 5%%)")
	}
}

// renamed is o named for sessions: what sloassert names a chain is a
// session here, a call a turn.
func renamed(o sloassert.Objective) sloassert.Objective {
	o.Name = strings.NewReplacer("chain total", "session total", "chains with a failed call", "sessions with a failed turn").Replace(o.Name)
	return o
}

// sessionTotalKind and sessionErrorRateKind are the kinds table's
// entries of the session kinds (session_error_rate has no key of its
// own: parseSession writes it).
var (
	sessionTotalKind = objectiveKind{name: kindSessionTotal, key: "session", at: atTop, chain: true,
		parse:  parseSession,
		sample: func(o Objective) (sloassert.Metric, float64) { return "", o.Q },
		build: func(o Objective) sloassert.Objective {
			return renamed(sloassert.ChainQ(o.Q, o.Budget, o.options()...))
		}}
	sessionErrorRateKind = objectiveKind{name: kindSessionErrorRate, chain: true,
		build: func(o Objective) sloassert.Objective { return renamed(sloassert.MaxChainErrorRate(o.Limit)) }}
)

// isSession reports whether o judges a conversation's sessions.
func isSession(o Objective) bool {
	return o.Kind == kindSessionTotal || o.Kind == kindSessionErrorRate
}

// sessionSamples is the sessions a spec's conversation gives a session
// objective, for the sample-size rule.
func sessionSamples(sessions int) (int, string) {
	if sessions == 0 {
		sessions = 10
	}
	return sessions, fmt.Sprintf("conversation.sessions gives %d sessions", sessions)
}
