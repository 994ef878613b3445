package latencytest

import (
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
)

// The rule on the clocks alone, whatever the timers did: a record that
// ended well past a limit fails, at the limit's instant too; one before
// it, or one that failed already, is left as it is.
func TestEnforceLimits(t *testing.T) {
	const ms = time.Millisecond
	ok := func(ttft, total time.Duration) Record {
		return Record{TTFT: ttft, FirstAnswer: ttft, LastToken: total - ms, Total: total, MaxGap: 2 * ms}
	}
	for _, c := range []struct {
		name         string
		req          Request
		rec          Record
		class        string
		maxGap       time.Duration
		detailPrefix string
	}{
		{"a late timer: 1.33 s under 400 ms", Request{TotalTimeout: 400 * ms}, ok(100*ms, 1330*ms), ClassTotalTimeout, 2 * ms, "not done within 400ms (done at 1.33s"},
		{"Total at the limit is past it", Request{TotalTimeout: 400 * ms}, ok(100*ms, 400*ms), ClassTotalTimeout, 2 * ms, "not done within 400ms"},
		{"1 ns under the limit", Request{TotalTimeout: 400 * ms}, ok(100*ms, 400*ms-1), "", 2 * ms, ""},
		{"the hard cap when no TotalTimeout", Request{HardCap: time.Second}, ok(100*ms, time.Second+1), ClassTotalTimeout, 2 * ms, "not done within 1s"},
		{"the default hard cap", Request{}, ok(100*ms, defaults.HardCap), ClassTotalTimeout, 2 * ms, "not done within"},
		{"the smaller of TotalTimeout and the hard cap", Request{TotalTimeout: time.Hour, HardCap: time.Second}, ok(ms, time.Second), ClassTotalTimeout, 2 * ms, "not done within 1s"},
		{"first token at its limit", Request{FirstTokenTimeout: 200 * ms}, ok(200*ms, 300*ms), ClassFirstTokenTimeout, 2 * ms, "no token within 200ms (the first came at 200ms"},
		{"first token 1 ns before its limit", Request{FirstTokenTimeout: 200 * ms}, ok(200*ms-1, 300*ms), "", 2 * ms, ""},
		{"both passed: the first-token limit came first", Request{FirstTokenTimeout: 200 * ms, TotalTimeout: 400 * ms}, ok(500*ms, 900*ms), ClassFirstTokenTimeout, 2 * ms, "no token within 200ms"},
		{"both passed: the total limit came first", Request{FirstTokenTimeout: 500 * ms, TotalTimeout: 400 * ms}, ok(600*ms, 900*ms), ClassTotalTimeout, 2 * ms, "not done within 400ms"},
		{"no token timed: only Total is judged", Request{FirstTokenTimeout: 10 * ms}, Record{TTFT: NotObserved, FirstAnswer: NotObserved, LastToken: NotObserved, Total: 300 * ms}, "", 0, ""},
		{"a long tail after the last token counts as a gap", Request{TotalTimeout: 400 * ms}, Record{TTFT: ms, LastToken: 100 * ms, Total: 500 * ms, MaxGap: ms}, ClassTotalTimeout, 400 * ms, "not done within"},
		{"a failure keeps its class", Request{TotalTimeout: 400 * ms}, Record{Err: "http_500", Detail: "boom", TTFT: NotObserved, LastToken: NotObserved, Total: 900 * ms}, "http_500", 0, "boom"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := c.rec
			enforceLimits(c.req, &rec)
			if rec.Err != c.class || rec.MaxGap != c.maxGap || len(rec.Detail) < len(c.detailPrefix) || rec.Detail[:len(c.detailPrefix)] != c.detailPrefix {
				t.Errorf("got class %q, max gap %v, detail %q; want %q, %v, %q...", rec.Err, rec.MaxGap, rec.Detail, c.class, c.maxGap, c.detailPrefix)
			}
			if rec.Total != c.rec.Total || rec.TTFT != c.rec.TTFT {
				t.Errorf("the clocks changed: %v %v", rec.TTFT, rec.Total)
			}
		})
	}
}
