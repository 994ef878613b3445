// A spec objective and its kinds: one table says, for each kind, where
// the spec writes it, how it is parsed, what it needs measured and what
// it judges with.

package slospec

import (
	"fmt"
	"slices"
	"time"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/sloassert"
)

// ObjectiveKind says what an Objective judges. The kinds, as the table
// kinds lists them: "quantile" (Metric's Q-quantile <= Budget), "cv"
// (Metric's CV <= Limit percent), "tail_ratio" (Metric's p99/p50 <=
// Limit), "error_rate" (failed fraction <= Limit, of Classes only if
// any), "tokens_per_second" (the decode speed's Q-quantile >= Limit
// tok/s), "cache_miss" (no cached prompt tokens), "max_stall" (the
// longest sloassert.MaxGap <= Budget), "cold_start"
// (sloassert.MaxColdStart(Budget), AfterIdle when set) judge a Result (a
// level's batch); "chain_total" (chain totals' Q-quantile <= Budget),
// "chain_error_rate" (chains with a failed call <= Limit) and "task"
// (chain totals' (1-Task.TailTasks)-quantile <= Task.Budget) judge a
// ChainResult; "agent_task" (written task: under agent; the task totals'
// (1-Task.TailTasks)-quantile <= Task.Budget) judges an agent's tasks;
// "task_per_call" (Task.PerCall on each call's total, which
// no spec key writes) judges the chains' calls as one Result when an
// Objective built in Go asks for it; "server_queue" (the server's queue
// Q-quantile <= Budget, sloassert.ServerQueue) judges the server metrics
// a level scraped; "turn" judges one turn's requests of a conversation,
// "session_total" and "session_error_rate" its whole sessions
// (session.go). Any other kind judges nothing: its objective never
// passes and says why.
type ObjectiveKind string

// The kinds' names (see ObjectiveKind).
const (
	kindQuantile       ObjectiveKind = "quantile"
	kindCV             ObjectiveKind = "cv"
	kindTailRatio      ObjectiveKind = "tail_ratio"
	kindErrorRate      ObjectiveKind = "error_rate"
	kindDecodeRate     ObjectiveKind = "tokens_per_second"
	kindCacheMiss      ObjectiveKind = "cache_miss"
	kindMaxStall       ObjectiveKind = "max_stall"
	kindColdStart      ObjectiveKind = "cold_start"
	kindChainTotal     ObjectiveKind = "chain_total"
	kindChainErrorRate ObjectiveKind = "chain_error_rate"
	kindTask           ObjectiveKind = "task"
	kindTaskPerCall    ObjectiveKind = "task_per_call"
	kindTurn           ObjectiveKind = "turn"
)

// Objective is one objective of a spec, as written.
type Objective struct {
	// Key names the objective in the spec and names its subtest:
	// "ttft_p99", "error_rate", "chain_total_p95", "task".
	Key string
	// Line is the line of the spec that wrote it (0 when built in Go).
	Line int
	// Kind says what it judges (see ObjectiveKind).
	Kind ObjectiveKind
	// Metric is the clock judged by quantile, cv and tail_ratio kinds.
	Metric sloassert.Metric
	// Q is the quantile, a fraction in (0,1).
	Q float64
	// Budget is the latency budget.
	Budget time.Duration
	// Limit is the bound of a non-latency kind: percent for cv, a ratio
	// for tail_ratio, a fraction for error rates, tokens/s for
	// tokens_per_second.
	Limit float64
	// Classes restricts an error rate to these error classes.
	Classes []string
	// AfterIdle is the cold_start kind's idle gap (0: the default,
	// one minute).
	AfterIdle time.Duration
	// Task is the task target of the task kinds.
	Task sloassert.Task
	// Turn, for the turn kind, is the turn index (from 1) whose requests
	// alone an objective of kind TurnKind judges (conversation.go).
	Turn     int
	TurnKind ObjectiveKind
	// AllowSmallSample, Demonstrate and Refute (a confidence fraction; 0:
	// off) are the options of quantile kinds.
	AllowSmallSample bool
	Demonstrate      float64
	Refute           float64
}

// placement says where a kind's key is written (a set of these bits).
type placement uint8

