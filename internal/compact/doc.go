// Package compact holds what a compact latencytest.Result is made of: a
// Store of records (Rec, latencytest.Record's fields, which a *Record
// converts to), each encoded as varints into an Arena (byte strings in
// growing chunks, found by slot, their strings interned), and a Sketch
// of the inter-token gaps (log-spaced buckets, quantiles within Alpha,
// merged exactly). A record takes about 60-80 bytes; its gaps and answer
// text are not kept.
package compact
