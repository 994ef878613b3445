package fakeprovider

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestScheduleBatchesWakeUps walks the clock's schedule through made-up
// instants: the timer is armed for the earliest deadline, or one window
// after the last wake-up if that is later; a wake-up serves every wait
// due by then, earliest first, and none before its deadline.
func TestScheduleBatchesWakeUps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	us := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Microsecond) }
	s := schedule{window: 250 * time.Microsecond}
	chans := map[chan struct{}]int{} // channel -> deadline (us)
	add := func(at int) (time.Time, bool) {
		ch := make(chan struct{}, 1)
		chans[ch] = at
		return s.add(us(at), ch)
	}
	wantArm := func(step string, got time.Time, ok bool, want int) {
		t.Helper()
		switch {
		case want < 0 && ok:
			t.Errorf("%s: timer armed for +%v, want unchanged", step, got.Sub(t0))
		case want >= 0 && (!ok || !got.Equal(us(want))):
			t.Errorf("%s: timer armed for +%v (changed %v), want +%dµs", step, got.Sub(t0), ok, want)
		}
	}
	wake := func(now int, want []int, next int) {
		t.Helper()
		batch, arm, ok := s.wake(us(now), nil)
		var got []int
		for _, ch := range batch {
			got = append(got, chans[ch])
		}
		if !slices.Equal(got, want) {
			t.Errorf("wake-up at +%dµs served deadlines %v, want %v", now, got, want)
		}
		if next < 0 {
			if ok {
				t.Errorf("wake-up at +%dµs armed the timer for +%v with nothing left", now, arm.Sub(t0))
			}
			return
		}
		wantArm("after the wake-up", arm, ok, next)
	}

	arm, ok := add(100) // nothing armed: the deadline
	wantArm("first wait", arm, ok, 100)
	arm, ok = add(30) // earlier: re-armed
	wantArm("earlier wait", arm, ok, 30)
	for _, at := range []int{240, 260, 900, 10_000} { // later: unchanged
		arm, ok = add(at)
		wantArm("later wait", arm, ok, -1)
	}
	// 35: serves 30; next is 100, but not before 35+250 = 285.
	wake(35, []int{30}, 285)
	// 290: serves 100, 240 and 260 in one wake-up; next 900.
	wake(290, []int{100, 240, 260}, 900)
	// A wait for 300 now: due, but within the window after 290: 540.
	arm, ok = add(300)
	wantArm("wait within the window", arm, ok, 540)
	wake(545, []int{300}, 900)
	wake(900, []int{900}, 10_000)
	wake(10_003, []int{10_000}, -1)
}

// TestScheduleAtScale simulates the clock serving 1,000 streams of 64
// events 10 ms apart at random phases (100k events/s), the timer firing
// up to 50 µs after it was armed: every event is served once, in its
// stream's order, never before its deadline and at most a window plus the
// timer's delay after it, in ~4,000 wake-ups a second instead of 100,000.
func TestScheduleAtScale(t *testing.T) {
	const (
		streams = 1000
		events  = 64
		itl     = 10 * time.Millisecond
		jitter  = 50 * time.Microsecond
	)
	window := clockWindow
	r := rand.New(rand.NewPCG(3, 4))
	t0 := time.Unix(1000, 0)
	s := schedule{window: window}
	type stream struct {
		next time.Time // deadline of the wait registered
		sent int
	}
	all := make([]*stream, streams)
	byCh := map[chan struct{}]int{}
	armed, isArmed := time.Time{}, false
	for i := range all {
		all[i] = &stream{next: t0.Add(time.Duration(r.Int64N(int64(itl))))}
		ch := make(chan struct{}, 1)
		byCh[ch] = i
		if a, ok := s.add(all[i].next, ch); ok {
			armed, isArmed = a, true
		}
	}
	chOf := map[int]chan struct{}{}
	for ch, i := range byCh {
		chOf[i] = ch
	}
	wakeUps, served := 0, 0
	var worst time.Duration
	var last time.Time
	for isArmed {
		now := armed.Add(time.Duration(r.Int64N(int64(jitter))))
		if now.Before(last) {
			t.Fatalf("time went back")
		}
		last = now
		wakeUps++
		batch, arm, ok := s.wake(now, nil)
		armed, isArmed = arm, ok
		if len(batch) == 0 && wakeUps > 1 {
			t.Errorf("wake-up %d at +%v served nothing", wakeUps, now.Sub(t0))
		}
		var prev time.Time
		for _, ch := range batch {
			st := all[byCh[ch]]
			switch late := now.Sub(st.next); {
			case late < 0:
				t.Fatalf("stream %d event %d served %v early", byCh[ch], st.sent, -late)
			case late > worst:
				worst = late
			}
			if st.next.Before(prev) {
				t.Fatalf("wake-up at +%v served deadline +%v after +%v", now.Sub(t0), st.next.Sub(t0), prev.Sub(t0))
			}
			prev = st.next
			served++
			st.sent++
			if st.sent < events { // the session registers its next wait
				st.next = st.next.Add(itl)
				if a, ok := s.add(st.next, ch); ok {
					armed, isArmed = a, true
				}
			}
		}
	}
	if served != streams*events {
		t.Fatalf("served %d events, want %d", served, streams*events)
	}
	for i, st := range all {
		if st.sent != events {
			t.Fatalf("stream %d: %d events, want %d", i, st.sent, events)
		}
	}
	if worst > window+jitter {
		t.Errorf("an event was served %v late, more than the window %v plus the timer's delay %v", worst, window, jitter)
	}
	span := last.Sub(t0)
	perSec := float64(wakeUps) / span.Seconds()
	if max := float64(time.Second/window) + 1/span.Seconds(); perSec > max {
		t.Errorf("%d wake-ups in %v (%.0f/s), more than one per window (%.0f/s)", wakeUps, span, perSec, max)
	}
	t.Logf("%d events in %d wake-ups (%.1f per wake-up, %.0f wake-ups/s), worst %v late", served, wakeUps,
		float64(served)/float64(wakeUps), perSec, worst)
}

