// The conversation section, the cancel key and the turn kind: a spec's
// multi-turn sessions (package agent), the client's deliberate cancels
// (latencytest.Cancel), and objectives on one turn index.

package slospec

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/cancel"
	"github.com/tailguard/tailguard/internal/resultbuild"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// Limits of a conversation section, and the time a real-time
// conversation leaves before the test's deadline.
const (
	deadlineMargin  = 5 * time.Second
	specMaxSessions = 100_000
	specMaxTurns    = 1_000
)

// conversationTable is the conversation section's keys.
var conversationTable = []field[*agent.Conversation]{
	{"sessions", func(p *specParser, f specEntry, c *agent.Conversation) {
		c.Sessions, _ = p.intIn(f, 1, specMaxSessions)
	}},
	{"turns", func(p *specParser, f specEntry, c *agent.Conversation) { c.Turns, _ = p.intIn(f, 1, specMaxTurns) }},
	{"concurrency", func(p *specParser, f specEntry, c *agent.Conversation) {
		c.Concurrency, _ = p.intIn(f, 1, specMaxLevel)
	}},
	{"think_time", func(p *specParser, f specEntry, c *agent.Conversation) { c.ThinkTime = parseThinkTime(p, f) }},
	{"open_tokens", func(p *specParser, f specEntry, c *agent.Conversation) { c.OpenTokens, _ = p.intIn(f, 1, 1_000_000) }},
	{"turn_tokens", func(p *specParser, f specEntry, c *agent.Conversation) { c.TurnTokens, _ = p.intIn(f, 1, 1_000_000) }},
	{"max_tokens", func(p *specParser, f specEntry, c *agent.Conversation) { c.MaxTokens, _ = p.intIn(f, 1, specMaxTokens) }},
	{"temperature", func(p *specParser, f specEntry, c *agent.Conversation) { c.Temperature = p.temperature(f) }},
	{"first_token_timeout", func(p *specParser, f specEntry, c *agent.Conversation) { c.FirstTokenTimeout, _ = p.duration(f, false) }},
	{"total_timeout", func(p *specParser, f specEntry, c *agent.Conversation) { c.TotalTimeout, _ = p.duration(f, false) }},
	{"hard_cap", func(p *specParser, f specEntry, c *agent.Conversation) { c.HardCap, _ = p.duration(f, false) }},
	{"no_nonce", func(p *specParser, f specEntry, c *agent.Conversation) { c.NoNonce, _ = p.boolean(f) }},
	{"cancel", func(p *specParser, f specEntry, c *agent.Conversation) { c.Cancel = parseCancel(p, f) }},
	{"seed", func(p *specParser, f specEntry, c *agent.Conversation) {
		if v, ok := p.integer(f, 0, 1<<62); ok {
			c.Seed = uint64(v)
		}
	}},
}

// parseConversation parses the conversation map.
func parseConversation(p *specParser, e specEntry) *agent.Conversation {
	c := &agent.Conversation{}
	entries, ok := section(p, e, conversationTable)
	if ok {
		parseEntries(p, entries, conversationTable, c)
	}
	return c
}

// parseThinkTime parses think_time: a duration (fixed), or {median: D, p99: D}
// (lognormal).
func parseThinkTime(p *specParser, f specEntry) agent.ThinkTime {
	var t agent.ThinkTime
	if f.v.Kind != yaml.MappingNode {
		t.Median, _ = p.duration(f, false)
		return t
	}
	entries, _ := p.mapping(f.v, f.path, false, []string{"median", "p99"}, nil)
	for _, g := range entries {
		switch g.key {
		case "median":
			t.Median, _ = p.duration(g, true)
		case "p99":
			t.P99, _ = p.duration(g, true)
		}
	}
	if t.P99 > 0 && t.P99 < t.Median {
		p.errorf(f.v.Line, f.path, "p99 %v is below the median %v", t.P99, t.Median)
	}
	if t.P99 > 0 && t.Median == 0 {
		p.errorf(f.v.Line, f.path, "p99 without a median")
	}
	return t
}

