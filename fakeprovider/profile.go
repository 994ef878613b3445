package fakeprovider

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"time"

	"github.com/tailguard/tailguard/internal/stats"
	"go.yaml.in/yaml/v3"
)

// Profile describes a simulated provider: its latency model, capacity, cold
// starts, stalls, faults and a script of forced events. The zero Profile is a
// valid fast provider: every unset field takes the default its comment gives.
// In YAML the keys are the ones shown in the yaml tags; decoding is strict.
type Profile struct {
	// Model is the model ID served; requests naming another model get 404
	// (model_not_found).
	// Default "fake-model".
	Model string `yaml:"model"`
	// Seed seeds every random draw. Each request's draws come from (Seed,
	// its X-Request-ID), so concurrency and goroutine order never change an
	// outcome.
	Seed uint64 `yaml:"seed"`

	// TTFT is the base time from admission to the first token. Default 200ms.
	TTFT Dist[time.Duration] `yaml:"ttft"`
	// PrefillPer1kTokens is added to TTFT per 1,000 prompt tokens (prompt
	// tokens are estimated as characters/4). Default 0.
	PrefillPer1kTokens Dist[time.Duration] `yaml:"prefill_per_1k_tokens"`
	// Prefill is a prefill curve in the engine's tokens (see Prefill).
	Prefill Prefill `yaml:"prefill"`
	// ITL is the time between consecutive tokens. Default 10ms.
	ITL Dist[time.Duration] `yaml:"itl"`
	// ITLPerRequest draws ITL once per request and uses it for every token
	// of that request: a per-request decode speed, as measured providers
	// show (a slow request is slow throughout). When false, every token
	// draws its own ITL.
	ITLPerRequest bool `yaml:"itl_per_request"`
	// TTFTITLCorrelation couples a request's TTFT and its per-request ITL
	// (ITLPerRequest): their Spearman rank correlation, in (-1, 1), drawn
	// through a Gaussian copula, so that a request slow to its first
	// token is also slow to decode (positive) or fast (negative), as
	// measured requests often are. Each keeps its own distribution. Needs
	// ITLPerRequest and TTFT and ITL (and the load levels') without
	// mixtures. Default 0: drawn independently.
	TTFTITLCorrelation float64 `yaml:"ttft_itl_correlation"`
	// OutputTokens is the answer length in tokens before max_tokens caps it.
	// Default 64.
	OutputTokens Dist[int] `yaml:"output_tokens"`
	// TokensPerChunk is how many tokens one SSE event carries (drawn per
	// event, at least 1). Default 1.
	TokensPerChunk Dist[int] `yaml:"tokens_per_chunk"`
	// ReasoningTokens are streamed before the answer (chat:
	// delta.reasoning_content; Responses: a reasoning item's summary;
	// Messages: a thinking block) and count against max_tokens. Default 0.
	ReasoningTokens Dist[int] `yaml:"reasoning_tokens"`

	// Replicas and SlotsPerReplica bound concurrency: requests beyond
	// Replicas×SlotsPerReplica queue FIFO. Defaults 1 and 8; Replicas is at
	// most 65,536.
	Replicas        int `yaml:"replicas"`
	SlotsPerReplica int `yaml:"slots_per_replica"`
	// SlowdownPerInflight stretches TTFT and ITL by this fraction for each
	// other request in flight on the same replica at admission (0.05: five
	// requests in flight make a request 20% slower). Default 0.
	SlowdownPerInflight float64 `yaml:"slowdown_per_inflight"`
	// Load is the TTFT, ITL, reasoning lengths and their coupling as
	// measured at higher loads, by requests in flight (see LoadLevel).
	// Default none: nothing depends on load beyond SlowdownPerInflight.
	Load []LoadLevel `yaml:"load"`

	ColdStart   ColdStart   `yaml:"cold_start"`
	Stall       Stall       `yaml:"stall"`
	PrefixCache PrefixCache `yaml:"prefix_cache"`
	Faults      Faults      `yaml:"faults"`
	// AfterClose: whether it stops generating on a client's close.
	AfterClose AfterClose `yaml:"after_close"`
	// Conversation correlates the calls of one agent chain (see
	// Conversation). Default: calls are independent.
	Conversation Conversation `yaml:"conversation"`
	// ToolCalls makes a share of answers tool calls (see ToolCalls).
	// Default: none.
	ToolCalls ToolCalls `yaml:"tool_calls"`
	// ToolLatency is the time an agent's tool step takes between two calls
	// of a chain run against this fake with Fake.Tool as its tool step
	// (see ToolSteps). Default: unset, no wait.
	ToolLatency Dist[time.Duration] `yaml:"tool_latency"`
	// Script forces events on chosen requests, for deterministic tests.
	Script []ScriptEntry `yaml:"script"`

	// ServedLimit is how many finished requests Served keeps: the most
	// recent ones; older ones are dropped and counted by ServedDropped, so a
	// long-running fake's memory stays bounded. Default 100,000.
	ServedLimit int `yaml:"served_limit"`

	// convSigma is the log-sd of the per-chain speed factor, calibrated
	// from Conversation.ICC by withDefaults; convShape is
	// Conversation.Shape's logs, standardized and sorted (nil: normal).
	convSigma float64
	convShape []float64
}

