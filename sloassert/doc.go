// Package sloassert judges latencytest results against latency SLOs with
// honest statistics, and reports a failure a person can act on.
//
// State the objectives and check them:
//
//	r := latencytest.Batch{Requests: 300, Concurrency: 8}.Measure(t, p)
//	sloassert.Check(t, r,
//		sloassert.Q(sloassert.TTFT, 0.99, 2*time.Second),
//		sloassert.MaxErrorRate(0.01))
//
// [Evaluate] is the pure core: it returns a [Report] with one row per
// [Objective]. [Check] prints the report with t.Errorf and marks the test
// failed. Both take any [Subject]: a result, agent chains ([ChainQ],
// [MaxChainErrorRate]) or a load sweep (a report per level). Every violated objective
// is reported, not just the first, and the report names the slowest trace
// IDs, the errors by class and what the disclosure lacks.
//
// Quantiles are fractions (0.99 for p99) computed exactly from the raw
// values; a failed request counts as infinitely slow. An objective on
// quantile q needs at least [MinSamples](q) requests (p99: 100) unless it
// opts in with [AllowSmallSample]. Each quantile row carries a
// distribution-free confidence interval ([ConfidenceBounds], default 95%)
// and a [Verdict]: pass, fail, or inconclusive. By default the point
// estimate gates and an inconclusive row says how many requests would
// decide it ([SampleSize]); [Demonstrate] gates on the upper bound (pass
// only when shown within budget), [Refute] on the lower bound (fail only
// when shown over it). [Sequential] adds requests in stages only while a
// verdict is open.
//
// Nothing passes by accident: empty input, all requests failed, NaN or
// out-of-range limits, unknown error classes, too few samples, no
// objectives, a run cut short by its deadline ([AllowPartial] to accept
// it) and one shard of a split run ([AllowShard]) never pass.
//
// [SaveBaseline] keeps a run's raw records; [Regression] compares a new run
// with them (a quantile's bootstrap ratio, the tail's exceedances, the
// failure rate by Fisher's exact test) and fails on a regression. Rewrite
// baselines with TAILGUARD_UPDATE_BASELINES=1 or the flag named
// [UpdateFlag] once the test package defines it.
//
// When the test has an artifact directory (go test -artifacts), Check also
// writes SVG charts and a Markdown report, and appends the report to
// $GITHUB_STEP_SUMMARY when it is set (TAILGUARD_SUMMARY=off turns that
// off).
//
// The statistics behind each verdict (the sample-size rule, the bounds and
// policies, pooled inter-token gaps, chains, the baseline tests and their
// measured error rates) are in docs/verdicts.md in the repository.
package sloassert