// parseCancel parses cancel: {after: D, after_tokens: N, share: P%, seed: N}:
// the client cancels a share of requests (all without share) after a
// time or a count of token events, whichever first.
func parseCancel(p *specParser, f specEntry) latencytest.Cancel {
	var c latencytest.Cancel
	entries, ok := p.mapping(f.v, f.path, false, []string{"after", "after_tokens", "share", "seed"}, nil)
	if !ok {
		return c
	}
	for _, g := range entries {
		switch g.key {
		case "after":
			c.After, _ = p.duration(g, true)
		case "after_tokens":
			c.AfterTokens, _ = p.intIn(g, 1, specMaxTokens)
		case "share":
			c.Share, _ = p.percentage(g, 0, 100, false)
			if c.Share == 0 {
				p.errorf(g.v.Line, g.path, "0%% cancels nothing (leave cancel out)")
			}
		case "seed":
			if v, ok := p.integer(g, 0, 1<<62); ok {
				c.Seed = uint64(v)
			}
		}
	}
	if c.After == 0 && c.AfterTokens == 0 {
		p.errorf(f.k.Line, f.path, "want after or after_tokens: say when the client cancels")
	}
	return c
}

// parseTurn parses turn: {10: {ttft: {p95: 2s}}}: for each turn index,
// the objectives of the objectives section, judged on that turn's
// requests alone (sloassert.Turn).
func parseTurn(p *specParser, f specEntry, _ where, out *[]Objective) {
	isTurn := func(key string) bool { n, err := strconv.Atoi(key); return err == nil && n >= 1 && n <= specMaxTurns }
	entries, ok := p.mapping(f.v, f.path, false, nil, isTurn)
	if !ok {
		return
	}
	for _, g := range entries {
		k, _ := strconv.Atoi(g.key)
		if g.v.Kind == yaml.MappingNode && hasKey(g.v, "turn") {
			p.errorf(g.v.Line, g.path, "a turn's objectives hold no turn key")
			continue
		}
		outer := p.seen
		p.seen = nil // the turn's keys are its own: ttft_p95 here and at the top do not clash
		inner := tableRef.objectives(p, g)
		p.seen = outer
		for _, o := range inner {
			if k := tableRef.kindOf(o); k != nil && k.chain {
				p.errorf(o.Line, g.path+"."+o.Key, "a turn's objectives judge its requests: %s judges whole sessions (write it at the top)", o.Key)
				continue
			}
			o.Turn, o.TurnKind, o.Kind = k, o.Kind, kindTurn
			o.Key = fmt.Sprintf("turn%d_%s", k, o.Key)
			p.objective(out, o, g.path)
		}
	}
}

// hasKey reports whether mapping n holds key.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// tableRef holds what the turn kind reads of the kinds table, set in
// init: the table holds the turn kind, so referring to it directly would
// be an initialization cycle.
var tableRef struct {
	objectives func(p *specParser, e specEntry) []Objective
	kindOf     func(o Objective) *objectiveKind
}

func init() {
	tableRef.objectives, tableRef.kindOf = (*specParser).objectives, kindOf
}

// innerOf is a turn objective's objective on all requests.
func innerOf(o Objective) Objective {
	o.Kind, o.Turn, o.TurnKind = o.TurnKind, 0, ""
	return o
}

// turnKind is the kinds table's entry of the turn kind.
var turnKind = objectiveKind{name: kindTurn, key: "turn", at: atTop,
	parse: parseTurn,
	needs: func(o Objective) (string, string) {
		if k := tableRef.kindOf(innerOf(o)); k != nil && k.needs != nil {
			return k.needs(innerOf(o))
		}
		return "", ""
	},
	sample: func(o Objective) (sloassert.Metric, float64) {
		if k := tableRef.kindOf(innerOf(o)); k != nil && k.sample != nil {
			return k.sample(innerOf(o))
		}
		return "", 0
	},
	build: func(o Objective) sloassert.Objective {
		in := innerOf(o)
		k := tableRef.kindOf(in)
		if k == nil || k.chain {
			return sloassert.Invalid(o.Key, fmt.Sprintf("kind %q cannot judge a turn", in.Kind))
		}
		return sloassert.Turn(o.Turn, k.build(in))
	}}

