package sloassert_test

import (
	"context"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// uniformProvider answers with a TTFT drawn from its trace ID, uniform on
// [0, top): its true p99 is 0.99×top.
type uniformProvider struct{ top time.Duration }

func (u uniformProvider) Call(_ context.Context, req latencytest.Request) latencytest.Record {
	h := fnv.New64a()
	h.Write([]byte(req.ID))
	x := h.Sum64() // FNV of similar IDs is not uniform: finish with murmur3's mixer
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	f := float64(x>>11) / (1 << 53)
	d := time.Duration(f * float64(u.top))
	return latencytest.Record{TTFT: d, FirstAnswer: d, LastToken: d, Total: d, TokenEvents: 1, Status: 200}
}

func TestSequentialStopsWhenDecided(t *testing.T) {
	budget := time.Second
	for _, tc := range []struct {
		name     string
		truth    time.Duration // the true p99
		measured int           // requests the batch should end with
		looks    int           // times Until is asked (between stages)
		ok       bool
		verdict  sloassert.Verdict
	}{
		// Far under budget: 300 cannot show it (a 98.3% upper bound on p99
		// needs n >= 407), 600 can.
		{"clear pass", 500 * time.Millisecond, 600, 2, true, sloassert.Pass},
		// Far over: the lower bound is over budget at the first look.
		{"clear fail", 2 * time.Second, 300, 1, false, sloassert.Fail},
		// At the budget: undecided at every stage; all 1,200 are sent and
		// Demonstrate fails the inconclusive row.
		{"coin flip", budget, 1200, 2, false, sloassert.Inconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := latencytest.Batch{NoWarmup: true, Requests: 300, Load: latencytest.Load{Prompt: "x", Label: "seq"}}
			stages := b.Stages()
			if len(stages) != 3 || stages[0] != 300 || stages[1] != 600 || stages[2] != 1200 {
				t.Fatalf("stages %v", stages)
			}
			until, objs := sloassert.Sequential(len(stages), sloassert.Q(sloassert.TTFT, 0.99, budget, sloassert.Demonstrate(0.95)))
			looks := 0
			b.Until = func(r *latencytest.Result) bool { looks++; return until(r) }
			r, err := b.Run(context.Background(), uniformProvider{top: time.Duration(float64(tc.truth) / 0.99)})
			if err != nil {
				t.Fatal(err)
			}
			c := r.Counts()
			if c.Kept != tc.measured || r.Partial || c.Planned != tc.measured {
				t.Errorf("measured %d (planned %d, partial %v), want %d", c.Kept, c.Planned, r.Partial, tc.measured)
			}
			if looks != tc.looks {
				t.Errorf("Until asked %d times, want %d", looks, tc.looks)
			}
			if r.Records[len(r.Records)-1].ID != "seq-"+pad(tc.measured-1) {
				t.Errorf("last trace ID %s", r.Records[len(r.Records)-1].ID)
			}
			rep := sloassert.Evaluate(r, objs...)
			o := rep.Outcomes[0]
			if o.OK != tc.ok || o.Verdict != tc.verdict || o.Confidence < 0.983 || o.Confidence > 0.984 ||
				!strings.Contains(o.Note, "confidence 95% split over 3 looks (Bonferroni)") {
				t.Errorf("%+v", o)
			}
		})
	}
}

func pad(i int) string {
	s := "0000" + itoa(i)
	return s[len(s)-4:]
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestSequentialBadInput(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("Sequential(0) did not panic")
		}
	}()
	sloassert.Sequential(0)
}

// TestSequentialDocExample backs Sequential's doc: p99 at 95% split over 3
// looks needs 408 requests for an upper bound, so a first look at 300
// cannot pass however fast every request is, and the example's first look
// at 410 can.
func TestSequentialDocExample(t *testing.T) {
	b := latencytest.Batch{Requests: 410, MaxRequests: 1640}
	if st := b.Stages(); len(st) != 3 || st[0] != 410 || st[1] != 820 || st[2] != 1640 {
		t.Fatalf("stages %v", st)
	}
	if _, upper := sloassert.MinBoundSamples(0.99, 1-0.05/3); upper != 408 {
		t.Errorf("p99 upper bound at 1-0.05/3 needs %d requests, the doc says 408", upper)
	}
	until, objs := sloassert.Sequential(3, sloassert.Q(sloassert.TTFT, 0.99, 2*time.Second, sloassert.Demonstrate(0.95)))
	fast := func(n int) *latencytest.Result { // every request 1 ms: far within budget
		s := make(latencytest.Sample, n)
		for i := range s {
			s[i] = time.Millisecond
		}
		return resultOf(s)
	}
	if r := fast(300); !until(r) || sloassert.Evaluate(r, objs...).OK() {
		t.Errorf("300 requests passed at the first of 3 looks")
	}
	if r := fast(410); until(r) || !sloassert.Evaluate(r, objs...).OK() {
		t.Errorf("410 fast requests did not pass at the first look:\n%s", sloassert.Evaluate(r, objs...))
	}
}
