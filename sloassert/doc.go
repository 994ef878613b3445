// Package sloassert judges latencytest results against latency SLOs with
// honest statistics, and reports a failure a person can act on.
//
//	r := latencytest.Batch{Requests: 300, Concurrency: 8}.Measure(t, p)
//	sloassert.Check(t, r,
//		sloassert.Q(sloassert.TTFT, 0.99, 2*time.Second),
//		sloassert.MaxErrorRate(0.01))
//
// # Judging
//
// [Evaluate] is the pure core: it judges a [Subject] (a result, agent
// chains or a load sweep) against [Objective] values and returns a
// [Report], one row per objective (a sweep: a report per level in
// Report.Levels). [Check] prints the failing report with t.Errorf, marks
// the test failed and returns whether all passed; every violated objective
// is reported, with the distribution, counts, errors by class and the
// slowest trace IDs. Objectives on a result's requests: [Q], [MaxCV],
// [MaxTailRatio], [MaxErrorRate], [MinDecodeRate], [MinGoodput],
// [MaxColdStart], [MaxStall], [NoCacheHits]; on chains: [ChainQ],
// [MaxChainErrorRate].
//
// # Quantiles and verdicts
//
// Quantiles are fractions (0.99 for p99) computed exactly from the raw
// values; a failed request counts as infinitely slow. A q-quantile needs
// at least [MinSamples](q) requests (p99: 100) unless [AllowSmallSample].
// Each quantile row carries a distribution-free interval
// ([ConfidenceBounds], 95% by default) and a [Verdict]: pass, fail or
// inconclusive. The point estimate gates by default and an inconclusive
// row says how many requests would decide it ([SampleSize]); [Demonstrate]
// gates on the upper bound, [Refute] on the lower. [PerWindow] judges
// every window of a long run; [Sequential] adds requests while a verdict
// is open.
//
// # Never a pass by accident
//
// Empty input, all requests failed, NaN or out-of-range limits, unknown
// error classes, too few samples, no objectives, a run cut short by its
// deadline and one shard of a split run never pass; [AllowPartial] and
// [AllowShard] accept the last two, for objectives and baselines alike.
//
// # Baselines
//
// [SaveBaseline] keeps a run's raw records; [Regression] compares a new
// run with them under a [Compare] (a quantile's bootstrap ratio, the
// tail's exceedances, the failure rate by Fisher's exact test) and fails
// on a regression. [EnvUpdateBaselines] or the flag named [UpdateFlag]
// rewrites the baseline.
//
// # Reports
//
// Check also writes [Charts] (SVG) and the [Markdown] report to the test's
// artifact directory (go test -artifacts) and appends the report to
// $GITHUB_STEP_SUMMARY ([EnvSummary]=off turns that off); [WriteReport]
// does so after Evaluate. The statistics behind each verdict and their
// measured error rates are in docs/verdicts.md in the repository.
package sloassert
