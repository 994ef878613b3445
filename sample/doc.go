// Package sample holds the statistics of a latency sample: a [Sample] of
// durations, one per request (or per inter-token gap), its quantiles,
// mean, spread and tail, and a [Summary] of the whole distribution.
// Package latencytest's results give their figures as Samples
// (latencytest.Sample is this type), and package sloassert judges them.
//
// # Failures
//
// A failed request is in a Sample as [Failed], infinitely slow: it sorts
// last, a quantile that reaches it is Failed, and a mean or spread over it
// is Failed (CV +Inf). A failure never makes a figure better.
// [Sample.Finite] drops them, to read only beside the error rate.
//
// # Percentiles
//
// [Sample.Quantile] takes a fraction in [0,1] (0.99 for p99) and
// interpolates linearly between closest ranks, numpy's default (R type
// 7), exactly to the nanosecond: published figures can be recomputed from
// the raw values. [Sample.Stddev] is the sample standard deviation (n-1),
// [Sample.CV] is in percent, [Sample.TailRatio] is p99/p50.
package sample
