package latencytest

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/machine"
)

type deadlineTB struct {
	testing.TB
	deadline func() (time.Time, bool)
}

func (d deadlineTB) Deadline() (time.Time, bool) { return d.deadline() }

func TestRunContextTakesTheTestDeadline(t *testing.T) {
	dl := time.Now().Add(200 * time.Second)
	ctx, cancel := runContext(deadlineTB{t, func() (time.Time, bool) { return dl, true }})
	defer cancel()
	got, ok := ctx.Deadline()
	// 200 s left: the margin is max(5 s, 200 s/20 = 10 s), less the
	// microseconds between the two calls.
	if !ok || got.After(dl.Add(-9900*time.Millisecond)) || got.Before(dl.Add(-10*time.Second)) {
		t.Errorf("deadline %v, want 10 s before the test's %v", got, dl)
	}
	// No -timeout: no deadline.
	ctx, cancel = runContext(deadlineTB{t, func() (time.Time, bool) { return time.Time{}, false }})
	defer cancel()
	if _, ok := ctx.Deadline(); ok {
		t.Errorf("a deadline without one from the test")
	}
	// Inside a synctest bubble Deadline panics: no deadline, no panic.
	bubble := deadlineTB{t, func() (time.Time, bool) { panic("testing: t.Deadline called inside synctest bubble") }}
	ctx, cancel = runContext(bubble)
	defer cancel()
	if _, ok := ctx.Deadline(); ok || !inBubble(bubble) || inBubble(t) {
		t.Errorf("bubble detection: inBubble(bubble)=%v inBubble(t)=%v", inBubble(bubble), inBubble(t))
	}
}

func TestDisclosureHasEveryBox(t *testing.T) {
	var d Disclosure
	b, _ := Batch{Warmup: 3}.normalized()
	res := &Result{Run: Run{Start: time.Now(), End: time.Now(), CPUPerWall: 0.9}}
	d = b.disclose(nil, res)
	if len(d.Boxes) != 15 {
		t.Fatalf("%d boxes", len(d.Boxes))
	}
	for i, box := range d.Boxes {
		if box.N != i+1 || box.Question == "" || box.Answer == "" {
			t.Errorf("box %d: %+v", i+1, box)
		}
	}
	if !d.Box(13).Missing && !strings.Contains(d.Box(13).Answer, "part of the tail") {
		t.Errorf("busy client not flagged: %+v", d.Box(13))
	}
	if !strings.Contains(d.Box(4).Answer, "first 3 requests") {
		t.Errorf("box 4 %+v", d.Box(4))
	}
	// Without a location, model or raw records, those boxes are missing.
	for _, n := range []int{3, 12, 14} {
		if !d.Box(n).Missing {
			t.Errorf("box %d should be missing: %+v", n, d.Box(n))
		}
	}
}

// Failures never flatter ITL or MaxGap, and a Failed repeat gap still
// encodes.
func TestFailuresNeverFlatterGaps(t *testing.T) {
	var fast, slow Gaps
	for range 9 {
		fast.Add(10 * time.Millisecond)
	}
	slow.Add(10 * time.Millisecond)
	r := &Result{Records: []Record{
		{ID: "ok", TokenEvents: 10, Gaps: fast, MaxGap: 10 * time.Millisecond, TTFT: 1},
		{ID: "stalled", TokenEvents: 2, Gaps: slow, MaxGap: time.Minute, TTFT: 1, Err: ClassTotalTimeout},
		{ID: "custom", TokenEvents: 0, TTFT: 1}, // a provider that saw no tokens
	}}
	itl := r.ITL()
	// 9 + 1 gaps and one Failed for the request that never finished.
	if len(itl) != 11 || itl.Failures() != 1 || itl.Quantile(1) != Failed {
		t.Errorf("ITL %v", itl)
	}
	mg := r.MaxGap()
	if mg[0] != 10*time.Millisecond || mg[1] != Failed || mg[2] != Failed {
		t.Errorf("max gaps %v: a failed request and one without token events must be Failed", mg)
	}
}

func TestChainRejectsBadTemperature(t *testing.T) {
	nan := math.NaN()
	if _, err := (Chain{Load: Load{Temperature: &nan}}).normalized(); err == nil || !strings.Contains(err.Error(), "temperature NaN outside [0,2]") {
		t.Errorf("error %v", err)
	}
}

func TestVirtualClockHasNoCPUPerWall(t *testing.T) {
	if !machine.VirtualClock(time.Date(2000, 1, 1, 0, 0, 5, 0, time.UTC)) || machine.VirtualClock(time.Now()) {
		t.Fatal("virtualClock")
	}
	var d Disclosure
	common(&d, Description{}, nil, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2000, 1, 1, 0, 1, 0, 0, time.UTC), math.NaN(), "", alignment{})
	if b := d.Box(13); b.Missing || !strings.Contains(b.Answer, "virtual time") || !strings.Contains(d.Box(9).Answer, "virtual time") {
		t.Errorf("boxes 9/13: %+v %+v", d.Box(9), b)
	}
}
