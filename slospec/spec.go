package slospec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
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
//	  #   protocol: chat            # chat (default), responses or messages (Anthropic;
//	  #                             #   its defaults are ANTHROPIC_BASE_URL, _API_KEY, _MODEL)
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
//	  # cv: {total: 50%}            # the same objectives, grouped by kind
//	  # tail_ratio: {total: 3}
//	chains:                         # agent chains, one "chains" subtest
//	  count: 30                     # default 30
//	  calls: 10                     # per chain; default 10
//	  concurrency: 1                # chains at once; default 1
//	  max_tokens: 64                # per call; default 64
//	  prompt: "Plan a migration."   # default latencytest.DefaultChainPrompt
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
//	  protocol: chat                # chat (default), responses or messages: what the
//	                                # chains speak to a fake target (an endpoint its own)
//	  tool: {latency: 200ms}        # a tool step after each call but the last: in the
//	                                # chain totals, its mean taken out of the task's budget;
//	                                # or {latency: {dist: lognormal, median: 200ms, p99: 2s},
//	                                # seed: 7}: any fakeprovider distribution, drawn per
//	                                # chain and call from the seed (default 0)
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
// latencytest.MergeLevels, exactly, from every raw value, and each load
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
}

// Target names what a spec measures: exactly one of a fake preset, a
// fake profile file, an endpoint (chat completions, Responses or
// Messages: see Endpoint), or records already measured.
type Target struct {
	// Preset names a fakeprovider preset (fakeprovider.Presets).
	Preset string
	// Profile is a fakeprovider profile file. ParseSpec keeps the path as
	// written (relative to the working directory); LoadSpec makes it
	// relative to the spec file's directory.
	Profile string
	// Endpoint reads an endpoint from the environment.
	Endpoint *Endpoint
	// Records is a glob of records files (records.jsonl as
	// latencytest's Measure writes them) to judge instead of running the
	// load (see Spec's Records). ParseSpec keeps it as written; LoadSpec
	// makes a relative one relative to the spec file's directory.
	Records string
	// Format is the format of the Records files: one of
	// latencytest.Formats ("aiperf", "vllm", ...), read with
	// latencytest.ImportLevels; "" reads this package's own records.
	Format string
	// Seed, when set, replaces a fake profile's seed.
	Seed *uint64

	profileLine int    // where the spec wrote profile, for LoadSpec's errors
	profileKey  string // "target.profile" or "chains.target.profile"
}

// Endpoint names the environment variables that hold an endpoint's
// base URL ("https://host/v1"), API key and model, and the protocol it
// speaks. Empty names take the protocol's defaults: latencytest.EnvBaseURL,
// EnvAPIKey and EnvModel for chat and responses, EnvAnthropicBaseURL,
// EnvAnthropicAPIKey and EnvAnthropicModel for messages. The base URL
// and model must be set and non-empty, the key must be set (it may be
// empty, for local servers): a spec run with any of them unset skips.
type Endpoint struct {
	BaseURLEnv string
	APIKeyEnv  string
	ModelEnv   string
	// Protocol is ProtocolChat (also for ""), ProtocolResponses or
	// ProtocolMessages: the provider is latencytest.OpenAI, Responses or
	// Anthropic (whose base URL is taken as AnthropicFromEnv takes it:
	// "/v1" is added unless the path ends in it).
	Protocol string
}

// The protocols an endpoint target speaks (Endpoint.Protocol).
const (
	ProtocolChat      = "chat"      // OpenAI chat completions
	ProtocolResponses = "responses" // OpenAI's Responses API
	ProtocolMessages  = "messages"  // Anthropic's Messages API
)

// Load is the batch a spec runs at each concurrency level.
type Load struct {
	// Batch is the batch; its Concurrency and Label are set per level.
	Batch latencytest.Batch
	// Concurrency lists the levels, in order. Default
	// latencytest.DefaultLevels (1, 8, 50).
	Concurrency []int
}

