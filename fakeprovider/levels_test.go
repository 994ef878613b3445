package fakeprovider_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// levelProfile stalls and answers 503 only with 4 requests in flight.
const levelProfile = `
model: m
seed: 5
ttft: 100ms
itl: 10ms
output_tokens: 20
slots_per_replica: 8
load:
  - in_flight: 4
    stall: {probability: 25%, after_token: 3, duration: 2s}
    faults: {http_503: 0.1, disconnect: 0.05, after_token: 4}
`

// TestLoadLevelStallsAndFaults: a level's stall and fault rates apply at
// that load only: a closed loop at concurrency 1 meets no stall and no
// fault; at concurrency 4 the served shares are within 3.29 binomial
// standard errors (99.9%) of the level's rates, and the Predictor draws
// exactly what the fake served for each trace ID.
func TestLoadLevelStallsAndFaults(t *testing.T) {
	p, err := fakeprovider.ParseProfile([]byte(levelProfile))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := fakeprovider.NewPredictor(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []int{1, 4} {
		synctest.Test(t, func(t *testing.T) {
			f := fakeprovider.New(p)
			defer f.Close()
			prov := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("m"))
			b := latencytest.Batch{Requests: 400, Concurrency: c, Load: latencytest.Load{MaxTokens: 64, Prompt: "hi", Label: fmt.Sprintf("c%d", c)}}
			if _, err := b.Run(context.Background(), prov); err != nil {
				t.Fatal(err)
			}
			counts := map[string]int{}
			n := 0
			for _, s := range f.Served() {
				n++
				for _, x := range strings.Split(s.Fault, "+") {
					counts[x]++
				}
				pd := pr.PredictAt(s.ID, 1, 64, s.InFlight)
				if s.InFlight == c && pd.Fault != s.Fault {
					t.Errorf("%s at %d in flight: served fault %q, predicted %q", s.ID, s.InFlight, s.Fault, pd.Fault)
				}
			}
			t.Logf("c=%d: %d served; stall %d, http_503 %d, disconnect %d", c, n, counts["stall"], counts["http_503"], counts["disconnect"])
			for _, x := range []struct {
				name string
				rate float64
			}{{"stall", 0.25 * (1 - 0.1)}, {"http_503", 0.1}, {"disconnect", 0.05}} {
				got := float64(counts[x.name]) / float64(n)
				if c == 1 {
					if counts[x.name] != 0 {
						t.Errorf("c=1: %d requests with %s, want none (the level is at 4 in flight)", counts[x.name], x.name)
					}
					continue
				}
				// Ramp-up and drain admit a few requests below 4 in flight.
				band := 3.29 * math.Sqrt(x.rate*(1-x.rate)/float64(n))
				if d := got - x.rate; d > band || d < -band {
					t.Errorf("c=4: %s share %.3f, level rate %.3f (99.9%% band ±%.3f)", x.name, got, x.rate, band)
				}
			}
		})
	}
}

// TestLoadLevelYAMLBadInput: a level's stall and faults parse strictly,
// and what is wrong is named with its line.
func TestLoadLevelYAMLBadInput(t *testing.T) {
	base := "ttft: 100ms\nload:\n  - in_flight: 4\n"
	for _, c := range []struct{ yaml, want string }{
		{base + "    stall: {probability: 0.1}\n", "load[0].stall.duration: required"},
		{base + "    stall: {probability: 1.5, duration: 1s}\n", "above 1"},
		{base + "    stall: {probability: 0.1, duration: 1s, bogus: 1}\n", `unknown key "bogus"`},
		{base + "    faults: {http_503: 0.7, http_529: 0.6}\n", "load[0].faults: probabilities sum to"},
		{base + "    faults: {retry_after: 2s}\n", "load[0].faults.retry_after: set retry_after in the profile's faults"},
		{base + "    faults: {after_token: -1}\n", "negative"},
		{"ttft: {dist: empirical, interpolate: true, values: [1s, 2s], tail: {share: 0.1, threshold: 2s, shape: 0.2, scale: 1s}}\n", "tail: points is missing"},
		{"ttft: {dist: empirical, interpolate: true, values: [1s, 2s], tail: {share: 0.1, threshold: 2s, shape: 0.2, scale: 1s, points: 2, xi: 1}}\n", `unknown key "xi" in tail`},
		{"ttft: {dist: empirical, interpolate: true, values: [1s, 2s], tail: {share: 0, threshold: 2s, shape: 0.2, scale: 1s, points: 2}}\n", "tail.share 0 is outside (0, 1)"},
		{"ttft: {dist: empirical, interpolate: true, values: [1s, 2s], tail: {share: 0.1, threshold: 2s, shape: 1.2, scale: 1s, points: 2}}\n", "tail.shape 1.2 is outside (-1, 1)"},
		{"ttft: {dist: empirical, interpolate: true, values: [1s, 2s], tail: {share: 0.1, threshold: 2s, shape: 0.2, scale: 0s, points: 2}}\n", "tail.scale must be positive"},
		{"ttft: {dist: empirical, interpolate: true, values: [1s, 2s], tail: {share: 0.1, threshold: 2s, shape: 0.2, scale: 1s, points: 1.5}}\n", "tail.points"},
		{"ttft: {dist: empirical, values: [1s, 2s], tail: {share: 0.1, threshold: 2s, shape: 0.2, scale: 1s, points: 2}}\n", "tail is only allowed in an empirical distribution with interpolate: true"},
	} {
		_, err := fakeprovider.ParseProfile([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: error %v, want one naming %q with its line", c.yaml, err, c.want)
		}
	}
}

// TestLoadLevelYAML: a level's stall and faults and a tail parse to the
// profile built in Go; an unset level stall or faults is the level
// below's; the tail's draws above the threshold follow the GPD.
func TestLoadLevelYAML(t *testing.T) {
	got, err := fakeprovider.ParseProfile([]byte(strings.Replace(levelProfile, "ttft: 100ms\n", "", 1) + "ttft: {dist: empirical, interpolate: true, values: [100ms, 200ms], tail: {share: 10%, threshold: 190ms, shape: 0.25, scale: 50ms, points: 12}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	lv := got.Load[0]
	if lv.Stall == nil || lv.Stall.Probability != 0.25 || lv.Stall.AfterToken != 3 || lv.Stall.Duration.Value != 2*time.Second {
		t.Errorf("stall: %+v", lv.Stall)
	}
	if lv.Faults == nil || lv.Faults.HTTP503 != 0.1 || lv.Faults.Disconnect != 0.05 || lv.Faults.AfterToken != 4 {
		t.Errorf("faults: %+v", lv.Faults)
	}
	want := fakeprovider.Tail[time.Duration]{Share: 0.1, Threshold: 190 * time.Millisecond, Shape: 0.25, Scale: 50 * time.Millisecond, Points: 12}
	if got.TTFT.Tail == nil || *got.TTFT.Tail != want {
		t.Errorf("tail: %+v, want %+v", got.TTFT.Tail, want)
	}
	// P(draw > 190ms + y) = 0.1 (1 + 0.25 y / 50ms)^-4: at y = 50ms, 0.1 × 1.25^-4 = 0.04096.
	if e := want.Exceeds(240 * time.Millisecond); math.Abs(e-0.04096) > 1e-12 {
		t.Errorf("Exceeds(240ms) = %v, want 0.04096", e)
	}
}
