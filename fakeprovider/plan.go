package fakeprovider

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fakeprovider/internal/wire"
)

// plan is everything decided about one request before it streams. The
// random parts come from (profile seed, request key) only, so outcomes never
// depend on arrival order or goroutine scheduling; the dispatcher adds the
// parts that depend on order (arrival index, script, cache, queue).
type plan struct {
	key string

	fault      string // one of the Fault* names, or ""
	status     int    // HTTP error status to answer at arrival; 0 for 200
	faultAfter int    // tokens before a disconnect, malformed chunk or error event

	ttft       time.Duration // base TTFT draw
	prefill    time.Duration // per 1k prompt tokens
	forcedTTFT time.Duration // script; > 0 replaces the computed TTFT

	reasoning int  // reasoning tokens before the cap
	output    int  // answer tokens before the cap (a tool call's arguments when toolCall)
	toolCall  bool // the answer is a tool call (Profile.ToolCalls)

	toolArgs   []int // each tool call's arguments tokens, summing to output (see drawToolCalls)
	textOutput int   // the answer's length had it been text (tool_choice none)

	stallAfter    int
	stall         time.Duration // 0: no stall
	scriptedStall bool          // the script forced the stall: load levels keep it

	coldStart time.Duration // script: force a cold start of this length
	coldDraw  time.Duration // the load time if this request triggers a cold start

	itl    time.Duration // the request's ITL when Profile.ITLPerRequest; else -1
	stream *rand.Rand    // ITL and chunk-size draws, consumed while streaming

	speed float64 // the chain's speed factor (Profile.Conversation); 1 outside chains
	keep  bool    // generates on after the client's close (Profile.AfterClose)

	level *LoadLevel // the load level drawn at admission; nil at level 1
}

// keyHash mixes the request key into a seed.
func keyHash(key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return h.Sum64()
}

// Random streams per purpose: adding a draw to one purpose never shifts the
// draws of another.
const (
	streamFault = iota + 1
	streamTTFT
	streamLength
	streamStall
	streamCold
	streamTokens
	streamChain
	streamLoad
	streamCopula
	streamLoadLength
	streamToolCall
	streamAfterClose
)

// planRand is the random stream for one purpose of the request with key.
func planRand(p *Profile, key string, purpose uint64) *rand.Rand {
	return rand.New(rand.NewPCG(p.Seed^0x9e3779b97f4a7c15, keyHash(key)+purpose*0xbf58476d1ce4e5b9))
}

// ChainKey returns the chain a trace ID belongs to: the part before a
// final "-call" followed by one or more digits ("chain03-call04" gives
// "chain03"), and false when id has no such suffix. Profile.Conversation
// draws one speed factor per chain key.
func ChainKey(id string) (string, bool) {
	i := strings.LastIndex(id, "-call")
	if i <= 0 {
		return "", false
	}
	digits := id[i+len("-call"):]
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	return id[:i], true
}

// chainSpeed is the speed factor of the chain id belongs to: a lognormal
// with median 1 and log-sd p.convSigma (or Conversation.Shape's
// distribution at that log-sd) drawn from (seed, chain key); 1
// when the profile has no conversation or id is not a chain call.
func chainSpeed(p *Profile, id string) float64 {
	if p.convSigma == 0 {
		return 1
	}
	key, ok := ChainKey(id)
	if !ok {
		return 1
	}
	return math.Exp(p.convSigma * p.convZ(planRand(p, key, streamChain)))
}

// conversationCalibration is how many calls (in chains of 8)
// conversationSigma draws.
const conversationCalibration = 4096

