package sloassert

import "github.com/tailguard/tailguard/latencytest"

// cacheReported reports whether a record's usage said how many prompt
// tokens were cached (0 included): only then does it prove a miss.
func cacheReported(rec *latencytest.Record) bool { return rec.CachedReported }