// judged is the part of r that objective o judges, and what names it
// (" of turn 4"): a turn objective's turn, else r whole ("").
func judged(r *latencytest.Result, o Objective) (*latencytest.Result, string) {
	if o.Kind != kindTurn {
		return r, ""
	}
	b := resultbuild.New().(interface {
		Add(*latencytest.Record)
		Result(partial string) *latencytest.Result
	})
	for _, rec := range r.All() {
		if rec.Turn == o.Turn {
			b.Add(rec)
		}
	}
	return b.Result(""), fmt.Sprintf(" of turn %d", o.Turn)
}

// conversationSamples is the requests a spec's conversation gives an
// objective (a turn objective: one a session), for the sample-size rule.
func conversationSamples(c *agent.Conversation, o Objective) (int, string) {
	sessions, turns := max(c.Sessions, 0), max(c.Turns, 0)
	if sessions == 0 {
		sessions = 10
	}
	if turns == 0 {
		turns = 10
	}
	switch {
	case o.Kind == kindTurn:
		return sessions, fmt.Sprintf("conversation.sessions gives turn %d %d requests", o.Turn, sessions)
	case isSession(o):
		return sessionSamples(sessions) // session.go
	}
	return sessions * turns, fmt.Sprintf("conversation gives %d sessions × %d turns", sessions, turns)
}

// runConversation runs the spec's conversation and judges its turns with
// the spec's objectives, one subtest each; against a fake, what the fake
// saw of the client's cancels joins the records (joinCloses).
// It returns the verdict.
func runConversation(s Spec, t *testing.T, title string, rt runTarget) string {
	t.Helper()
	var objs, sessionObjs []sloassert.Objective
	for _, o := range s.Objectives {
		if isSession(o) {
			sessionObjs = append(sessionObjs, o.ChainObjective())
		} else {
			objs = append(objs, o.Objective())
		}
	}
	verdict := "conversation did not run"
	t.Run("conversation", func(t *testing.T) {
		var res *latencytest.Result
		var sessions *latencytest.ChainResult
		var fake *fakeprovider.Fake
		rt.onFake = func(f *fakeprovider.Fake) { fake = f }
		rt.measure(t, func(t *testing.T, p latencytest.Provider) {
			ctx := t.Context()
			if rt.fake == nil { // real time: end before go test -timeout does
				if dl, ok := t.Deadline(); ok {
					var cancel context.CancelFunc
					ctx, cancel = context.WithDeadline(ctx, dl.Add(-deadlineMargin))
					defer cancel()
				}
			}
			cr, err := s.Conversation.Run(ctx, p)
			if err != nil {
				t.Fatalf("slospec: spec %s: %v", title, err)
			}
			res, sessions = cr.Turns(), cr.Sessions
			if fake != nil {
				settle(fake, res.Len())
				joinCloses(res.Records, fake.Served())
			}
		})
		if res == nil {
			t.Fatalf("slospec: spec %s: the conversation did not run", title)
		}
		rep := sloassert.Evaluate(res, objs...)
		rep.Title = title + " conversation"
		srep := sloassert.Report{Title: title + " conversation sessions"}
		if len(sessionObjs) > 0 {
			srep = sloassert.Evaluate(sessions, sessionObjs...)
			srep.Title = title + " conversation sessions"
		}
		ri, si := 0, 0
		for _, o := range s.Objectives {
			out, judgedBy := sloassert.Outcome{}, rep.Title
			if isSession(o) {
				out, si, judgedBy = srep.Outcomes[si], si+1, srep.Title
			} else {
				out, ri = rep.Outcomes[ri], ri+1
			}
			t.Run(o.Key, func(t *testing.T) {
				checkRow(t, objectiveOrigin(title, rt, o), out, judgedBy)
			})
		}
		var verdicts []string
		if len(objs) > 0 {
			finishLevel(t, rep)
			verdicts = append(verdicts, levelVerdict("conversation", rep))
		}
		if len(sessionObjs) > 0 {
			finishLevel(t, srep)
			verdicts = append(verdicts, levelVerdict("sessions", srep))
		}
		verdict = strings.Join(verdicts, "; ")
	})
	return verdict
}

