// Package chaincurve computes the chain-length curve of a chain run: for
// each length 1..N, the p50, p95 and p99 of chain totals predicted by
// bootstrap (sums of the run's single calls, each drawn independently,
// seeded), beside the totals of the chains measured at that length.
//
// # Prediction and measurement
//
// A predicted point is a bootstrap extension of measured single calls and
// assumes the calls of a chain are independent and stationary; a measured
// point is ground truth. Where the two disagree the measurement wins: the
// calls of a chain are correlated (a slow conversation stays slow), so
// the prediction understates the tail.
//
// # Failures
//
// Durations of math.MaxInt64 are failures (infinitely slow): a draw of one
// fails its sum, and a quantile that reaches one is a failure too.
package chaincurve
