package sloassert

import "github.com/tailguard/tailguard/latencytest"

// cacheReported reports whether a record's usage said how many prompt
// tokens were cached (0 included).
func cacheReported(rec *latencytest.Record) bool {
	return rec.CachedTokens > 0 // TEMPORARY until latencytest records CachedReported
}
