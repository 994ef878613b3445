package fakeprovider

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadProfileColdstartExample(t *testing.T) {
	p, err := LoadProfile("testdata/coldstart.yaml")
	require.NoError(t, err)
	want := Profile{
		Model:              "fake-model",
		Seed:               7,
		TTFT:               LogNormal(300*time.Millisecond, 1500*time.Millisecond),
		PrefillPer1kTokens: Fixed(20 * time.Millisecond),
		ITL:                Fixed(10 * time.Millisecond),
		OutputTokens:       Fixed(64),
		TokensPerChunk:     Fixed(2),
		Replicas:           1,
		SlotsPerReplica:    8,
		ColdStart:          ColdStart{AfterIdle: 5 * time.Minute, Duration: Fixed(30 * time.Second)},
		Stall:              Stall{Probability: 0.01, AfterToken: 10, Duration: Fixed(20 * time.Minute)},
		PrefixCache:        PrefixCache{Disabled: false, TTFTFactor: 0.1},
		Faults:             Faults{HTTP529: 0.005},
		Script: []ScriptEntry{
			{Request: 0, ColdStart: 30 * time.Second},
			{Request: 7, Stall: &ScriptStall{AfterToken: 10, Duration: 20 * time.Minute}},
			{Request: 12, Status: 529},
		},
		ServedLimit: 100_000,
	}
	assert.Equal(t, want, p)
	// The fields that matter most, spelled out so a failure names them.
	assert.Equal(t, "lognormal", p.TTFT.Kind)
	assert.Equal(t, 300*time.Millisecond, p.TTFT.Median)
	assert.Equal(t, 1500*time.Millisecond, p.TTFT.P99)
	require.Len(t, p.Script, 3)
	assert.Equal(t, 7, p.Script[1].Request)
	assert.Equal(t, 20*time.Minute, p.Script[1].Stall.Duration)
	assert.Equal(t, 529, p.Script[2].Status)
}

func TestLoadProfileQuickstartExample(t *testing.T) {
	p, err := LoadProfile("testdata/quickstart.yaml")
	require.NoError(t, err)
	assert.Equal(t, Profile{
		Model:          "fake-model",
		Seed:           7,
		TTFT:           LogNormal(300*time.Millisecond, 1500*time.Millisecond),
		ITL:            Fixed(10 * time.Millisecond),
		OutputTokens:   Fixed(32),
		TokensPerChunk: Fixed(2),
	}, p)
}

func TestLoadProfileErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("model: m\nttft: fast\n"), 0o600))

	_, err := LoadProfile(bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2: ")
	assert.Contains(t, err.Error(), `"fast" is not a duration`)
	assert.Contains(t, err.Error(), "(in "+bad+")")

	_, err = LoadProfile(filepath.Join(dir, "missing.yaml"))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "fakeprovider: "), err.Error())
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestParseProfileDistributions(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name   string
		yaml   string
		want   Profile
		reason string
	}{
		{"plain duration", "ttft: 200ms\n", Profile{TTFT: Fixed(200 * ms)},
			"a plain value is a fixed distribution"},
		{"plain count", "output_tokens: 64\n", Profile{OutputTokens: Fixed(64)},
			"counts are plain integers"},
		{"bare zero duration", "prefill_per_1k_tokens: 0\n", Profile{PrefillPer1kTokens: Fixed(time.Duration(0))},
			"0 is the one duration time.ParseDuration and YAML both accept without a unit"},
		{"null is unset", "ttft: ~\n", Profile{},
			"null leaves the field unset, so it takes its default"},
		{"fixed map", "ttft: {dist: fixed, value: 1s}\n", Profile{TTFT: Fixed(time.Second)},
			"the map form of fixed"},
		{"uniform", "cold_start: {after_idle: 1m, duration: {dist: uniform, min: 1s, max: 3s}}\n",
			Profile{ColdStart: ColdStart{AfterIdle: time.Minute, Duration: Uniform(time.Second, 3*time.Second)}},
			"a distribution nested in cold_start"},
		{"uniform count", "tokens_per_chunk: {dist: uniform, min: 1, max: 4}\n", Profile{TokensPerChunk: Uniform(1, 4)},
			"counts take every kind too"},
		{"normal", "itl: {dist: normal, mean: 300ms, stddev: 50ms}\n", Profile{ITL: Normal(300*ms, 50*ms)},
			"mean and stddev"},
		{"lognormal", "ttft: {dist: lognormal, median: 300ms, p99: 1.5s}\n", Profile{TTFT: LogNormal(300*ms, 1500*ms)},
			"median and p99, as latencies are usually quoted"},
		{"lognormal p99 equal to median", "ttft: {dist: lognormal, median: 1s, p99: 1s}\n", Profile{TTFT: LogNormal(time.Second, time.Second)},
			"p99 == median is a degenerate but valid lognormal (sigma 0)"},
		{"empirical", "ttft: {dist: empirical, values: [1s, 2s, 37s]}\n", Profile{TTFT: Empirical(time.Second, 2*time.Second, 37*time.Second)},
			"values drawn uniformly"},
		{"empirical count", "reasoning_tokens: {dist: empirical, values: [0, 100, 2000]}\n", Profile{ReasoningTokens: Empirical(0, 100, 2000)},
			"empirical counts"},
		{"mixture", "ttft: {dist: mixture, parts: [{weight: 0.9, dist: fixed, value: 1s}, {weight: 0.1, value: 30s}]}\n",
			Profile{TTFT: Mixture(Weighted(0.9, Fixed(time.Second)), Weighted(0.1, Fixed(30*time.Second)))},
			"the doc's example: a part without dist but with a value is fixed"},
		{"mixture of kinds", "ttft:\n  dist: mixture\n  parts:\n    - weight: 0.75\n      dist: lognormal\n      median: 200ms\n      p99: 800ms\n    - weight: 0.25\n      dist: uniform\n      min: 1s\n      max: 2s\n",
			Profile{TTFT: Mixture(Weighted(0.75, LogNormal(200*ms, 800*ms)), Weighted(0.25, Uniform(time.Second, 2*time.Second)))},
			"block style; parts of any kind"},
		{"stall duration", "stall: {probability: 0.5, after_token: 3, duration: {dist: empirical, values: [1m, 20m]}}\n",
			Profile{Stall: Stall{Probability: 0.5, AfterToken: 3, Duration: Empirical(time.Minute, 20*time.Minute)}},
			"a distribution nested in stall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseProfile([]byte(tc.yaml))
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.want, p, tc.reason)
		})
	}
}

func TestParseProfileErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		line int // 0: the error has no line
		// field is the path the message names as "line N: field: ". It is
		// "" where the message gives only the line: an unknown key names
		// itself in msg, and errors found while decoding a value (a
		// distribution, a number) do not name their field yet.
		field  string
		msg    string
		reason string // why the input must be refused
	}{
		{"unknown top-level key", "model: m\nseed: 1\ntemperature: 0.7\n", 3, "", `unknown key "temperature"`,
			"a typo must not be ignored"},
		{"unknown key in cold_start", "cold_start:\n  after_idle: 5m\n  duration: 30s\n  warmup: 1s\n", 4, "", `unknown key "warmup"`,
			"strictness reaches nested structs"},
		{"unknown key in faults", "faults:\n  http_529: 0.1\n  http_418: 0.1\n", 3, "", `unknown key "http_418"`,
			"a fault the fake cannot inject"},
		{"unknown key in stall", "model: m\nstall: {probability: 0.1, duration: 1s, after: 3}\n", 2, "", `unknown key "after"`,
			"after is not after_token"},
		{"unknown key in prefix_cache", "prefix_cache:\n  enabled: true\n  size: 10\n", 3, "", `unknown key "size" in prefix_cache`,
			"prefix_cache decodes itself and must stay strict"},
		{"unknown key in a distribution", "itl:\n  dist: normal\n  mean: 10ms\n  sd: 2ms\n", 4, "", `unknown key "sd" in distribution`,
			"sd is not stddev"},
		{"unknown key in a mixture part", "model: m\nseed: 3\nttft: {dist: mixture, parts: [{weight: 1, value: 1s, scale: 2}]}\n", 3, "", `unknown key "scale" in distribution`,
			"parts are distributions"},
		{"weight outside a mixture", "model: m\nseed: 3\nttft: {dist: fixed, value: 1s, weight: 0.5}\n", 3, "", "weight is only allowed in a mixture's parts",
			"a weight on a plain distribution means nothing"},
		{"unknown key in a script entry", "script:\n  - request: 0\n    ttft: 1s\n  - request: 1\n    delay: 1s\n", 5, "", `unknown key "delay"`,
			"the second entry, on its own line"},
		{"unknown key in a script stall", "script:\n  - {request: 2, stall: {after_token: 1, duration: 1s, why: x}}\n", 2, "", `unknown key "why"`,
			"strictness reaches the script's stall"},
		{"negative ttft", "model: m\nttft: -200ms\n", 2, "", "negative duration -200ms",
			"time does not run backwards"},
		{"negative duration in a distribution", "model: m\nseed: 2\nitl: {dist: empirical, values: [1ms, -2ms]}\n", 3, "", "negative duration -2ms",
			"one bad element spoils the list"},
		{"negative cold_start.after_idle", "cold_start:\n  duration: 30s\n  after_idle: -5m\n", 3, "cold_start.after_idle", "negative duration -5m0s",
			"a Go duration field, checked by Validate"},
		{"negative script cold_start", "script:\n  - request: 0\n  - request: 3\n    cold_start: -30s\n", 4, "script[1].cold_start", "negative duration -30s",
			"the line of the key inside the second entry"},
		{"negative count", "model: m\nseed: 3\noutput_tokens: -5\n", 3, "", "negative count -5",
			"counts are never negative"},
		{"stall.probability above 1", "stall:\n  probability: 1.5\n  duration: 1s\n", 2, "stall.probability", "probability 1.5 is above 1: a plain number is a fraction; write 1.5% or 0.015",
			"a plain number is a fraction; the hint says how to write a percentage"},
		{"stall.probability NaN", "stall:\n  probability: .nan\n  duration: 1s\n", 2, "stall.probability", `".nan" is not a probability`,
			"NaN compares false with every bound"},
		{"faults.http_529 negative", "faults:\n  http_500: 0.1\n  http_529: -0.1\n", 3, "faults.http_529", "probability -0.1 is negative",
			"negative probability"},
		{"faults sum above 1", "model: m\nfaults:\n  http_529: 0.6\n  disconnect: 0.5\n", 2, "faults", "probabilities sum to 1.1, above 1",
			"at most one fault hits a request"},
		{"lognormal p99 below the median", "model: m\nseed: 1\nttft: {dist: lognormal, median: 2s, p99: 1s}\n", 3, "", "lognormal p99 1s is below the median 2s",
			"no lognormal has that shape"},
		{"lognormal median zero", "model: m\nseed: 3\nttft: {dist: lognormal, median: 0, p99: 1s}\n", 3, "", "lognormal median must be positive",
			"log of zero"},
		{"uniform max below min", "itl:\n  dist: uniform\n  min: 30ms\n  max: 10ms\n", 2, "", "uniform max 10ms is below min 30ms",
			"block style: the line of the map's first key"},
		{"mixture weights not summing to 1", "model: m\nseed: 3\nttft: {dist: mixture, parts: [{weight: 0.5, value: 1s}, {weight: 0.4, value: 2s}]}\n", 3, "", "mixture weights sum to 0.9, not 1",
			"weights are fractions of the whole"},
		{"mixture weight above 1", "model: m\nseed: 3\nttft: {dist: mixture, parts: [{weight: 1.5, value: 1s}]}\n", 3, "ttft.parts[0].weight", "weight 1.5 is above 1: a plain number is a fraction; write 1.5% or 0.015",
			"a single weight is a fraction too"},
		{"mixture weight not a number", "itl:\n  dist: mixture\n  parts:\n    - weight: 0.5\n      value: 1s\n    - weight: half\n      value: 2s\n", 6, "itl.parts[1].weight", `"half" is not a weight`,
			"the line of the second part's weight"},
		{"mixture part with neither dist nor value", "model: m\nseed: 3\nttft: {dist: mixture, parts: [{weight: 0.5, value: 1s}, {weight: 0.5}]}\n", 3, "", "mixture part needs a dist or a value",
			"a bare weight must not silently become a fixed 0"},
		{"distribution map without dist", "model: m\nseed: 3\nttft: {value: 1s}\n", 3, "", "needs a dist key",
			"the kind is never guessed"},
		{"unknown dist kind", "model: m\nttft: {dist: gamma, mean: 1s}\n", 2, "", `unknown distribution "gamma"`,
			"only the six documented kinds"},
		{"bad duration string", "model: m\nttft: fast\n", 2, "", `"fast" is not a duration`,
			"durations need a unit"},
		{"duration without unit", "model: m\nseed: 3\nitl: 10\n", 3, "", `"10" is not a duration`,
			"10 what? only 0 may omit the unit"},
		{"percent probability above 100%", "stall:\n  probability: 150%\n  duration: 1s\n", 2, "stall.probability", "150% is outside [0%, 100%]",
			"a percentage is at most 100%"},
		{"percent not a number", "faults:\n  http_529: a%\n", 2, "faults.http_529", `"a%" is not a percentage`,
			"% follows a number"},
		{"plain 5 is not 5%", "faults:\n  http_529: 5\n", 2, "faults.http_529", "probability 5 is above 1: a plain number is a fraction; write 5% or 0.05",
			"a plain number is a fraction; 5 is an error, not 5%"},
		{"fractional replicas", "model: m\nreplicas: 1.9\n", 2, "replicas", "1.9 is not a whole number",
			"yaml would truncate 1.9 to 1"},
		{"fractional slots_per_replica", "slots_per_replica: 2.5\n", 1, "slots_per_replica", "2.5 is not a whole number",
			"half a slot"},
		{"fractional seed", "seed: 7.5\n", 1, "seed", "7.5 is not a whole number",
			"a seed is an integer"},
		{"fractional output_tokens", "output_tokens: 64.5\n", 1, "", `"64.5" is not a whole number`,
			"a count (Dist[int])"},
		{"fractional reasoning_tokens in a distribution", "reasoning_tokens: {dist: uniform, min: 1, max: 2.5}\n", 1, "", `"2.5" is not a whole number`,
			"a distribution's counts too"},
		{"fractional stall.after_token", "stall: {probability: 1%, after_token: 1.5, duration: 1s}\n", 1, "stall.after_token", "1.5 is not a whole number",
			"inside a struct that decodes itself"},
		{"fractional faults.after_token", "faults:\n  disconnect: 0.1\n  after_token: 3.0\n", 3, "faults.after_token", "3.0 is not a whole number",
			"3.0 is written as a fraction"},
		{"fractional script request", "script:\n  - {request: 0}\n  - {request: 1.5, status: 529}\n", 3, "script[1].request", "1.5 is not a whole number",
			"an arrival index"},
		{"fractional script status", "script:\n  - {request: 0, status: 529.9}\n", 2, "script[0].status", "529.9 is not a whole number",
			"a status is an integer"},
		{"fractional script tokens", "script:\n  - {request: 0, tokens: 1e3}\n", 2, "script[0].tokens", "1e3 is not a whole number",
			"1e3 is a float in YAML"},
		{"fractional script stall after_token", "script:\n  - {request: 0, stall: {after_token: 0.5, duration: 1s}}\n", 2, "script[0].stall.after_token", "0.5 is not a whole number",
			"a pointer to a struct"},
		{"fractional served_limit", "served_limit: 10.5\n", 1, "served_limit", "10.5 is not a whole number",
			"a count of requests"},
		{"percent count", "model: m\noutput_tokens: 50%\n", 2, "", `"50%" is not a whole number`,
			"counts are whole numbers"},
		{"fractional count", "model: m\nseed: 3\ntokens_per_chunk: 1.5\n", 3, "", `"1.5" is not a whole number`,
			"no rounding of what the user wrote"},
		{"replicas beyond the limit", "model: m\nreplicas: 99999999999999\n", 2, "replicas", "99999999999999 is above the limit 65536",
			"New would panic allocating a counter per replica"},
		{"nonsense replicas", "model: m\nreplicas: many\n", 2, "", "cannot unmarshal !!str `many` into int",
			"an int field"},
		{"nonsense ttft_factor", "prefix_cache:\n  ttft_factor: tenth\n", 2, "", "cannot unmarshal !!str `tenth` into float64",
			"prefix_cache decodes itself"},
		{"list for a distribution", "model: m\nseed: 3\nttft: [1s, 2s]\n", 3, "", "want a value or a distribution map",
			"an empirical distribution is spelled out"},
		{"script status 200", "script:\n  - request: 0\n    status: 200\n", 3, "script[0].status", "200 is not an HTTP error status (400-599)",
			"a script status is an error answer"},
		{"script status 600", "script:\n  - {request: 0}\n  - {request: 1, status: 600}\n", 3, "script[1].status", "600 is not an HTTP error status (400-599)",
			"above the range"},
		{"script status 399", "script:\n  - {request: 0, status: 399}\n", 2, "script[0].status", "399 is not an HTTP error status",
			"just below the range"},
		{"unknown script fault", "script:\n  - {request: 0, fault: timeout}\n", 2, "script[0].fault", `unknown fault "timeout"`,
			"only empty, disconnect, malformed, error_event or none"},
		{"after_idle without duration", "model: m\ncold_start:\n  after_idle: 5m\n", 2, "cold_start.duration", "required when cold_start.after_idle",
			"a cold start needs a load time"},
		{"initial without duration", "model: m\nseed: 3\ncold_start: {initial: true}\n", 3, "cold_start.duration", "required when",
			"same for the first request"},
		{"stall probability without duration", "model: m\nseed: 3\nstall: {probability: 0.1}\n", 3, "stall.duration", "required when stall.probability is set",
			"a stall needs a length"},
		{"negative ttft_factor", "model: m\nseed: 3\nprefix_cache: {ttft_factor: -0.5}\n", 3, "prefix_cache.ttft_factor", "-0.5 is outside [0, 1]",
			"a factor below zero makes a negative TTFT"},
		{"prefix_cache not a map", "model: m\nseed: 3\nprefix_cache: on\n", 3, "prefix_cache", "want a map",
			"enabled is spelled out"},
		{"empty input", "", 0, "", "fakeprovider: profile is empty",
			"an empty file is a mistake, not the zero profile"},
		{"blank input", "  \n\t\n", 0, "", "fakeprovider: profile is empty",
			"only whitespace is empty too"},
		{"two documents", "model: a\n---\nmodel: b\n", 0, "", "more than one YAML document",
			"the second document would be ignored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseProfile([]byte(tc.yaml))
			require.Error(t, err, tc.reason)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "fakeprovider: "), "%q lacks the package prefix", msg)
			switch {
			case tc.field != "":
				assert.Contains(t, msg, fmt.Sprintf("line %d: %s: ", tc.line, tc.field), tc.reason)
			case tc.line > 0:
				assert.Contains(t, msg, fmt.Sprintf("line %d: ", tc.line), tc.reason)
			default:
				assert.NotContains(t, msg, "line ", tc.reason)
			}
			assert.Contains(t, msg, tc.msg, tc.reason)
			assert.Zero(t, p, "a failed parse returns the zero Profile")
		})
	}
}

