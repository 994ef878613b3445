package sloassert

import (
	"time"

	"github.com/tailguard/tailguard/internal/cancel"
	"github.com/tailguard/tailguard/latencytest"
)

// cancelNote is the report's line on the requests the client cancelled
// on purpose (latencytest.Cancel): how many, the time from cancel to the
// connection's close, and whether the server stopped generating (where
// it said: a fake's Served joined into the records); "" when none was.
func cancelNote(r *latencytest.Result) string {
	var stops []cancel.Stop
	for _, rec := range r.All() {
		if !rec.Warmup && rec.Err == cancel.Class {
			stops = append(stops, cancel.Stop{ID: rec.ID, CancelAt: rec.CancelAt, Close: rec.CancelClose,
				AfterClose: rec.ServerAfterClose, Reported: rec.ServerCloseReported})
		}
	}
	return cancel.Summarize(stops).String()
}

// cancelledClass is the note of an error-rate objective asked to count
// the client's own cancels, which are no error.
const cancelledClass = "class cancelled is the client's own cancel (latencytest.Cancel): neither a failure nor a success, so no error rate counts it (the report counts it on its own)"

// cancelledKeeps reports whether a cancelled record's value v of metric m
// counts as a latency, as latencytest's samples take it: observed (before
// the cancel), and not a time the cancel cut short (Total, FromSchedule).
func cancelledKeeps(rec *latencytest.Record, m Metric, v time.Duration) bool {
	return rec.Err == cancel.Class && v >= 0 && m != Total && m != FromSchedule
}
