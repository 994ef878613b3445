// Package closejoin joins what a fake provider saw of the client's
// cancels (fakeprovider.Served: ClientClosed, AfterClose) into the records
// that cancelled, by trace ID, so that the report says whether the server
// stopped generating on the client's close (see latencytest.Cancel). The
// fake serves the same from GET /fake/served, so a fake behind a socket
// (cmd/fakellm) joins as well as one in memory.
package closejoin

import (
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/cancel"
	"github.com/tailguard/tailguard/latencytest"
)

// Join sets ServerAfterClose and ServerCloseReported on every cancelled
// record of recs whose request the fake served and saw closed, and
// returns how many it set. A cancelled request the fake never saw closed
// (it had ended, or the close came before it admitted the request) stays
// not reported.
func Join(recs []latencytest.Record, served []fakeprovider.Served) int {
	byID := make(map[string]*fakeprovider.Served, len(served))
	for i := range served {
		byID[served[i].ID] = &served[i]
	}
	n := 0
	for i := range recs {
		rec := &recs[i]
		if rec.Err != cancel.Class {
			continue
		}
		if sv := byID[rec.ID]; sv != nil && sv.ClientClosed {
			rec.ServerAfterClose, rec.ServerCloseReported = sv.AfterClose, true
			n++
		}
	}
	return n
}
