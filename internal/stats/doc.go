// Package stats holds the module's few statistics, written once: the
// binomial CDF ([BinomCDF], [BinomCDFs]), Student's t quantile at any
// level ([StudentT], [StudentTCDF]), Spearman's rank correlation
// ([Spearman]), the linear-interpolation quantile of a sorted slice
// ([Quantile], built from [Rank] and [Lerp]), the ranks of a quantile's
// distribution-free confidence bounds ([UpperRank], [LowerRank]) and the
// sample size that decides an objective with them ([SearchSampleSize],
// [DecidePower]), and the exact tests baselines compare failure counts
// and tails with ([FisherGreater], [ExceedanceGreater]).
//
// # Quantiles
//
// A quantile is numpy's default ("linear", R type 7): with the sorted
// values x[0..n-1] and h = (n-1)q, it is x[⌊h⌋] + (h-⌊h⌋)(x[⌊h⌋+1]-x[⌊h⌋]),
// the difference taken from the nearer end as numpy does.
//
// # Invalid input
//
// Nothing here clamps bad input. A result that cannot be computed (an
// empty sample, a constant series, a probability outside [0,1]) is NaN,
// which never passes a comparison; a call no correct caller makes (a
// quantile outside [0,1], series of different lengths) panics.
package stats