// Conversation makes the calls of one chain share a decode speed: every
// ITL of every call of a chain is multiplied by one factor, drawn once per
// chain from a lognormal with median 1, so a slow chain is slow
// throughout, as measured agent chains were (their decode speed drifted
// between chains; their TTFT did not follow it).
//
// A request belongs to a chain by its X-Request-ID: latencytest's Chain
// sends "<label>NN-callMM" ("chain03-call04"), and the chain key is what
// comes before the last "-call" followed only by digits ("chain03"; see
// ChainKey). A request whose ID has no such suffix is not in a chain and
// draws no factor. The factor is drawn from (Profile.Seed, chain key), so
// it does not depend on order or concurrency.
//
// ICC is the target intraclass correlation of log call totals within a
// chain: the share of their variance that lies between chains. The
// factor's log-sd is calibrated to it on the profile itself: 4,096 calls
// drawn as the fake draws them (trace IDs "conversation-calibration-N",
// in chains of 8; no max_tokens cap, stalls, faults, cold starts, prefill
// or queueing), bisecting until the one-way ANOVA ICC of their log planned
// totals is the target. The factor also widens each call's own
// distribution: fit per-call ITLs to within-chain spread (the fit package
// does) when the marginal must stay as measured.
//
// Shape, when set, replaces the lognormal's normal with a measured
// distribution: positive speed factors (each measured chain's, on any
// scale), whose logs are standardized and drawn with linear interpolation;
// ICC still sets the strength. Measured chains need not spread like a
// lognormal (measured maverick chains spread flatter, kurtosis 2.1
// against the normal's 3), and a lognormal factor then makes the calls'
// totals too wide at the top and too narrow in the middle.
type Conversation struct {
	// ICC is in [0, 1); 0 (the default) draws no factor.
	ICC float64 `yaml:"icc"`
	// Shape is 3 or more positive factors, not all equal; it needs ICC.
	Shape []float64 `yaml:"shape"`
}

// ToolCalls makes a share of answers tool calls instead of text: with
// Probability, drawn from (Profile.Seed, trace ID) on a random stream of
// its own (so no other draw moves), the answer after any reasoning is
// Parallel function calls, one after the other, each with JSON arguments
// ArgumentsTokens tokens long (drawn per call), streamed in the protocol's
// shape at the same ITLs as text, no event spanning two calls (chat:
// delta.tool_calls, one index per call, finish_reason "tool_calls";
// Responses: a function_call item per call; Messages: a tool_use block per
// call, stop_reason "tool_use"). Call i names the request's tool i mod
// their number ("fake_tool" when it lists none). max_tokens caps the
// arguments as it caps text (the JSON cut short, later calls not begun).
// tool_choice: "none" ({"type":"none"}) gets the text answer it would have
// had; "required" ({"type":"any"}) turns a text draw into tool calls (the
// lengths had the coin drawn calls); a named tool is every call's, and a
// 400 names it when the request does not list it (docs/fakeprovider.md).
//
// In YAML: tool_calls: {probability: 30%, arguments_tokens: 40, parallel: 2}.
type ToolCalls struct {
	// Probability is a fraction or a percentage (30%). Default 0.
	Probability float64 `yaml:"probability"`
	// ArgumentsTokens is the arguments' length in tokens (at least 1).
	// Default 16.
	ArgumentsTokens Dist[int] `yaml:"arguments_tokens"`
	// Parallel is the number of calls in a tool-call answer, drawn per
	// answer (below 1 counts as 1); call i names the request's tool i mod
	// their number (tool_choice forcing one: that one). A request allowing
	// one call (parallel_tool_calls false) gets the first. Default 1.
	Parallel Dist[int] `yaml:"parallel"`
}

// defaultArgumentsTokens is ToolCalls.ArgumentsTokens' default.
const defaultArgumentsTokens = 16