const (
	atTop    placement = 1 << iota // objectives.<key>
	atMetric                       // objectives.<metric>.<key> (key "": any quantile key)
	atChains                       // chains.<key>
	atAgent                        // agent.<key>
)

// where is what a kind's parser knows of the place its key was written:
// the metric whose map holds it (objectives.ttft.cv; "" elsewhere), the
// quantile options of that map, and the chains (or agent) section of a
// chain kind.
type where struct {
	metric sloassert.Metric
	sec    *quantileSection
	chains *Chains
	agent  *Agent
}

// objectiveKind is one kind of spec objective, written once: adding a
// kind is one entry in kinds plus the sloassert function it builds.
type objectiveKind struct {
	name ObjectiveKind
	// key is the YAML key that writes it, at the places in at; "" with
	// atMetric is any quantile key (p99, q0.995). The order of kinds is
	// the order each section lists its keys in an unknown-key error.
	key string
	at  placement
	// parse reads the key's value f into objectives of the kind.
	parse func(p *specParser, f specEntry, w where, out *[]Objective)
	// needs is the clock the objective cannot be judged without, named as
	// records.Metrics names them, and what it judges of it;
	// nil for a kind that needs no clock of its own.
	needs func(o Objective) (clock, what string)
	// sample is the metric and quantile the sample-size rule (n >=
	// sloassert.MinSamples(q), unless AllowSmallSample) is applied to
	// ("" for chain totals; for ITL, n counts requests, as sloassert
	// does); nil for a kind without such a rule.
	sample func(o Objective) (m sloassert.Metric, q float64)
	// chain is true for a kind that judges a ChainResult.
	chain bool
	// build is the sloassert objective that judges it.
	build func(o Objective) sloassert.Objective
}

// clockOf is the needs of the kinds that judge their Metric.
func clockOf(o Objective) (string, string) {
	switch o.Metric {
	case sloassert.TTFT, sloassert.FirstAnswer, sloassert.ITL, sloassert.MaxGap, sloassert.Total:
		return string(o.Metric), "judges " + string(o.Metric)
	}
	return "", ""
}

// parseCV parses cv: 100% under a metric, or cv: {ttft: 100%}.
func parseCV(p *specParser, f specEntry, w where, out *[]Objective) {
	if w.metric == "" {
		p.byKind(f, out, parseCV)
	} else if v, ok := p.percentage(f, 0, specMaxCVPercent, false); ok {
		p.objective(out, Objective{Key: string(w.metric) + "_cv", Line: f.k.Line, Kind: kindCV, Metric: w.metric, Limit: v * 100}, f.path)
	}
}

// parseTailRatio parses tail_ratio: 5 under a metric, or tail_ratio:
// {ttft: 5}.
func parseTailRatio(p *specParser, f specEntry, w where, out *[]Objective) {
	if w.metric == "" {
		p.byKind(f, out, parseTailRatio)
	} else if v, ok := p.tailRatio(f); ok {
		p.objective(out, Objective{Key: string(w.metric) + "_tail_ratio", Line: f.k.Line, Kind: kindTailRatio, Metric: w.metric, Limit: v}, f.path)
	}
}

