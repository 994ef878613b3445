// Package coldstart shows why a latency test needs 75 requests and no
// warm-up: short or warmed-up runs never see the cold starts users do.
package coldstart_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// slo is the SLO of a chat feature: a quick first token, consistently. A
// TTFT CV above 100% is the signature of cold starts (docs/sources.md); a p95
// barely notices one cold request in 75. A 2% error rate needs at least
// 50 requests to judge.
var slo = []sloassert.Objective{
	sloassert.Q(sloassert.TTFT, 0.95, time.Second),
	sloassert.MaxCV(sloassert.TTFT, sloassert.CVTolerable.MaxPercent()),
	sloassert.MaxErrorRate(0.02),
}

// TestShortOrWarmedUpRunsMissColdStarts runs one deployment (lowtraffic.yaml:
// at zero when the test starts, and scaled to zero again before the 41st
// arrival) four ways. Each row says what the SLO concludes and why; the
// test passes when every verdict is the expected one, so the rows that
// must break the SLO assert that they do.
//
// On a real endpoint the cold starts come at random, about one request in
// twenty (as published): 20 requests miss them all with probability
// 0.95^20 = 36%, 75 requests only 0.95^75 = 2% of the time.
func TestShortOrWarmedUpRunsMissColdStarts(t *testing.T) {
	prof, err := fakeprovider.LoadProfile("lowtraffic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		batch  latencytest.Batch
		wantOK bool
		cvOK   bool // whether the latencies alone look consistent
		why    string
	}{
		{"20 after warm-up", latencytest.Batch{Warmup: 3, Requests: 20}, false, true,
			"the warm-up swallowed the first cold start and 23 arrivals end before the second: the latencies look clean (a wrong picture), " +
				"but 20 requests are too few to judge a 2% error rate, so the verdict is not a pass"},
		{"20 without warm-up", latencytest.Batch{NoWarmup: true, Requests: 20}, false, false,
			"the first request waited 30 s for the model: p95 and CV both break"},
		{"75 after warm-up", latencytest.Batch{Warmup: 3, Requests: 75}, false, false,
			"the warm-up hid the first cold start, but 75 requests reach the second: CV breaks"},
		{"75 without warm-up", latencytest.Batch{NoWarmup: true, Requests: 75}, false, false,
			"both cold starts count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := fakeprovider.New(prof) // a fresh deployment, at zero
				t.Cleanup(fake.Close)
				p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(fake.Client()), latencytest.WithModel(prof.Model))
				r := tc.batch.Measure(t, p) // the disclosure says how many warm-up requests were dropped

				// The fake says which requests waited for a model load.
				for _, s := range fake.Served() {
					if s.ColdStart > 0 {
						t.Logf("%s waited %v for a cold start", s.ID, s.ColdStart)
					}
				}
				rep := sloassert.Evaluate(r, slo...)
				cv := r.TTFT().CV()
				t.Logf("TTFT CV %.0f%%: %s\n%s", cv, sloassert.CVBandOf(cv), rep)
				if rep.OK() != tc.wantOK || rep.Outcomes[1].OK != tc.cvOK {
					t.Errorf("SLO met: %v, want %v; CV within bounds: %v, want %v: %s", rep.OK(), tc.wantOK, rep.Outcomes[1].OK, tc.cvOK, tc.why)
				}
			})
		})
	}
}