// TestLatenessQuantiles: the histogram's buckets hold their values
// within 1/16, and its quantiles are the upper edges of the right buckets.
func TestLatenessQuantiles(t *testing.T) {
	for _, ns := range []int64{0, 1, 15, 16, 17, 31, 32, 33, 1000, 999_999, 1 << 40, 1<<62 + 12345} {
		i := latenessBucket(ns)
		up := latenessUpper(i)
		if up < ns || float64(up-ns) > float64(ns)/16 {
			t.Errorf("%d ns: bucket %d ends at %d, want within [%d, %d·17/16]", ns, i, up, ns, ns)
		}
		if i > 0 && latenessUpper(i-1) >= ns {
			t.Errorf("%d ns: the bucket before %d ends at %d, not below it", ns, i, latenessUpper(i-1))
		}
	}
	var h latenessHist
	if l := h.snapshot(); l != (Lateness{}) {
		t.Errorf("empty histogram: %+v, want zero", l)
	}
	// 1..1000 µs: p50 is 500 µs (rank 500), p99 990 µs (rank 990); the
	// bucket of 500 µs = 500,000 ns lies in [2^18, 2^19) = [262,144,
	// 524,288), 16,384 wide: [491,520, 507,904), so p50 reads 507,903 ns.
	for i := range 1000 {
		h.add(time.Duration(i+1) * time.Microsecond)
	}
	h.add(-time.Microsecond) // an early event counts as on time
	l := h.snapshot()
	if l.Events != 1001 || l.Max != time.Millisecond {
		t.Errorf("events %d, max %v; want 1001, 1ms", l.Events, l.Max)
	}
	// with the 0: p50 is rank 501 (500 µs), p99 rank 991 (990 µs, bucket
	// [983,040, 1,015,808) capped by the max 1 ms).
	if l.P50 != 507_903 || l.P99 != time.Millisecond {
		t.Errorf("p50 %v, p99 %v; want 507.903µs, 1ms", l.P50, l.P99)
	}
	h.reset()
	if l := h.snapshot(); l != (Lateness{}) {
		t.Errorf("after reset: %+v, want zero", l)
	}
}

// TestServerMeasuresLateness: a stream served over a real socket counts
// each of its events' lateness; the in-memory transport counts none.
func TestServerMeasuresLateness(t *testing.T) {
	p := Profile{TTFT: Fixed(time.Millisecond), ITL: Fixed(time.Millisecond), OutputTokens: Fixed(5)}
	mem := mustNew(t, p)
	if r := do(t, mem.Client(), "http://fake", reqOpts{}); r.status != http.StatusOK || r.tokens != 5 {
		t.Fatalf("in memory: status %d, %d tokens", r.status, r.tokens)
	}
	if l := mem.Lateness(); l.Events != 0 {
		t.Errorf("in memory: %d events measured, want none", l.Events)
	}
	f := mustNew(t, p)
	srv := NewServer(f)
	defer srv.Close()
	defer http.DefaultClient.CloseIdleConnections()
	for range 2 {
		if r := do(t, http.DefaultClient, srv.URL, reqOpts{usage: true}); r.status != http.StatusOK || r.tokens != 5 || !r.sawDone {
			t.Fatalf("over a socket: status %d, %d tokens, [DONE] %v", r.status, r.tokens, r.sawDone)
		}
	}
	l := f.Lateness()
	if l.Events != 10 { // 2 requests × 5 token events
		t.Errorf("%d events measured, want 10", l.Events)
	}
	if l.P50 < 0 || l.P50 > l.P99 || l.P99 > l.Max || l.Max <= 0 {
		t.Errorf("lateness p50 %v p99 %v max %v: want 0 <= p50 <= p99 <= max, max > 0", l.P50, l.P99, l.Max)
	}
}