// kinds is every objective kind.
var kinds = []objectiveKind{
	{name: kindDecodeRate, key: "tokens_per_second", at: atTop,
		parse: func(p *specParser, f specEntry, _ where, out *[]Objective) { p.decodeRates(f, out) },
		needs: func(Objective) (string, string) {
			return "itl", "judges the decode speed (tokens after the first, over their time)"
		},
		build: func(o Objective) sloassert.Objective { return sloassert.MinDecodeRate(o.Q, o.Limit) }},
	{name: kindErrorRate, key: "error_rate", at: atTop,
		parse: func(p *specParser, f specEntry, _ where, out *[]Objective) { p.errorRate(f, out) },
		build: func(o Objective) sloassert.Objective { return sloassert.MaxErrorRate(o.Limit, o.Classes...) }},
	{name: kindCV, key: "cv", at: atTop | atMetric,
		parse: parseCV,
		needs: clockOf,
		build: func(o Objective) sloassert.Objective { return sloassert.MaxCV(o.Metric, o.Limit) }},
	{name: kindTailRatio, key: "tail_ratio", at: atTop | atMetric,
		parse:  parseTailRatio,
		needs:  clockOf,
		sample: func(o Objective) (sloassert.Metric, float64) { return o.Metric, 0.99 },
		build:  func(o Objective) sloassert.Objective { return sloassert.MaxTailRatio(o.Metric, o.Limit) }},
	{name: kindCacheMiss, key: "cache_miss", at: atTop,
		parse: func(p *specParser, f specEntry, _ where, out *[]Objective) {
			if b, ok := p.boolean(f); ok && b {
				p.objective(out, Objective{Key: "cache_miss", Line: f.k.Line, Kind: kindCacheMiss}, f.path)
			}
		},
		build: func(Objective) sloassert.Objective { return sloassert.NoCacheHits() }},
	{name: kindColdStart, key: "cold_start", at: atTop,
		parse: func(p *specParser, f specEntry, _ where, out *[]Objective) { p.coldStart(f, out) },
		needs: func(Objective) (string, string) { return "ttft", "judges cold starts by their TTFT" },
		build: func(o Objective) sloassert.Objective {
			if o.AfterIdle > 0 {
				return sloassert.MaxColdStart(o.Budget, sloassert.AfterIdle(o.AfterIdle))
			}
			return sloassert.MaxColdStart(o.Budget)
		}},
	{name: kindQuantile, key: "", at: atMetric,
		parse: func(p *specParser, f specEntry, w where, out *[]Objective) {
			w.sec.quantile(p, f, Objective{Key: string(w.metric) + "_" + f.key, Line: f.k.Line, Kind: kindQuantile, Metric: w.metric}, out)
		},
		needs:  clockOf,
		sample: func(o Objective) (sloassert.Metric, float64) { return o.Metric, o.Q },
		build:  func(o Objective) sloassert.Objective { return sloassert.Q(o.Metric, o.Q, o.Budget, o.options()...) }},
	{name: kindMaxStall, key: "max", at: atMetric,
		parse: func(p *specParser, f specEntry, w where, out *[]Objective) {
			if w.metric != sloassert.MaxGap {
				p.errorf(f.k.Line, f.path, "max applies to max_gap only (the longest stall); use a quantile such as p99")
				return
			}
			if d, ok := p.duration(f, true); ok {
				p.objective(out, Objective{Key: string(w.metric) + "_max", Line: f.k.Line, Kind: kindMaxStall, Budget: d}, f.path)
			}
		},
		needs: func(Objective) (string, string) { return "max_gap", "judges the longest gap between tokens" },
		build: func(o Objective) sloassert.Objective { return sloassert.MaxStall(o.Budget) }},
	{name: kindChainTotal, key: "total", at: atChains, chain: true,
		parse:  func(p *specParser, f specEntry, _ where, out *[]Objective) { p.chainTotal(f, out) },
		sample: func(o Objective) (sloassert.Metric, float64) { return "", o.Q },
		build: func(o Objective) sloassert.Objective {
			return sloassert.ChainQ(o.Q, o.Budget, o.options()...)
		}},
	{name: kindChainErrorRate, key: "error_rate", at: atChains, chain: true,
		parse: func(p *specParser, f specEntry, _ where, out *[]Objective) {
			if v, ok := p.errorRateLimit(f); ok {
				p.objective(out, Objective{Key: "chain_error_rate", Line: f.k.Line, Kind: kindChainErrorRate, Limit: v}, f.path)
			}
		},
		build: func(o Objective) sloassert.Objective { return sloassert.MaxChainErrorRate(o.Limit) }},
	{name: kindTask, key: "task", at: atChains, chain: true,
		parse:  func(p *specParser, f specEntry, w where, out *[]Objective) { p.task(f, w.chains, out) },
		sample: func(o Objective) (sloassert.Metric, float64) { return "", 1 - o.Task.TailTasks },
		build: func(o Objective) sloassert.Objective {
			if err := o.Task.Validate(); err != nil {
				return sloassert.Invalid(o.Key, err.Error())
			}
			q, per := o.Task.PerCall()
			plan := fmt.Sprintf("planning figure, not a gate: per call %s <= %s suffices", sloassert.QuantileName(q), format.Duration(per))
			obj := sloassert.ChainQ(1-o.Task.TailTasks, o.Task.Budget, append(o.options(), sloassert.Note(plan))...)
			obj.Name = fmt.Sprintf("%s (task of %d calls, %s of tasks)", obj.Name, o.Task.Calls, percent(1-o.Task.TailTasks))
			return obj
		}},
	turnKind,                               // conversation.go
	sessionTotalKind, sessionErrorRateKind, // session.go
	{name: kindTaskPerCall,
		sample: func(o Objective) (sloassert.Metric, float64) {
			q, _ := o.Task.PerCall()
			return sloassert.Total, q
		},
		build: func(o Objective) sloassert.Objective {
			if err := o.Task.Validate(); err != nil {
				return sloassert.Invalid(o.Key, err.Error())
			}
			return o.Task.Objective(sloassert.Total, o.options()...)
		}},
	agentTaskKind,
	serverQueueKind,
}