// conversationSigma is the chain factor's log-sd that gives
// p.Conversation.ICC: it draws conversationCalibration calls from p
// (trace IDs "conversation-calibration-N", in chains of 8 with factors
// drawn as the fake draws them), and bisects on sigma until the one-way
// ANOVA ICC of their log planned totals (TTFT plus ITLs) is the target.
// p must have its defaults and convSigma 0.
func conversationSigma(p *Profile) float64 {
	const chainLen = 8
	ttft := make([]float64, 0, conversationCalibration)
	decode := make([]float64, 0, conversationCalibration)
	for i := range conversationCalibration {
		pl := newPlan(p, "conversation-calibration-"+strconv.Itoa(i))
		x := 0.0
		for range pl.reasoning + pl.output - 1 {
			x += float64(pl.nextITL(p))
		}
		ttft = append(ttft, float64(pl.ttft))
		decode = append(decode, x)
	}
	z := make([]float64, conversationCalibration/chainLen)
	for j := range z {
		r := rand.New(rand.NewPCG(p.Seed^0x9e3779b97f4a7c15, keyHash("conversation-calibration-chain"+strconv.Itoa(j))))
		z[j] = p.convZ(r)
	}
	icc := func(sigma float64) float64 {
		var grand, ssb, ssw float64
		means := make([]float64, len(z))
		logs := make([]float64, len(ttft))
		for i := range ttft {
			logs[i] = math.Log(max(ttft[i]+decode[i]*math.Exp(sigma*z[i/chainLen]), 1))
			means[i/chainLen] += logs[i] / chainLen
			grand += logs[i] / float64(len(logs))
		}
		for i, x := range logs {
			ssw += (x - means[i/chainLen]) * (x - means[i/chainLen])
		}
		for _, m := range means {
			ssb += chainLen * (m - grand) * (m - grand)
		}
		msb := ssb / float64(len(z)-1)
		msw := ssw / float64(len(logs)-len(z))
		if msb+(chainLen-1)*msw <= 0 {
			return 0
		}
		return (msb - msw) / (msb + (chainLen-1)*msw)
	}
	lo, hi := 0.0, 8.0
	for range 50 {
		mid := (lo + hi) / 2
		if icc(mid) < p.Conversation.ICC {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// newPlan draws a request's random outcomes.
func newPlan(p *Profile, key string) *plan {
	rng := func(purpose uint64) *rand.Rand { return planRand(p, key, purpose) }
	pl := &plan{key: key}

	pl.drawFault(p, &p.Faults)

	r := rng(streamTTFT)
	pl.ttft = p.TTFT.Sample(r)
	pl.prefill = p.PrefillPer1kTokens.Sample(r)

	r = rng(streamLength)
	pl.output = p.OutputTokens.Sample(r)
	pl.reasoning = p.ReasoningTokens.Sample(r)

	pl.drawStall(p, &p.Stall)

	if p.ColdStart.Duration.IsSet() {
		pl.coldDraw = p.ColdStart.Duration.Sample(rng(streamCold))
	}
	pl.stream = rng(streamTokens)
	pl.itl = -1
	if p.ITLPerRequest {
		pl.itl = p.ITL.Sample(pl.stream)
	}
	if p.TTFTITLCorrelation != 0 {
		pl.ttft, pl.itl = coupled(p.TTFTITLCorrelation, planRand(p, key, streamCopula), p.TTFT, p.ITL)
	}
	if tc := p.ToolCalls; tc.Probability > 0 {
		pl.drawToolCalls(tc, rng(streamToolCall), false)
	}
	pl.keep = keepGenerating(p, key) // afterclose.go
	pl.speed = chainSpeed(p, key)
	if pl.speed != 1 && pl.itl >= 0 {
		pl.itl = scaled(pl.itl, pl.speed)
	}
	return pl
}

// drawFault draws the request's fault from f (the profile's faults or a
// load level's) on the fault stream: the same uniform for every f, so a
// level with the profile's rates draws the profile's outcome.
func (pl *plan) drawFault(p *Profile, f *Faults) {
	u := planRand(p, pl.key, streamFault).Float64()
	pl.fault, pl.status = FaultNone, 0
	for _, c := range []struct {
		prob   float64
		fault  string
		status int
	}{
		{f.HTTP529, FaultHTTP529, 529}, {f.HTTP429, FaultHTTP429, 429}, {f.HTTP500, FaultHTTP500, 500},
		{f.HTTP503, FaultHTTP503, 503}, {f.Empty, FaultEmpty, 0}, {f.Disconnect, FaultDisconnect, 0},
		{f.Malformed, FaultMalformed, 0}, {f.ErrorEvent, FaultErrorEvent, 0},
	} {
		if u < c.prob {
			pl.fault, pl.status = c.fault, c.status
			break
		}
		u -= c.prob
	}
	pl.faultAfter = f.AfterToken
}

// drawStall draws the request's stall from s (the profile's or a load
// level's) on the stall stream, unless the script forced one.
func (pl *plan) drawStall(p *Profile, s *Stall) {
	if pl.scriptedStall {
		return
	}
	pl.stallAfter, pl.stall = 0, 0
	r := planRand(p, pl.key, streamStall)
	if s.Probability > 0 && r.Float64() < s.Probability {
		pl.stallAfter = s.AfterToken
		pl.stall = s.Duration.Sample(r)
	}
}

// faultsAt redraws the fault from the load level for k requests in
// flight (Profile.Load's Faults), at arrival: an HTTP error answers
// before admission. At level 1 the plan keeps the profile's draw.
func (pl *plan) faultsAt(p *Profile, k int) {
	if lv := p.levelAt(pl.key, k); lv != nil && lv.Faults != nil {
		pl.drawFault(p, lv.Faults)
	}
}

// scaled is d×f, saturating.
func scaled(d time.Duration, f float64) time.Duration {
	x := math.Round(float64(d) * f)
	if !(x < math.MaxInt64) {
		return math.MaxInt64
	}
	return time.Duration(max(x, 0))
}

// underLoad redraws the TTFT, ITL, reasoning length and stall (unless
// scripted) from the load level for k requests in flight at admission (Profile.Load), from their
// own random streams so that no other draw moves; at level 1 the plan is
// unchanged.
func (pl *plan) underLoad(p *Profile, k int) {
	lv := p.levelAt(pl.key, k)
	if lv == nil {
		return
	}
	pl.level = lv
	if lv.Stall != nil {
		pl.drawStall(p, lv.Stall)
	}
	r := planRand(p, pl.key, streamLoad)
	r.Float64() // the level choice's draw (levelAt)
	pl.reasoning = lv.ReasoningTokens.Sample(planRand(p, pl.key, streamLoadLength))
	if rho := *lv.TTFTITLCorrelation; rho != 0 {
		var itl time.Duration
		pl.ttft, itl = coupled(rho, r, lv.TTFT, lv.ITL)
		pl.itl = scaled(itl, pl.speed)
		return
	}
	pl.ttft = lv.TTFT.Sample(r)
	if pl.itl >= 0 {
		pl.itl = scaled(lv.ITL.Sample(r), pl.speed)
	}
}

// coupled draws a TTFT and a per-request ITL with Spearman correlation
// spearman through a Gaussian copula (whose normal correlation is
// 2·sin(π·spearman/6)).
func coupled(spearman float64, r *rand.Rand, ttft, itl Dist[time.Duration]) (time.Duration, time.Duration) {
	rho := 2 * math.Sin(math.Pi*spearman/6)
	z1, e := r.NormFloat64(), r.NormFloat64()
	z2 := rho*z1 + math.Sqrt(1-rho*rho)*e
	u := func(z float64) float64 { return min(max(normalCDF(z), 1e-15), 1-1e-15) } // an unbounded tail stays finite
	return fromFloat[time.Duration](ttft.quantile(u(z1))), fromFloat[time.Duration](itl.quantile(u(z2)))
}

// nextITL is the time before the next token.
func (pl *plan) nextITL(p *Profile) time.Duration {
	if pl.itl >= 0 {
		return pl.itl
	}
	d := &p.ITL
	if pl.level != nil {
		d = &pl.level.ITL
	}
	if pl.speed != 1 {
		return scaled(d.Sample(pl.stream), pl.speed)
	}
	return d.Sample(pl.stream)
}

// apply overrides the plan with a script entry.
func (pl *plan) apply(s *ScriptEntry) {
	if s.ColdStart > 0 {
		pl.coldStart = s.ColdStart
	}
	if s.TTFT > 0 {
		pl.forcedTTFT = s.TTFT
	}
	if s.Stall != nil {
		pl.stallAfter, pl.stall = s.Stall.AfterToken, s.Stall.Duration
		pl.scriptedStall = true
	}
	if s.Tokens > 0 {
		pl.output = s.Tokens
	}
	switch s.Fault {
	case "none":
		pl.fault, pl.status = FaultNone, 0
	case FaultEmpty, FaultDisconnect, FaultMalformed, FaultErrorEvent:
		pl.fault, pl.status, pl.faultAfter = s.Fault, 0, s.AfterToken
	}
	if s.Status != 0 {
		pl.status = s.Status
		pl.fault = "http_" + strconv.Itoa(s.Status)
	}
}

// Prediction is what a quiet fake does with one request: warm, nothing
// else in flight, no queue, a prefix-cache miss, no script. All times are
// from arrival, exact to the nanosecond against the served fake under
// synctest (fit_predict_test.go checks it).
type Prediction struct {
	// Status is 200, or the HTTP error status a fault answers at arrival.
	Status int
	// Fault is what Served.Fault would say ("http_529", "stall",
	// "disconnect", "empty+stall", ...; "" for none).
	Fault string
	// TTFT is the first token of any kind, reasoning included; -1 when no
	// token is sent.
	TTFT time.Duration
	// FirstAnswer is the first answer token (text, or a tool call's
	// arguments); -1 when none.
	FirstAnswer time.Duration
	// Total is when the response ends: the last event, or the
	// disconnect, malformed chunk or error event (a client stops reading
	// at a malformed chunk, though the fake streams on); 0 for an HTTP
	// error.
	Total time.Duration
	// ReasoningTokens and Tokens are the tokens streamed (Tokens includes
	// the reasoning).
	ReasoningTokens, Tokens int
	// Finish is the finish reason: "stop", "length" or "tool_calls"; "" when the stream
	// ended in a fault.
	Finish string
	// Stall is the injected stall's length.
	Stall time.Duration
}

// Predictor computes Predictions without serving: the fit package's
// replay draws a profile's outcomes with it, no clock needed.
type Predictor struct {
	p Profile
}

// NewPredictor returns a Predictor for p (defaults filled in, the
// conversation calibrated once); the error is p's validation error.
func NewPredictor(p Profile) (*Predictor, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("fakeprovider: %w", err)
	}
	return &Predictor{p: p.withDefaults()}, nil
}

// Predict is what the fake does with a request with trace ID id (its
// X-Request-ID), promptTokens prompt tokens as the fake counts them
// (characters/4) and max_tokens maxTokens (0: none). It draws exactly what
// the served fake draws for that ID and plays the same timeline.
func (pr *Predictor) Predict(id string, promptTokens, maxTokens int) Prediction {
	return pr.PredictAt(id, promptTokens, maxTokens, 1)
}

// PredictAt is Predict for a request admitted with inFlight requests in
// flight on its replica, itself included (1 or less: alone): the load
// level (Profile.Load) and SlowdownPerInflight at that load apply, as the
// served fake applies them; still no queue, cold start or cache hit.
func (pr *Predictor) PredictAt(id string, promptTokens, maxTokens, inFlight int) Prediction {
	return pr.predict(id, promptTokens, maxTokens, inFlight, nil)
}

// PredictGaps is PredictAt with the gaps between consecutive token events
// (chunks), as a client records them (latencytest's Record.Gaps): one per
// event after the first; nil when no second event is sent.
func (pr *Predictor) PredictGaps(id string, promptTokens, maxTokens, inFlight int) (Prediction, []time.Duration) {
	var gaps []time.Duration
	pd := pr.predict(id, promptTokens, maxTokens, inFlight, &gaps)
	return pd, gaps
}

func (pr *Predictor) predict(id string, promptTokens, maxTokens, inFlight int, gaps *[]time.Duration) Prediction {
	p := &pr.p
	inFlight = max(inFlight, 1)
	pl := newPlan(p, id)
	pl.faultsAt(p, inFlight)
	pl.underLoad(p, inFlight)
	slow := 1 + p.SlowdownPerInflight*float64(inFlight-1)
	out := Prediction{Status: 200, TTFT: -1, FirstAnswer: -1, Stall: pl.stall}
	var faults []string
	if pl.fault != "" {
		faults = append(faults, pl.fault)
	}
	if pl.status != 0 {
		out.Status, out.Fault, out.Stall = pl.status, pl.fault, 0
		return out
	}
	if pl.stall > 0 {
		faults = append(faults, FaultStall)
	}
	out.Fault = strings.Join(faults, "+")

	reasoning, content, finish := pl.answerShape(maxTokens)
	total := reasoning + content
	ttft := pl.forcedTTFT
	if ttft == 0 {
		ttft = saturate((float64(pl.ttft) + prefillTime(p, pl, promptTokens, 0, 1)) * slow)
	}
	t := ttft
	faultAt, stallAt := pl.cuts(total)
	errEnd := errors.New("end")
	at := func(sent, k int) error {
		if stallAt >= sent && stallAt < sent+max(k, 1) {
			t = addSat(t, pl.stall)
			stallAt = -1
		}
		if faultAt >= sent && faultAt < sent+max(k, 1) {
			// A disconnect or error event ends the stream here; a
			// malformed chunk ends it for any client that checks.
			return errEnd
		}
		return nil
	}
	sent, first := 0, true
	var prev time.Duration
	for sent < total {
		k := pl.chunk(p, sent, reasoning, total)
		if !first {
			for range k {
				t = addSat(t, saturate(float64(pl.nextITL(p))*slow))
			}
		}
		if at(sent, k) != nil {
			out.Total, out.Finish = t, ""
			return out
		}
		if first {
			out.TTFT = t
		} else if gaps != nil {
			*gaps = append(*gaps, t-prev)
		}
		prev = t
		if sent >= reasoning && out.FirstAnswer < 0 {
			out.FirstAnswer = t
		}
		first = false
		sent += k
		out.Tokens = sent
		out.ReasoningTokens = min(sent, reasoning)
	}
	if at(total, 0) != nil {
		out.Total, out.Finish = t, ""
		return out
	}
	out.Total, out.Finish = t, finish
	return out
}

// addSat is a+b, saturating.
func addSat(a, b time.Duration) time.Duration {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// answerShape caps the plan's reasoning and answer tokens at maxTokens
// (0 or less: maxOutputTokens), reasoning first, and names the finish
// reason: "length" when the cap cut the answer, "tool_calls" for a whole
// tool call, "stop" otherwise. The
// empty fault answers nothing and ends normally ("stop"): nothing hit the
// cap. The server and the Predictor both use it, so they agree.
func (pl *plan) answerShape(maxTokens int) (reasoning, content int, finish string) {
	reasoning, content, finish = pl.reasoning, pl.output, "stop"
	c := maxTokens
	if c <= 0 {
		c = maxOutputTokens
	}
	if reasoning >= c {
		reasoning, content, finish = c, 0, "length"
	} else if reasoning+content > c {
		content, finish = c-reasoning, "length"
	}
	if pl.fault == FaultEmpty {
		reasoning, content, finish = 0, 0, "stop"
	}
	if pl.toolCall && finish == "stop" && content > 0 {
		finish = "tool_calls"
	}
	return reasoning, content, finish
}

// chunk draws the size of the next chunk once sent tokens are out: one
// or more tokens, never crossing from reasoning into the answer nor past
// the total. The server and the Predictor both use it, so they agree.
func (pl *plan) chunk(p *Profile, sent, reasoning, total int) int {
	k := max(1, p.TokensPerChunk.Sample(pl.stream))
	if sent < reasoning {
		return min(k, reasoning-sent)
	}
	if len(pl.toolArgs) > 1 {
		k = min(k, pl.toolLeft(sent-reasoning))
	}
	return min(k, total-sent)
}

// drawToolCalls decides, with r (the request's tool-call stream), whether
// the answer is tool calls (Profile.ToolCalls) and how long each call's
// arguments are. The first call's length is drawn right after the coin, so
// a profile without parallel draws exactly what it drew before parallel
// existed; the count and the other calls' lengths come after. force
// makes the answer tool calls whatever the coin says (see withTools).
func (pl *plan) drawToolCalls(tc ToolCalls, r *rand.Rand, force bool) {
	if r.Float64() >= tc.Probability && !force {
		return
	}
	args := tc.ArgumentsTokens.or(Fixed(defaultArgumentsTokens))
	first := max(1, args.Sample(r))
	n := 1
	if tc.Parallel.IsSet() {
		n = max(1, tc.Parallel.Sample(r))
	}
	pl.toolArgs = make([]int, n)
	pl.toolArgs[0] = first
	total := first
	for i := 1; i < n; i++ {
		pl.toolArgs[i] = max(1, args.Sample(r))
		total += pl.toolArgs[i]
	}
	pl.textOutput, pl.output, pl.toolCall = pl.output, total, true
}

// withoutTools undoes drawToolCalls for a request that forbids tool calls
// (tool_choice none): the answer is the text it would have been.
func (pl *plan) withoutTools() {
	if pl.toolCall {
		pl.output, pl.toolCall, pl.toolArgs = pl.textOutput, false, nil
	}
}

// oneToolCall keeps only the first call of a tool-call answer, for a
// request that allows one (parallel_tool_calls false, Messages'
// disable_parallel_tool_use); no draw changes.
func (pl *plan) oneToolCall() {
	if pl.toolCall && len(pl.toolArgs) > 1 {
		pl.toolArgs = pl.toolArgs[:1]
		pl.output = pl.toolArgs[0]
	}
}

// withTools makes the answer tool calls for a request whose tool_choice
// demands one ("required", {"type":"any"} or a named tool) when the coin
// drew text: the lengths are those the tool-call stream, drawn again from
// its start, gives past the coin, as if the coin had come up tool calls.
// Only that stream is read, so every other draw stays as it was.
func (pl *plan) withTools(p *Profile) {
	if !pl.toolCall {
		pl.drawToolCalls(p.ToolCalls, planRand(p, pl.key, streamToolCall), true)
	}
}

// toolAt places the answer token i (from 0, after any reasoning) of a
// tool-call answer (see wire.ToolAt).
func (pl *plan) toolAt(i int) (call, within, n int) { return wire.ToolAt(pl.toolArgs, i) }

// toolLeft is the tokens left in the call that answer token i is in: a
// chunk never spans two calls, so each of a protocol's events belongs to
// one call.
func (pl *plan) toolLeft(i int) int {
	_, within, n := pl.toolAt(i)
	return max(1, n-within)
}

// cuts is where the plan breaks its stream of total tokens, each as the
// tokens sent before it, -1 for none: a mid-stream fault (disconnect,
// malformed or error event) and a stall.
func (pl *plan) cuts(total int) (faultAt, stallAt int) {
	faultAt, stallAt = -1, -1
	if pl.fault == FaultDisconnect || pl.fault == FaultMalformed || pl.fault == FaultErrorEvent {
		faultAt = min(pl.faultAfter, total)
	}
	if pl.stall > 0 {
		stallAt = min(pl.stallAfter, total)
	}
	return faultAt, stallAt
}
