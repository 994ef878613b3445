package deadline

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
	"weak"
)

// The watcher calls each function at its own deadline to the nanosecond,
// across lanes and in any order of stops, never calls a stopped one, and
// keeps no ended entry past the head of its lane.
func TestDeadlineWatcherFires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := Watch(context.Background())
		start := time.Now()
		type wait struct {
			p     Pending
			due   time.Duration
			fired time.Duration
		}
		waits := make([]*wait, 0, 3000)
		for i := range 3000 {
			// Three lanes, entries added 1 ms apart; every third lane-b
			// entry is stopped before its deadline, out of order.
			d := []time.Duration{150 * time.Second, time.Second, 40 * time.Millisecond}[i%3]
			w := &wait{due: time.Since(start) + d, fired: -1}
			w.p = AfterFunc(ctx, d, func() { w.fired = time.Since(start) })
			if w.p.w == nil {
				t.Fatal("AfterFunc inside a run took a timer of its own")
			}
			waits = append(waits, w)
			if i%9 == 4 && i > 300 {
				waits[i-300].p.Stop()
				waits[i-300].p.Stop() // twice is once
				waits[i-300].due = -1
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(151 * time.Second)
		synctest.Wait()
		for i, w := range waits {
			if w.fired != w.due {
				t.Fatalf("wait %d (due %v) fired at %v", i, w.due, w.fired)
			}
		}
		w := ctx.Value(key{}).(*watcher)
		w.mu.Lock()
		for _, l := range w.lanes {
			if l.head != len(l.q) || cap(l.q) > 4096 {
				t.Errorf("lane %v: head %d of %d (cap %d) after every deadline", l.after, l.head, len(l.q), cap(l.q))
			}
		}
		w.mu.Unlock()
		stop()
	})
}

// Requests that end in order leave their lane empty: nothing is held
// for the rest of the hard cap, and a stopped wait's function (with what
// it holds: the request's context) is garbage at once.
func TestDeadlineWatcherHoldsNothingStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := Watch(context.Background())
		defer stop()
		type heavy struct{ b [4096]byte }
		var probes []weak.Pointer[heavy]
		for range 1000 {
			h := &heavy{}
			probes = append(probes, weak.Make(h))
			p := AfterFunc(ctx, 150*time.Second, func() { h.b[0]++ })
			time.Sleep(time.Millisecond)
			p.Stop()
		}
		w := ctx.Value(key{}).(*watcher)
		w.mu.Lock()
		if n := len(w.lanes[0].q) - w.lanes[0].head; n != 0 {
			t.Errorf("%d entries held after every request ended", n)
		}
		w.mu.Unlock()
		runtime.GC()
		runtime.GC()
		alive := 0
		for _, p := range probes {
			if p.Value() != nil {
				alive++
			}
		}
		if alive > 0 {
			t.Errorf("%d of %d stopped waits' functions still reachable", alive, len(probes))
		}
	})
}

// Past maxLanes wait times, and after the run's end, a wait gets a
// timer of its own; a wait still pending at the run's end moves to one,
// due at the same instant.
func TestDeadlineWatcherFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, stop := Watch(context.Background())
		start := time.Now()
		for i := range maxLanes {
			if p := AfterFunc(ctx, time.Duration(i+1)*time.Second, func() {}); p.w == nil {
				t.Fatalf("lane %d: a timer of its own", i)
			}
		}
		if p := AfterFunc(ctx, time.Minute, func() {}); p.t == nil {
			t.Error("a wait time past maxLanes did not get a timer of its own")
		}
		var fired, stopped time.Duration = -1, -1
		p := AfterFunc(ctx, time.Second, func() { fired = time.Since(start) })
		ps := AfterFunc(ctx, 2*time.Second, func() { stopped = time.Since(start) })
		time.Sleep(300 * time.Millisecond)
		stop()
		if p2 := AfterFunc(ctx, time.Second, func() {}); p2.t == nil {
			t.Error("a wait after the run's end did not get a timer of its own")
		}
		ps.Stop()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		p.Stop() // after it fired: nothing
		if fired != time.Second || stopped != -1 {
			t.Errorf("waits pending at the run's end: fired at %v (want 1s); the stopped one at %v (want never)", fired, stopped)
		}
	})
}
