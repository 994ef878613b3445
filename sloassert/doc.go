// Package sloassert judges latencytest results against latency SLOs with
// honest statistics, and reports a failure a person can act on.
//
// The pure core is Evaluate (and EvaluateChains), which returns a Report;
// Check (and CheckChains) prints it with t.Errorf and marks the test
// failed. The single-objective assertions (Quantile, P50, P95, P99, CV,
// TailRatio, ErrorRate, ChainTotal) take a TestingT, which *testing.T and
// testify's mocks satisfy, and return whether the objective held. Every
// violated objective is reported, not just the first.
//
// # Percentiles
//
// Quantiles are fractions in (0,1): 0.99 for p99. They are computed exactly
// from the raw values by linear interpolation (numpy's default), in
// latencytest.Sample. A failed request counts as infinitely slow.
//
// # Sample size
//
// An objective on quantile q needs n >= ceil(1/min(q, 1-q)) samples (p95:
// 20, p99: 100, p99.99: 10,000; low quantiles too: a p1 decode-rate floor
// needs 100); below that it fails and says how many it needs ("p99 needs
// n >= 100 (have 75)"), unless the test opts in with AllowSmallSample. The
// rule counts requests: pooled ITL gaps of two requests are not a p99. An
// error-rate objective with limit max needs n >= ceil(1/max) requests (1%:
// 100): with fewer, one failure breaks it and a clean run shows nothing.
//
// # Verdicts and confidence
//
// Every quantile row carries a distribution-free interval: each side a
// one-sided order-statistic bound at the objective's confidence (default
// 95%; LowerBound, UpperBound, ConfidenceBounds), each computed on its own.
// Its verdict is pass when the upper bound is within budget, fail when the
// lower bound is over it, and inconclusive in between (or while a bound
// does not exist: p99's upper bound at 95% needs n >= 299, its lower bound
// only the rule's 100). The policy decides what gates:
//
//   - point (default): the point estimate gates; an inconclusive row says
//     "inconclusive at 95%: [lo, hi]" and about how many requests would
//     decide it (SampleSize), so a coin flip is not mistaken for a
//     measurement. At n = 300 it passes a provider whose true p99 is 10%
//     over budget about a third of the time (policy_sim_test.go).
//   - Demonstrate(c): passes only when the upper bound is within budget; it
//     passes a provider exactly at budget at most 1-c of the time.
//   - Refute(c): fails only when the lower bound is over budget; it fails a
//     provider exactly at budget at most 1-c of the time.
//
// ITL pools every gap, but a request's gaps share its decode pace, so its
// bounds rank the pooled gaps as the effective number of independent
// values they hold (the row says how many: the pooled count over its
// design effect, at most one per request when a request's gaps move as
// one). PerWindow splits the confidence over its windows as Sequential
// does over its looks.
//
// Confidences are fractions (0.95); Demonstrate(95) fails and says so.
// SampleSize(q, confidence, power, level) plans a run: the requests needed
// to decide the objective with that power when the budget sits at the true
// level-quantile. Sequential runs (latencytest.Batch.Until with
// Sequential) send more requests in stages only while a verdict is open,
// splitting the confidence across the looks (Bonferroni).
//
// # Never a false pass
//
// Empty input, all requests failed, NaN or out-of-range limits (a percent
// where a fraction belongs: MaxErrorRate(50)), unknown error classes, a
// clock the provider never observed (no token event and a zero TTFT), too
// few samples, or no objectives at all never pass. A run its deadline cut
// short (Result.Partial) fails every objective unless the objective allows
// it (AllowPartial), and the report says how much ran; a sweep level that
// never ran fails (EvaluateSweep). A merge of shards with one missing or
// cut is partial too (latencytest.MergeRecords). One shard of a split run
// (Result.Shard, under TAILGUARD_SHARD) fails every objective with
// "shard i of n: merge the shards, then judge" unless the objective
// allows it (AllowShard); the report's first line names the shard.
//
// # Chains
//
// TailProbability(q, n) = 1-(1-q)^n is the chance that an n-call task
// meets a q tail. ChainTotal and ChainQ judge measured chain totals, the
// ground truth; a chain with a failed call (an empty answer included)
// never finished. Task.PerCall works a task-level target back to a
// per-call quantile and budget that suffice: a planning figure, not a
// gate (a provider can miss it and still meet the task target).
//
// # Baselines
//
// SaveBaseline keeps a run's raw records under testdata/; Regression (or
// Compare.Evaluate) compares a new run with it and asks three questions, a
// yes to any being a regression. Did a quantile move: a seeded bootstrap
// interval on the ratio current/baseline whose lower end exceeds 1 + the
// allowed increase (default 20%, or the baseline's run-to-run gap when it
// holds a repeat) while the increase exceeds a floor (default 50 ms). Did
// the tail grow: an exact exceedance test, more current requests beyond
// the baseline's slowest values (after that allowance) than chance
// allows. Did more requests fail: Fisher's exact test, one-sided, and a
// rise of more than FailureFloor (default half a percentage point). Failed
// requests count alike on both sides: two failed quantiles are no change,
// so a provider that fails 4% of its requests can have a baseline. A
// Mann-Whitney U test of the whole distribution is reported, not gating (a
// tail regression barely moves ranks). The error rates are measured by
// seeded simulation of the presets (TestBaselineSimulation). Rewrite a
// baseline with TAILGUARD_UPDATE_BASELINES=1, or with -update once the
// test package defines that flag (sloassert registers none, to clash with
// no one):
//
//	var _ = flag.Bool(sloassert.UpdateFlag, false, "rewrite baselines")
//
// # Reports
//
// Check, CheckChains and CheckSweep also write, when the test has an
// artifact directory (go test -artifacts), SVG charts (the CDF of TTFT and
// total with the quantiles and budgets marked; latency over time for long
// or open-loop runs; p50/p95/p99 against concurrency for a sweep) and a
// Markdown report, and append the report to $GITHUB_STEP_SUMMARY when it
// is set (TAILGUARD_SUMMARY=off turns that off).
package sloassert