// kindOf is the table's entry for o's kind, or nil for a kind it does
// not hold.
func kindOf(o Objective) *objectiveKind {
	for i := range kinds {
		if kinds[i].name == o.Kind {
			return &kinds[i]
		}
	}
	return nil
}

// kindAt is the kind whose key is written at key in section at, or nil.
func kindAt(at placement, key string) *objectiveKind {
	for i := range kinds {
		if kinds[i].at&at != 0 && kinds[i].key == key {
			return &kinds[i]
		}
	}
	return nil
}

// kindKeys are the keys of the kinds written at at, in the table's order
// (the quantile keys, written "", left out).
func kindKeys(at placement) []string {
	var keys []string
	for _, k := range kinds {
		if k.at&at != 0 && k.key != "" {
			keys = append(keys, k.key)
		}
	}
	return keys
}

// chainKindField is a chains key that writes a chain kind's objectives.
func chainKindField(key string) field[*Chains] {
	return field[*Chains]{key, func(p *specParser, f specEntry, c *Chains) {
		kindAt(atChains, key).parse(p, f, where{chains: c}, &c.Objectives)
	}}
}

// chainsKeys is chainsTable, where the chain kinds' keys take their
// place, with a field for each chain kind it does not place (after its
// keys): a chain kind added to kinds is a chains key.
func chainsKeys() []field[*Chains] {
	t := chainsTable
	for _, key := range kindKeys(atChains) {
		if !slices.ContainsFunc(t, func(f field[*Chains]) bool { return f.key == key }) {
			t = append(slices.Clone(t), chainKindField(key))
		}
	}
	return t
}

// needs is the clock an objective cannot be judged without, named as
// records.Metrics names them, and what the objective judges
// of it (the kind's needs); "" for an objective that needs no clock of
// its own (an error rate, cache misses).
func needs(o Objective) (clock, what string) {
	if k := kindOf(o); k != nil && k.needs != nil {
		return k.needs(o)
	}
	return "", ""
}

func (o Objective) options() []sloassert.Option {
	var opts []sloassert.Option
	if o.AllowSmallSample {
		opts = append(opts, sloassert.AllowSmallSample())
	}
	if o.Demonstrate > 0 {
		opts = append(opts, sloassert.Demonstrate(o.Demonstrate))
	}
	if o.Refute > 0 {
		opts = append(opts, sloassert.Refute(o.Refute))
	}
	return opts
}

// IsChain reports whether the objective judges a ChainResult
// (ChainObjective) rather than a Result (Objective).
func (o Objective) IsChain() bool {
	k := kindOf(o)
	return k != nil && k.chain
}

// Objective returns the objective that judges a Result. For a chain kind
// (IsChain) it returns an objective that never passes and says why.
func (o Objective) Objective() sloassert.Objective {
	if k := kindOf(o); k != nil && !k.chain {
		return k.build(o)
	}
	return sloassert.Invalid(o.Key, fmt.Sprintf("kind %q does not judge a single result", o.Kind))
}

// ChainObjective returns the objective that judges a ChainResult. For a
// kind that judges a Result it returns an objective that never passes and
// says why.
func (o Objective) ChainObjective() sloassert.Objective {
	if k := kindOf(o); k != nil && k.chain {
		return k.build(o)
	}
	return sloassert.Invalid(o.Key, fmt.Sprintf("kind %q does not judge chains", o.Kind))
}