func TestParseProfilePrefixCache(t *testing.T) {
	for _, tc := range []struct {
		name   string
		yaml   string
		want   PrefixCache
		reason string
	}{
		{"absent", "model: m\n", PrefixCache{}, "on by default, factor left to withDefaults"},
		{"disabled", "prefix_cache: {enabled: false}\n", PrefixCache{Disabled: true}, "enabled: false sets Disabled"},
		{"enabled", "prefix_cache: {enabled: true}\n", PrefixCache{}, "enabled: true is the default"},
		{"factor", "prefix_cache: {ttft_factor: 0.25}\n", PrefixCache{TTFTFactor: 0.25}, "ttft_factor is read as written"},
		{"both", "prefix_cache:\n  enabled: false\n  ttft_factor: 0.5\n", PrefixCache{Disabled: true, TTFTFactor: 0.5}, "block style"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseProfile([]byte(tc.yaml))
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.want, p.PrefixCache, tc.reason)
		})
	}
}

func TestValidate(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name   string
		p      Profile
		msg    string // the whole error; it starts with the field's path
		reason string
	}{
		{"lognormal p99 below median", Profile{TTFT: LogNormal(2*time.Second, time.Second)},
			"ttft: lognormal p99 1s is below the median 2s", "the bound broken, in the field's units"},
		{"uniform max below min", Profile{ITL: Uniform(30*ms, 10*ms)},
			"itl: uniform max 10ms is below min 30ms", "empty range"},
		{"negative fixed count", Profile{OutputTokens: Fixed(-1)},
			"output_tokens: value is negative (-1)", "counts are never negative"},
		{"negative normal mean", Profile{PrefillPer1kTokens: Normal(-1*ms, ms)},
			"prefill_per_1k_tokens: mean is negative (-1ms)", "negative mean"},
		{"negative stddev", Profile{TokensPerChunk: Normal(2, -1)},
			"tokens_per_chunk: stddev is negative (-1)", "negative spread"},
		{"empirical without values", Profile{ReasoningTokens: Empirical[int]()},
			"reasoning_tokens: empirical distribution has no values", "nothing to draw"},
		{"mixture weights", Profile{TTFT: Mixture(Weighted(0.5, Fixed(ms)), Weighted(0.4, Fixed(2*ms)))},
			"ttft: mixture weights sum to 0.9, not 1", "weights are fractions of the whole"},
		{"mixture part weight zero", Profile{TTFT: Mixture(Weighted(0, Fixed(ms)), Weighted(1, Fixed(2*ms)))},
			"ttft.parts[0]: weight 0 is outside (0,1]", "a part that is never drawn is a mistake"},
		{"mixture part unset", Profile{TTFT: Mixture(Weighted(1, Dist[time.Duration]{}))},
			"ttft.parts[0]: no distribution", "an unset part has no default"},
		{"mixture part invalid", Profile{ColdStart: ColdStart{Initial: true, Duration: Mixture(Weighted(1, LogNormal(time.Second, ms)))}},
			"cold_start.duration.parts[0]: lognormal p99 1ms is below the median 1s", "parts are validated with their path"},
		{"unknown kind", Profile{Stall: Stall{Duration: Dist[time.Duration]{Kind: "gamma"}}},
			`stall.duration: unknown distribution "gamma" (want fixed, uniform, normal, lognormal, empirical or mixture)`, "only the six kinds"},
		{"negative replicas", Profile{Replicas: -1}, "replicas: negative (-1)", "capacity"},
		{"too many replicas", Profile{Replicas: 1<<16 + 1}, "replicas: 65537 is above the limit 65536",
			"New allocates a counter per replica: 99999999999999 of them made it panic"},
		{"negative slots", Profile{SlotsPerReplica: -2}, "slots_per_replica: negative (-2)", "capacity"},
		{"slowdown NaN", Profile{SlowdownPerInflight: math.NaN()}, "slowdown_per_inflight: NaN is outside [0, 100]", "NaN fails every comparison"},
		{"negative after_idle", Profile{ColdStart: ColdStart{AfterIdle: -time.Second, Duration: Fixed(time.Second)}},
			"cold_start.after_idle: negative duration -1s", "time does not run backwards"},
		{"initial without duration", Profile{ColdStart: ColdStart{Initial: true}},
			"cold_start.duration: required when cold_start.after_idle or cold_start.initial is set", "a load needs a length"},
		{"stall probability", Profile{Stall: Stall{Probability: 1.5, Duration: Fixed(time.Second)}},
			"stall.probability: probability 1.5 is outside [0,1]", "a fraction, not a percentage"},
		{"stall after_token", Profile{Stall: Stall{AfterToken: -1}}, "stall.after_token: negative (-1)", "token index"},
		{"stall without duration", Profile{Stall: Stall{Probability: 0.5}},
			"stall.duration: required when stall.probability is set", "a stall needs a length"},
		{"ttft_factor", Profile{PrefixCache: PrefixCache{TTFTFactor: -1}}, "prefix_cache.ttft_factor: -1 is outside [0, 1] (a cache hit is never slower)", "negative TTFT"},
		{"fault probability", Profile{Faults: Faults{HTTP429: 2}}, "faults.http_429: probability 2 is outside [0,1]", "a fraction"},
		{"fault sum", Profile{Faults: Faults{Empty: 0.5, Malformed: 0.25, HTTP503: 0.5}},
			"faults: probabilities sum to 1.25, above 1", "0.5+0.25+0.5: at most one fault per request"},
		{"fault after_token", Profile{Faults: Faults{AfterToken: -3}}, "faults.after_token: negative (-3)", "token index"},
		{"retry_after", Profile{Faults: Faults{RetryAfter: -time.Second}}, "faults.retry_after: negative duration -1s", "Retry-After"},
		{"script request", Profile{Script: []ScriptEntry{{}, {Request: -1}}}, "script[1].request: negative (-1)", "arrival indexes start at 0"},
		{"script cold_start", Profile{Script: []ScriptEntry{{ColdStart: -time.Second}}}, "script[0].cold_start: negative duration -1s", "load time"},
		{"script ttft", Profile{Script: []ScriptEntry{{TTFT: -ms}}}, "script[0].ttft: negative duration -1ms", "forced TTFT"},
		{"script stall duration", Profile{Script: []ScriptEntry{{Stall: &ScriptStall{Duration: -ms}}}},
			"script[0].stall.duration: negative duration -1ms", "forced stall"},
		{"script stall after_token", Profile{Script: []ScriptEntry{{Stall: &ScriptStall{AfterToken: -1, Duration: ms}}}},
			"script[0].stall.after_token: negative (-1)", "forced stall position"},
		{"script status", Profile{Script: []ScriptEntry{{Status: 302}}},
			"script[0].status: 302 is not an HTTP error status (400-599)", "a redirect is not an error"},
		{"script after_token", Profile{Script: []ScriptEntry{{AfterToken: -1}}}, "script[0].after_token: negative (-1)", "fault position"},
		{"script tokens", Profile{Script: []ScriptEntry{{Tokens: -1}}}, "script[0].tokens: negative (-1)", "answer length"},
		{"script fault", Profile{Script: []ScriptEntry{{Fault: "http_529"}}},
			`script[0].fault: unknown fault "http_529" (want empty, disconnect, malformed, error_event or none)`, "status faults are forced with status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			require.Error(t, err, tc.reason)
			assert.Equal(t, tc.msg, err.Error(), tc.reason)
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      Profile
		reason string
	}{
		{"zero", Profile{}, "the zero Profile is a valid fast provider"},
		{"bounds", Profile{
			Replicas: 1 << 16,
			Stall:    Stall{Probability: 1, Duration: Fixed(time.Second)},
			Faults:   Faults{HTTP529: 0.1, HTTP429: 0.2, HTTP500: 0.3, HTTP503: 0.4},
			Script:   []ScriptEntry{{Status: 400}, {Request: 1, Status: 599}, {Request: 2, Fault: "none"}, {Request: 3, Fault: FaultMalformed}},
		}, "65,536 replicas, probability 1, fault sum exactly 1, statuses 400 and 599 are all inside the bounds"},
		{"fault sum in floating point", Profile{Faults: Faults{HTTP529: 0.34, HTTP429: 0.56, HTTP500: 0.1}},
			"0.34+0.56+0.1 is 1.0000000000000002 in float64 and must still pass"},
		{"mixture weights in floating point", Profile{TTFT: Mixture(Weighted(0.34, Fixed(time.Second)), Weighted(0.56, Fixed(time.Second)), Weighted(0.1, Fixed(time.Second)))},
			"the same sum in a mixture"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.NoError(t, tc.p.Validate(), tc.reason)
		})
	}
}

