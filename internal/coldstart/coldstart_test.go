package coldstart

import (
	"math"
	"testing"
	"time"
)

const ms = time.Millisecond

// run builds records sent at the given offsets (ms), each taking total
// ms with ttft ms to its first token, all of class "a".
func run(t0 time.Time, at ...int) []Rec {
	out := make([]Rec, len(at))
	for i, a := range at {
		out[i] = Rec{ID: string(rune('A' + i)), Start: t0.Add(time.Duration(a) * ms), Total: 50 * ms, TTFT: 10 * ms, OK: true, Class: "a"}
	}
	return out
}

func TestFindCandidates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	recs := run(t0, 0, 100, 200, 300, 2000, 2100)
	recs[0].Warmup, recs[0].TTFT = true, 40*ms
	recs[4].TTFT = 300 * ms
	recs[5].Injected = "stall, cold_start=3s"
	got := Find(recs, time.Second)
	want := []struct {
		i   int
		why string
	}{{0, "warm-up, first request"}, {4, "after 1.65s idle"}, {5, "fake injected cold_start=3s"}}
	if len(got) != len(want) {
		t.Fatalf("%d candidates %+v, want %d", len(got), got, len(want))
	}
	for k, w := range want {
		if got[k].Index != w.i || got[k].ID != recs[w.i].ID || got[k].Why != w.why {
			t.Errorf("candidate %d: %d %q %q, want %d %q", k, got[k].Index, got[k].ID, got[k].Why, w.i, w.why)
		}
	}
	// Three warm requests of equal TTFT: the reach is their value, no
	// class excess, and each candidate is compared as measured.
	c := got[1]
	if c.Warm != 3 || c.WarmReach != 10*ms || c.ClassExcess != 0 || c.Compared != 300*ms || c.Extrapolated {
		t.Errorf("judged %+v", c)
	}
	// Without an idle rule only the first and the injected one are.
	if got := Find(recs, 0); len(got) != 2 || got[0].Index != 0 || got[1].Index != 5 {
		t.Errorf("idle 0: %+v", got)
	}
}

// A request sent while a candidate waited for its first token is not a
// warm one; a class with too few warm requests is extrapolated by the
// prefill cost per prompt token.
func TestFindExtrapolates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	recs := run(t0, 0, 1, 500, 600, 700, 800, 900, 1000)
	recs[0].TTFT, recs[0].Total = 300*ms, 400*ms // the cold one; recs[1] overlaps its wait
	recs[1].TTFT = 5 * time.Second
	for i := 2; i < 5; i++ {
		recs[i].PromptTokens = 100
	}
	for i := 5; i < 8; i++ {
		recs[i].Class, recs[i].PromptTokens, recs[i].TTFT = "long", 1100, 110*ms
	}
	recs[0].Class, recs[0].PromptTokens = "huge", 2100
	got := Find(recs, 0)
	if len(got) != 1 {
		t.Fatalf("%+v", got)
	}
	c := got[0]
	// slope 100ms/1000 tokens; 2000 tokens past the fastest class.
	if !c.Extrapolated || c.Warm != 0 || c.WarmReach != 210*ms || c.ClassExcess != 200*ms || c.Compared != 100*ms {
		t.Errorf("extrapolated %+v", c)
	}
	recs[0].OK = false
	if c := Find(recs, 0)[0]; c.TTFT != Failed || c.Compared != Failed {
		t.Errorf("failed candidate %+v", c)
	}
}

// warmReach is the lognormal's upper prediction bound: for TTFTs of
// log-mean m and log-sd s, exp(m + t(level, n-1) sqrt(1+1/n) s), with
// t's quantile at any level (t(0.95, 2) = 2.920, t(0.9975, 2) = 14.089).
func TestWarmReach(t *testing.T) {
	s := sample{100 * ms, 200 * ms, 400 * ms}
	m := math.Log(0.2)
	sd := math.Log(2)
	for level, tq := range map[float64]float64{0.95: 2.91998558035, 0.9975: 14.0890472756} {
		want := time.Duration(math.Exp(m+tq*math.Sqrt(1+1.0/3)*sd) * 1e9)
		if got := warmReach(s, level); (got - want).Abs() > time.Microsecond {
			t.Errorf("warmReach at %v: %v, want %v", level, got, want)
		}
	}
}

// Level splits a run's 5% over its candidates (Šidák): k candidates
// each within their bound with probability Level(k) all are with 95%.
func TestLevel(t *testing.T) {
	for _, k := range []int{0, 1, 2, 11, 20} {
		got := Level(k)
		if k <= 1 {
			if got != 0.95 {
				t.Errorf("Level(%d) = %v, want 0.95", k, got)
			}
			continue
		}
		if all := math.Pow(got, float64(k)); math.Abs(all-0.95) > 1e-12 {
			t.Errorf("Level(%d) = %v: all %d within with probability %v, want 0.95", k, got, k, all)
		}
	}
	if got := Level(20); math.Abs(got-0.997439) > 1e-6 {
		t.Errorf("Level(20) = %v", got)
	}
}

func TestSpans(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s := mergeSpans([]span{{at(50), at(60)}, {at(0), at(10)}, {at(5), at(20)}, {at(20), at(30)}})
	if len(s) != 2 || !s[0].to.Equal(at(30)) || !s[1].from.Equal(at(50)) {
		t.Fatalf("merged %v", s)
	}
	for ms, want := range map[int]bool{-1: false, 0: true, 29: true, 30: false, 55: true, 60: false} {
		if inSpans(s, at(ms)) != want {
			t.Errorf("inSpans(%d) != %v", ms, want)
		}
	}
}

func TestSampleQuantile(t *testing.T) {
	s := sample{4, 1, 3, 2}
	if q := s.Quantile(0.5); q != 3 { // 2.5 rounds half away from zero
		t.Errorf("median %v", q)
	}
	if q := (sample{}).Quantile(0.5); q != Failed {
		t.Errorf("empty %v", q)
	}
	if s[0] != 4 {
		t.Errorf("Quantile sorted its receiver: %v", s)
	}
}
