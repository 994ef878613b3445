package slospec

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/rerun"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/protocol"
	"github.com/tailguard/tailguard/servermetrics"
	"github.com/tailguard/tailguard/sloassert"

	"github.com/tailguard/tailguard/internal/defaults"
)

// Spec is an SLO spec: what to measure (a target and a load, and agent
// chains) and what the measurements must meet (objectives). ParseSpec and
// LoadSpec read it from YAML; RunFile (or Spec.Run) runs it under go test.
//
// A full spec, every key shown (only target and at least one objective are
// required; a commented key is an alternative):
//
//	name: maverick-chat             # names the reports; default: the file name
//	target:                         # exactly one of preset, profile, endpoint, records
//	  preset: llama-4-maverick      # a fakeprovider preset (virtual time)
//	  # profile: slow.yaml          # a fakeprovider profile file, relative to the spec
//	  # endpoint:                   # an OpenAI-compatible endpoint (real time);
//	  #   base_url_env: OPENAI_BASE_URL   # the environment variables that hold
//	  #   api_key_env: OPENAI_API_KEY     # its URL, key and model (these are
//	  #   model_env: OPENAI_MODEL         # the defaults: "endpoint: {}")
//	  #   protocol: chat            # chat (default), responses, messages (Anthropic;
//	  #                             #   its defaults are ANTHROPIC_BASE_URL, _API_KEY, _MODEL)
//	  #                             #   or gemini (GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, GEMINI_MODEL)
//	  #   stream: true              # default; false asks for whole answers (WithoutStreaming),
//	  #                             # timed by total only: token-clock objectives are refused
//	  # records: "shards/**/records*.jsonl"  # judge records already measured (see Records)
//	  seed: 3                       # fake targets only: overrides the profile's seed
//	load:                           # the batch run at each concurrency level
//	  warmup: 10                    # discarded by trace ID; default 10, 0 for none
//	  requests: 300                 # measured per level (× repeat); default 75
//	  concurrency: [1, 8]           # one subtest per level; default [1, 8, 50]
//	  max_tokens: 64                # caps every request; default: the mix's caps
//	  mix:                          # default: 70% short, 20% medium, 10% long, seed 7
//	    seed: 7
//	    classes:
//	      - {name: short, weight: 70%, prompt_tokens: 200, max_tokens: 100}
//	      - {name: long, weight: 30%, prompt_tokens: 6000, max_tokens: 600}
//	  # prompt: "Say hello."        # a fixed prompt instead of the mix (not both)
//	  no_nonce: false               # true measures the provider's cache on purpose
//	  temperature: 0                # default: not sent (provider default)
//	  interval: 0s                  # pacing of request starts; default 0
//	  first_token_timeout: 5s       # per request; default none
//	  total_timeout: 60s            # per request; default none
//	  hard_cap: 150s                # per request; default 150s
//	  repeat: 1                     # runs per level, for the noise floor; default 1
//	  location: "CI runner, eu-west-1"   # default $TAILGUARD_LOCATION
//	  cancel: {after_tokens: 20, share: 10%, seed: 1}   # the client cancels on purpose
//	                                # (latencytest.Cancel): after: a time, after_tokens:
//	                                # token events, share of requests (default all); class
//	                                # cancelled, in no error rate; also in chains, conversation
//	server_metrics:                 # the server's own Prometheus metrics, scraped before,
//	  url: http://127.0.0.1:8000/metrics  # during and after each level of the load (a
//	  names: auto                   # fake target answers in memory, any url); vllm,
//	  every: 10s                    # sglang, tgi or auto; gauges every 10s (default);
//	  timeout: 5s                   # per scrape (default 5s). A failed scrape is reported,
//	                                # never fatal; a failed latency objective says how the
//	                                # server's queue, prefill and decode split its quantile
//	objectives:                     # judged at every concurrency level
//	  ttft:                         # also first_answer, total, itl, max_gap
//	    p50: 400ms                  # quantile keys: p50, p90, p95, p99, p99.9, q0.995 ...
//	    p99: 1.5s
//	    cv: 100%                    # CV of the metric, in percent
//	    tail_ratio: 5               # p99/p50, a plain number
//	    allow_small_sample: false   # judge quantiles below n >= ceil(1/(1-q))
//	    # demonstrate: 95%          # quantiles pass only if the upper bound does
//	    # refute: 95%               # quantiles fail only if the lower bound does
//	  total: {p95: 8s}
//	  max_gap: {max: 30s}           # max: the longest stall (max_gap only)
//	  tokens_per_second: {p5: 10}   # decode speed floor at a low quantile, tok/s
//	  error_rate: 1%                # or {max: 1%, classes: [http_529, http_429]}
//	  cache_miss: true              # no cached prompt tokens reported
//	  cold_start: {max: 10s, after_idle: 2s}   # or cold_start: 10s (after_idle default 1m)
//	  server_queue: {p99: 500ms}    # the server's queue time, from its own histogram
//	                                # (needs server_metrics; known to its bucket)
//	  # cv: {total: 50%}            # the same objectives, grouped by kind
//	  # tail_ratio: {total: 3}
//	  # turn: {10: {ttft: {p95: 2s}}}   # with a conversation (or its records): its
//	  #                             # turn 10 alone (sloassert.Turn)
//	  # session: {p95: 60s, error_rate: 5%}   # with a conversation: its whole
//	  #                             # sessions, think times included (session.go)
//	chains:                         # agent chains, one "chains" subtest
//	  count: 30                     # default 30
//	  calls: 10                     # per chain; default 10
//	  concurrency: 1                # chains at once; default 1
//	  max_tokens: 64                # per call; default 64
//	  prompt: "Plan a migration."   # default: a planning task
//	  follow_up: Continue.          # default "Continue."
//	  no_nonce: false
//	  temperature: 0
//	  first_token_timeout: 5s
//	  total_timeout: 60s
//	  hard_cap: 150s
//	  location: "CI runner, eu-west-1"
//	  target: {preset: llama-4-maverick-chain}   # default: the spec's target
//	  total: {p50: 30s, p95: 60s}   # quantiles of measured chain totals (+ options as above)
//	  error_rate: 5%                # chains with a failed call
//	  task: {budget: 5s, tail_tasks: 5%}   # a task target, see below
//	  protocol: chat                # chat (default), responses, messages or gemini: what the
//	                                # chains speak to a fake target (an endpoint its own)
//	  tool: {latency: 200ms}        # a tool step after each call but the last: in the
//	                                # chain totals, its mean taken out of the task's budget;
//	                                # or {latency: {dist: lognormal, median: 200ms, p99: 2s},
//	                                # seed: 7}: any fakeprovider distribution, drawn per
//	                                # chain and call from the seed (default 0); without
//	                                # it, a fake target's profile tool_latency, if any
//	agent:                          # tasks that are graphs of steps (see Agent):
//	  steps: [{name: plan}, {name: search, after: [plan], fan_out: 3}]
//	  task: {budget: 20s, tail_tasks: 5%}   # the task totals' p95 within 20 s
//	# conversation:                 # multi-turn sessions (agent.Conversation) in place of
//	#                               # load: the objectives judge their turns
//	#   sessions: 10                # default 10
//	#   turns: 10                   # per session; default 10
//	#   concurrency: 1              # sessions at once; default 1
//	#   think_time: {median: 2s, p99: 20s}   # or a fixed 2s; default none
//	#   open_tokens: 200            # the opening message; later ones turn_tokens: 50
//	#   max_tokens: 64              # and temperature, timeouts, no_nonce, cancel, seed
//
// # Units
//
// Durations are Go duration strings ("250ms", "1.5s"); a bare number is an
// error. Percentages carry %: "1%"; a bare 1 or 0.01 is an error that says
// what to write, so a fraction is never read as a percentage or the other
// way round. tail_ratio, tokens_per_second floors and temperature are plain
// numbers. Quantile keys are p followed by a percentile in (0,100) (p99.9)
// or q followed by a fraction in (0,1) (q0.995).
//
// # Strictness
//
// Unknown or repeated keys, a value of the wrong kind, a negative duration,
// a quantile out of range, a target with no or two kinds, a quantile the
// planned sample cannot support (p99 from 75 requests, unless
// allow_small_sample), a load or chains section nothing judges, and a spec
// with no objective at all are errors. Every error reads
// "slospec: line N: key: what is wrong".
//
// # Records
//
// target: {records: "<glob>"} judges records that are already measured,
// such as the shards of a distributed run (latencytest.Shard), instead of
// running a load: the files the glob matches (relative to the spec's
// directory; "**" matches any number of directories) are joined with
// records.MergeLevels, exactly, from every raw value, and each load
// level is judged on the merged records of that level (Record.Concurrency)
// with the spec's objectives, one subtest per level ("c8") as a live
// target has. The levels are load.concurrency when given (then each must
// be in the records, and records at other levels are logged and not
// judged), else every level the records hold; records that carry no
// level (an open loop's) form one level named "all". With a records target
// the load is not run, so load may hold concurrency only, and the planned
// sample is not checked at parse time: sloassert checks the merged sample
// when it judges (p99 needs n >= 100). Overlapping trace IDs across files,
// a glob that matches nothing, and unreadable files fail the spec; run
// windows that do not overlap are a warning in the disclosure. Chains
// need a live target (the records hold each call, not the measured chain
// totals): chains with a records target are an error.
//
// # Tasks
//
// task: {budget: B, tail_tasks: T} under chains is a task of `calls` calls
// that must finish within B for all but the fraction T of tasks. It is
// judged on measured chain totals only: the "task" objective is the
// (1-T)-quantile of chain totals within B. Its row also shows the per-call
// target the task implies (Task.PerCall) as a planning figure that does
// not gate: that target is sufficient, not necessary, and a provider whose
// every task met B can miss it.
type Spec struct {
	// Name names the reports. Default (LoadSpec): the file name.
	Name string
	// Path is the file LoadSpec read; "" from ParseSpec.
	Path string
	// Target is what the load runs against.
	Target Target
	// Load is the batch run at each level. It runs when Objectives is not
	// empty.
	Load Load
	// Objectives judge each level's result, in the order written.
	Objectives []Objective
	// Chains, when set, runs agent chains.
	Chains *Chains
	// Agent, when set, runs tasks that are graphs of steps.
	Agent *Agent
	// Conversation, when set, runs multi-turn sessions in place of the
	// load, and Objectives judge their turns (turn: judges one turn
	// index). See conversation.go.
	Conversation *agent.Conversation
	// ServerMetrics is the server's metrics endpoint (server_metrics:),
	// scraped around each level of the load and around the chains
	// (latencytest.Batch's and Chain's ServerMetrics); no URL: none.
	ServerMetrics servermetrics.Source
}

