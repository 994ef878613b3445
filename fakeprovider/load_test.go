package fakeprovider

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/internal/stats"
)

// loadProfile has one TTFT and one ITL per load level, so a served
// request's level can be read off its timing.
func loadProfile() Profile {
	return Profile{
		Model:           "load-levels",
		TTFT:            Fixed(100 * time.Millisecond),
		ITL:             Fixed(10 * time.Millisecond),
		ITLPerRequest:   true,
		OutputTokens:    Fixed(5),
		SlotsPerReplica: 64,
		Load: []LoadLevel{
			{InFlight: 5, TTFT: Fixed(300 * time.Millisecond), ITL: Fixed(30 * time.Millisecond)},
			{InFlight: 20, TTFT: Fixed(time.Second), ReasoningTokens: Fixed(1)}, // ITL: level 5's
		},
	}
}

// TestLoadLevels serves requests that arrive together, so that the k-th
// is admitted with k in flight, and checks each against its level: level
// 1 alone, exactly 5 and 20 at their levels, above 20 the top level, an
// unset ITL inherited from the level below, between levels one of the two
// neighbours (never another); and the Predictor at the served InFlight
// predicts every request to the nanosecond.
func TestLoadLevels(t *testing.T) {
	p := loadProfile()
	pr, err := NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	levelOf := func(ttft time.Duration) int {
		switch ttft {
		case 100 * time.Millisecond:
			return 1
		case 300 * time.Millisecond:
			return 5
		case time.Second:
			return 20
		}
		return -1
	}
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, p)
		c := f.Client()
		const n = 30
		calls := make([]call, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				calls[i] = streamCall(t, c, fmt.Sprintf("req-%02d", i), study000.body(p.Model, nonce(i)))
			})
			synctest.Wait() // admitted in order: request i sees i+1 in flight
		}
		wg.Wait()
		byID := map[string]call{}
		for _, c := range calls {
			byID[c.id] = c
		}
		for _, s := range f.Served() {
			got := byID[s.ID]
			want := pr.PredictAt(s.ID, 0, study000.maxTokens, s.InFlight)
			if got.firstTok != want.TTFT || got.end != want.Total {
				t.Errorf("%s (in flight %d): served first token %v, end %v; predicted %v, %v", s.ID, s.InFlight, got.firstTok, got.end, want.TTFT, want.Total)
			}
			level := levelOf(got.firstTok)
			gaps := time.Duration(4) // 5 answer tokens; level 20 reasons for 1 token first
			if level == 20 {
				gaps = 5
			}
			itl := (got.end - got.firstTok) / gaps
			wantITL := map[int]time.Duration{1: 10 * time.Millisecond, 5: 30 * time.Millisecond, 20: 30 * time.Millisecond}[level]
			switch k := s.InFlight; {
			case k == 1 && level != 1, k == 5 && level != 5, k >= 20 && level != 20:
				t.Errorf("%s: %d in flight drew level %d", s.ID, k, level)
			case k > 1 && k < 5 && level != 1 && level != 5, k > 5 && k < 20 && level != 5 && level != 20:
				t.Errorf("%s: %d in flight drew level %d, not a neighbour", s.ID, k, level)
			case level == 20 && got.firstAnswer != got.firstTok+wantITL, level != 20 && got.firstAnswer != got.firstTok:
				t.Errorf("%s: level %d: first answer %v after first token %v (level 20 reasons for 1 token)", s.ID, level, got.firstAnswer, got.firstTok)
			case itl != wantITL:
				t.Errorf("%s: level %d streamed at %v a token, want %v", s.ID, level, itl, wantITL)
			}
		}
		if got := len(f.Served()); got != n {
			t.Fatalf("served %d, want %d", got, n)
		}
	})
}

// TestLoadLevelMixture checks the mixture between levels over many trace
// IDs: at k in flight between levels 1 and 5 the share drawn from level 5
// is (k-1)/4, within 4 binomial standard errors.
func TestLoadLevelMixture(t *testing.T) {
	p := loadProfile().withDefaults()
	const n = 4000
	for k := 2; k <= 4; k++ {
		high := 0
		for i := range n {
			if lv := p.levelAt(fmt.Sprintf("id-%d", i), k); lv != nil && lv.InFlight == 5 {
				high++
			} else if lv != nil {
				t.Fatalf("k=%d drew level %d", k, lv.InFlight)
			}
		}
		want := float64(k-1) / 4
		sd := math.Sqrt(n * want * (1 - want))
		if d := float64(high) - want*n; math.Abs(d) > 4*sd {
			t.Errorf("k=%d: %d of %d from level 5, want about %.0f", k, high, n, want*n)
		}
	}
}

