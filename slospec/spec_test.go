package slospec_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
	"github.com/tailguard/tailguard/slospec"

	"github.com/tailguard/tailguard/internal/defaults"
)

// fullSpecYAML writes every key a spec has (line numbers matter: the
// objectives record them).
const fullSpecYAML = `name: maverick-chat
target:
  preset: llama-4-maverick
  seed: 3
load:
  warmup: 5
  requests: 300
  concurrency: [1, 8]
  max_tokens: 64
  mix:
    seed: 9
    classes:
      - {name: short, weight: 70%, prompt_tokens: 200, max_tokens: 100}
      - {name: long, weight: 30%, prompt_tokens: 6000, max_tokens: 600}
  no_nonce: true
  temperature: 0.5
  interval: 100ms
  first_token_timeout: 5s
  total_timeout: 60s
  hard_cap: 90s
  repeat: 2
  location: "CI runner, eu-west-1"
objectives:
  ttft: {p50: 400ms, p99: 1.5s, cv: 100%, tail_ratio: 5, refute: 95%}
  first_answer: {p95: 2s, q0.995: 3s, p99.9: 5s, allow_small_sample: true}
  total: {p99: 20s, demonstrate: 90%}
  itl: {p99: 100ms}
  max_gap: {max: 30s, p95: 1s}
  tokens_per_second: {p5: 10, p50: 20.5}
  error_rate: {max: 1.5%, classes: [http_529, http_429]}
  cache_miss: true
  cv: {total: 50%}
  tail_ratio: {first_answer: 3}
chains:
  count: 40
  calls: 8
  concurrency: 2
  max_tokens: 32
  prompt: Plan a migration.
  follow_up: Next.
  no_nonce: false
  temperature: 0
  first_token_timeout: 4s
  total_timeout: 30s
  hard_cap: 60s
  location: lab
  target: {preset: llama-4-maverick-chain, seed: 11}
  total: {p50: 30s, p95: 60s, allow_small_sample: true}
  error_rate: 5%
  task: {budget: 8s, tail_tasks: 10%}
`

