package fakeprovider

import (
	"fmt"
	"math"
	"strings"
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
// call totals within 0.1, for the three targets fitted from the measured raw
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
			if target == 0 {
				p.Conversation.Shape = nil // a shape needs a factor to shape
			}
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

// TestConversationShape: with a measured shape (here flat: 30 factors
// evenly spaced in log, kurtosis 1.8) the chain factors spread as the
// shape does (kurtosis of their logs under 2.2; a lognormal's is 3), and
// 300 chains of 10 still reach the target ICC of log call totals within
// 0.1 (computed exactly by the Predictor). Bad shapes are refused.
func TestConversationShape(t *testing.T) {
	var flat []float64
	for i := range 30 {
		flat = append(flat, math.Exp(-1+2*float64(i)/29))
	}
	kurtosis := func(xs []float64) float64 {
		var m, v, k float64
		for _, x := range xs {
			m += x / float64(len(xs))
		}
		for _, x := range xs {
			v += (x - m) * (x - m) / float64(len(xs))
			k += math.Pow(x-m, 4) / float64(len(xs))
		}
		return k / (v * v)
	}
	for _, c := range []struct {
		shape          []float64
		kurtLo, kurtHi float64
	}{{flat, 1.6, 2.2}, {nil, 2.7, 3.3}} {
		p := Profile{TTFT: LogNormal(300*time.Millisecond, 1500*time.Millisecond), ITL: LogNormal(20*time.Millisecond, 50*time.Millisecond),
			ITLPerRequest: true, OutputTokens: Fixed(64), Conversation: Conversation{ICC: 0.5, Shape: c.shape}}
		pr, err := NewPredictor(p)
		if err != nil {
			t.Fatal(err)
		}
		var logs []float64
		for j := range 4000 {
			logs = append(logs, math.Log(chainSpeed(&pr.p, fmt.Sprintf("chain%04d-call00", j))))
		}
		if k := kurtosis(logs); k < c.kurtLo || k > c.kurtHi {
			t.Errorf("shape %v: kurtosis of log factors %.2f, want [%v, %v]", c.shape != nil, k, c.kurtLo, c.kurtHi)
		}
		totals := make([][]time.Duration, 300)
		for j := range totals {
			for k := range 10 {
				totals[j] = append(totals[j], pr.Predict(fmt.Sprintf("chain%04d-call%02d", j, k), 20, 0).Total)
			}
		}
		if got := iccOfLogs(totals); math.Abs(got-0.5) > 0.1 {
			t.Errorf("shape %v: ICC %.3f over 300 chains, target 0.5", c.shape != nil, got)
		}
	}
	for _, c := range []struct {
		conv Conversation
		want string
	}{
		{Conversation{Shape: flat}, "needs conversation.icc"},
		{Conversation{ICC: 0.5, Shape: []float64{1, 2}}, "3 or more"},
		{Conversation{ICC: 0.5, Shape: []float64{2, 2, 2}}, "needs a spread"},
		{Conversation{ICC: 0.5, Shape: []float64{1, 2, -3}}, "positive and finite"},
		{Conversation{ICC: 0.5, Shape: []float64{1, 2, math.NaN()}}, "positive and finite"},
	} {
		if err := (Profile{Conversation: c.conv}).Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.conv, err, c.want)
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
