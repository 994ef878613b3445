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
// An objective on quantile q needs n >= ceil(1/(1-q)) samples (p95: 20,
// p99: 100); below that it fails and says how many it needs ("p99 needs
// n >= 100 (have 75)"), unless the test opts in with AllowSmallSample.
//
// # Confidence
//
// Opt-in per objective, with distribution-free order-statistic bounds
// (ConfidenceBounds): Demonstrate(c) passes only when the upper bound at
// confidence c is within budget (p99 at 95% needs n >= 299); Refute(c)
// fails only when the lower bound is over budget, for noisy shared CI
// runners. The report names the bound and the order statistic behind it.
//
// # Never a false pass
//
// Empty input, all requests failed, NaN, or no objectives at all never
// pass.
//
// # Chains
//
// TailProbability(q, n) = 1-(1-q)^n is the chance that an n-call task
// meets a q tail. Task.PerCall works a task-level target back to a per-call
// quantile and budget. ChainTotal judges measured chain totals, the ground
// truth; a chain with a failed call (an empty answer included) never
// finished.
//
// # Baselines
//
// SaveBaseline keeps a run's raw records under testdata/; Regression (or
// Compare.Evaluate) compares a new run with it per quantile: a seeded
// bootstrap interval on the ratio current/baseline, and a Mann-Whitney U
// test on the whole distribution (reported, not gating: a tail regression
// barely moves ranks). A quantile regresses only when the interval's lower
// end exceeds 1 + the allowed increase (default 20%), the absolute increase
// exceeds a floor (default 50 ms) and, when the baseline holds a repeat,
// the change exceeds its run-to-run gap. Rewrite a baseline with
// TAILGUARD_UPDATE_BASELINES=1, or with -update once the test package
// defines that flag (sloassert registers none, to clash with no one):
//
//	var _ = flag.Bool(sloassert.UpdateFlag, false, "rewrite baselines")
package sloassert
