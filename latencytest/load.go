package latencytest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/machine"
	"github.com/tailguard/tailguard/internal/shard"
)

// Load is what Batch, OpenLoop and Chain share, embedded in each (so
// b.Prompt reads through it): what each request asks and how long it may
// take, and how the run is named, placed, kept and split. The zero value
// of every field is its documented default. Run reads these fields only,
// never the environment; Measure fills the unset ones from it first
// (FromEnv).
type Load struct {
	// Prompt, when set, is what every request asks: it replaces a
	// Batch's or OpenLoop's mix (a Replay arrival's PromptTokens still
	// wins) and opens each chain of a Chain (default: one sentence asking for the next step of a plan).
	Prompt string
	// NoNonce turns off the unique leading nonce (one a request, or one a
	// chain), to measure the cache on purpose. Default: every prompt
	// starts with a nonce.
	NoNonce bool
	// MaxTokens, when set, caps every request: it overrides the mix's
	// caps (a Replay arrival's MaxTokens still wins). A Chain's default
	// is 64 per call.
	MaxTokens int
	// Temperature is sent when set; nil leaves the provider's default (and
	// the disclosure says so). It must be in [0, 2].
	Temperature *float64
	// FirstTokenTimeout and TotalTimeout bound each request (0: none); the
	// hard cap (default 150s) bounds it always. None may
	// be negative.
	FirstTokenTimeout time.Duration
	TotalTimeout      time.Duration
	HardCap           time.Duration
	// Label prefixes trace IDs; it may not hold white space. Default
	// "c<Concurrency>" for a Batch, "ol" for an OpenLoop, "chain" for a
	// Chain.
	Label string
	// Location says where the client ran, for the disclosure. Default
	// (FromEnv): the TAILGUARD_LOCATION environment variable.
	Location string
	// KeepContent writes the answer text (Record.Content) into the
	// records.jsonl artifact of Measure. Default false: answers may hold
	// what a test should not keep, so the artifact has timings only; the
	// returned result keeps every answer either way.
	KeepContent bool
	// Shard, when set, makes this process send only its share of the run
	// (see Shard for how each runner splits it). Zero: the whole run, or
	// (FromEnv) the TAILGUARD_SHARD environment variable.
	Shard Shard
	// StartAt, when set, is the instant the run waits for before its
	// first request, to align the shards of one run; it obeys the rules
	// of EnvStartAt (at most 10 minutes ahead, at most a minute
	// past, ignored in virtual time when real). Zero: start at once, or
	// (FromEnv) the TAILGUARD_START_AT environment variable.
	StartAt time.Time
	// Cancel cancels some requests on purpose (see Cancel). Zero: none.
	Cancel Cancel

	shardSrc string // where Shard came from: "Shard" or EnvShard
	startSrc string // where StartAt came from: "StartAt" or EnvStartAt
}

// FromEnv returns l with its unset fields taken from the environment:
// Shard from TAILGUARD_SHARD (EnvShard), StartAt from TAILGUARD_START_AT
// (EnvStartAt), Location from TAILGUARD_LOCATION (EnvLocation). A field
// already set wins over its variable. Measure calls it before Run, which
// never reads the environment; call it yourself to give Run the same
// defaults. The error names the variable whose value is unreadable.
func (l Load) FromEnv() (Load, error) {
	if l.Shard.IsZero() {
		if v, ok := lookupEnvOK(EnvShard); ok && v != "" {
			sh, err := shard.Parse(v)
			if err != nil {
				return l, fmt.Errorf("latencytest: %s=%q: %w", EnvShard, v, err)
			}
			l.Shard, l.shardSrc = sh, EnvShard
		}
	}
	if l.StartAt.IsZero() {
		at, ok, err := startAt()
		if err != nil {
			return l, err
		}
		if ok {
			l.StartAt, l.startSrc = at, EnvStartAt
		}
	}
	if l.Location == "" {
		l.Location = lookupEnv(EnvLocation)
	}
	return l, nil
}

