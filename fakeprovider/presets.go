package fakeprovider

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// presetFiles holds every preset: presets/<name>.yaml, whose comments
// name its source and say what it reproduces.
//
//go:embed presets/*.yaml
var presetFiles embed.FS

// Presets returns the preset names, sorted.
func Presets() []string {
	files, _ := fs.Glob(presetFiles, "presets/*.yaml")
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, strings.TrimSuffix(strings.TrimPrefix(f, "presets/"), ".yaml"))
	}
	slices.Sort(names)
	return names
}

// Preset returns the named preset's profile; the error lists the names.
func Preset(name string) (Profile, error) {
	if !slices.Contains(Presets(), name) {
		return Profile{}, fmt.Errorf("fakeprovider: unknown preset %q (have %s)", name, strings.Join(Presets(), ", "))
	}
	data, err := presetFiles.ReadFile("presets/" + name + ".yaml")
	if err != nil {
		return Profile{}, fmt.Errorf("fakeprovider: preset %s: %w", name, err)
	}
	p, err := ParseProfile(data)
	if err != nil {
		return Profile{}, fmt.Errorf("fakeprovider: preset %s: %w", name, err) // TestPresetsValidate keeps this from happening
	}
	// A preset's cache saves prefill, as in vLLM: an agent whose history is
	// cached keeps its base TTFT, as measured chain calls did.
	p.PrefixCache.Scope = CacheScopePrefill
	return p, nil
}

// The presets reproduce published measurements of real serverless endpoints.
// docs/sources.md names each source; the numbers below (and in the tests'
// source strings) are its numbering:
//
//	000  p50 vs p99 / agent chains, DigitalOcean Serverless Inference,
//	     2026-07-27, client in NYC2, streaming, temperature 0, max_tokens 64,
//	     one short fixed prompt; 75 requests per cell at c=1/5/20 and 30
//	     chains of 10 sequential calls per model; TTFT = first *content*
//	     token. Raw per-request data: serverless-tail-study/.
//	001  benchmarking levers, mistral-3-14B (cross-check only).
//	002  48 h soak, 2026-10-28..30, client in blr1 (Bangalore), one request
//	     every 10 min per model, random nonce, max_completion_tokens 2000,
//	     prompts of ~170 / ~1,100 / ~10k tokens; TTFT = first token of any
//	     kind (reasoning included); tok/s = (completion_tokens-1)/(t_last-t_first).
//	004  one model on three anonymised providers, NYC1, >= 75 sequential
//	     requests per cell at c=1, fixed short prompt: TTFT median, p95, CV%.
//
// Conventions: a percentile is numpy's linear interpolation; CV% is the
// sample standard deviation (n-1) over the mean, times 100. Every preset
// reproduces its published statistics within 15% when driven as its study
// drove the real endpoint (presets_test.go checks each one, naming its
// source), except what a small sample cannot pin that tightly: a count of
// a few in 15 or 75 requests must be consistent with the preset's rate,
// and a quantile near the top of 300 clustered chain calls must lie in the
// sample's 95% interval. Each preset has room for 32 concurrent requests, so nothing
// queues at the concurrencies the studies used, and keeps the prefix cache
// on at prefill scope (a hit saves the cached tokens' prefill, not the base
// TTFT, as the studies' chains showed): a study's prompts began with a
// nonce or were measured cold, so send a unique leading nonce to reproduce
// them. Latencies measured from a client
// include that client's network path (NYC2, NYC1 or Bangalore).
//
// Two kinds of preset live in presets/. The ones fitted from measured raw
// per-request records (serverless-tail-study/) by the fit package are
// exactly what fit.Fit and fit.WriteProfile give for those records (the
// fit package's TestPresetFilesAreFits checks it byte for byte and
// rewrites them with TAILGUARD_UPDATE_PRESETS=1), with the few published
// numbers the records do not hold set by hand; the file's comments say
// where every number came from.
//
// The fitted presets are:
//
//	mistral-3-14b           the c=1/5/20 cells (225 requests): TTFT and ITL
//	                        per request at c=1, load levels at 5 and 20;
//	                        prefill 35 ms per 1k tokens (source 001)
//	mistral-3-14b-chain     the 30 chains of 10 calls (ICC of log call totals)
//	gpt-oss-120b            the c=1/5/20 cells; its TTFT is the first *answer*
//	                        token (the records do not time the reasoning
//	                        before it), empty answers as reasoning that
//	                        reaches the 64-token cap
//	llama-4-maverick        the c=1/5/20 cells; the stalled stream (1 of the
//	                        525 measured maverick requests, 1,182.4 s after the
//	                        first token) set by hand
//	llama-4-maverick-chain  the 30 chains, with their stall and ICC 0.53
//	llama-3.3-70b           the 15 bounded sequential requests
//
// Each reproduces its records' percentiles (they are interpolated
// empirical distributions of them) and passes two-sample KS tests against
// them; hold-out tests (fit on half the records, test on the other half)
// and what they show are in docs/fit.md. Drive them as the measurements did:
// a unique leading nonce per request (the prefix cache is on at prefill
// scope), max_tokens 64, closed loops at the measured concurrencies.
//
// The others are made by hand from published statistics (sources 000,
// 002 and 004): gpt-oss-120b-chain, deepseek-v3.2, glm-5.3, gemma-4-31b,
// deepseek-v4-pro-a/b/c and kimi-k2.6-a/b/c. A lognormal's p99 in them is
// median·exp(log-sd·2.3263), the log-sd their notes give.
//
// The three-provider presets (004: deepseek-v4-pro-a/b/c, kimi-k2.6-a/b/c)
// publish TTFT
// only: median, p95 and CV% per provider, at c=1 with a short fixed prompt,
// from NYC1. Their ITL and answer length are the package defaults (10 ms,
// 64 tokens): nothing about them was published. Cold starts ("差不多每二十个
// 请求里就有一个会踩中冷启动", "短则 10 秒长则 90 秒") are drawn per request as
// part of the TTFT, not through ColdStart, which needs idle time: 004's
// requests were a few seconds apart.
//
// A CV above 500% with a p95 of a few seconds needs a rare, very long
// component: with a cold share p, the CV cannot exceed sqrt((1-p)/p). So
// presets b and c of DeepSeek and a and c of Kimi draw 0.25-0.5% of requests
// at 2.3-7 minutes, longer than the "10 to 90 s" the text gives for a cold
// start; their p99 is ~20 s. Note too that the sample CV of n requests is
// at most sqrt(n) (866% at n = 75): 989% and 1,266% need n >= 98 and 161.