// Load is the batch a spec runs at each concurrency level.
type Load struct {
	// Batch is the batch; its Concurrency and Label are set per level.
	Batch latencytest.Batch
	// Concurrency lists the levels, in order. Default
	// one user, a few, a crowd (1, 8, 50).
	Concurrency []int
}

// Levels returns the concurrency levels the load runs at, defaults applied.
func (l Load) Levels() []int {
	if len(l.Concurrency) == 0 {
		return defaults.Levels()
	}
	return slices.Clone(l.Concurrency)
}

// measured is the number of measured requests per level.
func (l Load) measured() int {
	n, r := l.Batch.Requests, l.Batch.Repeat
	if n == 0 {
		n = defaults.Requests
	}
	return n * max(r, 1)
}

// Chains is the agent-chain part of a spec.
type Chains struct {
	// Chain is the chain run.
	Chain latencytest.Chain
	// Target, when set, replaces the spec's target for the chains (a
	// "-chain" preset, say).
	Target *Target
	// Objectives judge the chains, in the order written.
	Objectives []Objective
	// Protocol is the protocol the chains speak to a fake target
	// (a built-in protocol's name, see protocol.Names; "" is chat).
	// An endpoint target speaks its own protocol: a different one here is
	// an error.
	Protocol protocol.Name
	// ToolLatency is the mean wait of the tool step run after each call but
	// the last (Chain.Tool waits as Tool says), 0 for none. It counts in
	// the chain totals, and the task's tool time is (calls-1)·ToolLatency.
	// Without a tool step in the spec, chains run against a fake whose
	// profile states tool_latency take the profile's (Fake.Tool), and the
	// task sets its mean aside alike.
	ToolLatency time.Duration
	// Tool is the tool step's wait, a distribution drawn per (seed, chain,
	// call); its Latency is unset without a tool step.
	Tool fakeprovider.ToolSteps
}