// sampleN samples d n times from a PCG with a fixed seed.
func sampleN[T Quantity](d Dist[T], n int) []T {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]T, n)
	for i := range out {
		out[i] = d.Sample(r)
	}
	return out
}

// countEqual returns how many of xs equal v.
func countEqual[T comparable](xs []T, v T) int {
	n := 0
	for _, x := range xs {
		if x == v {
			n++
		}
	}
	return n
}

// binomialTol is 4 standard deviations of a count of n draws that each hit
// with probability p: 4·sqrt(n·p·(1−p)).
func binomialTol(n int, p float64) float64 { return 4 * math.Sqrt(float64(n)*p*(1-p)) }

// The statistical tests below draw from a PCG with a fixed seed, so they are
// deterministic: the same draws on every run. Their bounds are
// about 4 standard errors of the estimate, the width a correct sampler
// meets; a wrong formula misses by far more.
const nDraws = 20000

func TestDistSampleFixed(t *testing.T) {
	for _, d := range sampleN(Fixed(250*time.Millisecond), 100) {
		require.Equal(t, 250*time.Millisecond, d)
	}
	for _, c := range sampleN(Fixed(64), 100) {
		require.Equal(t, 64, c)
	}
	assert.Equal(t, []time.Duration{0, 0, 0}, sampleN(Dist[time.Duration]{}, 3), "an unset distribution draws zero")
}