func TestParseSpecEveryKey(t *testing.T) {
	s, err := slospec.ParseSpec([]byte(fullSpecYAML))
	if err != nil {
		t.Fatal(err)
	}
	u64 := func(v uint64) *uint64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	want := slospec.Spec{
		Name:   "maverick-chat",
		Target: slospec.Target{Preset: "llama-4-maverick", Seed: u64(3)},
		Load: slospec.Load{
			Concurrency: []int{1, 8},
			Batch: latencytest.Batch{
				Warmup: 5, Requests: 300, Load: latencytest.Load{MaxTokens: 64, NoNonce: true, Temperature: f64(0.5), FirstTokenTimeout: 5 * time.Second, TotalTimeout: time.Minute, HardCap: 90 * time.Second, Location: "CI runner, eu-west-1"},
				Mix: latencytest.Mix{Seed: 9, Classes: []latencytest.PromptClass{
					{Name: "short", Weight: 0.7, PromptTokens: 200, MaxTokens: 100},
					{Name: "long", Weight: 0.3, PromptTokens: 6000, MaxTokens: 600},
				}}, Interval: 100 * time.Millisecond,
				Repeat: 2,
			},
		},
		Objectives: []slospec.Objective{
			{Key: "ttft_p50", Line: 24, Kind: "quantile", Metric: sloassert.TTFT, Q: 0.5, Budget: 400 * time.Millisecond, Refute: 0.95},
			{Key: "ttft_p99", Line: 24, Kind: "quantile", Metric: sloassert.TTFT, Q: 0.99, Budget: 1500 * time.Millisecond, Refute: 0.95},
			{Key: "ttft_cv", Line: 24, Kind: "cv", Metric: sloassert.TTFT, Limit: 100},
			{Key: "ttft_tail_ratio", Line: 24, Kind: "tail_ratio", Metric: sloassert.TTFT, Limit: 5},
			{Key: "first_answer_p95", Line: 25, Kind: "quantile", Metric: sloassert.FirstAnswer, Q: 0.95, Budget: 2 * time.Second, AllowSmallSample: true},
			{Key: "first_answer_q0.995", Line: 25, Kind: "quantile", Metric: sloassert.FirstAnswer, Q: 0.995, Budget: 3 * time.Second, AllowSmallSample: true},
			{Key: "first_answer_p99.9", Line: 25, Kind: "quantile", Metric: sloassert.FirstAnswer, Q: 0.999, Budget: 5 * time.Second, AllowSmallSample: true},
			{Key: "total_p99", Line: 26, Kind: "quantile", Metric: sloassert.Total, Q: 0.99, Budget: 20 * time.Second, Demonstrate: 0.9},
			{Key: "itl_p99", Line: 27, Kind: "quantile", Metric: sloassert.ITL, Q: 0.99, Budget: 100 * time.Millisecond},
			{Key: "max_gap_max", Line: 28, Kind: "max_stall", Budget: 30 * time.Second},
			{Key: "max_gap_p95", Line: 28, Kind: "quantile", Metric: sloassert.MaxGap, Q: 0.95, Budget: time.Second},
			{Key: "tokens_per_second_p5", Line: 29, Kind: "tokens_per_second", Q: 0.05, Limit: 10},
			{Key: "tokens_per_second_p50", Line: 29, Kind: "tokens_per_second", Q: 0.5, Limit: 20.5},
			{Key: "error_rate", Line: 30, Kind: "error_rate", Limit: 0.015, Classes: []string{"http_529", "http_429"}},
			{Key: "cache_miss", Line: 31, Kind: "cache_miss"},
			{Key: "total_cv", Line: 32, Kind: "cv", Metric: sloassert.Total, Limit: 50},
			{Key: "first_answer_tail_ratio", Line: 33, Kind: "tail_ratio", Metric: sloassert.FirstAnswer, Limit: 3},
		},
		Chains: &slospec.Chains{
			Chain: latencytest.Chain{
				Chains: 40, Length: 8, Concurrency: 2, Load: latencytest.Load{MaxTokens: 32, Prompt: "Plan a migration.", Temperature: f64(0), FirstTokenTimeout: 4 * time.Second, TotalTimeout: 30 * time.Second, HardCap: time.Minute, Location: "lab"}, FollowUp: "Next.",
			},
			Target: &slospec.Target{Preset: "llama-4-maverick-chain", Seed: u64(11)},
			Objectives: []slospec.Objective{
				{Key: "chain_total_p50", Line: 48, Kind: "chain_total", Q: 0.5, Budget: 30 * time.Second, AllowSmallSample: true},
				{Key: "chain_total_p95", Line: 48, Kind: "chain_total", Q: 0.95, Budget: time.Minute, AllowSmallSample: true},
				{Key: "chain_error_rate", Line: 49, Kind: "chain_error_rate", Limit: 0.05},
				{Key: "task", Line: 50, Kind: "task", Task: sloassert.Task{Calls: 8, Budget: 8 * time.Second, TailTasks: 0.1}},
			},
		},
	}
	if !reflect.DeepEqual(s.Target, want.Target) {
		t.Errorf("target\n got %+v\nwant %+v", s.Target, want.Target)
	}
	if !reflect.DeepEqual(s.Load, want.Load) {
		t.Errorf("load\n got %+v\nwant %+v", s.Load, want.Load)
	}
	if len(s.Objectives) != len(want.Objectives) {
		t.Errorf("%d objectives, want %d", len(s.Objectives), len(want.Objectives))
	}
	for i := range min(len(s.Objectives), len(want.Objectives)) {
		if !reflect.DeepEqual(s.Objectives[i], want.Objectives[i]) {
			t.Errorf("objective %d\n got %+v\nwant %+v", i, s.Objectives[i], want.Objectives[i])
		}
	}
	if s.Chains == nil {
		t.Fatal("no chains")
	}
	if !reflect.DeepEqual(s.Chains.Chain, want.Chains.Chain) || !reflect.DeepEqual(s.Chains.Target, want.Chains.Target) {
		t.Errorf("chains\n got %+v %+v\nwant %+v %+v", s.Chains.Chain, s.Chains.Target, want.Chains.Chain, want.Chains.Target)
	}
	if !reflect.DeepEqual(s.Chains.Objectives, want.Chains.Objectives) {
		t.Errorf("chain objectives\n got %+v\nwant %+v", s.Chains.Objectives, want.Chains.Objectives)
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("spec differs:\n got %+v\nwant %+v", s, want)
	}
	// The objectives the spec builds say what they judge.
	names := []string{}
	for _, o := range s.Objectives {
		names = append(names, o.Objective().Name)
	}
	for _, o := range s.Chains.Objectives {
		if o.IsChain() {
			names = append(names, o.ChainObjective().Name)
		} else {
			names = append(names, o.Objective().Name)
		}
	}
	got := strings.Join(names, "\n")
	for _, w := range []string{
		"ttft p99 <= 1500.0ms", "ttft CV <= 100%", "ttft p99/p50 <= 5", "first_answer p99.5 <= 3000.0ms",
		"first_answer p99.9 <= 5000.0ms", "total p99 <= 20.000s", "longest stall <= 30.000s", "max_gap p95 <= 1000.0ms", "decode p5 >= 10 tok/s",
		"error rate [http_529, http_429] <= 1.5%", "cache miss", "total CV <= 50%", "first_answer p99/p50 <= 3",
		"chain total p95 <= 60.000s", "chains with a failed call <= 5%", "chain total p90 <= 8000.0ms (task of 8 calls, 90% of tasks)",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("no objective named like %q in\n%s", w, got)
		}
	}
}

// The YAML in Spec's doc comment parses: the documentation cannot drift
// from the parser.
func TestSpecDocExampleParses(t *testing.T) {
	src, err := os.ReadFile("spec.go")
	if err != nil {
		t.Fatal(err)
	}
	var yml []string
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		body, ok := strings.CutPrefix(line, "//\t")
		switch {
		case ok:
			in = true
			yml = append(yml, body)
		case in:
			in = false
		}
		if !ok && len(yml) > 0 {
			break
		}
	}
	if len(yml) < 40 {
		t.Fatalf("found %d lines of example in spec.go", len(yml))
	}
	s, err := slospec.ParseSpec([]byte(strings.Join(yml, "\n")))
	if err != nil {
		t.Fatalf("the doc example does not parse: %v", err)
	}
	if len(s.Objectives) < 8 || s.Chains == nil || len(s.Chains.Objectives) < 4 {
		t.Errorf("doc example: %d objectives, chains %+v", len(s.Objectives), s.Chains)
	}
}

