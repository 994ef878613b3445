package fakeprovider

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// iccOfLogs is the one-way ANOVA intraclass correlation of log call
// totals, chain by chain (equal chain lengths).
func iccOfLogs(totals [][]time.Duration) float64 {
	k := float64(len(totals[0]))
	var grand float64
	means := make([]float64, len(totals))
	n := 0
	for j, ch := range totals {
		for _, d := range ch {
			x := math.Log(float64(d))
			means[j] += x / k
			grand += x
			n++
		}
	}
	grand /= float64(n)
	var ssb, ssw float64
	for j, ch := range totals {
		ssb += k * (means[j] - grand) * (means[j] - grand)
		for _, d := range ch {
			x := math.Log(float64(d))
			ssw += (x - means[j]) * (x - means[j])
		}
	}
	msb := ssb / float64(len(totals)-1)
	msw := ssw / float64(n-len(totals))
	return (msb - msw) / (msb + (k-1)*msw)
}

// TestConversationICC: 300 served chains of 10 calls (synctest's clock,
// chain trace IDs "...-chainNNNN-callK") reproduce the target ICC of log
// call totals within 0.1, for the three targets fitted from seed 000's raw
// chains (maverick 0.53, gpt-oss 0.12, mistral about 0), on two profiles.
func TestConversationICC(t *testing.T) {
	skipCalibration(t) // serves 3,000 calls per target: numbers, not concurrency
	mav, _ := Preset("llama-4-maverick-chain")
	mav.Stall = Stall{} // a 20-minute stall is not chain speed
	wide := Profile{Model: "wide", TTFT: LogNormal(300*time.Millisecond, 1500*time.Millisecond),
		ITL: LogNormal(20*time.Millisecond, 50*time.Millisecond), ITLPerRequest: true, OutputTokens: Fixed(64), SlotsPerReplica: 32}
	for _, base := range []Profile{mav, wide} {
		for _, target := range []float64{0.53, 0.12, 0} {
			p := base
			p.Conversation.ICC = target
			t.Run(fmt.Sprintf("%s/icc=%.2f", p.Model, target), func(t *testing.T) {
				calls, _ := runChains(t, p, study000, 300)
				totals := make([][]time.Duration, 300)
				for i, c := range calls {
					totals[i/chainCalls] = append(totals[i/chainCalls], c.end)
				}
				got := iccOfLogs(totals)
				if math.Abs(got-target) > 0.1 {
					t.Errorf("ICC of log call totals over 300 chains: %.3f, target %.2f", got, target)
				} else {
					t.Logf("ICC %.3f, target %.2f", got, target)
				}
			})
		}
	}
}

// TestConversationOutsideChains: requests without a chain suffix draw no
// factor, and a chain's calls share one.
func TestConversationOutsideChains(t *testing.T) {
	p := Profile{ITL: LogNormal(20*time.Millisecond, 50*time.Millisecond), ITLPerRequest: true, Conversation: Conversation{ICC: 0.5}}
	q := p
	q.Conversation = Conversation{}
	with, _ := NewPredictor(p)
	without, _ := NewPredictor(q)
	if a, b := with.Predict("c8-0017", 10, 0), without.Predict("c8-0017", 10, 0); a != b {
		t.Errorf("a request outside chains changed with the conversation: %+v vs %+v", a, b)
	}
	pa, pb := with.p, with.p
	if s := chainSpeed(&pa, "x-call01"); s != chainSpeed(&pb, "x-call07") || s == 1 {
		t.Errorf("calls of chain x: speeds %v and %v, want one shared factor other than 1", s, chainSpeed(&pb, "x-call07"))
	}
}