// ParseSpec decodes a YAML spec strictly (see Spec for the keys and
// rules). Every error, one a line when there are several, reads
// "slospec: line N: key: what is wrong". A profile path is kept as
// written and not read; LoadSpec resolves and checks it.
func ParseSpec(data []byte) (Spec, error) {
	p := &specParser{}
	s := p.spec(data)
	if err := p.err(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// LoadSpec reads and parses a spec file: a relative target.profile is
// resolved against the spec's directory, and the profile is loaded and
// checked (an error gives the line of the profile key). Name defaults to
// the file name without its extension.
func LoadSpec(path string) (Spec, error) { return loadSpec(path, false) }

// loadSpec is LoadSpec; records says the spec judges records given apart
// from it (JudgeFile).
func loadSpec(path string, records bool) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("slospec: %w", err)
	}
	p := &specParser{records: records}
	s := p.spec(data)
	if p.err() == nil {
		dir := filepath.Dir(path)
		if s.Target.Records != "" && !filepath.IsAbs(s.Target.Records) {
			s.Target.Records = filepath.Join(dir, s.Target.Records)
		}
		p.resolve(&s.Target, dir)
		if s.Chains != nil && s.Chains.Target != nil {
			p.resolve(s.Chains.Target, dir)
		}
	}
	if err := p.err(); err != nil {
		return Spec{}, fmt.Errorf("%w (in %s)", err, path)
	}
	s.Path = path
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return s, nil
}

