package latencytest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/compact"
	"github.com/tailguard/tailguard/latencytest"
)

// TestBuilder: records added stay in order and exact; past compact.Above
// the result keeps compact records, a record without a send time keeps
// a zero Start, and Start/End span the send times there are.
func TestBuilder(t *testing.T) {
	if testing.Short() {
		t.Skip("adds compact.Above+1 records")
	}
	t0 := time.Date(2025, 12, 1, 10, 0, 0, 0, time.UTC)
	var b latencytest.Builder
	n := compact.Above + 1
	for i := range n {
		rec := latencytest.Record{ID: fmt.Sprintf("x-%05d", i), TTFT: time.Duration(i + 1), Total: time.Duration(2*i + 2),
			FirstAnswer: latencytest.NotObserved, LastToken: latencytest.NotObserved, MaxGap: latencytest.NotObserved, TTFB: latencytest.NotObserved, TokenEvents: 1}
		if i%2 == 0 { // every other record has a send time
			rec.Start = t0.Add(time.Duration(i) * time.Millisecond)
		}
		b.Add(&rec)
	}
	res := b.Result("cut at line 9")
	if !latencytest.Compacted(res) || res.Len() != n || res.Planned != n || !res.Partial || res.PartialReason != "cut at line 9" {
		t.Fatalf("compact %v len %d planned %d partial %v %q", latencytest.Compacted(res), res.Len(), res.Planned, res.Partial, res.PartialReason)
	}
	for _, i := range []int{0, 1, n - 2, n - 1} {
		r := res.Record(i)
		if r.TTFT != time.Duration(i+1) || r.Total != time.Duration(2*i+2) || r.Start.IsZero() != (i%2 == 1) {
			t.Errorf("record %d: TTFT %v total %v start %v", i, r.TTFT, r.Total, r.Start)
		}
	}
	last := n - 1 // even: the last send time
	if !res.Start.Equal(t0) || !res.End.Equal(t0.Add(time.Duration(last)*time.Millisecond+time.Duration(2*last+2))) {
		t.Errorf("window %v to %v", res.Start, res.End)
	}
	if b := res.Disclosure.Box(2); b.Missing || b.Answer != "100001 requests: 100001 kept, 0 discarded (warm-up), 0 failed; PARTIAL: cut at line 9" {
		t.Errorf("box 2 %+v", b)
	}
	if per := latencytest.RetainedBytes(res) / n; per > 100 {
		t.Errorf("%d bytes a record", per)
	}
}