// TestLoadLevelErrors: levels that cannot mean anything are refused with
// the field and its line.
func TestLoadLevelErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"load:\n  - {in_flight: 1, ttft: 1s}\n", "line 2: load[0].in_flight: 1 is below 2"},
		{"load:\n  - {in_flight: 5, ttft: 1s}\n  - {in_flight: 5, ttft: 2s}\n", "line 3: load[1].in_flight: 5 does not increase"},
		{"load:\n  - {in_flight: 5, ttft: -1s}\n", "load[0].ttft"},
		{"load:\n  - {in_flight: 5, ttfx: 1s}\n", "ttfx"},
		{"load:\n  - {in_flight: 2.5, ttft: 1s}\n", "in_flight"},
	} {
		_, err := ParseProfile([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.yaml, err, c.want)
		}
	}
	p, err := ParseProfile([]byte("ttft: 100ms\nload:\n  - in_flight: 5\n    ttft: {dist: lognormal, median: 300ms, p99: 1s}\n  - {in_flight: 20, itl: 40ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Load) != 2 || p.Load[0].InFlight != 5 || !p.Load[0].TTFT.IsSet() || p.Load[1].TTFT.IsSet() {
		t.Errorf("parsed load %+v", p.Load)
	}
}

// TestTTFTITLCorrelation: over 4,000 requests the rank correlation of
// TTFT and per-request ITL is the target within 0.05 (at level 1, at a
// load level that inherits it, and at one with its own, the opposite),
// and each keeps its own distribution: its median within 3% of the
// independent draws'.
func TestTTFTITLCorrelation(t *testing.T) {
	for _, target := range []float64{-0.7, 0, 0.55} {
		opposite := -target
		p := Profile{
			TTFT:               LogNormal(300*time.Millisecond, 2*time.Second),
			ITL:                Interpolated(10*time.Millisecond, 20*time.Millisecond, 25*time.Millisecond, 60*time.Millisecond),
			ITLPerRequest:      true,
			TTFTITLCorrelation: target,
			Load: []LoadLevel{
				{InFlight: 5, TTFT: Uniform(time.Second, 3*time.Second)},
				{InFlight: 10, TTFTITLCorrelation: &opposite},
				{InFlight: 20},
			},
		}
		pr, err := NewPredictor(p)
		if err != nil {
			t.Fatal(err)
		}
		q := pr.p
		for _, k := range []int{1, 5, 10, 20} {
			want := target
			if k >= 10 {
				want = opposite
			}
			const n = 4000
			var ttft, itl []float64
			for i := range n {
				pl := newPlan(&q, fmt.Sprintf("req-%d", i))
				pl.underLoad(&q, k)
				ttft = append(ttft, float64(pl.ttft))
				itl = append(itl, float64(pl.itl))
			}
			if got := stats.Spearman(ttft, itl); math.Abs(got-want) > 0.05 {
				t.Errorf("in flight %d: rank correlation %.3f, want %v", k, got, want)
			}
			slices.Sort(itl)
			median := 22.5 * float64(time.Millisecond) // the interpolated median of the 4 values
			if med := itl[n/2]; math.Abs(med/median-1) > 0.03 {
				t.Errorf("target %v, in flight %d: ITL median %v, want about %v", target, k, time.Duration(med), time.Duration(median))
			}
		}
	}
	bad, half := -1.0, 0.5
	for _, c := range []struct {
		p    Profile
		want string
	}{
		{Profile{TTFTITLCorrelation: 1, ITLPerRequest: true}, "outside (-1, 1)"},
		{Profile{TTFTITLCorrelation: 0.5}, "needs itl_per_request"},
		{Profile{TTFTITLCorrelation: 0.5, ITLPerRequest: true, TTFT: Mixture(Weighted(1, Fixed(time.Second)))}, "without a mixture"},
		{Profile{TTFTITLCorrelation: math.NaN(), ITLPerRequest: true}, "outside (-1, 1)"},
		{Profile{ITLPerRequest: true, Load: []LoadLevel{{InFlight: 5, TTFTITLCorrelation: &bad}}}, "load[0].ttft_itl_correlation: -1 is outside"},
		{Profile{ITLPerRequest: true, ITL: Mixture(Weighted(1, Fixed(time.Second))), Load: []LoadLevel{{InFlight: 5, TTFTITLCorrelation: &half}}}, "needs itl without a mixture"},
	} {
		if err := c.p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.p.TTFTITLCorrelation, err, c.want)
		}
	}
}
