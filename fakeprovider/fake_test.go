package fakeprovider

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestFixedProfileTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(200 * time.Millisecond), ITL: Fixed(10 * time.Millisecond), OutputTokens: Fixed(64)})
		r := do(t, f.Client(), "http://fake", reqOpts{id: "r0", usage: true})
		if r.status != 200 || r.readErr != nil {
			t.Fatalf("status %d err %v body %s", r.status, r.readErr, r.body)
		}
		// first token at 200 ms; 63 more at 10 ms each: 200 + 630 = 830 ms
		if r.firstTok != 200*time.Millisecond || r.lastTok != 830*time.Millisecond {
			t.Errorf("first %v last %v, want 200ms and 830ms", r.firstTok, r.lastTok)
		}
		if r.tokens != 64 || r.finish != "stop" || !r.sawDone {
			t.Errorf("tokens %d finish %q done %v", r.tokens, r.finish, r.sawDone)
		}
		if _, c, _, ok := r.usage(); !ok || c != 64 {
			t.Errorf("usage completion %d ok %v", c, ok)
		}
		t.Log(fmtChunks(r.chunks[:3]))
	})
}

// batch runs n requests at concurrency c with trace IDs prefix-0000.. and
// returns the results by index.
func batch(t *testing.T, f *Fake, n, c int, prefix string, o reqOpts) []streamResult {
	t.Helper()
	out := make([]streamResult, n)
	sem := make(chan struct{}, c)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			oi := o
			oi.id = fmt.Sprintf("%s-%04d", prefix, i)
			out[i] = do(t, f.Client(), "http://fake", oi)
		}()
	}
	wg.Wait()
	return out
}

// noisy is a profile where every random part is on.
func noisy(seed uint64) Profile {
	return Profile{
		Seed:               seed,
		TTFT:               LogNormal(300*time.Millisecond, 2*time.Second),
		PrefillPer1kTokens: Uniform(10*time.Millisecond, 30*time.Millisecond),
		ITL:                Mixture(Weighted(0.9, Normal(20*time.Millisecond, 5*time.Millisecond)), Weighted(0.1, Fixed(80*time.Millisecond))),
		OutputTokens:       Uniform(8, 40),
		TokensPerChunk:     Empirical(1, 2, 3),
		ReasoningTokens:    Empirical(0, 0, 4),
		SlotsPerReplica:    4,
		Replicas:           2,
		Stall:              Stall{Probability: 0.05, AfterToken: 3, Duration: Uniform(time.Second, 5*time.Second)},
		Faults:             Faults{HTTP529: 0.03, HTTP429: 0.02, Empty: 0.02, Disconnect: 0.02, Malformed: 0.02, AfterToken: 2},
	}
}

type outcome struct {
	Status          int
	First, Last     time.Duration
	Tokens          int
	Content, Finish string
	Err             bool
	Done            bool
}

func outcomes(rs []streamResult) []outcome {
	out := make([]outcome, len(rs))
	for i, r := range rs {
		out[i] = outcome{r.status, r.firstTok, r.lastTok, r.tokens, r.content, r.finish, r.readErr != nil, r.sawDone}
	}
	return out
}

func TestDeterminism(t *testing.T) {
	run := func() ([]outcome, []Served) {
		var o []outcome
		var s []Served
		synctest.Test(t, func(t *testing.T) {
			f := mustNew(t, noisy(42))
			o = outcomes(batch(t, f, 200, 20, "c20", reqOpts{usage: true}))
			s = f.Served()
			for i := range s {
				s[i].Arrival = s[i].Arrival.UTC() // same instant; location only
			}
		})
		return o, s
	}
	o1, s1 := run()
	o2, s2 := run()
	if !reflect.DeepEqual(o1, o2) {
		for i := range o1 {
			if o1[i] != o2[i] {
				t.Errorf("request %d differs between runs:\n%+v\n%+v", i, o1[i], o2[i])
			}
		}
	}
	if !reflect.DeepEqual(s1, s2) {
		t.Errorf("served records differ between runs")
	}
	// The batch must have exercised the random parts, or equality proves
	// nothing: queueing (8 slots, 20 clients), faults and stalls.
	faults := map[string]int{}
	queued := 0
	for _, s := range s1 {
		faults[s.Fault]++
		if s.Queued > 0 {
			queued++
		}
	}
	if len(s1) != 200 || queued == 0 || faults[FaultHTTP529] == 0 || faults[FaultStall] == 0 || faults[FaultDisconnect] == 0 {
		t.Errorf("batch too tame to prove determinism: %d served, %d queued, faults %v", len(s1), queued, faults)
	}
	// Another seed gives other outcomes.
	var o3 []outcome
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, noisy(43))
		o3 = outcomes(batch(t, f, 200, 20, "c20", reqOpts{usage: true}))
	})
	if reflect.DeepEqual(o1, o3) {
		t.Errorf("seeds 42 and 43 gave identical outcomes")
	}
}