// LoadLevel is how the provider behaved with InFlight requests in flight
// on a replica, as a closed-loop run at that concurrency measured it: a
// request admitted with k requests in flight on its replica (itself
// included) draws its TTFT, ITL and reasoning length, coupled as the
// level's TTFTITLCorrelation says, from the level with InFlight k. The
// profile's own distributions are level 1. Between two levels a request
// draws from the lower or the higher one, the higher with probability
// (k - lower)/(higher - lower), so the distribution moves from one
// measured level to the next as a mixture of the two; above the highest
// level it draws from the highest. The choice and the draws come from
// (Profile.Seed, trace ID) like every other draw, so they do not depend
// on timing. SlowdownPerInflight, cache hits, prefill, the chain speed
// factor (Conversation) and the script apply on top, as at level 1.
//
// Levels reproduce what was measured at each load, whatever caused it:
// queueing and batching in the provider, or a drift over the run that
// happened to coincide with a load level. A level that is faster than the
// one below is allowed; it is what the records showed.
type LoadLevel struct {
	// InFlight is the level's requests in flight, 2 or more; levels are
	// listed in increasing order.
	InFlight int `yaml:"in_flight"`
	// TTFT, ITL and ReasoningTokens are the level's distributions; an
	// unset one is the level below's (the profile's own at level 1).
	TTFT            Dist[time.Duration] `yaml:"ttft"`
	ITL             Dist[time.Duration] `yaml:"itl"`
	ReasoningTokens Dist[int]           `yaml:"reasoning_tokens"`
	// TTFTITLCorrelation is the level's Profile.TTFTITLCorrelation; nil
	// is the level below's.
	TTFTITLCorrelation *float64 `yaml:"ttft_itl_correlation"`
	// Stall is the level's stall (probability, after_token, duration),
	// drawn at admission for the requests in flight then, as TTFT is; nil
	// is the level below's (the profile's own at level 1). Stalls that a
	// run saw only at concurrency 4 belong here, not in Profile.Stall.
	Stall *Stall `yaml:"stall"`
	// Faults are the level's fault probabilities and after_token; nil is
	// the level below's. They are drawn at arrival, at the level of the
	// requests then in flight on the least busy replica (those queued
	// ahead and the request itself included), since an HTTP error answers
	// at arrival. retry_after is the profile's (Profile.Faults) and may
	// not be set here.
	Faults *Faults `yaml:"faults"`
}

// levelCorrelations lists the levels' TTFTITLCorrelation pointers.
func levelCorrelations(levels []LoadLevel) []*float64 {
	out := make([]*float64, len(levels))
	for i := range levels {
		out[i] = levels[i].TTFTITLCorrelation
	}
	return out
}

// levelAt is the level a request with trace ID key draws from when
// admitted with k requests in flight: nil for level 1 (the profile's own
// distributions). p has its defaults.
func (p *Profile) levelAt(key string, k int) *LoadLevel {
	if len(p.Load) == 0 || k < 2 {
		return nil
	}
	i, _ := slices.BinarySearchFunc(p.Load, k, func(l LoadLevel, k int) int { return cmp.Compare(l.InFlight, k) })
	switch {
	case i < len(p.Load) && p.Load[i].InFlight == k:
		return &p.Load[i]
	case i == len(p.Load):
		return &p.Load[i-1]
	}
	lower := 1
	if i > 0 {
		lower = p.Load[i-1].InFlight
	}
	w := float64(k-lower) / float64(p.Load[i].InFlight-lower)
	if planRand(p, key, streamLoad).Float64() < w {
		return &p.Load[i]
	}
	if i == 0 {
		return nil
	}
	return &p.Load[i-1]
}

// defaultServedLimit is Profile.ServedLimit's default.
const defaultServedLimit = 100_000

// ColdStart is scale to zero: after AfterIdle with no request in flight or
// queued, the next request waits Duration for the model to load, and every
// request arriving during the load waits for that same load.
type ColdStart struct {
	// AfterIdle is the idle time that scales to zero; 0 never does.
	AfterIdle time.Duration `yaml:"after_idle"`
	// Duration is the load time. Required when AfterIdle or Initial is set.
	Duration Dist[time.Duration] `yaml:"duration"`
	// Initial makes the first request after New pay a cold start.
	Initial bool `yaml:"initial"`
}

// Stall pauses a stream: with Probability, after AfterToken tokens have been
// sent (0: before the first), the stream goes silent for Duration.
// A load level's Stall (LoadLevel.Stall) replaces the profile's for the
// requests admitted at that level.
type Stall struct {
	Probability float64             `yaml:"probability"`
	AfterToken  int                 `yaml:"after_token"`
	Duration    Dist[time.Duration] `yaml:"duration"`
}