// conversationProblem says why a spec's conversation cannot run ("" when
// it can): it replaces the load, a records target has nothing to run, and
// turn objectives need a conversation or records (records: the spec
// judges records given apart from it).
func conversationProblem(s *Spec, loadLine int, records bool) (line int, key, msg string) {
	turn := slices.IndexFunc(s.Objectives, func(o Objective) bool { return o.Kind == kindTurn })
	session := slices.IndexFunc(s.Objectives, isSession)
	switch {
	case s.Conversation == nil && turn >= 0 && s.Target.Records == "" && !records:
		return s.Objectives[turn].Line, "objectives.turn", "turn objectives judge a conversation's turns: add a conversation section, or judge records of one"
	case session >= 0 && (s.Target.Records != "" || records):
		return s.Objectives[session].Line, "objectives.session", "session objectives need a live target: records hold each turn, not the measured session totals"
	case s.Conversation == nil && session >= 0:
		return s.Objectives[session].Line, "objectives.session", "session objectives judge a conversation's sessions: add a conversation section"
	case s.Conversation == nil:
		return 0, "", ""
	case loadLine > 0:
		return loadLine, "load", "conflicting: load and conversation (the conversation is the load its objectives judge: give one)"
	case s.Target.Records != "":
		return 0, "conversation", "the conversation is not run with a records target (the records were measured already; turn objectives judge their turns)"
	}
	turns := cmp.Or(s.Conversation.Turns, 10)
	for _, o := range s.Objectives {
		if o.Kind == kindTurn && o.Turn > turns {
			return o.Line, "objectives." + o.Key, fmt.Sprintf("turn %d: no session reaches it (conversation.turns is %d)", o.Turn, turns)
		}
	}
	return 0, "", ""
}

// settleLimit bounds, in virtual time, how long settle waits for a fake
// that generates on after its clients' closes (fakeprovider.AfterClose).
const settleLimit = time.Hour

// settle waits, in the fake's bubble, until fake has recorded n requests
// (or for settleLimit of virtual time): the handlers of the last closes
// record them at once, but a request the fake goes on generating for
// nobody is recorded at its answer's planned end.
func settle(fake *fakeprovider.Fake, n int) {
	synctest.Wait()
	for waited := time.Duration(0); len(fake.Served()) < min(n, fake.Profile().ServedLimit) && waited < settleLimit; waited += 100 * time.Millisecond {
		time.Sleep(100 * time.Millisecond) // virtual time: instant
		synctest.Wait()
	}
}

// joinCloses sets ServerAfterClose and ServerCloseReported on every
// cancelled record of recs whose request the fake served and saw closed
// (fakeprovider.Served's ClientClosed and AfterClose, by trace ID), so
// the report says whether the server stopped generating on the client's
// close; it returns how many it set. A cancelled request the fake never
// saw closed (it had ended, or the close came before it admitted it)
// stays not reported.
func joinCloses(recs []latencytest.Record, served []fakeprovider.Served) int {
	byID := make(map[string]*fakeprovider.Served, len(served))
	for i := range served {
		byID[served[i].ID] = &served[i]
	}
	n := 0
	for i := range recs {
		rec := &recs[i]
		if rec.Err != cancel.Class {
			continue
		}
		if sv := byID[rec.ID]; sv != nil && sv.ClientClosed {
			rec.ServerAfterClose, rec.ServerCloseReported = sv.AfterClose, true
			n++
		}
	}
	return n
}
