package fakeprovider

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestPredictMatchesServed checks Predictor against the served fake: for
// every request, the first token, first answer, end, status, fault and
// token counts Predict gives are what a client measures from the fake on
// synctest's clock, to the nanosecond. The fit package's replay rests on
// this.
func TestPredictMatchesServed(t *testing.T) {
	perToken := Profile{
		Model:          "per-token",
		TTFT:           LogNormal(300*time.Millisecond, 2*time.Second),
		ITL:            Uniform(2*time.Millisecond, 30*time.Millisecond),
		OutputTokens:   Interpolated(3, 20, 40, 90),
		TokensPerChunk: Empirical(1, 2, 3),
		Stall:          Stall{Probability: 0.1, AfterToken: 5, Duration: Fixed(3 * time.Second)},
		Faults:         Faults{HTTP529: 0.05, Empty: 0.05, ErrorEvent: 0.05, AfterToken: 7},
		Conversation:   Conversation{ICC: 0.5},
	}
	gpt, _ := Preset("gpt-oss-120b-chain")
	mav, _ := Preset("llama-4-maverick")
	mav.Stall.Probability = 0.05
	ds, _ := Preset("deepseek-v3.2")
	ds.Faults.HTTP529, ds.Faults.Empty = 0.05, 0.05
	mav.Conversation.ICC = 0.53
	mav.TTFTITLCorrelation = 0.5 // the copula draws agree too
	for _, p := range []Profile{perToken, gpt, mav, ds} {
		p.SlotsPerReplica = 400
		t.Run(p.Model, func(t *testing.T) {
			t.Parallel()
			pr, err := NewPredictor(p)
			if err != nil {
				t.Fatal(err)
			}
			synctest.Test(t, func(t *testing.T) {
				f := mustNew(t, p)
				c := f.Client()
				compared := 0
				for i := range 200 {
					id := fmt.Sprintf("chain%02d-call%02d", i/10, i%10)
					if i%3 == 0 {
						id = fmt.Sprintf("req-%04d", i)
					}
					prompt := nonce(i) + strings.Repeat("x", 4*(i%50)*7)
					got := streamCall(t, c, id, study000.body(p.Model, prompt))
					want := pr.Predict(id, len(prompt)/4, study000.maxTokens)
					if got.status != want.Status {
						t.Fatalf("%s: status %d, predicted %d", id, got.status, want.Status)
					}
					if got.status != http.StatusOK {
						continue
					}
					compared++
					if got.firstTok != want.TTFT || got.firstAnswer != want.FirstAnswer || got.end != want.Total {
						t.Errorf("%s: served first token %v, answer %v, end %v; predicted %v, %v, %v (%+v)",
							id, got.firstTok, got.firstAnswer, got.end, want.TTFT, want.FirstAnswer, want.Total, want)
					}
				}
				if compared < 150 {
					t.Errorf("only %d of 200 requests streamed", compared)
				}
				served := f.Served()
				for _, s := range served {
					want := pr.Predict(s.ID, 0, 0) // fault and stall do not depend on the prompt or cap
					if s.Fault != want.Fault || s.Stall != want.Stall {
						t.Errorf("%s: served fault %q stall %v, predicted %q %v", s.ID, s.Fault, s.Stall, want.Fault, want.Stall)
					}
				}
			})
		})
	}
}

func TestChainKey(t *testing.T) {
	for _, c := range []struct {
		id, key string
		ok      bool
	}{
		{"chain03-call04", "chain03", true},
		{"agent-x07-call123", "agent-x07", true},
		{"a-call1-call2", "a-call1", true},
		{"chain03-call", "", false},   // no digits
		{"chain03-callx1", "", false}, // not only digits
		{"-call01", "", false},        // no chain part
		{"c8-0017", "", false},
	} {
		key, ok := ChainKey(c.id)
		if key != c.key || ok != c.ok {
			t.Errorf("ChainKey(%q) = %q, %v; want %q, %v", c.id, key, ok, c.key, c.ok)
		}
	}
}
