package slospec

import (
	"testing"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// joinCloses joins what the fake saw of the client's closes into the
// cancelled records only, by trace ID; a close the fake did not see stays
// not reported.
func TestJoinCloses(t *testing.T) {
	recs := []latencytest.Record{
		{ID: "a", Err: "cancelled"}, {ID: "b", Err: "cancelled"}, {ID: "c"}, {ID: "d", Err: "cancelled"},
	}
	served := []fakeprovider.Served{
		{ID: "a", ClientClosed: true}, {ID: "b", ClientClosed: true, AfterClose: 37}, {ID: "c", ClientClosed: true, AfterClose: 5}, {ID: "d"},
	}
	if n := joinCloses(recs, served); n != 2 {
		t.Errorf("joined %d, want 2", n)
	}
	for i, want := range []struct {
		after    int
		reported bool
	}{{0, true}, {37, true}, {0, false}, {0, false}} {
		if r := recs[i]; r.ServerAfterClose != want.after || r.ServerCloseReported != want.reported {
			t.Errorf("%s: after close %d reported %v; want %d %v", r.ID, r.ServerAfterClose, r.ServerCloseReported, want.after, want.reported)
		}
	}
}