// specErrPrefix is how every spec error starts.
var specErrPrefix = regexp.MustCompile(`^slospec: line [1-9][0-9]*: `)

func TestParseSpecErrors(t *testing.T) {
	const target = "target: {preset: mistral-3-14b}\n"
	for _, tc := range []struct {
		name, spec string
		// want is the start of the error after "slospec: ".
		want []string
	}{
		{"empty document never passes", "", []string{"line 1: empty spec"}},
		{"only a comment", "# nothing\n", []string{"line 1: empty spec"}},
		{"a list is not a spec", "- a\n", []string{"line 1: a spec is a map"}},
		{"no objectives", target, []string{"line 1: objectives: none: a spec with no objective never passes"}},
		{"empty objectives map", target + "objectives: {}\n", []string{"line 2: objectives: none"}},
		{"metric with options only", target + "objectives:\n  ttft: {allow_small_sample: true}\n", []string{"line 3: objectives.ttft: no objective"}},
		{"cache_miss false is no objective", target + "objectives: {cache_miss: false}\n", []string{"line 2: objectives: none"}},
		{"no target", "objectives: {error_rate: 1%}\n", []string{"line 1: target: missing"}},
		{"empty target", "target: {}\nobjectives: {error_rate: 1%}\n", []string{"line 1: target: want one of preset, profile, endpoint or records"}},
		{"conflicting preset and profile", "target:\n  preset: mistral-3-14b\n  profile: p.yaml\nobjectives: {error_rate: 1%}\n",
			[]string{"line 3: target.profile: conflicting: preset and profile"}},
		{"conflicting preset and endpoint", "target: {endpoint: {}, preset: mistral-3-14b}\nobjectives: {error_rate: 1%}\n",
			[]string{"line 1: target.preset: conflicting: endpoint and preset"}},
		{"seed on an endpoint", "target:\n  endpoint: {}\n  seed: 3\nobjectives: {error_rate: 1%}\n", []string{"line 3: target.seed: a seed applies to fake targets"}},
		{"unknown preset", "target: {preset: gpt-9}\nobjectives: {error_rate: 1%}\n", []string{`line 1: target.preset: unknown preset "gpt-9" (have deepseek-v3.2,`}},
		{"bad env name", "target: {endpoint: {model_env: my-model}}\nobjectives: {error_rate: 1%}\n", []string{`line 1: target.endpoint.model_env: "my-model" is not an environment variable name`}},
		{"stream not a bool", "target:\n  endpoint:\n    stream: no\nobjectives: {error_rate: 1%}\n", []string{`line 3: target.endpoint.stream: want true or false, not "no"`}},
		{"stream a list", "target:\n  endpoint:\n    stream: [false]\nobjectives: {error_rate: 1%}\n", []string{`line 3: target.endpoint.stream: want true or false, not a list`}},
		{"stream typo", "target:\n  endpoint:\n    streaming: false\nobjectives: {error_rate: 1%}\n", []string{`line 3: target.endpoint.streaming: unknown key "streaming" (want base_url_env, api_key_env, model_env, protocol or stream)`}},
		{"stream false, ttft", "target:\n  endpoint:\n    stream: false\nobjectives:\n  total: {p50: 2s}\n  ttft: {p50: 1s}\n", []string{"line 6: objectives.ttft_p50: judges ttft, but target.endpoint has stream: false: a whole answer has no first token and no gap to time, only its total (drop stream: false, or judge total)"}},
		{"stream false, decode", "target:\n  endpoint:\n    stream: false\nobjectives:\n  tokens_per_second: {p50: 10}\n  max_gap: {p50: 1s}\n  error_rate: 1%\n", []string{"line 5: objectives.tokens_per_second_p50: judges the decode speed", "line 6: objectives.max_gap_p50: judges max_gap"}},
		{"stream false, stall and cold start", "target:\n  endpoint:\n    stream: false\nobjectives:\n  max_gap: {max: 5s}\n  cold_start: 10s\n", []string{"line 5: objectives.max_gap_max: judges the longest gap between tokens", "line 6: objectives.cold_start: judges cold starts by their TTFT"}},
		{"unknown top-level key", target + "objectivs: {}\n", []string{`line 2: objectivs: unknown key "objectivs" (want name, target, load, objectives, chains, agent, conversation or server_metrics)`}},
		{"unknown nested key", target + "objectives:\n  ttft:\n    p99: 1s\n    p99_budget: 1s\n", []string{`line 5: objectives.ttft.p99_budget: unknown key "p99_budget"`}},
		{"unknown load key", target + "load:\n  request: 100\nobjectives: {error_rate: 1%}\n", []string{`line 3: load.request: unknown key "request"`}},
		{"repeated key", target + "objectives:\n  error_rate: 1%\n  error_rate: 2%\n", []string{"line 4: objectives.error_rate: repeated key (first at line 3)"}},
		{"bad duration", target + "objectives:\n  ttft: {p99: fast}\n", []string{`line 3: objectives.ttft.p99: "fast" is not a duration (write a Go duration such as 250ms or 1.5s)`}},
		{"duration without unit", target + "objectives:\n  ttft: {p50: 400}\n", []string{"line 3: objectives.ttft.p50: 400 is not a duration: durations carry a unit (write 400ms or 400s)"}},
		{"negative budget", target + "objectives:\n  total: {p50: -5s}\n", []string{"line 3: objectives.total.p50: negative duration -5s"}},
		{"zero budget", target + "objectives:\n  total: {p50: 0s}\n", []string{"line 3: objectives.total.p50: a budget must be positive"}},
		{"negative timeout", target + "load:\n  first_token_timeout: -1s\nobjectives: {error_rate: 1%}\n", []string{"line 3: load.first_token_timeout: negative duration -1s"}},
		{"quantile p150", target + "objectives:\n  ttft:\n    p150: 1s\n", []string{"line 4: objectives.ttft.p150: quantile p150 is outside p0-p100"}},
		{"quantile p100", target + "objectives:\n  ttft: {p100: 1s}\n", []string{"line 3: objectives.ttft.p100: quantile p100 is outside p0-p100"}},
		{"quantile p0", target + "objectives:\n  ttft: {p0: 1s}\n", []string{"line 3: objectives.ttft.p0: quantile p0 is outside p0-p100"}},
		{"quantile q1.5", target + "objectives:\n  ttft: {q1.5: 1s}\n", []string{"line 3: objectives.ttft.q1.5: quantile q1.5 is outside q0-q1"}},
		{"same quantile twice", target + "objectives:\n  ttft: {p99.5: 1s, q0.995: 2s}\n", []string{"line 3: objectives.ttft.q0.995: the same quantile as line 3"}},
		{"same chain quantile twice", target + "chains:\n  total: {p50: 30s, q0.5: 40s}\n", []string{"line 3: chains.total.q0.5: the same quantile as line 3"}},
		{"error rate 1", target + "objectives:\n  error_rate: 1\n", []string{"line 3: objectives.error_rate: 1 is not a percentage: percentages carry % (write 1%)"}},
		{"error rate 0.01", target + "objectives:\n  error_rate: 0.01\n", []string{"line 3: objectives.error_rate: 0.01 is not a percentage: percentages carry % (write 1% for the fraction 0.01, or 0.01%)"}},
		{"quoted fraction", target + "objectives:\n  error_rate: \"0.01\"\n", []string{"line 3: objectives.error_rate: 0.01 is not a percentage"}},
		{"1.5 for a percentage", target + "objectives:\n  ttft: {p50: 1s, cv: 1.5}\n", []string{"line 3: objectives.ttft.cv: 1.5 is not a percentage: percentages carry % (write 1.5%)"}},
		{"percentage over 100", target + "objectives:\n  error_rate: 150%\n", []string{"line 3: objectives.error_rate: 150% is outside [0%, 100%]"}},
		{"error rate 100% lets every request fail", target + "objectives:\n  error_rate: 100%\n", []string{"line 3: objectives.error_rate: 100% lets every request fail, and an all-failed run never passes"}},
		{"error rate max 100%", target + "objectives:\n  error_rate: {max: 100%, classes: [http_529]}\n", []string{"line 3: objectives.error_rate.max: 100% lets every request fail"}},
		{"chain error rate 100%", target + "chains:\n  calls: 3\n  error_rate: 100%\n", []string{"line 4: chains.error_rate: 100% lets every request fail"}},
		{"tail ratio as a percentage", target + "objectives:\n  ttft: {tail_ratio: 500%}\n", []string{`line 3: objectives.ttft.tail_ratio: "500%" is a percentage; want a ratio p99/p50 such as 5`}},
		{"tail ratio below 1", target + "objectives:\n  ttft: {tail_ratio: 0.5}\n", []string{"line 3: objectives.ttft.tail_ratio: 0.5 is below 1"}},
		{"tail ratio on 75 requests", target + "objectives:\n  ttft: {tail_ratio: 5}\n", []string{"line 3: objectives.ttft_tail_ratio: p99/p50 needs n >= 100 (load gives 75 measured requests a level)"}},
		{"max on a metric other than max_gap", target + "objectives:\n  total: {max: 1s}\n", []string{"line 3: objectives.total.max: max applies to max_gap only"}},
		{"decode floor as duration", target + "objectives:\n  tokens_per_second: {p5: 10ms}\n", []string{`line 3: objectives.tokens_per_second.p5: want a floor in tokens/s such as 10, not "10ms"`}},
		{"p99 from 75 requests", target + "objectives:\n  ttft: {p99: 1s}\n", []string{"line 3: objectives.ttft_p99: p99 needs n >= 100 (load gives 75 measured requests a level; raise it, or allow_small_sample: true)"}},
		{"demonstrate needs 299", target + "load: {requests: 200}\nobjectives:\n  ttft: {p99: 1s, demonstrate: 95%}\n", []string{"line 4: objectives.ttft_p99: demonstrate at 95% on p99 needs n >= 299 (load gives 200 measured requests a level)"}},
		{"demonstrate as a fraction", target + "load: {requests: 300}\nobjectives:\n  ttft: {p99: 1s, demonstrate: 0.95}\n", []string{"line 4: objectives.ttft.demonstrate: 0.95 is not a percentage"}},
		{"demonstrate and refute", target + "load: {requests: 300}\nobjectives:\n  ttft: {p99: 1s, demonstrate: 95%, refute: 95%}\n", []string{"line 4: objectives.ttft.refute: conflicting: demonstrate and refute"}},
		{"cv given twice", target + "objectives:\n  ttft: {cv: 100%}\n  cv: {ttft: 50%}\n", []string{"line 4: objectives.cv.ttft: objective ttft_cv given twice (also at line 3)"}},
		{"prompt and mix", target + "load:\n  mix: {classes: [{name: a, weight: 100%, prompt_tokens: 10, max_tokens: 5}]}\n  prompt: hi\nobjectives: {error_rate: 1%}\n",
			[]string{"line 4: load.prompt: conflicting: prompt and mix"}},
		{"mix weights", target + "load:\n  mix:\n    classes:\n      - {name: a, weight: 60%, prompt_tokens: 10, max_tokens: 5}\n      - {name: b, weight: 0.3, prompt_tokens: 10, max_tokens: 5}\nobjectives: {error_rate: 1%}\n",
			[]string{"line 6: load.mix.classes[1].weight: 0.3 is not a percentage"}},
		{"mix weights sum", target + "load:\n  mix:\n    classes:\n      - {name: a, weight: 60%, prompt_tokens: 10, max_tokens: 5}\n      - {name: b, weight: 30%, prompt_tokens: 10, max_tokens: 5}\nobjectives: {error_rate: 1%}\n",
			[]string{"line 4: load.mix.classes: weights sum to 90%, not 100%"}},
		{"mix class missing a key", target + "load:\n  mix: {classes: [{name: a, weight: 100%, prompt_tokens: 10}]}\nobjectives: {error_rate: 1%}\n", []string{"line 3: load.mix.classes[0]: missing max_tokens"}},
		{"requests zero", target + "load: {requests: 0}\nobjectives: {error_rate: 1%}\n", []string{"line 2: load.requests: 0 is outside [1, 1000000]"}},
		{"requests not a number", target + "load: {requests: many}\nobjectives: {error_rate: 1%}\n", []string{`line 2: load.requests: want a whole number, not "many"`}},
		{"requests 1.5", target + "load: {requests: 1.5}\nobjectives: {error_rate: 1%}\n", []string{`line 2: load.requests: want a whole number, not "1.5"`}},
		{"level zero", target + "load: {concurrency: [1, 0]}\nobjectives: {error_rate: 1%}\n", []string{"line 2: load.concurrency[1]: 0 is outside [1, 100000]"}},
		{"level twice", target + "load: {concurrency: [8, 8]}\nobjectives: {error_rate: 1%}\n", []string{"line 2: load.concurrency[1]: level 8 given twice"}},
		{"temperature out of range", target + "load: {temperature: 3}\nobjectives: {error_rate: 1%}\n", []string{"line 2: load.temperature: temperature 3 is outside [0, 2]"}},
		{"bool as a string", target + "load: {no_nonce: yes}\nobjectives: {error_rate: 1%}\n", []string{`line 2: load.no_nonce: want true or false, not "yes"`}},
		{"load judged by nothing", target + "load: {requests: 100}\nchains: {error_rate: 1%}\n", []string{"line 2: load: no objective judges the load"}},
		{"chains judged by nothing", target + "objectives: {error_rate: 1%}\nchains: {count: 10}\n", []string{"line 3: chains: no objective judges the chains"}},
		{"chain p99 from 30 chains", target + "chains:\n  total: {p99: 60s}\n", []string{"line 3: chains.chain_total_p99: p99 needs n >= 100 (chains.count gives 30 chains"}},
		{"task tail as a fraction", target + "chains:\n  task: {budget: 5s, tail_tasks: 0.05}\n", []string{"line 3: chains.task.tail_tasks: 0.05 is not a percentage"}},
		{"task without budget", target + "chains:\n  task: {tail_tasks: 5%}\n", []string{"line 3: chains.task: missing budget"}},
		{"task per call needs calls", target + "chains:\n  count: 10\n  calls: 2\n  task: {budget: 5s, tail_tasks: 1%}\n",
			[]string{"line 5: chains.task: p99 needs n >= 100 (chains.count gives 10 chains"}},
		{"typo in an error class", target + "objectives:\n  error_rate: {max: 1%, classes: [http_529, http_5OO]}\n",
			[]string{`line 3: objectives.error_rate.classes[1]: unknown error class "http_5OO" (want http_<status> such as http_529`}},
		{"task tail 100%", target + "chains:\n  task: {budget: 5s, tail_tasks: 100%}\n", []string{"line 3: chains.task.tail_tasks: 100% is outside (0%, 100%)"}},
		{"alias", target + "x: &b 1s\nobjectives:\n  ttft: {p50: *b}\n", []string{`line 2: x: unknown key "x"`, "line 4: objectives.ttft.p50: want a duration such as 250ms, not an alias (*b); aliases are not supported"}},
		{"alias value", target + "objectives:\n  ttft: &m {p50: 1s}\n  total: *m\n", []string{"line 4: objectives.total: want a map, not an alias (*m); aliases are not supported"}},
		{"yaml syntax", target + "objectives: {ttft: [\n", []string{"line 2: yaml: did not find expected node content"}},
		{"two documents", target + "objectives: {error_rate: 1%}\n---\nname: x\n", []string{"line 3: more than one YAML document"}},
		{"control character", target + "name: \"a\x01\"\nobjectives: {error_rate: 1%}\n", []string{"line 2: yaml: control character U+0001"}},
		{"invalid utf-8", target + "objectives: {error_rate: 1%}\nname: \xff\n", []string{"line 3: yaml: invalid UTF-8"}},
		{"chains protocol", target + "chains:\n  protocol: grpc\n  error_rate: 5%\n", []string{`line 3: chains.protocol: "grpc" is not a protocol: want chat, responses, messages, gemini or bedrock`}},
		{"chains tool key", target + "chains:\n  tool: {latency: 200ms, name: grep}\n  error_rate: 5%\n", []string{`line 3: chains.tool.name: unknown key "name"`}},
		{"chains tool without latency", target + "chains:\n  tool: {}\n  error_rate: 5%\n", []string{"line 3: chains.tool: missing latency (want {latency: 200ms})"}},
		{"chains tool latency bare", target + "chains:\n  tool: {latency: 200}\n  error_rate: 5%\n", []string{"line 3: chains.tool.latency: 200 is not a duration"}},
		{"tools take the task's budget", target + "chains:\n  calls: 5\n  tool: {latency: 1s}\n  task: {budget: 4s, tail_tasks: 5%}\n",
			[]string{"line 5: chains.task: budget 4s leaves the calls no time: the tool steps take 4s (4 of 1s)"}},
		{"chains protocol against an endpoint's", "target: {endpoint: {protocol: responses}}\nchains:\n  protocol: messages\n  error_rate: 5%\n",
			[]string{"line 2: chains.protocol: messages, but the chains' endpoint target speaks responses (set protocol in the endpoint)"}},
		{"several errors, each with its line", target + "objectives:\n  ttft: {p99: fast}\n  error_rate: 2\n",
			[]string{`line 3: objectives.ttft.p99: "fast" is not a duration`, "line 4: objectives.error_rate: 2 is not a percentage"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := slospec.ParseSpec([]byte(tc.spec))
			if err == nil {
				t.Fatalf("accepted:\n%s\nas %+v", tc.spec, s)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Errorf("%d errors, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for i, l := range lines {
				if !specErrPrefix.MatchString(l) {
					t.Errorf("error line %q does not start with %q", l, specErrPrefix)
				}
				if i < len(tc.want) && !strings.HasPrefix(l, "slospec: "+tc.want[i]) {
					t.Errorf("error\n got %s\nwant slospec: %s...", l, tc.want[i])
				}
			}
		})
	}
}

func TestParseSpecAccepts(t *testing.T) {
	const target = "target: {preset: mistral-3-14b}\n"
	for _, tc := range []struct {
		name, spec string
		check      func(t *testing.T, s slospec.Spec)
	}{
		{"endpoint with defaults", "target: {endpoint: {}}\nobjectives: {error_rate: 0%}\n", func(t *testing.T, s slospec.Spec) {
			if s.Target.Endpoint == nil {
				t.Fatal("no endpoint")
			}
			base, key, model := s.Target.Endpoint.Vars()
			if base != latencytest.EnvBaseURL || key != latencytest.EnvAPIKey || model != latencytest.EnvModel {
				t.Errorf("vars %s %s %s", base, key, model)
			}
		}},
		{"endpoint written empty", "target:\n  endpoint:\nobjectives: {error_rate: 0%}\n", func(t *testing.T, s slospec.Spec) {
			if s.Target.Endpoint == nil {
				t.Error("no endpoint")
			}
		}},
		{"one level as a number", target + "load: {concurrency: 8}\nobjectives: {error_rate: 1%}\n", func(t *testing.T, s slospec.Spec) {
			if got := s.Load.Levels(); !reflect.DeepEqual(got, []int{8}) {
				t.Errorf("levels %v", got)
			}
		}},
		{"default levels", target + "objectives: {error_rate: 1%}\n", func(t *testing.T, s slospec.Spec) {
			if got := s.Load.Levels(); !reflect.DeepEqual(got, defaults.Levels()) {
				t.Errorf("levels %v", got)
			}
		}},
		{"p99 with allow_small_sample", target + "objectives:\n  ttft: {p99: 1s, allow_small_sample: true}\n", func(t *testing.T, s slospec.Spec) {
			if len(s.Objectives) != 1 || !s.Objectives[0].AllowSmallSample {
				t.Errorf("objectives %+v", s.Objectives)
			}
		}},
		{"p99 from 50 requests repeated twice", target + "load: {requests: 50, repeat: 2}\nobjectives:\n  ttft: {p99: 1s}\n", nil},
		{"demonstrate at 299", target + "load: {requests: 299}\nobjectives:\n  ttft: {p99: 1s, demonstrate: 95%}\n", nil},
		{"itl p99.9 is pooled over tokens", target + "objectives:\n  itl: {p99.9: 100ms}\n", nil},
		{"error rate 0.5%", target + "objectives: {error_rate: 0.5%}\n", func(t *testing.T, s slospec.Spec) {
			if s.Objectives[0].Limit != 0.005 {
				t.Errorf("limit %v", s.Objectives[0].Limit)
			}
		}},
		{"chains only", target + "chains:\n  total: {p50: 30s}\n", func(t *testing.T, s slospec.Spec) {
			if len(s.Objectives) != 0 || s.Chains == nil || len(s.Chains.Objectives) != 1 {
				t.Errorf("spec %+v", s)
			}
		}},
		{"comments and quoted values", "# a spec\nname: \"x\" # named\ntarget: {preset: 'mistral-3-14b'}\nobjectives: {error_rate: \"1%\", total: {p50: \"2s\"}}\n", nil},
		{"document marker", "---\n" + target + "objectives: {error_rate: 1%}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := slospec.ParseSpec([]byte(tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

// The quantile keys read as exact fractions.
func TestSpecQuantileKeys(t *testing.T) {
	for key, q := range map[string]float64{"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99, "p99.9": 0.999, "p99.99": 0.9999,
		"q0.995": 0.995, "q.5": 0.5, "p0.1": 0.001} {
		spec := fmt.Sprintf("target: {preset: mistral-3-14b}\nobjectives:\n  ttft: {%s: 1s, allow_small_sample: true}\n", key)
		s, err := slospec.ParseSpec([]byte(spec))
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		if got := s.Objectives[0].Q; got != q {
			t.Errorf("%s read as %v, want %v", key, got, q)
		}
	}
}

func TestLoadSpecResolvesProfile(t *testing.T) {
	s, err := slospec.LoadSpec("testdata/specs/passing.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("testdata", "specs", "fixed.profile.yaml"); s.Target.Profile != want {
		t.Errorf("profile %q, want %q", s.Target.Profile, want)
	}
	if s.Path != "testdata/specs/passing.yaml" || s.Name != "fixed-passing" {
		t.Errorf("path %q name %q", s.Path, s.Name)
	}
	prof, err := s.Target.FakeProfile()
	if err != nil {
		t.Fatal(err)
	}
	if prof.Model != "fixed-model" || prof.Seed != 1 {
		t.Errorf("profile %+v", prof)
	}

	// From another directory, and a seed that overrides the profile's.
	dir := t.TempDir()
	abs, err := filepath.Abs("testdata/specs/fixed.profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "profiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "profiles", "p.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "my-spec.yaml")
	if err := os.WriteFile(spec, []byte("target:\n  profile: profiles/p.yaml\n  seed: 42\nobjectives: {error_rate: 1%}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = slospec.LoadSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	if s.Target.Profile != filepath.Join(dir, "profiles", "p.yaml") || s.Name != "my-spec" {
		t.Errorf("profile %q name %q", s.Target.Profile, s.Name)
	}
	if prof, err := s.Target.FakeProfile(); err != nil || prof.Seed != 42 {
		t.Errorf("seed %d, err %v", prof.Seed, err)
	}

	// A missing or broken profile is an error at the profile's line.
	for _, tc := range []struct{ body, want string }{
		{"name: x\ntarget:\n  profile: nope.yaml\nobjectives: {error_rate: 1%}\n", "slospec: line 3: target.profile: fakeprovider: open "},
		{"target: {preset: mistral-3-14b}\nobjectives: {error_rate: 1%}\nchains:\n  target: {profile: bad.yaml}\n  error_rate: 1%\n",
			"slospec: line 4: chains.target.profile: fakeprovider: profile: line 1: "},
	} {
		if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("ttft: -5s\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(spec, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := slospec.LoadSpec(spec)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.HasSuffix(err.Error(), "(in "+spec+")") {
			t.Errorf("error %v\nwant %s... (in %s)", err, tc.want, spec)
		}
	}
	if _, err := slospec.LoadSpec(filepath.Join(dir, "absent.yaml")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent spec: %v", err)
	}
}

// A spec built in Go judges the same as the YAML; kinds used against the
// wrong result never pass.
func TestSpecObjectiveKinds(t *testing.T) {
	r := &latencytest.Result{Records: []latencytest.Record{{ID: "a", TTFT: time.Second, Total: 2 * time.Second}, {ID: "b", TTFT: time.Second, Total: 2 * time.Second}}}
	o := slospec.Objective{Key: "chain_total_p50", Kind: "chain_total", Q: 0.5, Budget: time.Hour}
	if rep := sloassert.Evaluate(r, o.Objective()); rep.OK() {
		t.Errorf("a chain objective passed on a result:\n%s", rep)
	}
	o = slospec.Objective{Key: "ttft_p50", Kind: "quantile", Metric: sloassert.TTFT, Q: 0.5, Budget: time.Hour}
	if rep := sloassert.Evaluate(&latencytest.ChainResult{Chains: []latencytest.ChainRun{{ID: "c", Total: time.Second}}}, o.ChainObjective()); rep.OK() {
		t.Errorf("a result objective passed on chains:\n%s", rep)
	}
	if rep := sloassert.Evaluate(r, o.Objective()); !rep.OK() {
		t.Errorf("ttft p50 1s within an hour failed:\n%s", rep)
	}
	o.Budget = time.Second - 1
	if rep := sloassert.Evaluate(r, o.Objective()); rep.OK() {
		t.Errorf("ttft p50 1s within 1s-1ns passed:\n%s", rep)
	}
	bad := slospec.Objective{Key: "task", Kind: "task"}
	if rep := sloassert.Evaluate(&latencytest.ChainResult{Chains: []latencytest.ChainRun{{ID: "c", Total: time.Second}}}, bad.ChainObjective()); rep.OK() {
		t.Errorf("a task with no calls passed:\n%s", rep)
	}
	bad.Kind = "task_per_call"
	if rep := sloassert.Evaluate(r, bad.Objective()); rep.OK() {
		t.Errorf("a per-call task with no calls passed:\n%s", rep)
	}
}

// Every error names its line and key and says what to write instead.
func ExampleParseSpec() {
	_, err := slospec.ParseSpec([]byte(`target: {preset: mistral-3-14b}
objectives:
  ttft: {p99: fast, p150: 2s}
  error_rate: 1
`))
	fmt.Println(err)
	// Output:
	// slospec: line 3: objectives.ttft.p99: "fast" is not a duration (write a Go duration such as 250ms or 1.5s)
	// slospec: line 3: objectives.ttft.p150: quantile p150 is outside p0-p100 (write a percentile strictly between 0 and 100, such as p99 or p99.9)
	// slospec: line 4: objectives.error_rate: 1 is not a percentage: percentages carry % (write 1%)
}

// warmup: 0 in a spec means no warm-up; leaving it out keeps the default.
func TestSpecWarmup(t *testing.T) {
	for _, tc := range []struct {
		load     string
		warmup   int
		noWarmup bool
	}{
		{"{requests: 100}", 0, false},
		{"{requests: 100, warmup: 0}", 0, true},
		{"{requests: 100, warmup: 5}", 5, false},
	} {
		s, err := slospec.ParseSpec([]byte("target: {preset: mistral-3-14b}\nload: " + tc.load + "\nobjectives: {error_rate: 1%}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if b := s.Load.Batch; b.Warmup != tc.warmup || b.NoWarmup != tc.noWarmup {
			t.Errorf("%s: warmup %d, no warmup %v", tc.load, b.Warmup, b.NoWarmup)
		}
	}
}

// A chain section's tool step sets Chain.Tool and takes the tool steps'
// time out of the task's budget; protocol is kept.
func TestParseSpecChainTool(t *testing.T) {
	s, err := slospec.ParseSpec([]byte("target: {preset: mistral-3-14b}\nchains:\n  calls: 5\n  protocol: responses\n  tool: {latency: 200ms}\n  task: {budget: 5s, tail_tasks: 5%}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Chains
	if c.Protocol != slospec.ProtocolResponses || c.ToolLatency != 200*time.Millisecond || c.Chain.Tool == nil {
		t.Fatalf("chains: protocol %q, tool latency %v, tool set %v", c.Protocol, c.ToolLatency, c.Chain.Tool != nil)
	}
	task := c.Objectives[0].Task
	if _, per := task.PerCall(); task.ToolTime != 800*time.Millisecond || per != 840*time.Millisecond {
		t.Errorf("task %+v: per call %v, want (5s - 4×200ms)/5 = 840ms", task, per)
	}
}

// A chain section's tool latency may be any fakeprovider distribution,
// drawn per (seed, chain, call): the task sets aside its mean per step,
// and a bad distribution is an error on its line.
func TestParseSpecChainToolDistribution(t *testing.T) {
	spec := "target: {preset: mistral-3-14b}\nchains:\n  calls: 5\n  tool:\n    latency: {dist: lognormal, median: 200ms, p99: 2s}\n    seed: 7\n  task: {budget: 5s, tail_tasks: 5%}\n"
	s, err := slospec.ParseSpec([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Chains
	want := fakeprovider.ToolSteps{Latency: fakeprovider.LogNormal(200*time.Millisecond, 2*time.Second), Seed: 7}
	if c.Tool.Seed != 7 || c.Tool.Latency.String() != want.Latency.String() || c.ToolLatency != want.Expected() || c.Chain.Tool == nil {
		t.Fatalf("chains: tool %+v, tool latency %v (want the mean %v)", c.Tool, c.ToolLatency, want.Expected())
	}
	if task := c.Objectives[0].Task; task.ToolTime != 4*want.Expected() {
		t.Errorf("task tool time %v, want 4 × %v", task.ToolTime, want.Expected())
	}
	synctest.Test(t, func(t *testing.T) {
		for chain := range 3 {
			t0 := time.Now()
			if err := c.Chain.Tool(context.Background(), chain, 1); err != nil || time.Since(t0) != want.Draw(chain, 1) {
				t.Errorf("chain %d: waited %v (%v), want the draw %v", chain, time.Since(t0), err, want.Draw(chain, 1))
			}
		}
	})
	for _, tc := range []struct{ yaml, msg string }{
		{"  tool: {latency: {dist: lognormal, median: 2s, p99: 1s}}\n", "line 3: chains.tool.latency: lognormal p99 1s is below the median 2s"},
		{"  tool: {latency: {dist: cauchy}}\n", "line 3: chains.tool.latency:"},
		{"  tool: {latency: {dist: lognormal, median: 2s, p99: 3s}, seed: -1}\n", "line 3: chains.tool.seed: -1 is outside"},
		{"  tool: {seed: 3}\n", "line 3: chains.tool: missing latency"},
	} {
		_, err := slospec.ParseSpec([]byte("target: {preset: mistral-3-14b}\nchains:\n" + tc.yaml + "  error_rate: 5%\n"))
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.msg)
		}
	}
}
