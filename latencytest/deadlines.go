package latencytest

import (
	"fmt"

	"github.com/tailguard/tailguard/internal/deadline"
)

// A run's deadlines are kept by package internal/deadline: one goroutine
// and one timer per run instead of a timer per request.
type pendingFunc = deadline.Pending

var (
	watchDeadlines = deadline.Watch
	afterFunc      = deadline.AfterFunc
)

// enforceLimits fails a record that ended well although its measured
// clocks passed the request's limits, whatever the timers did: a timer
// fires late when the client's CPU is starved (busy goroutines, a loaded
// machine), and a stream that ends before it fires would otherwise count
// as a success. The rule is the timers' own, on the clocks:
//
//   - first_token_timeout when FirstTokenTimeout > 0 and the first token
//     came at or after it (TTFT >= FirstTokenTimeout; a record with no
//     token timed is not judged by this clock), unless the limit came
//     earlier;
//   - total_timeout when Total >= the limit (TotalTimeout, or the hard
//     cap).
//
// A limit is reached at its instant, as a context's deadline is: a
// request whose Total equals its limit is past it. A record that already
// failed keeps its class (it is no success either way). The clocks stay
// as measured, and Detail says by how much the limit was passed. The
// providers call it where they finish a record.
func enforceLimits(req Request, rec *Record) {
	if !rec.OK() {
		return
	}
	limit, first := req.limit(), req.FirstTokenTimeout
	switch {
	case first > 0 && first <= limit && rec.TTFT >= first:
		rec.Err, rec.Detail = ClassFirstTokenTimeout, fmt.Sprintf("no token within %v (the first came at %v, before its timer ended the call)", first, rec.TTFT)
	case rec.Total >= limit:
		rec.Err, rec.Detail = ClassTotalTimeout, fmt.Sprintf("not done within %v (done at %v, before its timer ended the call)", limit, rec.Total)
	default:
		return
	}
	if rec.LastToken >= 0 {
		rec.MaxGap = max(rec.MaxGap, rec.Total-rec.LastToken)
	}
}
