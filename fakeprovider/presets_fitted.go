package fakeprovider

import (
	"embed"
	"fmt"
)

// fittedFiles holds the presets fitted from measured raw records (source
// 000 in docs/sources.md).
//
//go:embed presets/*.yaml
var fittedFiles embed.FS

// fitted returns the builder of the preset fitted from the measured raw
// per-request records (serverless-tail-study/) by the fit package:
// presets/<name>.yaml is exactly what fit.Fit and fit.WriteProfile give
// for those records (the fit package's TestPresetFilesAreFits checks it
// byte for byte and rewrites it with TAILGUARD_UPDATE_PRESETS=1), with
// the few published numbers the records do not hold set by hand; the
// file's comments say where every number came from.
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
func fitted(name string) func() Profile {
	return func() Profile {
		data, err := fittedFiles.ReadFile("presets/" + name + ".yaml")
		if err != nil {
			panic(fmt.Sprintf("fakeprovider: preset %s: %v", name, err))
		}
		p, err := ParseProfile(data)
		if err != nil {
			panic(fmt.Sprintf("fakeprovider: preset %s: %v", name, err)) // TestPresetsParse keeps this from happening
		}
		return p
	}
}