func TestDistSampleHuge(t *testing.T) {
	// float64(MaxInt64) rounds up to 2^63, which no int64 holds: the draw
	// must stay the largest value, not wrap to a negative one.
	assert.Equal(t, []time.Duration{math.MaxInt64}, sampleN(Fixed(time.Duration(math.MaxInt64)), 1))
	assert.Equal(t, []int{math.MaxInt}, sampleN(Fixed(math.MaxInt), 1))
}

func TestDistSampleUniform(t *testing.T) {
	lo, hi := time.Second, 3*time.Second
	xs := sampleN(Uniform(lo, hi), nDraws)
	assert.GreaterOrEqual(t, slices.Min(xs), lo)
	assert.LessOrEqual(t, slices.Max(xs), hi)
	// The bounds are reached: 20,000 draws leave a gap of ~0.0001·(hi−lo) at
	// each end; 1% is far above that and far below a sampler stuck at lo.
	assert.Less(t, slices.Min(xs), lo+20*time.Millisecond)
	assert.Greater(t, slices.Max(xs), hi-20*time.Millisecond)
	// Half the draws fall below the midpoint: n/2 ± 4·sqrt(n/4) = 10000 ± 283.
	below := 0
	for _, x := range xs {
		if x < 2*time.Second {
			below++
		}
	}
	assert.InDelta(t, nDraws/2, below, binomialTol(nDraws, 0.5))

	assert.Equal(t, []time.Duration{2 * time.Second, 2 * time.Second}, sampleN(Uniform(2*time.Second, 2*time.Second), 2),
		"min == max draws that value")
}

