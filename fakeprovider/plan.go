package fakeprovider

import (
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"time"
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

	reasoning int // reasoning tokens before the cap
	output    int // answer tokens before the cap

	stallAfter int
	stall      time.Duration // 0: no stall

	coldStart time.Duration // script: force a cold start of this length
	coldDraw  time.Duration // the load time if this request triggers a cold start

	itl    time.Duration // the request's ITL when Profile.ITLPerRequest; else -1
	stream *rand.Rand    // ITL and chunk-size draws, consumed while streaming
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
)

// newPlan draws a request's random outcomes.
func newPlan(p *Profile, key string) *plan {
	kh := keyHash(key)
	rng := func(purpose uint64) *rand.Rand {
		return rand.New(rand.NewPCG(p.Seed^0x9e3779b97f4a7c15, kh+purpose*0xbf58476d1ce4e5b9))
	}
	pl := &plan{key: key}

	u := rng(streamFault).Float64()
	f := p.Faults
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

	r := rng(streamTTFT)
	pl.ttft = p.TTFT.Sample(r)
	pl.prefill = p.PrefillPer1kTokens.Sample(r)

	r = rng(streamLength)
	pl.output = p.OutputTokens.Sample(r)
	pl.reasoning = p.ReasoningTokens.Sample(r)

	r = rng(streamStall)
	if p.Stall.Probability > 0 && r.Float64() < p.Stall.Probability {
		pl.stallAfter = p.Stall.AfterToken
		pl.stall = p.Stall.Duration.Sample(r)
	}

	if p.ColdStart.Duration.IsSet() {
		pl.coldDraw = p.ColdStart.Duration.Sample(rng(streamCold))
	}
	pl.stream = rng(streamTokens)
	pl.itl = -1
	if p.ITLPerRequest {
		pl.itl = p.ITL.Sample(pl.stream)
	}
	return pl
}

// nextITL is the time before the next token.
func (pl *plan) nextITL(p *Profile) time.Duration {
	if pl.itl >= 0 {
		return pl.itl
	}
	return p.ITL.Sample(pl.stream)
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
