package fakeprovider

import (
	"cmp"
	"slices"
	"time"
)

// The dispatcher is the one goroutine that owns the fake's shared state:
// slots, the FIFO queue, warm/cold, the prefix cache and the arrival count.
// Arrivals and releases reach it over a channel; it decides on a timer one
// nanosecond after the instant of the events. Inside synctest the clock
// advances only when every goroutine is blocked, so by then every event of
// that instant has arrived, and same-instant arrivals are ordered by trace
// ID: outcomes do not depend on goroutine scheduling. Each admitted request
// gets its logical admission instant (the events' instant, not the
// decision's), so the 1 ns step never shows in a measured time. Nothing here
// waits while holding a mutex.

// cacheBlockChars is the prefix cache's block: 16 tokens of 4 characters.
const (
	cacheBlockChars = 64
	cacheMaxBlocks  = 512     // blocks hashed per prompt (32k tokens)
	cacheCapacity   = 1 << 16 // block hashes kept, oldest evicted first
)

type event struct {
	at time.Time
	// arrival, or nil for a release
	arr *arrival
	// seq of the request released (finished, failed or canceled)
	seq uint64
}

type arrival struct {
	seq    uint64
	at     time.Time
	plan   *plan    // the dispatcher applies the script to it before replying
	blocks []uint64 // hashes of the prompt's prefixes, block by block
	reply  chan admission

	loadUntil time.Time // set when it arrived during (or triggered) a load
}

type admission struct {
	index        int
	reject       bool // answer with plan.status now
	start        time.Time
	coldStart    time.Duration
	queued       time.Duration
	cacheHit     bool
	cachedBlocks int
	inflight     int // on its replica, itself included
}

type dispatcher struct {
	p      *Profile
	events chan event

	pending  []event
	queue    []*arrival
	busy     []int           // per replica
	running  map[uint64]int  // seq -> replica
	canceled map[uint64]bool // released before their arrival was processed
	byID     map[string]*ScriptEntry
	byIndex  map[int]*ScriptEntry
	attempts map[string]int // arrivals per scripted ID, for ScriptEntry.Attempts
	next     int            // arrival index

	cold      bool      // scaled to zero: the next arrival starts a load
	loadUntil time.Time // zero when no load is in progress
	idleSince time.Time

	cache     map[uint64]struct{}
	cacheFIFO []uint64
	cacheHead int
}

func newDispatcher(p *Profile, now time.Time) *dispatcher {
	d := &dispatcher{
		p:         p,
		events:    make(chan event, 64),
		busy:      make([]int, p.Replicas),
		running:   map[uint64]int{},
		canceled:  map[uint64]bool{},
		byID:      map[string]*ScriptEntry{},
		byIndex:   map[int]*ScriptEntry{},
		attempts:  map[string]int{},
		cold:      p.ColdStart.Initial,
		idleSince: now,
		cache:     map[uint64]struct{}{},
	}
	for i := range p.Script {
		s := &p.Script[i]
		if s.ID != "" {
			d.byID[s.ID] = s
		} else {
			d.byIndex[s.Request] = s
		}
	}
	return d
}

// run is the dispatcher's loop; it returns when done is closed.
func (d *dispatcher) run(done <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var armed time.Time // zero: not armed
	for {
		select {
		case ev := <-d.events:
			d.pending = append(d.pending, ev)
		case now := <-timer.C:
			armed = time.Time{}
			d.decide(now)
		case <-done:
			timer.Stop()
			return
		}
		// Arm the timer for the next decision: 1 ns after the earliest
		// pending event, or the end of a load that requests wait for.
		var want time.Time
		for _, ev := range d.pending {
			if t := ev.at.Add(time.Nanosecond); want.IsZero() || t.Before(want) {
				want = t
			}
		}
		// A load's end counts as an event of its instant, so that arrivals
		// of that same instant are all in before the decision.
		if end := d.loadUntil.Add(time.Nanosecond); !d.loadUntil.IsZero() && len(d.queue) > 0 && (want.IsZero() || end.Before(want)) {
			want = end
		}
		if !want.IsZero() && !want.Equal(armed) {
			armed = want
			timer.Reset(time.Until(want))
		}
	}
}

// decide processes every pending event, then admits what it can.
func (d *dispatcher) decide(now time.Time) {
	evs := d.pending
	d.pending = nil
	// Releases first, so a slot freed at an instant serves an arrival of
	// the same instant; then arrivals by (instant, trace ID, seq).
	slices.SortStableFunc(evs, func(a, b event) int {
		if (a.arr == nil) != (b.arr == nil) {
			if a.arr == nil {
				return -1
			}
			return 1
		}
		if c := a.at.Compare(b.at); c != 0 || a.arr == nil {
			return c
		}
		return cmp.Or(cmp.Compare(a.arr.plan.key, b.arr.plan.key), cmp.Compare(a.arr.seq, b.arr.seq))
	})
	var freedAt time.Time
	for _, ev := range evs {
		if ev.arr == nil {
			d.release(ev.seq, ev.at)
			if ev.at.After(freedAt) {
				freedAt = ev.at
			}
			continue
		}
		d.arrive(ev.arr)
	}
	d.admit(now, freedAt)
}