func TestDistSampleLogNormal(t *testing.T) {
	median, p99 := 300*time.Millisecond, 1500*time.Millisecond
	xs := sampleN(LogNormal(median, p99), nDraws)
	slices.Sort(xs)
	// sigma = ln(1500/300)/z99 = ln 5/2.326 = 0.692. In log space the
	// sample median's standard error is sigma·sqrt(pi/2)/sqrt(n) = 0.0061
	// (0.6%), the sample p99's is sigma·sqrt(0.99·0.01)/(phi(z99)·sqrt(n))
	// = 0.692·0.0995/(0.0267·141) = 0.018 (1.8%). Bounds: 2.5% and 7%,
	// about 4 standard errors. A sigma from the p95 quantile (1.645) puts
	// the p99 95% too high.
	gotMedian := xs[nDraws/2]     // rank 10000 of 20000
	gotP99 := xs[nDraws*99/100-1] // nearest rank: ceil(0.99·20000) = 19800, index 19799
	assert.InEpsilon(t, float64(median), float64(gotMedian), 0.025, "median %v, want %v", gotMedian, median)
	assert.InEpsilon(t, float64(p99), float64(gotP99), 0.07, "p99 %v, want %v", gotP99, p99)
	assert.Positive(t, xs[0], "a lognormal is positive")

	assert.Equal(t, []time.Duration{time.Second, time.Second}, sampleN(LogNormal(time.Second, time.Second), 2),
		"p99 == median: sigma 0, every draw is the median")
}