// Spec YAML limits: beyond them a value is a typo, not a plan.
const (
	specMaxRequests     = 1_000_000
	specMaxLevel        = 100_000
	specMaxRepeat       = 100
	specMaxChains       = 100_000
	specMaxCalls        = 10_000
	specMaxTokens       = 1 << 20
	maxSpecErrors       = 20
	specMaxCVPercent    = 100_000
	specMaxPromptTokens = 1 << 20
)

var (
	pKey = regexp.MustCompile(`^p([0-9]+(?:\.[0-9]+)?)$`)
	qKey = regexp.MustCompile(`^q([0-9]*\.?[0-9]+)$`)
)

// Run runs the spec under t:
//
//   - with a records target, no load: the records are merged by level
//     (records.MergeLevels), and each level is judged as below, one
//     subtest per level and per objective (see Spec's Records);
//   - the load, when there are objectives: a latencytest.Sweep over the
//     levels, run with Sweep.Measure: one subtest per concurrency level
//     ("c8") that measures the batch as Batch.Measure does (records and
//     summary written to the subtest's artifact directory, kept with go
//     test -artifacts), then one subtest per objective ("c8/ttft_p99")
//     that judges it with Check, so each objective passes or fails on its
//     own with the whole failure screen; the combined report is logged;
//   - the chains, when set: a "chains" subtest, measured with
//     Chain.Measure, then a subtest per chain objective, judged with
//     Check (task_per_call with Check, on the chains' calls).
//
// A fake target (preset or profile) runs in virtual time: each batch, and
// the chains, inside its own synctest bubble with a fresh fake (so every
// level starts from the same state), and the subtests are created outside
// the bubbles. An endpoint target runs in real time, within the test's
// deadline (Measure stops starting requests before go test -timeout; a
// level that ends early fails the spec, and the levels after it do not
// run). When an endpoint's environment variables are unset, Run skips the
// test and names them.
func (s Spec) Run(t *testing.T) {
	t.Helper()
	title := s.title()
	if len(s.Objectives) == 0 && (s.Chains == nil || len(s.Chains.Objectives) == 0) && (s.Agent == nil || len(s.Agent.Objectives) == 0) {
		t.Fatalf("slospec: spec %s: no objectives: a spec with no objective never passes", title)
	}
	main, chains, skip, err := s.targets()
	if err != nil {
		t.Fatalf("slospec: spec %s: %v", title, err)
	}
	if skip != "" {
		t.Skipf("slospec: spec %s: %s", title, skip)
	}
	var verdicts []string
	switch {
	case len(s.Objectives) > 0 && main.records != "":
		verdicts = s.runRecords(t, title, main)
	case len(s.Objectives) > 0 && s.Conversation != nil:
		verdicts = append(verdicts, runConversation(s, t, title, main))
	case len(s.Objectives) > 0:
		verdicts = s.runLoad(t, title, main)
	}
	if s.Chains != nil && len(s.Chains.Objectives) > 0 && chains.records != "" {
		t.Fatalf("slospec: spec %s: chains need a live target (preset, profile or endpoint): records hold each call, not the measured chain totals", title)
	}
	if s.Chains != nil && len(s.Chains.Objectives) > 0 {
		verdicts = append(verdicts, s.runChains(t, title, chains))
	}
	if s.Agent != nil && len(s.Agent.Objectives) > 0 {
		rt := main
		if s.Agent.Target != nil {
			if rt, skip, err = s.Agent.Target.resolve(); err != nil || skip != "" {
				t.Fatalf("slospec: spec %s: agent target: %v%s", title, err, skip)
			}
		}
		verdicts = append(verdicts, runAgent(s, t, title, rt))
	}
	t.Logf("spec %s (%s): %s", title, main.desc, strings.Join(verdicts, "; "))
}

