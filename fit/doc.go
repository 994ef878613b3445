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
// From the measured (non-warm-up) records: TTFT (first token of any kind;
// the first answer token when a record has none), less a prefill slope per
// 1k prompt tokens (least squares of TTFT on usage prompt_tokens within
// each concurrency, kept when its t statistic against its
// heteroscedasticity-robust standard error is above 2, however narrow
// the prompts' range; the profile's comments say whether it was kept and
// why); the per-request ITL
// (time from the first to the last token over the tokens after the first);
// the Spearman rank correlation of a request's TTFT and ITL
// (Profile.TTFTITLCorrelation); answer and reasoning lengths; stalls (one
// silence far longer than the request's own pace); fault rates by error
// class; and, when the records hold chains, the intraclass correlation of
// log call totals and the chains' measured speeds as its shape
// (Profile.Conversation). When the records hold two or more concurrencies
// (Record.Concurrency) with 20 or more first tokens each, the lowest is
// the profile's own TTFT, ITL, reasoning lengths, correlation, stall and
// fault rates, and each other one is a load level of its own
// (Profile.Load: a closed loop at concurrency c keeps c requests in
// flight), with its own stall and fault rates (LoadLevel.Stall,
// LoadLevel.Faults), so that stalls seen only at one load are served
// at that load only. Latencies are interpolated
// empirical distributions of the observed values
// ([fakeprovider.Interpolated]): the honest default, whose quantiles are the
// records' own. Counts are plain empirical distributions. Very large
// fits keep evenly spaced quantiles so the profile stays loadable; the
// report notes it. With [WithTail] (off by default, and
// never for the published presets), each TTFT and ITL distribution of 30
// or more values gets a generalised Pareto tail over its top values
// (probability-weighted moments; [FitTail]), so the fake draws past the
// largest measured value.
//
// # Replay
//
// A FitReport compares the records with a replay of the profile: many
// requests (and chains) drawn with fakeprovider.Predictor, which computes
// exactly what a quiet fake serves for a trace ID, at the record's
// concurrency in flight. So the replay needs no clock and no *testing.T;
// it has no queueing, cold starts from idle time or prefix-cache hits,
// which Fit does not fit either. When the records hold inter-token gaps,
// so does the replay, and stalls are found in both the same way: the
// report's stall share is what a served fake measured by latencytest
// shows. Each statistic shows the records' value
// and the replay's, and the distributions are compared with a two-sample
// Kolmogorov-Smirnov test ([KolmogorovSmirnov]).
//
// # Units
//
// Durations are time.Duration; rates and ICC are fractions in [0,1];
// p-values are probabilities. Percentiles are linear interpolation between
// closest ranks, as everywhere in tailguard.
//
// How the presets were fitted and how well they hold out is in docs/fit.md
// in the repository.
package fit