// normalized fills the shared defaults (label the runner's own default
// label) and appends to errs what is wrong, each error naming its key.
func (l Load) normalized(label string, errs []error) (Load, []error) {
	if l.HardCap == 0 {
		l.HardCap = defaults.HardCap
	}
	if l.Label == "" {
		l.Label = label
	}
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(l.MaxTokens < 0, "max_tokens %d < 0", l.MaxTokens)
	check(l.FirstTokenTimeout < 0, "first_token_timeout %v < 0", l.FirstTokenTimeout)
	check(l.TotalTimeout < 0, "total_timeout %v < 0", l.TotalTimeout)
	check(l.HardCap < 0, "hard_cap %v < 0", l.HardCap)
	check(l.Temperature != nil && !(*l.Temperature >= 0 && *l.Temperature <= 2), "temperature %v outside [0,2]", deref(l.Temperature))
	check(strings.ContainsAny(l.Label, " \t\n"), "label %q contains white space", l.Label)
	if err := l.Cancel.Check(); err != nil {
		errs = append(errs, err)
	}
	if l.shardSrc == "" {
		l.shardSrc = "Shard"
	}
	if l.startSrc == "" {
		l.startSrc = "StartAt"
	}
	if l.Shard.IsZero() {
		l.Shard = Shard{Index: 0, Count: 1}
	} else if err := l.Shard.Check(); err != nil {
		errs = append(errs, fmt.Errorf("shard %d/%d: %w", l.Shard.Index, l.Shard.Count, err))
	}
	return l, errs
}

// request is a request with l's cap, temperature and timeouts.
func (l Load) request(id string, msgs []Message) Request {
	req := Request{ID: id, Messages: msgs, MaxTokens: l.MaxTokens, Temperature: l.Temperature,
		FirstTokenTimeout: l.FirstTokenTimeout, TotalTimeout: l.TotalTimeout, HardCap: l.HardCap}
	req.CancelAfter, req.CancelAfterTokens = l.Cancel.For(id)
	return req
}

// limit is one request's longest time (TotalTimeout or the hard cap).
func (l Load) limit() time.Duration {
	return Request{TotalTimeout: l.TotalTimeout, HardCap: l.HardCap}.limit()
}

// temperatureNote renders the temperature for the disclosure's box 11.
func (l Load) temperatureNote() string {
	if l.Temperature == nil {
		return "provider default (not sent)"
	}
	return fmt.Sprint(*l.Temperature)
}

// waitStart waits for l.StartAt (normalized). err is a configuration
// error (an instant out of bounds, naming l's source: StartAt or
// TAILGUARD_START_AT); stopped says why ctx ended the wait. Inside a
// synctest bubble (virtual time, which starts in 2000) a real instant
// (2001 or later) is ignored, with one log line per process and a note in
// box 9: it cannot be reached there, and it aligns real-time shards only.
// A virtual instant is waited for as usual.
func (l Load) waitStart(ctx context.Context) (al alignment, stopped string, err error) {
	at, src := l.StartAt, l.startSrc
	if at.IsZero() {
		return al, "", nil
	}
	al.src = src
	al.at = at
	if machine.VirtualClock(time.Now()) && !machine.VirtualClock(at) {
		al.ignored = true
		ignoreInBubble(src, at)
		return al, "", nil
	}
	aligned.Lock()
	again := aligned.at.Equal(at)
	aligned.Unlock()
	if again {
		al.again = true
		return al, "", nil
	}
	now := time.Now()
	switch d := at.Sub(now); {
	case d > defaults.MaxStartWait:
		return al, "", fmt.Errorf("latencytest: %s%s%s is %v away, more than %v (the most a start instant may be ahead)",
			src, srcSep(src), at.UTC().Format(time.RFC3339Nano), d.Round(time.Second), defaults.MaxStartWait)
	case -d > defaults.MaxStartLate:
		return al, "", fmt.Errorf("latencytest: %s%s%s passed %v ago, more than %v (the most a start instant may be past): this shard would not run alongside the others",
			src, srcSep(src), at.UTC().Format(time.RFC3339Nano), (-d).Round(time.Second), defaults.MaxStartLate)
	case d > 0:
		t := time.NewTimer(d)
		select {
		case <-t.C:
			al.waited = d
		case <-ctx.Done():
			t.Stop()
			return al, fmt.Sprintf("the context ended while waiting for %s (%s)", src, context.Cause(ctx)), nil
		}
	default:
		al.late = -d
	}
	aligned.Lock()
	aligned.at = at
	aligned.Unlock()
	return al, "", nil
}
