package slospec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/tailguard/tailguard/fakeprovider"
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
	Target SpecTarget
	// Load is the batch run at each level. It runs when Objectives is not
	// empty.
	Load SpecLoad
	// Objectives judge each level's result, in the order written.
	Objectives []SpecObjective
	// Chains, when set, runs agent chains.
	Chains *SpecChains
}

// SpecTarget names what a spec measures: exactly one of a fake preset, a
// fake profile file, an endpoint (chat completions, Responses or
// Messages: see SpecEndpoint), or records already measured.
type SpecTarget struct {
	// Preset names a fakeprovider preset (fakeprovider.Presets).
	Preset string
	// Profile is a fakeprovider profile file. ParseSpec keeps the path as
	// written (relative to the working directory); LoadSpec makes it
	// relative to the spec file's directory.
	Profile string
	// Endpoint reads an endpoint from the environment.
	Endpoint *SpecEndpoint
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

// SpecEndpoint names the environment variables that hold an endpoint's
// base URL ("https://host/v1"), API key and model, and the protocol it
// speaks. Empty names take the protocol's defaults: latencytest.EnvBaseURL,
// EnvAPIKey and EnvModel for chat and responses, EnvAnthropicBaseURL,
// EnvAnthropicAPIKey and EnvAnthropicModel for messages. The base URL
// and model must be set and non-empty, the key must be set (it may be
// empty, for local servers): a spec run with any of them unset skips.
type SpecEndpoint struct {
	BaseURLEnv string
	APIKeyEnv  string
	ModelEnv   string
	// Protocol is ProtocolChat (also for ""), ProtocolResponses or
	// ProtocolMessages: the provider is latencytest.OpenAI, Responses or
	// Anthropic (whose base URL is taken as AnthropicFromEnv takes it:
	// "/v1" is added unless the path ends in it).
	Protocol string
}

// The protocols an endpoint target speaks (SpecEndpoint.Protocol).
const (
	ProtocolChat      = "chat"      // OpenAI chat completions
	ProtocolResponses = "responses" // OpenAI's Responses API
	ProtocolMessages  = "messages"  // Anthropic's Messages API
)

// SpecLoad is the batch a spec runs at each concurrency level.
type SpecLoad struct {
	// Batch is the batch; its Concurrency and Label are set per level.
	Batch latencytest.Batch
	// Concurrency lists the levels, in order. Default
	// latencytest.DefaultLevels (1, 8, 50).
	Concurrency []int
}

// Levels returns the concurrency levels the load runs at, defaults applied.
func (l SpecLoad) Levels() []int {
	if len(l.Concurrency) == 0 {
		return slices.Clone(latencytest.DefaultLevels)
	}
	return slices.Clone(l.Concurrency)
}

// measured is the number of measured requests per level.
func (l SpecLoad) measured() int {
	n, r := l.Batch.Requests, l.Batch.Repeat
	if n == 0 {
		n = 75
	}
	return n * max(r, 1)
}

// SpecChains is the agent-chain part of a spec.
type SpecChains struct {
	// Chain is the chain run.
	Chain latencytest.Chain
	// Target, when set, replaces the spec's target for the chains (a
	// "-chain" preset, say).
	Target *SpecTarget
	// Objectives judge the chains, in the order written.
	Objectives []SpecObjective
}

// ObjectiveKind says what a SpecObjective judges.
type ObjectiveKind string

// The kinds of spec objectives. The first seven judge a Result (a level's
// batch); chain_total, chain_error_rate and task judge a ChainResult;
// task_per_call (which the parser no longer adds: see Spec's Tasks) judges
// the chains' calls as one Result when a SpecObjective built in Go asks
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

// SpecObjective is one objective of a spec, as written.
type SpecObjective struct {
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

func (o SpecObjective) options() []sloassert.Option {
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
func (o SpecObjective) IsChain() bool {
	switch o.Kind {
	case KindChainTotal, KindChainErrorRate, KindTask:
		return true
	}
	return false
}

// Objective returns the objective that judges a Result. For a chain kind
// (IsChain) it returns an objective that never passes and says why.
func (o SpecObjective) Objective() sloassert.Objective {
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
func (o SpecObjective) ChainObjective() sloassert.ChainObjective {
	switch o.Kind {
	case KindChainTotal:
		return sloassert.ChainQ(o.Q, o.Budget, o.options()...)
	case KindChainErrorRate:
		return sloassert.MaxChainErrorRate(o.Limit)
	case KindTask:
		if err := o.Task.Validate(); err != nil {
			return sloassert.InvalidChain(o.Key, err.Error())
		}
		q, per := o.Task.PerCall()
		plan := fmt.Sprintf("planning figure, not a gate: per call %s <= %s suffices", sloassert.QuantileName(q), latencytest.FormatDuration(per))
		obj := sloassert.ChainQ(1-o.Task.TailTasks, o.Task.Budget, append(o.options(), sloassert.Note(plan))...)
		obj.Name = fmt.Sprintf("%s (task of %d calls, %s of tasks)", obj.Name, o.Task.Calls, percent(1-o.Task.TailTasks))
		return obj
	}
	return sloassert.InvalidChain(o.Key, fmt.Sprintf("kind %q does not judge chains", o.Kind))
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
func (p *specParser) resolve(t *SpecTarget, dir string) {
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
func (t SpecTarget) FakeProfile() (fakeprovider.Profile, error) {
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

// specError is one spec error, with the line and the key it is about.
type specError struct {
	Line int
	Key  string
	Msg  string
}

func (e *specError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("slospec: line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("slospec: line %d: %s: %s", e.Line, e.Key, e.Msg)
}

// specParser collects every error of one spec (up to maxSpecErrors).
type specParser struct {
	errs []error
	// loadKeys are the keys the load section wrote.
	loadKeys []specEntry
	// chainsLine is where the spec wrote chains.
	chainsLine int
	// seen maps an objective key to its line, to report repeats.
	seen map[string]int
}

func (p *specParser) errorf(line int, key, format string, args ...any) {
	if len(p.errs) >= maxSpecErrors {
		return
	}
	p.errs = append(p.errs, &specError{Line: max(line, 1), Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (p *specParser) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return errors.Join(p.errs...)
}

// specEntry is one key of a mapping.
type specEntry struct {
	key  string
	path string // "objectives.ttft.p99"
	k, v *yaml.Node
}

func specPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// nodeDesc describes a node's kind for an error.
func nodeDesc(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias (*" + n.Value + "); aliases are not supported"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "nothing"
}

// mapping returns the entries of the map n, in order, reporting a value
// that is not a map, a key that is not a plain string, a repeated key,
// and a key that neither allowed nor extra accepts. A null value is an
// empty map when nullOK.
func (p *specParser) mapping(n *yaml.Node, path string, nullOK bool, allowed []string, extra func(string) bool) ([]specEntry, bool) {
	if nullOK && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n.Line, path, "want a map, not %s", nodeDesc(n))
		return nil, false
	}
	var out []specEntry
	lines := map[string]int{}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			p.errorf(k.Line, path, "a key must be a plain name, not %s", nodeDesc(k))
			ok = false
			continue
		}
		e := specEntry{key: k.Value, path: specPath(path, k.Value), k: k, v: v}
		if l, dup := lines[k.Value]; dup {
			p.errorf(k.Line, e.path, "repeated key (first at line %d)", l)
			ok = false
			continue
		}
		lines[k.Value] = k.Line
		if !slices.Contains(allowed, k.Value) && (extra == nil || !extra(k.Value)) {
			p.errorf(k.Line, e.path, "unknown key %q (want %s)", k.Value, wantList(allowed, extra != nil))
			ok = false
			continue
		}
		out = append(out, e)
	}
	return out, ok
}

func wantList(allowed []string, quantiles bool) string {
	parts := slices.Clone(allowed)
	if quantiles {
		parts = append([]string{"a quantile such as p50, p99, p99.9 or q0.995"}, parts...)
	}
	switch len(parts) {
	case 0:
		return "nothing here"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// scalar returns a scalar's text, reporting anything else.
func (p *specParser) scalar(e specEntry, want string) (string, bool) {
	if e.v.Kind != yaml.ScalarNode || e.v.ShortTag() == "!!null" {
		p.errorf(e.v.Line, e.path, "want %s, not %s", want, nodeDesc(e.v))
		return "", false
	}
	return e.v.Value, true
}

func (p *specParser) str(e specEntry) (string, bool) {
	s, ok := p.scalar(e, "a string")
	if ok && s == "" {
		p.errorf(e.v.Line, e.path, "empty string")
		return "", false
	}
	return s, ok
}

func (p *specParser) boolean(e specEntry) (bool, bool) {
	s, ok := p.scalar(e, "true or false")
	if !ok {
		return false, false
	}
	if e.v.ShortTag() != "!!bool" {
		p.errorf(e.v.Line, e.path, "want true or false, not %q", s)
		return false, false
	}
	var b bool
	if err := e.v.Decode(&b); err != nil {
		p.errorf(e.v.Line, e.path, "want true or false, not %q", s)
		return false, false
	}
	return b, true
}

// integer reads a whole number in [lo, hi].
func (p *specParser) integer(e specEntry, lo, hi int64) (int64, bool) {
	s, ok := p.scalar(e, "a whole number")
	if !ok {
		return 0, false
	}
	var v int64
	if e.v.ShortTag() != "!!int" || e.v.Decode(&v) != nil {
		p.errorf(e.v.Line, e.path, "want a whole number, not %q", s)
		return 0, false
	}
	if v < lo || v > hi {
		p.errorf(e.v.Line, e.path, "%d is outside [%d, %d]", v, lo, hi)
		return 0, false
	}
	return v, true
}

func (p *specParser) intIn(e specEntry, lo, hi int) (int, bool) {
	v, ok := p.integer(e, int64(lo), int64(hi))
	return int(v), ok
}

// number reads a finite plain number (not a percentage, not a duration).
func (p *specParser) number(e specEntry, nodeDesc string) (float64, bool) {
	s, ok := p.scalar(e, nodeDesc)
	if !ok {
		return 0, false
	}
	if strings.HasSuffix(s, "%") {
		p.errorf(e.v.Line, e.path, "%q is a percentage; want %s (a plain number, no %%)", s, nodeDesc)
		return 0, false
	}
	var v float64
	if t := e.v.ShortTag(); (t != "!!int" && t != "!!float") || e.v.Decode(&v) != nil {
		p.errorf(e.v.Line, e.path, "want %s, not %q", nodeDesc, s)
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		p.errorf(e.v.Line, e.path, "want a finite number, not %q", s)
		return 0, false
	}
	return v, true
}

// duration reads a Go duration string; positive demands > 0, else >= 0.
func (p *specParser) duration(e specEntry, positive bool) (time.Duration, bool) {
	s, ok := p.scalar(e, "a duration such as 250ms")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if t := e.v.ShortTag(); t == "!!int" || t == "!!float" {
			p.errorf(e.v.Line, e.path, "%s is not a duration: durations carry a unit (write %sms or %ss)", s, s, s)
		} else {
			p.errorf(e.v.Line, e.path, "%q is not a duration (write a Go duration such as 250ms or 1.5s)", s)
		}
		return 0, false
	}
	if d < 0 {
		p.errorf(e.v.Line, e.path, "negative duration %s", s)
		return 0, false
	}
	if positive && d == 0 {
		p.errorf(e.v.Line, e.path, "a budget must be positive, not %s", s)
		return 0, false
	}
	return d, true
}

// percentage reads "1%" as the fraction 0.01; the percentage must lie in
// [lo, hi] (percent), excluding the ends when open. A bare number is an
// error that says what to write.
func (p *specParser) percentage(e specEntry, lo, hi float64, open bool) (float64, bool) {
	s, ok := p.scalar(e, "a percentage such as 1%")
	if !ok {
		return 0, false
	}
	num, has := strings.CutSuffix(s, "%")
	if !has {
		p.errorf(e.v.Line, e.path, "%s is not a percentage: percentages carry %% (%s)", s, percentHint(s))
		return 0, false
	}
	pct, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(pct) || math.IsInf(pct, 0) {
		p.errorf(e.v.Line, e.path, "%q is not a percentage (write a number and %%, such as 1%%)", s)
		return 0, false
	}
	if pct < lo || pct > hi || open && (pct == lo || pct == hi) {
		lb, rb := "[", "]"
		if open {
			lb, rb = "(", ")"
		}
		p.errorf(e.v.Line, e.path, "%s is outside %s%g%%, %g%%%s", s, lb, lo, hi, rb)
		return 0, false
	}
	// Divide in decimal ("1.5e-2"), so 1.5% is exactly the float 0.015.
	f, err := strconv.ParseFloat(num+"e-2", 64)
	if err != nil {
		f = pct / 100
	}
	return f, true
}

// percentHint says what to write for a bare number s.
func percentHint(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return "write a number and %, such as 1%"
	case f > 0 && f < 1:
		return fmt.Sprintf("write %s%% for the fraction %s, or %s%%", strconv.FormatFloat(f*100, 'g', -1, 64), s, s)
	}
	return fmt.Sprintf("write %s%%", s)
}

var (
	pKey = regexp.MustCompile(`^p([0-9]+(?:\.[0-9]+)?)$`)
	qKey = regexp.MustCompile(`^q([0-9]*\.?[0-9]+)$`)
)

// isQuantileKey reports whether key looks like a quantile (p99, q0.995),
// in range or not.
func isQuantileKey(key string) bool { return pKey.MatchString(key) || qKey.MatchString(key) }

// quantile reads a quantile key as a fraction in (0,1).
func (p *specParser) quantile(e specEntry) (float64, bool) {
	var q float64
	var err error
	if m := pKey.FindStringSubmatch(e.key); m != nil {
		q, err = strconv.ParseFloat(m[1]+"e-2", 64) // decimal shift: p99.9 is exactly 0.999
	} else if m := qKey.FindStringSubmatch(e.key); m != nil {
		q, err = strconv.ParseFloat(m[1], 64)
	} else {
		err = errors.New("not a quantile")
	}
	if err != nil || !(q > 0 && q < 1) {
		if strings.HasPrefix(e.key, "q") {
			p.errorf(e.k.Line, e.path, "quantile %s is outside q0-q1 (write a fraction strictly between 0 and 1, such as q0.995)", e.key)
		} else {
			p.errorf(e.k.Line, e.path, "quantile %s is outside p0-p100 (write a percentile strictly between 0 and 100, such as p99 or p99.9)", e.key)
		}
		return 0, false
	}
	return q, true
}

// objective records o, reporting a key given twice.
func (p *specParser) objective(list *[]SpecObjective, o SpecObjective, path string) {
	if p.seen == nil {
		p.seen = map[string]int{}
	}
	if l, dup := p.seen[o.Key]; dup {
		p.errorf(o.Line, path, "objective %s given twice (also at line %d)", o.Key, l)
		return
	}
	p.seen[o.Key] = o.Line
	*list = append(*list, o)
}

// unreadableByte finds the first byte YAML cannot read (invalid UTF-8 or a
// control character) and returns its line, or 0.
func unreadableByte(data []byte) (line int, why string) {
	line = 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return line, "invalid UTF-8"
		case r == '\n':
			line++
		case r == '\t' || r == '\r':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0 && r != 0x85) || r == 0xfffe || r == 0xffff || (r >= 0xd800 && r <= 0xdfff):
			return line, fmt.Sprintf("control character %U", r)
		}
		i += size
	}
	return 0, ""
}

var yamlErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// spec parses the whole document.
func (p *specParser) spec(data []byte) Spec {
	var s Spec
	if len(bytes.TrimSpace(data)) == 0 {
		p.errorf(1, "", "empty spec: want target and objectives (an empty spec never passes)")
		return s
	}
	if line, why := unreadableByte(data); line > 0 {
		p.errorf(line, "", "yaml: %s", why)
		return s
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		line, msg := 1, err.Error()
		if m := yamlErrLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = "yaml: " + m[2]
		} else if errors.Is(err, io.EOF) {
			msg = "empty spec: want target and objectives (an empty spec never passes)"
		}
		p.errorf(line, "", "%s", msg)
		return s
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		p.errorf(max(extra.Line, 1), "", "more than one YAML document")
		return s
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		p.errorf(root.Line, "", "empty spec: want target and objectives (an empty spec never passes)")
		return s
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root.Line, "", "a spec is a map of name, target, load, objectives and chains, not %s", nodeDesc(root))
		return s
	}
	entries, _ := p.mapping(root, "", false, []string{"name", "target", "load", "objectives", "chains"}, nil)
	var (
		loadLine, objLine int
		hasTarget         bool
	)
	for _, e := range entries {
		switch e.key {
		case "name":
			s.Name, _ = p.str(e)
		case "target":
			hasTarget = true
			s.Target, _ = p.target(e)
		case "load":
			loadLine = e.k.Line
			s.Load = p.load(e)
		case "objectives":
			objLine = e.k.Line
			s.Objectives = p.objectives(e)
		case "chains":
			s.Chains = p.chains(e)
		}
	}
	if len(p.errs) > 0 {
		return s
	}
	if !hasTarget {
		p.errorf(root.Line, "target", "missing: want one of preset, profile, endpoint or records")
	}
	if s.Target.Records != "" {
		for _, f := range p.loadKeys {
			if f.key != "concurrency" {
				p.errorf(f.k.Line, f.path, "the load is not run with a records target (the records were measured already): only load.concurrency applies, naming the levels to judge")
			}
		}
	}
	if s.Chains != nil && (s.Chains.Target == nil && s.Target.Records != "" || s.Chains.Target != nil && s.Chains.Target.Records != "") {
		p.errorf(p.chainsLine, "chains", "chains need a live target (preset, profile or endpoint) under chains.target: records hold each call, not the measured chain totals")
	}
	switch {
	case len(s.Objectives) == 0 && s.Chains == nil:
		line := objLine
		if line == 0 {
			line = root.Line
		}
		p.errorf(line, "objectives", "none: a spec with no objective never passes")
	case len(s.Objectives) == 0 && loadLine > 0:
		p.errorf(loadLine, "load", "no objective judges the load (add objectives, or drop load)")
	}
	p.samples(&s)
	return s
}

// target parses a target map.
func (p *specParser) target(e specEntry) (SpecTarget, bool) {
	var t SpecTarget
	entries, ok := p.mapping(e.v, e.path, false, []string{"preset", "profile", "endpoint", "records", "format", "seed"}, nil)
	if !ok {
		return t, false
	}
	var kinds []specEntry
	var seed, format *specEntry
	for _, f := range entries {
		switch f.key {
		case "preset":
			kinds = append(kinds, f)
			if name, ok := p.str(f); ok {
				if _, err := fakeprovider.Preset(name); err != nil {
					p.errorf(f.v.Line, f.path, "unknown preset %q (have %s)", name, strings.Join(fakeprovider.Presets(), ", "))
				} else {
					t.Preset = name
				}
			}
		case "profile":
			kinds = append(kinds, f)
			t.Profile, _ = p.str(f)
			t.profileLine, t.profileKey = f.v.Line, f.path
		case "endpoint":
			kinds = append(kinds, f)
			t.Endpoint = p.endpoint(f)
		case "records":
			kinds = append(kinds, f)
			if g, ok := p.str(f); ok {
				if _, err := filepath.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil {
					p.errorf(f.v.Line, f.path, "%q is not a glob: %v", g, err)
				} else {
					t.Records = g
				}
			}
		case "format":
			format = &f
			t.Format = p.recordsFormat(f)
		case "seed":
			seed = &f
			if v, ok := p.integer(f, 0, math.MaxInt64); ok {
				u := uint64(v)
				t.Seed = &u
			}
		}
	}
	switch {
	case len(kinds) == 0:
		p.errorf(e.k.Line, e.path, "want one of preset, profile, endpoint or records")
		return t, false
	case len(kinds) > 1:
		p.errorf(kinds[1].k.Line, kinds[1].path, "conflicting: %s and %s (a target is one of preset, profile, endpoint or records)", kinds[0].key, kinds[1].key)
		return t, false
	}
	if format != nil && kinds[0].key != "records" {
		p.errorf(format.k.Line, format.path, "a format applies to a records target, not to %s", kinds[0].key)
		return t, false
	}
	if seed != nil && (t.Endpoint != nil || kinds[0].key == "records") {
		p.errorf(seed.k.Line, seed.path, "a seed applies to fake targets (preset, profile), not to %s", map[bool]string{true: "an endpoint", false: "records"}[t.Endpoint != nil])
		return t, false
	}
	return t, true
}

var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (p *specParser) endpoint(e specEntry) *SpecEndpoint {
	ep := &SpecEndpoint{}
	entries, _ := p.mapping(e.v, e.path, true, []string{"base_url_env", "api_key_env", "model_env", "protocol"}, nil)
	for _, f := range entries {
		name, ok := p.str(f)
		if !ok {
			continue
		}
		if f.key == "protocol" {
			if name != ProtocolChat && name != ProtocolResponses && name != ProtocolMessages {
				p.errorf(f.v.Line, f.path, "%q is not a protocol: want chat, responses or messages", name)
			}
			ep.Protocol = name
			continue
		}
		if !envVarName.MatchString(name) {
			p.errorf(f.v.Line, f.path, "%q is not an environment variable name", name)
			continue
		}
		switch f.key {
		case "base_url_env":
			ep.BaseURLEnv = name
		case "api_key_env":
			ep.APIKeyEnv = name
		case "model_env":
			ep.ModelEnv = name
		}
	}
	return ep
}

// load parses the load map.
func (p *specParser) load(e specEntry) SpecLoad {
	var l SpecLoad
	entries, _ := p.mapping(e.v, e.path, false, []string{"warmup", "requests", "concurrency", "max_tokens", "mix", "prompt",
		"no_nonce", "temperature", "interval", "first_token_timeout", "total_timeout", "hard_cap", "repeat", "location"}, nil)
	b := &l.Batch
	p.loadKeys = entries
	var prompt, mix *specEntry
	for _, f := range entries {
		switch f.key {
		case "warmup":
			b.Warmup, _ = p.intIn(f, 0, specMaxRequests)
			b.NoWarmup = b.Warmup == 0 // written 0: none (the Go zero value means the default)
		case "requests":
			b.Requests, _ = p.intIn(f, 1, specMaxRequests)
		case "concurrency":
			l.Concurrency = p.levels(f)
		case "max_tokens":
			b.MaxTokens, _ = p.intIn(f, 1, specMaxTokens)
		case "mix":
			mix = &f
			b.Mix = p.mix(f)
		case "prompt":
			prompt = &f
			b.Prompt, _ = p.str(f)
		case "no_nonce":
			b.NoNonce, _ = p.boolean(f)
		case "temperature":
			b.Temperature = p.temperature(f)
		case "interval":
			b.Interval, _ = p.duration(f, false)
		case "first_token_timeout":
			b.FirstTokenTimeout, _ = p.duration(f, false)
		case "total_timeout":
			b.TotalTimeout, _ = p.duration(f, false)
		case "hard_cap":
			b.HardCap, _ = p.duration(f, false)
		case "repeat":
			b.Repeat, _ = p.intIn(f, 1, specMaxRepeat)
		case "location":
			b.Location, _ = p.str(f)
		}
	}
	if prompt != nil && mix != nil {
		later := *mix
		if prompt.k.Line > mix.k.Line {
			later = *prompt
		}
		p.errorf(later.k.Line, later.path, "conflicting: prompt and mix (a fixed prompt replaces the mix: give one)")
	}
	return l
}

func (p *specParser) temperature(f specEntry) *float64 {
	v, ok := p.number(f, "a temperature in [0, 2]")
	if !ok {
		return nil
	}
	if v < 0 || v > 2 {
		p.errorf(f.v.Line, f.path, "temperature %g is outside [0, 2]", v)
		return nil
	}
	return &v
}

// levels parses concurrency: a list of levels (or one level).
func (p *specParser) levels(f specEntry) []int {
	if f.v.Kind == yaml.ScalarNode {
		if v, ok := p.intIn(f, 1, specMaxLevel); ok {
			return []int{v}
		}
		return nil
	}
	if f.v.Kind != yaml.SequenceNode || len(f.v.Content) == 0 {
		p.errorf(f.v.Line, f.path, "want a list of concurrency levels such as [1, 8], not %s", nodeDesc(f.v))
		return nil
	}
	var out []int
	seen := map[int]bool{}
	for i, n := range f.v.Content {
		el := specEntry{key: f.key, path: fmt.Sprintf("%s[%d]", f.path, i), k: n, v: n}
		v, ok := p.intIn(el, 1, specMaxLevel)
		if !ok {
			continue
		}
		if seen[v] {
			p.errorf(n.Line, el.path, "level %d given twice", v)
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}

// mix parses a prompt mix; weights are percentages summing to 100%.
func (p *specParser) mix(f specEntry) latencytest.Mix {
	var m latencytest.Mix
	entries, ok := p.mapping(f.v, f.path, false, []string{"classes", "seed"}, nil)
	if !ok {
		return m
	}
	hasClasses := false
	for _, g := range entries {
		switch g.key {
		case "seed":
			if v, ok := p.integer(g, 0, math.MaxInt64); ok {
				m.Seed = uint64(v)
			}
		case "classes":
			hasClasses = true
			m.Classes = p.classes(g)
		}
	}
	if !hasClasses {
		p.errorf(f.k.Line, f.path, "want classes (a list of {name, weight, prompt_tokens, max_tokens})")
	}
	return m
}

func (p *specParser) classes(g specEntry) []latencytest.PromptClass {
	if g.v.Kind != yaml.SequenceNode || len(g.v.Content) == 0 {
		p.errorf(g.v.Line, g.path, "want a list of {name, weight, prompt_tokens, max_tokens}, not %s", nodeDesc(g.v))
		return nil
	}
	var out []latencytest.PromptClass
	names := map[string]bool{}
	sum := 0.0
	bad := false
	for i, n := range g.v.Content {
		path := fmt.Sprintf("%s[%d]", g.path, i)
		entries, ok := p.mapping(n, path, false, []string{"name", "weight", "prompt_tokens", "max_tokens"}, nil)
		if !ok {
			bad = true
			continue
		}
		var c latencytest.PromptClass
		var have []string
		for _, h := range entries {
			have = append(have, h.key)
			var ok bool
			switch h.key {
			case "name":
				c.Name, ok = p.str(h)
				if ok && names[c.Name] {
					p.errorf(h.v.Line, h.path, "class %q given twice", c.Name)
					ok = false
				}
				names[c.Name] = true
			case "weight":
				c.Weight, ok = p.percentage(h, 0, 100, false)
				if ok && c.Weight == 0 {
					p.errorf(h.v.Line, h.path, "a weight must be above 0%%")
					ok = false
				}
			case "prompt_tokens":
				c.PromptTokens, ok = p.intIn(h, 1, specMaxPromptTokens)
			case "max_tokens":
				c.MaxTokens, ok = p.intIn(h, 1, specMaxTokens)
			}
			bad = bad || !ok
		}
		for _, k := range []string{"name", "weight", "prompt_tokens", "max_tokens"} {
			if !slices.Contains(have, k) {
				p.errorf(n.Line, path, "missing %s", k)
				bad = true
			}
		}
		sum += c.Weight
		out = append(out, c)
	}
	if !bad && math.Abs(sum-1) > 1e-9 {
		p.errorf(g.k.Line, g.path, "weights sum to %s, not 100%%", percent(sum))
	}
	return out
}

// specMetrics are the metrics a spec judges: its load is a closed-loop
// batch, so the open loop's from_schedule metrics have nothing to judge.
var specMetrics = []sloassert.Metric{sloassert.TTFT, sloassert.FirstAnswer, sloassert.Total, sloassert.ITL, sloassert.MaxGap}

// metricKeys are the keys of a metric's objectives map besides quantiles.
var metricKeys = []string{"cv", "tail_ratio", "max", "allow_small_sample", "demonstrate", "refute"}

// objectives parses the objectives map.
func (p *specParser) objectives(e specEntry) []SpecObjective {
	var out []SpecObjective
	allowed := []string{"tokens_per_second", "error_rate", "cv", "tail_ratio", "cache_miss", "cold_start"}
	for _, m := range specMetrics {
		allowed = append(allowed, string(m))
	}
	entries, _ := p.mapping(e.v, e.path, false, allowed, nil)
	for _, f := range entries {
		switch f.key {
		case "tokens_per_second":
			p.decodeRates(f, &out)
		case "error_rate":
			p.errorRate(f, &out)
		case "cold_start":
			p.coldStart(f, &out)
		case "cv", "tail_ratio":
			p.byKind(f, &out)
		case "cache_miss":
			if b, ok := p.boolean(f); ok && b {
				p.objective(&out, SpecObjective{Key: "cache_miss", Line: f.k.Line, Kind: KindCacheMiss}, f.path)
			}
		default:
			p.metric(f, sloassert.Metric(f.key), &out)
		}
	}
	return out
}

// quantileOptions reads allow_small_sample, demonstrate and refute.
type quantileOptions struct {
	allowSmall          bool
	demonstrate, refute float64
}

func (p *specParser) quantileOptions(entries []specEntry) quantileOptions {
	var o quantileOptions
	var conf []specEntry
	for _, g := range entries {
		switch g.key {
		case "allow_small_sample":
			o.allowSmall, _ = p.boolean(g)
		case "demonstrate":
			o.demonstrate, _ = p.percentage(g, 0, 100, true)
			conf = append(conf, g)
		case "refute":
			o.refute, _ = p.percentage(g, 0, 100, true)
			conf = append(conf, g)
		}
	}
	if len(conf) > 1 {
		p.errorf(conf[1].k.Line, conf[1].path, "conflicting: demonstrate and refute (give one)")
		o.demonstrate, o.refute = 0, 0
	}
	return o
}

func (o quantileOptions) apply(so *SpecObjective) {
	so.AllowSmallSample, so.Demonstrate, so.Refute = o.allowSmall, o.demonstrate, o.refute
}

// metric parses one metric's objectives: quantiles, cv, tail_ratio, max.
func (p *specParser) metric(f specEntry, m sloassert.Metric, out *[]SpecObjective) {
	entries, ok := p.mapping(f.v, f.path, false, metricKeys, isQuantileKey)
	if !ok {
		return
	}
	opts := p.quantileOptions(entries)
	qs := map[float64]int{}
	n := 0
	for _, g := range entries {
		key := string(m) + "_" + g.key
		switch g.key {
		case "allow_small_sample", "demonstrate", "refute":
			continue
		}
		n++
		switch g.key {
		case "cv":
			if v, ok := p.percentage(g, 0, specMaxCVPercent, false); ok {
				p.objective(out, SpecObjective{Key: key, Line: g.k.Line, Kind: KindCV, Metric: m, Limit: v * 100}, g.path)
			}
		case "tail_ratio":
			if v, ok := p.tailRatio(g); ok {
				p.objective(out, SpecObjective{Key: key, Line: g.k.Line, Kind: KindTailRatio, Metric: m, Limit: v}, g.path)
			}
		case "max":
			if m != sloassert.MaxGap {
				p.errorf(g.k.Line, g.path, "max applies to max_gap only (the longest stall); use a quantile such as p99")
				continue
			}
			if d, ok := p.duration(g, true); ok {
				p.objective(out, SpecObjective{Key: key, Line: g.k.Line, Kind: KindMaxStall, Budget: d}, g.path)
			}
		default:
			q, ok := p.quantile(g)
			if !ok {
				continue
			}
			if l, dup := qs[q]; dup {
				p.errorf(g.k.Line, g.path, "the same quantile as line %d", l)
				continue
			}
			qs[q] = g.k.Line
			if d, ok := p.duration(g, true); ok {
				so := SpecObjective{Key: key, Line: g.k.Line, Kind: KindQuantile, Metric: m, Q: q, Budget: d}
				opts.apply(&so)
				p.objective(out, so, g.path)
			}
		}
	}
	if n == 0 {
		p.errorf(f.k.Line, f.path, "no objective (want a quantile such as p99, cv or tail_ratio)")
	}
}

func (p *specParser) tailRatio(g specEntry) (float64, bool) {
	v, ok := p.number(g, "a ratio p99/p50 such as 5")
	if ok && v < 1 {
		p.errorf(g.v.Line, g.path, "%g is below 1: p99 is never below p50", v)
		return 0, false
	}
	return v, ok
}

// byKind parses cv: {metric: 100%} and tail_ratio: {metric: 5}.
func (p *specParser) byKind(f specEntry, out *[]SpecObjective) {
	var names []string
	for _, m := range specMetrics {
		names = append(names, string(m))
	}
	entries, ok := p.mapping(f.v, f.path, false, names, nil)
	if !ok {
		return
	}
	if len(entries) == 0 {
		p.errorf(f.k.Line, f.path, "no objective (want a metric: %s)", wantList(names, false))
	}
	for _, g := range entries {
		m := sloassert.Metric(g.key)
		key := g.key + "_" + f.key
		if f.key == "cv" {
			if v, ok := p.percentage(g, 0, specMaxCVPercent, false); ok {
				p.objective(out, SpecObjective{Key: key, Line: g.k.Line, Kind: KindCV, Metric: m, Limit: v * 100}, g.path)
			}
		} else if v, ok := p.tailRatio(g); ok {
			p.objective(out, SpecObjective{Key: key, Line: g.k.Line, Kind: KindTailRatio, Metric: m, Limit: v}, g.path)
		}
	}
}

// decodeRates parses tokens_per_second: {p5: 10}.
func (p *specParser) decodeRates(f specEntry, out *[]SpecObjective) {
	entries, ok := p.mapping(f.v, f.path, false, nil, isQuantileKey)
	if !ok {
		return
	}
	if len(entries) == 0 {
		p.errorf(f.k.Line, f.path, "no objective (want a low quantile and a floor in tokens/s, such as p5: 10)")
	}
	for _, g := range entries {
		q, ok := p.quantile(g)
		if !ok {
			continue
		}
		v, ok := p.number(g, "a floor in tokens/s such as 10")
		if !ok {
			continue
		}
		if v <= 0 {
			p.errorf(g.v.Line, g.path, "a floor of %g tokens/s judges nothing: want a positive number", v)
			continue
		}
		p.objective(out, SpecObjective{Key: "tokens_per_second_" + g.key, Line: g.k.Line, Kind: KindDecodeRate, Q: q, Limit: v}, g.path)
	}
}

// coldStart parses cold_start: 10s or {max: 10s, after_idle: 2s}.
func (p *specParser) coldStart(f specEntry, out *[]SpecObjective) {
	so := SpecObjective{Key: "cold_start", Line: f.k.Line, Kind: KindColdStart}
	if f.v.Kind != yaml.MappingNode {
		if d, ok := p.duration(f, true); ok {
			so.Budget = d
			p.objective(out, so, f.path)
		}
		return
	}
	entries, ok := p.mapping(f.v, f.path, false, []string{"max", "after_idle"}, nil)
	if !ok {
		return
	}
	hasMax, valid := false, true
	for _, g := range entries {
		var d time.Duration
		var ok bool
		switch g.key {
		case "max":
			hasMax = true
			d, ok = p.duration(g, true)
			so.Budget = d
		case "after_idle":
			d, ok = p.duration(g, true)
			so.AfterIdle = d
		}
		valid = valid && ok
	}
	if !hasMax {
		p.errorf(f.v.Line, f.path, "no max: write the cold-start budget, such as {max: 10s, after_idle: 2s}")
		return
	}
	if valid {
		p.objective(out, so, f.path)
	}
}

// errorRateLimit parses an error-rate limit: a percentage in [0%, 100%).
// 100% would let every request fail, and an all-failed run never passes.
func (p *specParser) errorRateLimit(e specEntry) (float64, bool) {
	v, ok := p.percentage(e, 0, 100, false)
	if ok && v == 1 {
		p.errorf(e.v.Line, e.path, "100%% lets every request fail, and an all-failed run never passes: give a limit below 100%%, or leave the error rate out")
		return 0, false
	}
	return v, ok
}

// errorRate parses error_rate: 1% or {max: 1%, classes: [...]}.
func (p *specParser) errorRate(f specEntry, out *[]SpecObjective) {
	so := SpecObjective{Key: "error_rate", Line: f.k.Line, Kind: KindErrorRate}
	if f.v.Kind != yaml.MappingNode {
		v, ok := p.errorRateLimit(f)
		if ok {
			so.Limit = v
			p.objective(out, so, f.path)
		}
		return
	}
	entries, ok := p.mapping(f.v, f.path, false, []string{"max", "classes"}, nil)
	if !ok {
		return
	}
	hasMax := false
	for _, g := range entries {
		switch g.key {
		case "max":
			hasMax = true
			so.Limit, ok = p.errorRateLimit(g)
		case "classes":
			if g.v.Kind != yaml.SequenceNode || len(g.v.Content) == 0 {
				p.errorf(g.v.Line, g.path, "want a list of error classes such as [http_529, http_429], not %s", nodeDesc(g.v))
				continue
			}
			seen := map[string]bool{}
			for i, n := range g.v.Content {
				el := specEntry{key: g.key, path: fmt.Sprintf("%s[%d]", g.path, i), k: n, v: n}
				c, ok := p.str(el)
				if !ok {
					continue
				}
				if seen[c] {
					p.errorf(n.Line, el.path, "class %q given twice", c)
					continue
				}
				if err := sloassert.CheckClass(c); err != nil {
					p.errorf(n.Line, el.path, "%s", strings.TrimPrefix(err.Error(), "sloassert: "))
					continue
				}
				seen[c] = true
				so.Classes = append(so.Classes, c)
			}
		}
	}
	if !hasMax {
		p.errorf(f.k.Line, f.path, "missing max (the error rate allowed, such as 1%%)")
		return
	}
	if ok {
		p.objective(out, so, f.path)
	}
}

// chains parses the chains map.
func (p *specParser) chains(e specEntry) *SpecChains {
	c := &SpecChains{}
	p.chainsLine = e.k.Line
	entries, ok := p.mapping(e.v, e.path, false, []string{"count", "calls", "concurrency", "max_tokens", "prompt", "follow_up",
		"no_nonce", "temperature", "first_token_timeout", "total_timeout", "hard_cap", "location", "target",
		"total", "error_rate", "task"}, nil)
	if !ok {
		return c
	}
	ch := &c.Chain
	var task *specEntry
	for _, f := range entries {
		switch f.key {
		case "count":
			ch.Chains, _ = p.intIn(f, 1, specMaxChains)
		case "calls":
			ch.Length, _ = p.intIn(f, 1, specMaxCalls)
		case "concurrency":
			ch.Concurrency, _ = p.intIn(f, 1, specMaxLevel)
		case "max_tokens":
			ch.MaxTokens, _ = p.intIn(f, 1, specMaxTokens)
		case "prompt":
			ch.Prompt, _ = p.str(f)
		case "follow_up":
			ch.FollowUp, _ = p.str(f)
		case "no_nonce":
			ch.NoNonce, _ = p.boolean(f)
		case "temperature":
			ch.Temperature = p.temperature(f)
		case "first_token_timeout":
			ch.FirstTokenTimeout, _ = p.duration(f, false)
		case "total_timeout":
			ch.TotalTimeout, _ = p.duration(f, false)
		case "hard_cap":
			ch.HardCap, _ = p.duration(f, false)
		case "location":
			ch.Location, _ = p.str(f)
		case "target":
			if t, ok := p.target(f); ok {
				c.Target = &t
			}
		case "total":
			p.chainTotal(f, &c.Objectives)
		case "error_rate":
			if v, ok := p.errorRateLimit(f); ok {
				p.objective(&c.Objectives, SpecObjective{Key: "chain_error_rate", Line: f.k.Line, Kind: KindChainErrorRate, Limit: v}, f.path)
			}
		case "task":
			task = &f
		}
	}
	if task != nil { // after calls, wherever it was written
		p.task(*task, c)
	}
	if len(c.Objectives) == 0 && len(p.errs) == 0 {
		p.errorf(e.k.Line, e.path, "no objective judges the chains (want total, error_rate or task)")
	}
	return c
}

func (p *specParser) chainTotal(f specEntry, out *[]SpecObjective) {
	entries, ok := p.mapping(f.v, f.path, false, []string{"allow_small_sample", "demonstrate", "refute"}, isQuantileKey)
	if !ok {
		return
	}
	opts := p.quantileOptions(entries)
	qs := map[float64]int{}
	n := 0
	for _, g := range entries {
		if !isQuantileKey(g.key) {
			continue
		}
		n++
		q, ok := p.quantile(g)
		if !ok {
			continue
		}
		if l, dup := qs[q]; dup {
			p.errorf(g.k.Line, g.path, "the same quantile as line %d", l)
			continue
		}
		qs[q] = g.k.Line
		if d, ok := p.duration(g, true); ok {
			so := SpecObjective{Key: "chain_total_" + g.key, Line: g.k.Line, Kind: KindChainTotal, Q: q, Budget: d}
			opts.apply(&so)
			p.objective(out, so, g.path)
		}
	}
	if n == 0 {
		p.errorf(f.k.Line, f.path, "no objective (want a quantile of chain totals such as p95: 60s)")
	}
}

// task parses task: {budget, tail_tasks} into the task and per-call
// objectives.
func (p *specParser) task(f specEntry, c *SpecChains) {
	entries, ok := p.mapping(f.v, f.path, false, []string{"budget", "tail_tasks"}, nil)
	if !ok {
		return
	}
	t := sloassert.Task{Calls: c.Chain.Length}
	if t.Calls == 0 {
		t.Calls = 10
	}
	var have []string
	for _, g := range entries {
		have = append(have, g.key)
		switch g.key {
		case "budget":
			t.Budget, ok = p.duration(g, true)
		case "tail_tasks":
			t.TailTasks, ok = p.percentage(g, 0, 100, true)
		}
		if !ok {
			return
		}
	}
	for _, k := range []string{"budget", "tail_tasks"} {
		if !slices.Contains(have, k) {
			p.errorf(f.k.Line, f.path, "missing %s (want {budget: 5s, tail_tasks: 5%%})", k)
			return
		}
	}
	if t.Validate() != nil {
		p.errorf(f.k.Line, f.path, "want a positive budget and tail_tasks in (0%%, 100%%)")
		return
	}
	if _, per := t.PerCall(); per <= 0 {
		p.errorf(f.k.Line, f.path, "budget %v over %d calls leaves no time per call", t.Budget, t.Calls)
		return
	}
	p.objective(&c.Objectives, SpecObjective{Key: "task", Line: f.k.Line, Kind: KindTask, Task: t}, f.path)
}

// samples checks that the planned sample can support every quantile.
func (p *specParser) samples(s *Spec) {
	n := s.Load.measured()
	src := fmt.Sprintf("load gives %d measured requests a level", n)
	for _, o := range s.Objectives {
		if s.Target.Records != "" { // the merged sample's size is known when it is judged
			break
		}
		switch o.Kind {
		case KindQuantile:
			if o.Metric != sloassert.ITL { // sloassert.ITL pools every gap: its n is not known in advance
				p.need(o, o.Q, n, src)
			}
		case KindTailRatio:
			if o.Metric != sloassert.ITL && n < sloassert.MinSamples(0.99) {
				p.errorf(o.Line, "objectives."+o.Key, "p99/p50 needs n >= %d (%s)", sloassert.MinSamples(0.99), src)
			}
		}
	}
	if s.Chains == nil {
		return
	}
	ch := s.Chains.Chain
	chains, calls := ch.Chains, ch.Length
	if chains == 0 {
		chains = 30
	}
	if calls == 0 {
		calls = 10
	}
	for _, o := range s.Chains.Objectives {
		switch o.Kind {
		case KindChainTotal:
			p.need(o, o.Q, chains, fmt.Sprintf("chains.count gives %d chains", chains))
		case KindTask:
			p.need(o, 1-o.Task.TailTasks, chains, fmt.Sprintf("chains.count gives %d chains", chains))
		case KindTaskPerCall:
			q, _ := o.Task.PerCall()
			p.need(o, q, chains*calls, fmt.Sprintf("chains give %d calls", chains*calls))
		}
	}
}

// need reports a quantile objective the planned sample n cannot judge.
func (p *specParser) need(o SpecObjective, q float64, n int, src string) {
	key := "objectives." + o.Key
	if o.IsChain() || o.Kind == KindTaskPerCall {
		key = "chains." + o.Key
	}
	if want := sloassert.MinSamples(q); n < want && !o.AllowSmallSample {
		p.errorf(o.Line, key, "%s needs n >= %d (%s; raise it, or allow_small_sample: true)", sloassert.QuantileName(q), want, src)
		return
	}
	_, upper := sloassert.MinBoundSamples(q, o.Demonstrate)
	lower, _ := sloassert.MinBoundSamples(q, o.Refute)
	for _, c := range []struct {
		name  string
		conf  float64
		need  int
		level float64 // where the budget is assumed to sit, for the planner
	}{
		{"demonstrate", o.Demonstrate, upper, q + (1-q)/2},
		{"refute", o.Refute, lower, 1 - 2*(1-q)},
	} {
		if c.conf > 0 && n < c.need {
			plan := ""
			if c.level > 0 && c.level < 1 {
				plan = fmt.Sprintf("; to decide it at %s you need about %d requests (80%% power with the budget at the true %s)",
					percent(c.conf), sloassert.SampleSize(q, c.conf, 0.8, c.level), sloassert.QuantileName(c.level))
			}
			p.errorf(o.Line, key, "%s at %s on %s needs n >= %d (%s)%s", c.name, percent(c.conf), sloassert.QuantileName(q), c.need, src, plan)
		}
	}
}

// percent renders a fraction as an exact percent: "1%", "0.5%".
func percent(f float64) string { return fmt.Sprintf("%g%%", math.Round(f*100*1e6)/1e6) }