func (s Spec) title() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Path != "":
		return s.Path
	}
	return "(unnamed)"
}

// targets resolves the load's and the chains' targets; skip says why the
// spec cannot run here (endpoint variables unset).
func (s Spec) targets() (main, chains runTarget, skip string, err error) {
	main, skip, err = s.Target.resolve()
	if err != nil || skip != "" {
		return
	}
	chains = main
	if s.Chains != nil && s.Chains.Target != nil {
		chains, skip, err = s.Chains.Target.resolve()
	}
	return
}

// runLoad runs the load level by level, as a latencytest.Sweep whose
// levels each measure the target (rt.measure) and are judged in their
// subtest; it returns a verdict per level.
func (s Spec) runLoad(t *testing.T, title string, rt runTarget) []string {
	t.Helper()
	objs := make([]sloassert.Objective, len(s.Objectives))
	for i, o := range s.Objectives {
		objs[i] = o.Objective()
	}
	levels := s.Load.Levels()
	var verdicts []string
	sw := latencytest.Sweep{Batch: s.Load.Batch, Levels: levels}
	sw.Label = ""
	withServerMetrics(&rt, &sw.Batch.ServerMetrics, s.ServerMetrics) // server_metrics, if any
	sw.EachLevel = func(tb testing.TB, level int, measure func(testing.TB, latencytest.Provider) *latencytest.Result) {
		t := tb.(*testing.T) // Sweep.Measure passes a *testing.T its own
		name := fmt.Sprintf("c%d", level)
		var res *latencytest.Result
		rt.measure(t, func(t *testing.T, p latencytest.Provider) { res = measure(t, p) })
		if res == nil {
			t.Fatalf("slospec: spec %s: %s: the batch did not run", title, name)
		}
		verdicts = append(verdicts, s.judgeLevel(t, title, rt, name, res, levels, objs))
	}
	sr := sw.Measure(t, nil)
	ran := len(sr.Levels)
	switch {
	case ran < len(levels) && (ran == 0 || !sr.Results[ran-1].Partial):
		verdicts = append(verdicts, fmt.Sprintf("c%d did not run", levels[ran]))
	case ran > 0 && sr.Results[ran-1].Partial:
		name, res := fmt.Sprintf("c%d", sr.Levels[ran-1]), sr.Results[ran-1]
		if rest := levels[ran:]; len(rest) > 0 {
			t.Errorf("slospec: spec %s: %s ended early (%s); levels %v not run", title, name, res.PartialReason, rest)
		} else {
			t.Errorf("slospec: spec %s: %s ended early (%s)", title, name, res.PartialReason)
		}
	}
	return verdicts
}

// judgeLevel judges one level's result with every objective, one subtest
// each, and writes its report; it returns the level's verdict.
func (s Spec) judgeLevel(t *testing.T, title string, rt runTarget, name string, res *latencytest.Result, levels []int, objs []sloassert.Objective) string {
	t.Helper()
	discloseLevels(&res.Disclosure, levels)
	rep := sloassert.Evaluate(res, objs...)
	rep.Title = title + " " + name
	rep.Replay = rerun.Replay(t, res.Start)
	if rep.Replay == "" && rt.provider != nil { // a real endpoint: replay against a profile fitted to its records
		rep.Replay = endpointReplay(t, res)
	}
	sloassert.WriteReport(t, res, rep) // charts, report.md, the job summary
	for j, o := range s.Objectives {
		t.Run(o.Key, func(t *testing.T) {
			checkRow(t, objectiveOrigin(title, rt, o), rep.Outcomes[j], rep.Title)
		})
	}
	finishLevel(t, rep)
	return levelVerdict(name, rep)
}