func TestDistSampleMixture(t *testing.T) {
	a, b, c := time.Second, 2*time.Second, 30*time.Second
	xs := sampleN(Mixture(Weighted(0.2, Fixed(a)), Weighted(0.3, Fixed(b)), Weighted(0.5, Fixed(c))), nDraws)
	// Each part's count is n·w ± 4·sqrt(n·w·(1−w)): 4000 ± 226, 6000 ± 259,
	// 10000 ± 283.
	assert.InDelta(t, nDraws*0.2, countEqual(xs, a), binomialTol(nDraws, 0.2))
	assert.InDelta(t, nDraws*0.3, countEqual(xs, b), binomialTol(nDraws, 0.3))
	assert.InDelta(t, nDraws*0.5, countEqual(xs, c), binomialTol(nDraws, 0.5))
	assert.Equal(t, nDraws, countEqual(xs, a)+countEqual(xs, b)+countEqual(xs, c), "only the parts' values are drawn")

	// A rare tail part: 1% of 20,000 is 200 ± 56.
	ys := sampleN(Mixture(Weighted(0.99, Fixed(a)), Weighted(0.01, LogNormal(c, 2*c))), nDraws)
	tail := 0
	for _, y := range ys {
		if y != a {
			tail++
			assert.GreaterOrEqual(t, y, c/10, "tail draws come from the lognormal part")
		}
	}
	assert.InDelta(t, nDraws*0.01, tail, binomialTol(nDraws, 0.01))
}

func TestDistSampleEmpirical(t *testing.T) {
	vals := []time.Duration{time.Second, 2 * time.Second, 37 * time.Second}
	xs := sampleN(Empirical(vals...), nDraws)
	total := 0
	for _, v := range vals {
		// n/3 ± 4·sqrt(n·(1/3)·(2/3)) = 6667 ± 267
		assert.InDelta(t, nDraws/3.0, countEqual(xs, v), binomialTol(nDraws, 1.0/3), "value %v", v)
		total += countEqual(xs, v)
	}
	assert.Equal(t, nDraws, total, "only the listed values are drawn")
}