// Levels returns the concurrency levels the load runs at, defaults applied.
func (l Load) Levels() []int {
	if len(l.Concurrency) == 0 {
		return slices.Clone(latencytest.DefaultLevels)
	}
	return slices.Clone(l.Concurrency)
}

// measured is the number of measured requests per level.
func (l Load) measured() int {
	n, r := l.Batch.Requests, l.Batch.Repeat
	if n == 0 {
		n = latencytest.DefaultRequests
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
	// (ProtocolChat, ProtocolResponses or ProtocolMessages; "" is chat).
	// An endpoint target speaks its own protocol: a different one here is
	// an error.
	Protocol string
	// ToolLatency is the mean wait of the tool step run after each call but
	// the last (Chain.Tool waits as Tool says), 0 for none. It counts in
	// the chain totals, and the task's tool time is (calls-1)·ToolLatency.
	ToolLatency time.Duration
	// Tool is the tool step's wait, a distribution drawn per (seed, chain,
	// call); its Latency is unset without a tool step.
	Tool fakeprovider.ToolSteps
}

// ObjectiveKind says what an Objective judges.
type ObjectiveKind string

// The kinds of spec objectives. The first seven judge a Result (a level's
// batch); chain_total, chain_error_rate and task judge a ChainResult;
// task_per_call (which the parser no longer adds: see Spec's Tasks) judges
// the chains' calls as one Result when an Objective built in Go asks
// for it.
const (
	KindQuantile       ObjectiveKind = "quantile"          // Metric's Q-quantile <= Budget
	KindCV             ObjectiveKind = "cv"                // Metric's CV <= Limit percent
	KindTailRatio      ObjectiveKind = "tail_ratio"        // Metric's p99/p50 <= Limit
	KindErrorRate      ObjectiveKind = "error_rate"        // failed fraction <= Limit (Classes only, if any)
	KindDecodeRate     ObjectiveKind = "tokens_per_second" // decode speed's Q-quantile >= Limit tok/s
	KindCacheMiss      ObjectiveKind = "cache_miss"        // no cached prompt tokens
	KindMaxStall       ObjectiveKind = "max_stall"         // the longest sloassert.MaxGap <= Budget
	KindColdStart      ObjectiveKind = "cold_start"        // sloassert.MaxColdStart(Budget), AfterIdle when set
	KindChainTotal     ObjectiveKind = "chain_total"       // chain totals' Q-quantile <= Budget
	KindChainErrorRate ObjectiveKind = "chain_error_rate"  // chains with a failed call <= Limit
	KindTask           ObjectiveKind = "task"              // chain totals' (1-sloassert.Task.TailTasks)-quantile <= sloassert.Task.Budget
	KindTaskPerCall    ObjectiveKind = "task_per_call"     // sloassert.Task.PerCall on each call's total
)

// Objective is one objective of a spec, as written.
type Objective struct {
	// Key names the objective in the spec and names its subtest:
	// "ttft_p99", "error_rate", "chain_total_p95", "task".
	Key string
	// Line is the line of the spec that wrote it (0 when built in Go).
	Line int
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
	// latencytest.DefaultIdleGap).
	AfterIdle time.Duration
	// Task is the task target of the task kinds.
	Task sloassert.Task
	// AllowSmallSample, Demonstrate and Refute (a confidence fraction; 0:
	// off) are the options of quantile kinds.
	AllowSmallSample bool
	Demonstrate      float64
	Refute           float64
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
	switch o.Kind {
	case KindChainTotal, KindChainErrorRate, KindTask:
		return true
	}
	return false
}

// Objective returns the objective that judges a Result. For a chain kind
// (IsChain) it returns an objective that never passes and says why.
func (o Objective) Objective() sloassert.Objective {
	opts := o.options()
	switch o.Kind {
	case KindQuantile:
		return sloassert.Q(o.Metric, o.Q, o.Budget, opts...)
	case KindCV:
		return sloassert.MaxCV(o.Metric, o.Limit)
	case KindTailRatio:
		return sloassert.MaxTailRatio(o.Metric, o.Limit)
	case KindErrorRate:
		return sloassert.MaxErrorRate(o.Limit, o.Classes...)
	case KindDecodeRate:
		return sloassert.MinDecodeRate(o.Q, o.Limit)
	case KindCacheMiss:
		return sloassert.NoCacheHits()
	case KindMaxStall:
		return sloassert.MaxStall(o.Budget)
	case KindColdStart:
		if o.AfterIdle > 0 {
			return sloassert.MaxColdStart(o.Budget, sloassert.AfterIdle(o.AfterIdle))
		}
		return sloassert.MaxColdStart(o.Budget)
	case KindTaskPerCall:
		if err := o.Task.Validate(); err != nil {
			return sloassert.Invalid(o.Key, err.Error())
		}
		return o.Task.Objective(sloassert.Total, opts...)
	}
	return sloassert.Invalid(o.Key, fmt.Sprintf("kind %q does not judge a single result", o.Kind))
}

// ChainObjective returns the objective that judges a ChainResult. For a
// kind that judges a Result it returns an objective that never passes and
// says why.
func (o Objective) ChainObjective() sloassert.Objective {
	switch o.Kind {
	case KindChainTotal:
		return sloassert.ChainQ(o.Q, o.Budget, o.options()...)
	case KindChainErrorRate:
		return sloassert.MaxChainErrorRate(o.Limit)
	case KindTask:
		if err := o.Task.Validate(); err != nil {
			return sloassert.Invalid(o.Key, err.Error())
		}
		q, per := o.Task.PerCall()
		plan := fmt.Sprintf("planning figure, not a gate: per call %s <= %s suffices", sloassert.QuantileName(q), format.Duration(per))
		obj := sloassert.ChainQ(1-o.Task.TailTasks, o.Task.Budget, append(o.options(), sloassert.Note(plan))...)
		obj.Name = fmt.Sprintf("%s (task of %d calls, %s of tasks)", obj.Name, o.Task.Calls, percent(1-o.Task.TailTasks))
		return obj
	}
	return sloassert.Invalid(o.Key, fmt.Sprintf("kind %q does not judge chains", o.Kind))
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
func LoadSpec(path string) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, fmt.Errorf("slospec: %w", err)
	}
	p := &specParser{}
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

// resolve makes a target's profile path relative to dir and loads it.
func (p *specParser) resolve(t *Target, dir string) {
	if t.Profile == "" {
		return
	}
	if !filepath.IsAbs(t.Profile) {
		t.Profile = filepath.Join(dir, t.Profile)
	}
	if _, err := t.FakeProfile(); err != nil {
		p.errorf(t.profileLine, t.profileKey, "%v", err)
	}
}

// FakeProfile returns the profile of a fake target (Preset or Profile),
// with Seed applied. It reads the profile file each time.
func (t Target) FakeProfile() (fakeprovider.Profile, error) {
	var (
		prof fakeprovider.Profile
		err  error
	)
	switch {
	case t.Endpoint != nil:
		return prof, errors.New("slospec: the target is an endpoint, not a fake")
	case t.Records != "":
		return prof, errors.New("slospec: the target is records, not a fake")
	case t.Preset != "" && t.Profile != "":
		return prof, errors.New("slospec: the target names both a preset and a profile")
	case t.Preset != "":
		prof, err = fakeprovider.Preset(t.Preset)
	case t.Profile != "":
		prof, err = fakeprovider.LoadProfile(t.Profile)
	default:
		return prof, errors.New("slospec: the target names no preset, profile or endpoint")
	}
	if err != nil {
		return fakeprovider.Profile{}, err
	}
	if t.Seed != nil {
		prof.Seed = *t.Seed
	}
	return prof, nil
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