// runRecords judges merged records level by level (see Spec's Records);
// it returns a verdict per level.
func (s Spec) runRecords(t *testing.T, title string, rt runTarget) []string {
	t.Helper()
	byLevel, err := s.recordLevels(rt)
	if err != nil {
		t.Fatalf("slospec: spec %s: target records: %v", title, err)
	}
	objs := make([]sloassert.Objective, len(s.Objectives))
	for i, o := range s.Objectives {
		objs[i] = o.Objective()
	}
	have := slices.Sorted(maps.Keys(byLevel))
	levels := have
	if len(s.Load.Concurrency) > 0 {
		levels = slices.Clone(s.Load.Concurrency)
		var extra []int
		for _, l := range have {
			if !slices.Contains(levels, l) {
				extra = append(extra, l)
			}
		}
		if len(extra) > 0 {
			t.Logf("slospec: spec %s: the records also hold concurrency %v, not judged (not in load.concurrency %v)", title, extra, levels)
		}
	}
	var verdicts []string
	for _, level := range levels {
		name := recordsLevel(level)
		res := byLevel[level]
		t.Run(name, func(t *testing.T) {
			if res == nil {
				t.Fatalf("slospec: spec %s: %s: no records at concurrency %d (the records hold %v)", title, name, level, have)
			}
			for _, w := range res.Disclosure.Warnings {
				t.Logf("slospec: spec %s: %s: WARNING: %s", title, name, w)
			}
			if res.Partial {
				t.Errorf("slospec: spec %s: %s: the records are partial (%s)", title, name, res.PartialReason)
			}
			verdicts = append(verdicts, s.judgeLevel(t, title, rt, name, res, levels, objs))
		})
		if res == nil {
			verdicts = append(verdicts, name+" has no records")
		}
	}
	return verdicts
}

// runChains runs the chains; it returns their verdict.
func (s Spec) runChains(t *testing.T, title string, rt runTarget) string {
	t.Helper()
	c := s.Chains.Chain
	out := "chains did not run"
	t.Run("chains", func(t *testing.T) {
		var cr *latencytest.ChainResult
		rt.protocol = s.Chains.Protocol
		objectives := slices.Clone(s.Chains.Objectives)
		rt.onFake = func(f *fakeprovider.Fake) {
			c.Queueing = f.QueueTime // the report's queueing split
			if lat := f.Profile().ToolLatency; c.Tool == nil && lat.IsSet() {
				// No tool step in the spec: the profile's, and the task
				// sets its mean aside as a tool: key would.
				c.Tool = f.Tool
				mean := fakeprovider.ToolSteps{Latency: lat, Seed: f.Profile().Seed}.Expected()
				for i, o := range objectives {
					if o.Kind == kindTask {
						objectives[i].Task.ToolTime = time.Duration(o.Task.Calls-1) * mean
					}
				}
			}
		}
		withServerMetrics(&rt, &c.ServerMetrics, s.ServerMetrics) // server_metrics, if any
		rt.measure(t, func(t *testing.T, p latencytest.Provider) { cr = c.Measure(t, p) })
		if cr == nil {
			t.Fatalf("slospec: spec %s: the chains did not run", title)
		}
		if cr.Partial {
			t.Errorf("slospec: spec %s: the chains ended early (%s)", title, cr.PartialReason)
		}
		calls := cr.Calls()
		var chainObjs []sloassert.Objective
		var callObjs []sloassert.Objective
		for _, o := range objectives {
			if o.IsChain() {
				chainObjs = append(chainObjs, o.ChainObjective())
			} else {
				callObjs = append(callObjs, o.Objective())
			}
		}
		chainRep := sloassert.Evaluate(cr, chainObjs...)
		chainRep.Title = title + " chains"
		callRep := sloassert.Evaluate(calls, callObjs...)
		callRep.Title = title + " chain calls"
		ci, ri := 0, 0
		for _, o := range objectives {
			out, judgedBy := sloassert.Outcome{}, chainRep.Title
			if o.IsChain() {
				out, ci = chainRep.Outcomes[ci], ci+1
			} else {
				out, ri, judgedBy = callRep.Outcomes[ri], ri+1, callRep.Title
			}
			t.Run(o.Key, func(t *testing.T) {
				checkRow(t, objectiveOrigin(title, rt, o), out, judgedBy)
			})
		}
		ok := true
		if len(chainObjs) > 0 {
			sloassert.WriteReport(t, cr, chainRep)
			ok = finishLevel(t, chainRep) && ok
		}
		if len(callObjs) > 0 {
			sloassert.WriteReport(t, calls, callRep)
			ok = finishLevel(t, callRep) && ok
		}
		out = "chains PASS"
		if !ok {
			out = "chains FAIL"
		}
	})
	return out
}

// recordLevels is levels for a spec: an objective on a clock the
// records' format does not measure is an error first.
func (s Spec) recordLevels(rt runTarget) (map[int]*latencytest.Result, error) {
	if rt.format != "" {
		if err := measurable(s, rt.format); err != nil {
			return nil, err
		}
	}
	return rt.levels()
}
