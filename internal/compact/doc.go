// Package compact holds what a compact latencytest.Result is made of: an
// Arena of encoded records (byte strings in growing chunks, found by
// slot, their strings interned) and a Sketch of latencies (log-spaced
// buckets, quantiles within Alpha, merged exactly). latencytest encodes
// its Records into the Arena and pools their inter-token gaps in a
// Sketch; this package knows nothing of Records.
package compact