// PrefixCache models prefix caching (on by default, as in vLLM). A request
// whose prompt starts with a prefix seen in an earlier request (at least one
// 16-token block, 64 characters) is a hit: it reports the matched tokens as
// usage.prompt_tokens_details.cached_tokens and its TTFT shrinks by
// TTFTFactor, over the whole TTFT (Scope "ttft", the default) or over the
// cached tokens' prefill only (Scope "prefill"). A unique leading nonce
// defeats it.
type PrefixCache struct {
	// Disabled turns caching off (YAML: enabled: false).
	Disabled bool `yaml:"-"`
	// TTFTFactor is what a hit costs relative to a miss. Default 0.1
	// (measured on mistral-3-14b: 462 ms uncached, 39 ms cached).
	TTFTFactor float64 `yaml:"-"`
	// Scope is what the factor applies to: "ttft" (default) multiplies the
	// whole TTFT, which reproduces the measured 462 ms → 39 ms on a long
	// prompt; "prefill" multiplies only the cached tokens' share of
	// prefill_per_1k_tokens, as in vLLM, so an agent whose history is
	// cached keeps its base TTFT (as measured chains did).
	Scope string `yaml:"-"`
}

// Cache scopes.
const (
	CacheScopeTTFT    = "ttft"
	CacheScopePrefill = "prefill"
)

// Faults are injected per request, each with a probability; at most one
// fault hits a request, so the probabilities must sum to at most 1.
type Faults struct {
	// HTTP529 is Anthropic-style "overloaded"; HTTP429 carries Retry-After.
	HTTP529 float64 `yaml:"http_529"`
	HTTP429 float64 `yaml:"http_429"`
	HTTP500 float64 `yaml:"http_500"`
	HTTP503 float64 `yaml:"http_503"`
	// Empty answers 200 with a stream that ends without a token.
	Empty float64 `yaml:"empty"`
	// Disconnect drops the connection after AfterToken tokens.
	Disconnect float64 `yaml:"disconnect"`
	// Malformed sends a chunk that is not valid JSON after AfterToken tokens.
	Malformed float64 `yaml:"malformed"`
	// ErrorEvent ends a stream with an in-band error after AfterToken
	// tokens, as vLLM does when generation fails mid-stream: the event
	// data: {"error":{"message":...,"type":"InternalServerError","param":null,"code":500}}
	// then data: [DONE], with no finish_reason. A request that does not
	// stream gets HTTP 500 at that point instead.
	ErrorEvent float64 `yaml:"error_event"`
	// AfterToken is where a disconnect, malformed chunk or error event
	// happens. Default 0: before the first token.
	AfterToken int `yaml:"after_token"`
	// RetryAfter is the Retry-After of a 429. Default 1s.
	RetryAfter time.Duration `yaml:"retry_after"`
}

// ScriptEntry forces what happens to one request, chosen by ID (its
// X-Request-ID) or, when ID is empty, by arrival index (from 0; arrivals at
// the same instant are ordered by trace ID). Set fields override the random
// draws.
type ScriptEntry struct {
	Request int    `yaml:"request"`
	ID      string `yaml:"id"`
	// ColdStart makes the deployment cold at this arrival: this request and
	// every request admitted after it wait for a load of this length. When
	// a load is already in progress, the request waits for that one instead.
	ColdStart time.Duration `yaml:"cold_start"`
	// TTFT forces the time from admission to first token (no cache factor,
	// no prefill, no slowdown).
	TTFT time.Duration `yaml:"ttft"`
	// Stall forces a stall.
	Stall *ScriptStall `yaml:"stall"`
	// Status answers with this HTTP error status (400-599) at arrival.
	Status int `yaml:"status"`
	// Fault forces "empty", "disconnect", "malformed", "error_event" or
	// "none" (no random fault).
	Fault string `yaml:"fault"`
	// AfterToken places a disconnect, malformed chunk or error event.
	AfterToken int `yaml:"after_token"`
	// Tokens forces the answer length (before max_tokens).
	Tokens int `yaml:"tokens"`
	// Attempts, for an entry chosen by ID, applies it to that ID's first
	// Attempts arrivals only (0, the default: to every arrival): a client
	// that retries with the same X-Request-ID meets the forced fault on
	// its first try and the profile's draws on its retry.
	Attempts int `yaml:"attempts"`
}