func (d *dispatcher) release(seq uint64, at time.Time) {
	if r, ok := d.running[seq]; ok {
		delete(d.running, seq)
		d.busy[r]--
	} else if i := slices.IndexFunc(d.queue, func(a *arrival) bool { return a.seq == seq }); i >= 0 {
		d.queue = slices.Delete(d.queue, i, i+1)
	} else {
		d.canceled[seq] = true
		return
	}
	if len(d.running) == 0 && len(d.queue) == 0 {
		d.idleSince = at
	}
}

func (d *dispatcher) arrive(a *arrival) {
	if d.canceled[a.seq] {
		delete(d.canceled, a.seq)
		return
	}
	index := d.next
	d.next++
	if len(d.p.Load) > 0 { // faults by load level, at arrival (LoadLevel.Faults)
		a.plan.faultsAt(d.p, min(slices.Min(d.busy)+len(d.queue)+1, d.p.SlotsPerReplica))
	}
	if s := d.byID[a.plan.key]; s != nil {
		d.attempts[a.plan.key]++
		if s.Attempts == 0 || d.attempts[a.plan.key] <= s.Attempts {
			a.plan.apply(s)
		}
	} else if s := d.byIndex[index]; s != nil {
		a.plan.apply(s)
	}
	if a.plan.status != 0 {
		a.reply <- admission{index: index, reject: true, start: a.at}
		return
	}
	if d.loadUntil.IsZero() {
		idle := len(d.running) == 0 && len(d.queue) == 0
		load := a.plan.coldStart
		if load == 0 && (d.cold || (idle && d.p.ColdStart.AfterIdle > 0 && a.at.Sub(d.idleSince) >= d.p.ColdStart.AfterIdle)) {
			load = a.plan.coldDraw
		}
		if load > 0 {
			d.loadUntil = a.at.Add(load)
		}
		d.cold = false
	}
	a.loadUntil = d.loadUntil
	a.reply <- admission{index: index} // index only; admission follows (reply holds 2)
	d.queue = append(d.queue, a)
}

// admit hands free slots to queued requests in FIFO order.
func (d *dispatcher) admit(now time.Time, freedAt time.Time) {
	if !d.loadUntil.IsZero() {
		if now.Before(d.loadUntil) {
			return
		}
		freedAt = maxTime(freedAt, d.loadUntil)
		d.loadUntil = time.Time{}
	}
	for len(d.queue) > 0 {
		r := 0
		for i, b := range d.busy {
			if b < d.busy[r] {
				r = i
			}
		}
		if d.busy[r] >= d.p.SlotsPerReplica {
			return
		}
		a := d.queue[0]
		d.queue = d.queue[1:]
		d.busy[r]++
		d.running[a.seq] = r
		start := maxTime(a.at, freedAt)
		ad := admission{start: start, inflight: d.busy[r]}
		if !a.loadUntil.IsZero() {
			ad.coldStart = max(0, a.loadUntil.Sub(a.at))
		}
		ad.queued = start.Sub(a.at) - ad.coldStart
		if !d.p.PrefixCache.Disabled {
			ad.cachedBlocks = d.lookup(a.blocks)
			ad.cacheHit = ad.cachedBlocks > 0
		}
		a.reply <- ad
	}
}

// lookup returns how many leading blocks of the prompt are cached, then
// caches all of them.
func (d *dispatcher) lookup(blocks []uint64) int {
	hit := 0
	for i, h := range blocks {
		if _, ok := d.cache[h]; !ok {
			break
		}
		hit = i + 1
	}
	for _, h := range blocks[hit:] {
		if len(d.cacheFIFO) < cacheCapacity {
			d.cacheFIFO = append(d.cacheFIFO, h)
		} else {
			delete(d.cache, d.cacheFIFO[d.cacheHead])
			d.cacheFIFO[d.cacheHead] = h
			d.cacheHead = (d.cacheHead + 1) % cacheCapacity
		}
		d.cache[h] = struct{}{}
	}
	return hit
}

// prefixBlocks hashes prompt[:64], prompt[:128], ... (whole blocks only).
func prefixBlocks(prompt string) []uint64 {
	n := min(len(prompt)/cacheBlockChars, cacheMaxBlocks)
	out := make([]uint64, n)
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := range n {
		for _, c := range []byte(prompt[i*cacheBlockChars : (i+1)*cacheBlockChars]) {
			h = (h ^ uint64(c)) * prime
		}
		out[i] = h
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
