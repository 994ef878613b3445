package slospec

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// TestKindsTable: every kind the table holds is written by a spec key
// (task_per_call, by Go only, aside; session_error_rate by session's), judges the subject its chain flag
// says, and its objectives come back with their kind.
func TestKindsTable(t *testing.T) {
	s, err := ParseSpec([]byte(`target: {preset: mistral-3-14b}
load: {requests: 300}
server_metrics: {url: "http://127.0.0.1:8000/metrics"}
objectives:
  server_queue: {p99: 1s}
  ttft: {p99: 1s, cv: 100%, tail_ratio: 5}
  max_gap: {max: 30s}
  tokens_per_second: {p5: 10}
  error_rate: 1%
  cache_miss: true
  cold_start: 10s
chains:
  count: 100
  total: {p95: 60s}
  error_rate: 5%
  task: {budget: 60s, tail_tasks: 5%}
agent:
  steps: [{name: plan}, {name: search, after: [plan], fan_out: 3}]
  task: {budget: 60s, tail_tasks: 5%}
`))
	if err != nil {
		t.Fatal(err)
	}
	conv, err := ParseSpec([]byte("target: {preset: mistral-3-14b}\nconversation: {sessions: 20}\nobjectives:\n  turn: {2: {ttft: {p50: 1s}}}\n  session: {p50: 1s, error_rate: 5%}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[ObjectiveKind]bool{}
	for _, o := range slices.Concat(s.Objectives, s.Chains.Objectives, s.Agent.Objectives, conv.Objectives) {
		got[o.Kind] = true
		k := kindOf(o)
		if k == nil {
			t.Fatalf("%s: kind %q is not in the table", o.Key, o.Kind)
		}
		if o.IsChain() != k.chain {
			t.Errorf("%s: IsChain %v, table %v", o.Key, o.IsChain(), k.chain)
		}
	}
	names := map[ObjectiveKind]bool{}
	for _, k := range kinds {
		if names[k.name] {
			t.Errorf("kind %q twice in the table", k.name)
		}
		names[k.name] = true
		if k.build == nil {
			t.Errorf("kind %q builds nothing", k.name)
		}
		if k.at != 0 && !got[k.name] {
			t.Errorf("kind %q (key %q) not written by the spec", k.name, k.key)
		}
		if k.at == 0 && k.name != kindTaskPerCall && (k.name != kindSessionErrorRate || !got[k.name]) { // written by session:
			t.Errorf("kind %q has no key", k.name)
		}
	}
	// what each kind needs measured, as the stream: false check and the
	// records' formats read it
	for _, tc := range []struct {
		o     Objective
		clock string
	}{
		{Objective{Kind: kindQuantile, Metric: sloassert.FirstAnswer}, "first_answer"},
		{Objective{Kind: kindCV, Metric: sloassert.Total}, "total"},
		{Objective{Kind: kindTailRatio, Metric: sloassert.ITL}, "itl"},
		{Objective{Kind: kindDecodeRate}, "itl"},
		{Objective{Kind: kindMaxStall}, "max_gap"},
		{Objective{Kind: kindColdStart}, "ttft"},
		{Objective{Kind: kindErrorRate}, ""},
		{Objective{Kind: kindCacheMiss}, ""},
		{Objective{Kind: kindChainTotal}, ""},
		{Objective{Kind: "nonsense"}, ""},
	} {
		if clock, _ := needs(tc.o); clock != tc.clock {
			t.Errorf("needs(%s %s) = %q, want %q", tc.o.Kind, tc.o.Metric, clock, tc.clock)
		}
	}
}

// TestKindsOneEntry: a kind added to the table is a key of its section,
// listed in the unknown-key error, parsed by its entry and judged by the
// objective it builds: no other place changes.
func TestKindsOneEntry(t *testing.T) {
	saved := kinds
	t.Cleanup(func() { kinds = saved })
	kinds = append(slices.Clone(saved), objectiveKind{name: "max_total", key: "max_total", at: atTop,
		parse: func(p *specParser, f specEntry, _ where, out *[]Objective) {
			if d, ok := p.duration(f, true); ok {
				p.objective(out, Objective{Key: "max_total", Line: f.k.Line, Kind: "max_total", Budget: d}, f.path)
			}
		},
		needs: func(Objective) (string, string) { return "total", "judges the slowest total" },
		build: func(o Objective) sloassert.Objective { return sloassert.Q(sloassert.Total, 0.5, o.Budget) }})
	s, err := ParseSpec([]byte("target: {preset: mistral-3-14b}\nobjectives:\n  max_total: 1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Objectives) != 1 || s.Objectives[0].Kind != "max_total" || s.Objectives[0].Budget != time.Second || s.Objectives[0].Line != 3 {
		t.Fatalf("parsed %+v", s.Objectives)
	}
	r := &latencytest.Result{Records: []latencytest.Record{{ID: "a", TTFT: time.Millisecond, Total: 2 * time.Second}, {ID: "b", TTFT: time.Millisecond, Total: 2 * time.Second}}}
	if rep := sloassert.Evaluate(r, s.Objectives[0].Objective()); rep.OK() || !strings.Contains(rep.String(), "total p50") {
		t.Errorf("the new kind's objective did not judge:\n%s", rep)
	}
	_, err = ParseSpec([]byte("target: {preset: mistral-3-14b}\nobjectives:\n  max_totl: 1s\n"))
	if err == nil || !strings.Contains(err.Error(), ", max_total, ttft") {
		t.Errorf("unknown key error does not list the new key: %v", err)
	}
	_, err = ParseSpec([]byte("target:\n  endpoint: {stream: false}\nobjectives:\n  max_total: 1s\n"))
	if err != nil {
		t.Errorf("a total objective on whole answers: %v", err)
	}

	// a chain kind: a chains key, judged on the chains
	kinds = append(kinds, objectiveKind{name: "chain_p50", key: "p50_total", at: atChains, chain: true,
		parse: func(p *specParser, f specEntry, _ where, out *[]Objective) {
			if d, ok := p.duration(f, true); ok {
				p.objective(out, Objective{Key: "chain_p50", Line: f.k.Line, Kind: "chain_p50", Budget: d}, f.path)
			}
		},
		build: func(o Objective) sloassert.Objective { return sloassert.ChainQ(0.5, o.Budget) }})
	s, err = ParseSpec([]byte("target: {preset: mistral-3-14b}\nchains:\n  p50_total: 1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Chains.Objectives; len(o) != 1 || !o[0].IsChain() || o[0].Line != 3 {
		t.Fatalf("parsed %+v", o)
	}
	cr := &latencytest.ChainResult{Chains: []latencytest.ChainRun{{ID: "c", Total: 2 * time.Second}}}
	if rep := sloassert.Evaluate(cr, s.Chains.Objectives[0].ChainObjective()); rep.OK() || !strings.Contains(rep.String(), "p50") {
		t.Errorf("the new chain kind did not judge:\n%s", rep)
	}
}