// ScriptStall is a forced stall: silent for Duration after AfterToken tokens.
type ScriptStall struct {
	AfterToken int           `yaml:"after_token"`
	Duration   time.Duration `yaml:"duration"`
}

// Fault names as they appear in Served.Fault.
const (
	FaultNone       = ""
	FaultHTTP529    = "http_529"
	FaultHTTP429    = "http_429"
	FaultHTTP500    = "http_500"
	FaultHTTP503    = "http_503"
	FaultEmpty      = "empty"
	FaultDisconnect = "disconnect"
	FaultMalformed  = "malformed"
	FaultErrorEvent = "error_event"
	FaultStall      = "stall"
)

// maxOutputTokens is the largest max_tokens a request may ask for.
const maxOutputTokens = 1 << 20

// maxReplicas bounds Profile.Replicas: the dispatcher keeps (and scans) a
// counter per replica.
const maxReplicas = 1 << 16

// Validate checks the profile and returns an error naming the first field
// that is wrong (e.g. "stall.probability 1.5 is outside [0,1]").
func (p Profile) Validate() error {
	for _, d := range []struct {
		name string
		err  error
	}{
		{"ttft", p.TTFT.validate("ttft")},
		{"prefill_per_1k_tokens", p.PrefillPer1kTokens.validate("prefill_per_1k_tokens")},
		{"itl", p.ITL.validate("itl")},
		{"output_tokens", p.OutputTokens.validate("output_tokens")},
		{"tokens_per_chunk", p.TokensPerChunk.validate("tokens_per_chunk")},
		{"reasoning_tokens", p.ReasoningTokens.validate("reasoning_tokens")},
		{"cold_start.duration", p.ColdStart.Duration.validate("cold_start.duration")},
		{"stall.duration", p.Stall.Duration.validate("stall.duration")},
		{"tool_calls.arguments_tokens", p.ToolCalls.ArgumentsTokens.validate("tool_calls.arguments_tokens")},
		{"tool_calls.parallel", p.ToolCalls.Parallel.validate("tool_calls.parallel")},
		{"tool_latency", p.ToolLatency.validate("tool_latency")},
	} {
		if d.err != nil {
			return &fieldError{path: d.name, err: d.err}
		}
	}
	ferr := func(path, format string, args ...any) error {
		return &fieldError{path: path, err: fmt.Errorf("%s: "+format, append([]any{path}, args...)...)}
	}
	if err := validatePrefill(p); err != nil {
		return err
	}
	if p.Replicas < 0 {
		return ferr("replicas", "negative (%d)", p.Replicas)
	}
	if p.Replicas > maxReplicas {
		return ferr("replicas", "%d is above the limit %d", p.Replicas, maxReplicas)
	}
	if p.SlotsPerReplica < 0 {
		return ferr("slots_per_replica", "negative (%d)", p.SlotsPerReplica)
	}
	if p.ServedLimit < 0 {
		return ferr("served_limit", "negative (%d)", p.ServedLimit)
	}
	if !(p.SlowdownPerInflight >= 0 && p.SlowdownPerInflight <= 100) {
		return ferr("slowdown_per_inflight", "%v is outside [0, 100]", p.SlowdownPerInflight)
	}
	correlated := false
	for i, c := range append([]*float64{&p.TTFTITLCorrelation}, levelCorrelations(p.Load)...) {
		path := "ttft_itl_correlation"
		if i > 0 {
			path = fmt.Sprintf("load[%d].ttft_itl_correlation", i-1)
		}
		if c == nil || *c == 0 {
			continue
		}
		if !(*c > -1 && *c < 1) {
			return ferr(path, "%v is outside (-1, 1)", *c)
		}
		if !p.ITLPerRequest {
			return ferr(path, "needs itl_per_request: true (it correlates one TTFT with one ITL per request)")
		}
		correlated = true
	}
	if correlated {
		kinds := []struct{ path, kind string }{{"ttft", p.TTFT.Kind}, {"itl", p.ITL.Kind}}
		for i, l := range p.Load {
			kinds = append(kinds, struct{ path, kind string }{fmt.Sprintf("load[%d].ttft", i), l.TTFT.Kind},
				struct{ path, kind string }{fmt.Sprintf("load[%d].itl", i), l.ITL.Kind})
		}
		for _, d := range kinds {
			if d.kind == "mixture" {
				return ferr("ttft_itl_correlation", "needs %s without a mixture (a mixture has no closed-form quantile)", d.path)
			}
		}
	}
	for i, l := range p.Load {
		path := fmt.Sprintf("load[%d]", i)
		if l.InFlight < 2 {
			return ferr(path+".in_flight", "%d is below 2 (level 1 is the profile's own ttft and itl)", l.InFlight)
		}
		if i > 0 && l.InFlight <= p.Load[i-1].InFlight {
			return ferr(path+".in_flight", "%d does not increase on the level before (%d): list levels in increasing order", l.InFlight, p.Load[i-1].InFlight)
		}
		if err := l.TTFT.validate(path + ".ttft"); err != nil {
			return &fieldError{path: path + ".ttft", err: err}
		}
		if err := l.ITL.validate(path + ".itl"); err != nil {
			return &fieldError{path: path + ".itl", err: err}
		}
		if err := l.ReasoningTokens.validate(path + ".reasoning_tokens"); err != nil {
			return &fieldError{path: path + ".reasoning_tokens", err: err}
		}
		if l.Stall != nil {
			if err := validateStall(path+".stall", *l.Stall); err != nil {
				return err
			}
		}
		if l.Faults != nil {
			if err := validateFaults(path+".faults", *l.Faults); err != nil {
				return err
			}
			if l.Faults.RetryAfter != 0 {
				return ferr(path+".faults.retry_after", "set retry_after in the profile's faults (a level sets probabilities and after_token only)")
			}
		}
	}
	if p.ColdStart.AfterIdle < 0 {
		return ferr("cold_start.after_idle", "negative duration %v", p.ColdStart.AfterIdle)
	}
	if (p.ColdStart.AfterIdle > 0 || p.ColdStart.Initial) && !p.ColdStart.Duration.IsSet() {
		return ferr("cold_start.duration", "required when cold_start.after_idle or cold_start.initial is set")
	}
	if err := validateStall("stall", p.Stall); err != nil {
		return err
	}
	if err := probability("tool_calls.probability", p.ToolCalls.Probability); err != nil {
		return err
	}
	if err := probability("after_close.keep_generating", p.AfterClose.KeepGenerating); err != nil {
		return err
	}
	if !(p.Conversation.ICC >= 0 && p.Conversation.ICC < 1) {
		return ferr("conversation.icc", "%v is outside [0, 1)", p.Conversation.ICC)
	}
	if sh := p.Conversation.Shape; len(sh) > 0 {
		switch {
		case p.Conversation.ICC == 0:
			return ferr("conversation.shape", "needs conversation.icc above 0 (the shape of a factor that ICC 0 does not draw)")
		case len(sh) < 3:
			return ferr("conversation.shape", "%d values; give 3 or more", len(sh))
		case slices.Min(sh) == slices.Max(sh):
			return ferr("conversation.shape", "every value is %v: a shape needs a spread", sh[0])
		}
		for i, x := range sh {
			if !(x > 0) || math.IsInf(x, 0) {
				return ferr("conversation.shape", "value %d is %v: factors are positive and finite", i, x)
			}
		}
	}
	switch p.PrefixCache.Scope {
	case "", CacheScopeTTFT, CacheScopePrefill:
	default:
		return ferr("prefix_cache.scope", "unknown scope %q (want ttft or prefill)", p.PrefixCache.Scope)
	}
	if !(p.PrefixCache.TTFTFactor >= 0 && p.PrefixCache.TTFTFactor <= 1) {
		return ferr("prefix_cache.ttft_factor", "%v is outside [0, 1] (a cache hit is never slower)", p.PrefixCache.TTFTFactor)
	}
	if err := validateFaults("faults", p.Faults); err != nil {
		return err
	}
	for i, s := range p.Script {
		path := fmt.Sprintf("script[%d]", i)
		switch {
		case s.Request < 0:
			return ferr(path+".request", "negative (%d)", s.Request)
		case s.ColdStart < 0:
			return ferr(path+".cold_start", "negative duration %v", s.ColdStart)
		case s.TTFT < 0:
			return ferr(path+".ttft", "negative duration %v", s.TTFT)
		case s.Stall != nil && s.Stall.Duration < 0:
			return ferr(path+".stall.duration", "negative duration %v", s.Stall.Duration)
		case s.Stall != nil && s.Stall.AfterToken < 0:
			return ferr(path+".stall.after_token", "negative (%d)", s.Stall.AfterToken)
		case s.Status != 0 && (s.Status < 400 || s.Status > 599):
			return ferr(path+".status", "%d is not an HTTP error status (400-599)", s.Status)
		case s.AfterToken < 0:
			return ferr(path+".after_token", "negative (%d)", s.AfterToken)
		case s.Tokens < 0:
			return ferr(path+".tokens", "negative (%d)", s.Tokens)
		case s.Attempts < 0:
			return ferr(path+".attempts", "negative (%d)", s.Attempts)
		case s.Attempts > 0 && s.ID == "":
			return ferr(path+".attempts", "needs id (an entry chosen by arrival index hits one arrival anyway)")
		}
		switch s.Fault {
		case "", "none", FaultEmpty, FaultDisconnect, FaultMalformed, FaultErrorEvent:
		default:
			return ferr(path+".fault", "unknown fault %q (want empty, disconnect, malformed, error_event or none)", s.Fault)
		}
	}
	return nil
}

