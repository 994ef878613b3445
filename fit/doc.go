// Package fit builds a fakeprovider.Profile from measured records and says
// how well it reproduces them.
//
// [Fit] turns records (latencytest.LoadRecords of a records.jsonl) into a
// profile and a [FitReport]; [WriteProfile] writes both as a YAML profile
// that fakeprovider loads, and [Compare] judges an existing profile against
// records. From the command line: fakellm fit records.jsonl > fitted.yaml.
//
//	recs, _ := latencytest.LoadRecords("records.jsonl")
//	prof, rep, err := fit.Fit(recs)
//	if err != nil { ... }
//	fit.WriteProfile(os.Stdout, prof, rep)
//
// Fit is a package of its own because it reads latencytest records and
// fakeprovider must not import latencytest (latencytest's tests import
// fakeprovider), so the module's import graph stays a tree.
//
// # What is fitted
//
// From the measured (non-warm-up) records: TTFT as an interpolated
// empirical distribution ([fakeprovider.Interpolated]: its quantiles are
// the records' own) with a prefill curve ([fakeprovider.Prefill]) taken
// out when the prompt size matters (a slope with t > 2): linear,
// quadratic or a power, chosen by held-out error, in the engine's own
// prompt tokens (from the mix's prompt sizes: [WithMix]), anchored at the
// smallest prompt so nothing is clamped; the per-request ITL;
// the rank correlation of TTFT and ITL; answer and reasoning lengths;
// stalls and fault rates by class; the chains' intraclass correlation.
// Two or more concurrencies in the records make load levels
// (Profile.Load), each with its own stall and fault rates. The profile's
// comments say what was modelled and what was not, and why. [WithTail]
// (off by default, never for the published presets) adds a generalised
// Pareto tail ([FitTail]) so the fake draws past the largest measured
// value.
//
// # Replay
//
// A FitReport compares the records with a replay of the profile drawn
// with fakeprovider.Predictor (exactly what a quiet fake serves, with no
// clock): each statistic shows the records' value and the replay's, and
// distributions are compared with a two-sample Kolmogorov-Smirnov test
// ([KolmogorovSmirnov]), and the TTFT of each prompt class too.
// [FitReport.Check] is fit's own verdict: every test at p >= alpha
// (default [DefaultCheckAlpha]); the commands write no profile that fails
// it unless forced. The replay has no queueing, cold starts or
// prefix-cache hits, which Fit does not fit either.
//
// # Units
//
// Durations are time.Duration; rates and ICC are fractions in [0,1];
// p-values are probabilities. Percentiles are linear interpolation between
// closest ranks, as everywhere in tailguard.
//
// docs/fit.md in the repository has the details (the prefill test and its
// measured rates, the tail, the size caps, the fidelity figures) and how
// the presets were fitted and held out.
package fit