func TestDistSampleCountsRound(t *testing.T) {
	// Uniform on [1, 2] rounds to 1 below 1.5 and to 2 above: half each.
	// Truncation would give (almost) all 1s.
	xs := sampleN(Uniform(1, 2), nDraws)
	assert.Equal(t, nDraws, countEqual(xs, 1)+countEqual(xs, 2), "only 1 and 2")
	assert.InDelta(t, nDraws/2, countEqual(xs, 2), binomialTol(nDraws, 0.5))

	// A lognormal count keeps its median: the continuous draws around 3.0
	// (within its 0.8% standard error) all round to 3.
	ys := sampleN(LogNormal(3, 30), nDraws)
	slices.Sort(ys)
	assert.Equal(t, 3, ys[nDraws/2])
}

func TestDistSampleNormalTruncated(t *testing.T) {
	mean, sd := 10*time.Millisecond, 20*time.Millisecond
	xs := sampleN(Normal(mean, sd), nDraws)
	assert.GreaterOrEqual(t, slices.Min(xs), time.Duration(0), "never negative")
	// Truncation at zero puts P(X < 0) = Phi(−0.5) = 0.3085 of the draws at
	// exactly 0: 6171 ± 4·sqrt(n·0.3085·0.6915) = 6171 ± 261. Redrawing or
	// mirroring negative draws would leave almost none at 0.
	assert.InDelta(t, nDraws*0.3085, countEqual(xs, 0), binomialTol(nDraws, 0.3085))

	for _, c := range sampleN(Normal(1, 5), 1000) {
		require.GreaterOrEqual(t, c, 0)
	}
}

func TestParseProfileRejectsDuplicatesAndUnboundedFactors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"duplicate key in a distribution: which one was meant?", "ttft: {dist: fixed, value: 1s, value: 2s}\n", `line 1: ttft.value: key "value" given twice`},
		{"infinite cache factor would overflow TTFT", "prefix_cache: {ttft_factor: .inf}\n", "line 1: prefix_cache.ttft_factor: +Inf is outside [0, 1]"},
		{"a cache hit slower than a miss", "prefix_cache: {ttft_factor: 2}\n", "prefix_cache.ttft_factor: 2 is outside [0, 1]"},
		{"infinite slowdown would overflow TTFT", "slowdown_per_inflight: .inf\n", "line 1: slowdown_per_inflight: +Inf is outside [0, 100]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProfile([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// Percentages carry %, as in sloassert specs; a plain number is a fraction.
func TestParseProfilePercentages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		yaml   string
		get    func(Profile) float64
		want   float64
		reason string
	}{
		{"fault as a percentage", "faults: {http_529: 0.5%}\n", func(p Profile) float64 { return p.Faults.HTTP529 }, 0.005,
			"0.5% is the fraction 0.005, divided in decimal so it is exactly that float"},
		{"fault as a fraction", "faults: {http_529: 0.005}\n", func(p Profile) float64 { return p.Faults.HTTP529 }, 0.005,
			"a plain number stays a fraction"},
		{"error_event as a percentage", "faults: {error_event: 2%}\n", func(p Profile) float64 { return p.Faults.ErrorEvent }, 0.02,
			"the new fault reads the same way"},
		{"stall probability", "stall: {probability: 1%, duration: 1s}\n", func(p Profile) float64 { return p.Stall.Probability }, 0.01,
			"stall.probability is a probability too"},
		{"100%", "stall: {probability: 100%, duration: 1s}\n", func(p Profile) float64 { return p.Stall.Probability }, 1,
			"the upper bound is allowed"},
		{"plain 1", "faults: {empty: 1}\n", func(p Profile) float64 { return p.Faults.Empty }, 1,
			"1 is the fraction 1, not 1%"},
		{"mixture weight", "ttft: {dist: mixture, parts: [{weight: 90%, value: 1s}, {weight: 0.1, value: 2s}]}\n",
			func(p Profile) float64 { return p.TTFT.Parts[0].Weight }, 0.9, "weights are shares as well"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseProfile([]byte(tc.yaml))
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.want, tc.get(p), tc.reason)
		})
	}
}

func TestProfileSizeLimit(t *testing.T) {
	// A valid profile padded with a comment to one byte over 1 MiB.
	big := []byte("model: m\n#" + strings.Repeat("x", maxProfileBytes-len("model: m\n#")) + "\n")
	require.Equal(t, maxProfileBytes+1, len(big))
	_, err := ParseProfile(big)
	require.Error(t, err, "a profile over 1 MiB is refused before yaml reads it")
	assert.Contains(t, err.Error(), "fakeprovider: profile is 1048577 bytes, above the limit of 1048576 (1 MiB)")

	exact := slices.Concat(big[:len(big)-2], []byte("\n"))
	require.Equal(t, maxProfileBytes, len(exact))
	_, err = ParseProfile(exact)
	require.NoError(t, err, "exactly 1 MiB is allowed")

	path := filepath.Join(t.TempDir(), "big.yaml")
	require.NoError(t, os.WriteFile(path, big, 0o600))
	_, err = LoadProfile(path)
	require.Error(t, err, "LoadProfile stops reading after 1 MiB")
	assert.Contains(t, err.Error(), "fakeprovider: profile "+path+" is larger than the limit of 1048576 bytes (1 MiB)")
}