// validateStall checks a stall written at path ("stall", "load[1].stall").
func validateStall(path string, s Stall) error {
	if err := s.Duration.validate(path + ".duration"); err != nil {
		return &fieldError{path: path + ".duration", err: err}
	}
	if err := probability(path+".probability", s.Probability); err != nil {
		return err
	}
	if s.AfterToken < 0 {
		return &fieldError{path: path + ".after_token", err: fmt.Errorf("%s.after_token: negative (%d)", path, s.AfterToken)}
	}
	if s.Probability > 0 && !s.Duration.IsSet() {
		return &fieldError{path: path + ".duration", err: fmt.Errorf("%s.duration: required when %s.probability is set", path, path)}
	}
	return nil
}

// validateFaults checks faults written at path ("faults", "load[1].faults").
func validateFaults(path string, f Faults) error {
	ferr := func(sub, format string, args ...any) error {
		return &fieldError{path: path + sub, err: fmt.Errorf("%s: "+format, append([]any{path + sub}, args...)...)}
	}
	sum := 0.0
	for _, x := range []struct {
		key string
		v   float64
	}{
		{"http_529", f.HTTP529}, {"http_429", f.HTTP429}, {"http_500", f.HTTP500},
		{"http_503", f.HTTP503}, {"empty", f.Empty}, {"disconnect", f.Disconnect},
		{"malformed", f.Malformed}, {"error_event", f.ErrorEvent},
	} {
		if err := probability(path+"."+x.key, x.v); err != nil {
			return err
		}
		sum += x.v
	}
	if sum > 1+1e-9 {
		return ferr("", "probabilities sum to %v, above 1", sum)
	}
	if f.AfterToken < 0 {
		return ferr(".after_token", "negative (%d)", f.AfterToken)
	}
	if f.RetryAfter < 0 {
		return ferr(".retry_after", "negative duration %v", f.RetryAfter)
	}
	return nil
}

func probability(path string, v float64) error {
	if !(v >= 0 && v <= 1) {
		return &fieldError{path: path, err: fmt.Errorf("%s: probability %v is outside [0,1]", path, v)}
	}
	return nil
}

// fieldError is a validation error with the field's path, so that a parser
// can add the line where the field was written.
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// withDefaults returns the profile with every unset field at its default.
func (p Profile) withDefaults() Profile {
	if p.Model == "" {
		p.Model = "fake-model"
	}
	p.TTFT = p.TTFT.or(Fixed(200 * time.Millisecond))
	p.PrefillPer1kTokens = p.PrefillPer1kTokens.or(Fixed(time.Duration(0)))
	p.ITL = p.ITL.or(Fixed(10 * time.Millisecond))
	p.OutputTokens = p.OutputTokens.or(Fixed(64))
	p.TokensPerChunk = p.TokensPerChunk.or(Fixed(1))
	p.ReasoningTokens = p.ReasoningTokens.or(Fixed(0))
	if p.Replicas == 0 {
		p.Replicas = 1
	}
	if p.SlotsPerReplica == 0 {
		p.SlotsPerReplica = 8
	}
	if p.PrefixCache.TTFTFactor == 0 {
		p.PrefixCache.TTFTFactor = 0.1
	}
	if p.PrefixCache.Scope == "" {
		p.PrefixCache.Scope = CacheScopeTTFT
	}
	if p.Faults.RetryAfter == 0 {
		p.Faults.RetryAfter = time.Second
	}
	if p.ServedLimit == 0 {
		p.ServedLimit = defaultServedLimit
	}
	if len(p.Load) > 0 {
		levels := slices.Clone(p.Load)
		ttft, itl, reasoning, rho := p.TTFT, p.ITL, p.ReasoningTokens, p.TTFTITLCorrelation
		stall, faults := p.Stall, p.Faults
		for i := range levels {
			s, f := stall, faults // copies: the caller's levels stay as given
			if levels[i].Stall != nil {
				s = *levels[i].Stall
			}
			if levels[i].Faults != nil {
				f = *levels[i].Faults
			}
			f.RetryAfter = p.Faults.RetryAfter
			levels[i].Stall, levels[i].Faults = &s, &f
			stall, faults = *levels[i].Stall, *levels[i].Faults
			levels[i].TTFT = levels[i].TTFT.or(ttft)
			levels[i].ITL = levels[i].ITL.or(itl)
			levels[i].ReasoningTokens = levels[i].ReasoningTokens.or(reasoning)
			if levels[i].TTFTITLCorrelation == nil {
				inherited := rho
				levels[i].TTFTITLCorrelation = &inherited
			}
			rho = *levels[i].TTFTITLCorrelation
			ttft, itl, reasoning = levels[i].TTFT, levels[i].ITL, levels[i].ReasoningTokens
		}
		p.Load = levels
	}
	p.convSigma, p.convShape = 0, nil
	if sh := p.Conversation.Shape; len(sh) > 0 {
		logs := make([]float64, len(sh))
		var m, v float64
		for i, x := range sh {
			logs[i] = math.Log(x)
			m += logs[i] / float64(len(sh))
		}
		for _, x := range logs {
			v += (x - m) * (x - m) / float64(len(sh)-1)
		}
		for i := range logs {
			logs[i] = (logs[i] - m) / math.Sqrt(v)
		}
		slices.Sort(logs)
		p.convShape = logs
	}
	if p.Conversation.ICC > 0 {
		p.convSigma = conversationSigma(&p)
	}
	return p
}

var (
	unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type \S+$`)
	badValue     = regexp.MustCompile("^line (\\d+): cannot unmarshal \\S+ `([^`]*)`")
)

// convZ draws the chain factor's standardized log: a standard normal, or
// from Conversation.Shape.
func (p *Profile) convZ(r *rand.Rand) float64 {
	if p.convShape == nil {
		return r.NormFloat64()
	}
	return stats.Quantile(p.convShape, r.Float64())
}

// UnmarshalYAML decodes a conversation strictly; icc is a fraction or a
// percentage (see parseProbability).
func (c *Conversation) UnmarshalYAML(n *yaml.Node) error {
	type plain Conversation
	n, err := withProbabilities(n, "conversation", "icc")
	if err != nil {
		return err
	}
	return strictDecode(n, (*plain)(c), "conversation", yamlKeys(reflect.TypeFor[Conversation]())...)
}

// UnmarshalYAML decodes tool_calls strictly; probability is a fraction or
// a percentage (see parseProbability).
func (t *ToolCalls) UnmarshalYAML(n *yaml.Node) error {
	type plain ToolCalls
	n, err := withProbabilities(n, "tool_calls", "probability")
	if err != nil {
		return err
	}
	return strictDecode(n, (*plain)(t), "tool_calls", yamlKeys(reflect.TypeFor[ToolCalls]())...)
}

// UnmarshalYAML decodes a stall strictly; probability is a fraction or a
// percentage (see parseProbability).
func (s *Stall) UnmarshalYAML(n *yaml.Node) error {
	type plain Stall
	n, err := withProbabilities(n, "stall", "probability")
	if err != nil {
		return err
	}
	return strictDecode(n, (*plain)(s), "stall", yamlKeys(reflect.TypeFor[Stall]())...)
}

// UnmarshalYAML decodes {enabled: bool, ttft_factor: number, scope: ttft|prefill}.
func (c *PrefixCache) UnmarshalYAML(n *yaml.Node) error {
	var raw struct {
		Enabled    *bool    `yaml:"enabled"`
		TTFTFactor *float64 `yaml:"ttft_factor"`
		Scope      string   `yaml:"scope"`
	}
	if err := strictDecode(n, &raw, "prefix_cache", "enabled", "ttft_factor", "scope"); err != nil {
		return err
	}
	if raw.Enabled != nil {
		c.Disabled = !*raw.Enabled
	}
	if raw.TTFTFactor != nil {
		c.TTFTFactor = *raw.TTFTFactor
	}
	c.Scope = raw.Scope
	return nil
}

// UnmarshalYAML decodes faults strictly, reading each probability as a
// fraction or a percentage (see parseProbability).
func (f *Faults) UnmarshalYAML(n *yaml.Node) error {
	type plain Faults
	n, err := withProbabilities(n, "faults", "http_529", "http_429", "http_500", "http_503", "empty", "disconnect", "malformed", "error_event")
	if err != nil {
		return err
	}
	return strictDecode(n, (*plain)(f), "faults", yamlKeys(reflect.TypeFor[Faults]())...)
}
