// Package regression compares each run with a baseline kept under
// testdata/: did the tail get worse since the baseline was recorded?
package regression_test

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// sloassert registers no flag of its own; when the test binary defines
// -update (as golden-file tests often do), Regression obeys it. Without
// it, use TAILGUARD_UPDATE_BASELINES=1.
var _ = flag.Bool(sloassert.UpdateFlag, false, "rewrite the baselines under testdata/")

// baseline was recorded once by TestTTFTBaseline:
//
//	go test ./examples/regression -run TestTTFTBaseline -update
//
// and is committed: it holds the raw records (timings, no answer text).
const baseline = "testdata/our-model.jsonl"

// model is the endpoint under test: 95% of first tokens near 180 ms, and a
// slow path (a busy replica, say) for the other 5%, near slow.
func model(seed uint64, slow time.Duration) fakeprovider.Profile {
	return fakeprovider.Profile{
		Model: "our-model",
		Seed:  seed,
		TTFT: fakeprovider.Mixture(
			fakeprovider.Weighted(0.95, fakeprovider.LogNormal(180*time.Millisecond, 300*time.Millisecond)),
			fakeprovider.Weighted(0.05, fakeprovider.LogNormal(slow, 2*slow)),
		),
		OutputTokens: fakeprovider.Fixed(8), // TTFT is what is compared; short answers keep the baseline small
	}
}

// measure runs 300 requests, 8 at a time, in virtual time.
func measure(t *testing.T, prof fakeprovider.Profile) *latencytest.Result {
	var r *latencytest.Result
	synctest.Test(t, func(t *testing.T) {
		fake := fakeprovider.New(prof)
		t.Cleanup(fake.Close)
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(fake.Client()), latencytest.WithModel(prof.Model))
		r = latencytest.Batch{Requests: 300, Concurrency: 8}.Measure(t, p)
	})
	return r
}

// compare says what counts as a regression. These are the defaults,
// spelled out.
var compare = sloassert.Compare{
	Metric:      sloassert.TTFT,
	Quantiles:   []float64{0.5, 0.95, 0.99}, // p99 needs n >= 100 on both sides
	MaxIncrease: 0.20,                       // the 95% interval of current/baseline must clear +20%...
	Floor:       50 * time.Millisecond,      // ...and the increase must exceed 50 ms
}

// TestTTFTBaseline is the test a project keeps: this build against the
// committed baseline. A missing baseline fails and says how to record it.
// (Against the fake, the same seed gives the same records, so this run
// equals its baseline; against a real endpoint every run differs a little,
// which is what the interval is for.)
func TestTTFTBaseline(t *testing.T) {
	cur := measure(t, model(1, 450*time.Millisecond))
	sloassert.Regression(t, baseline, cur, compare)
}

// TestWhatARegressionLooksLike compares other runs with the baseline,
// using the pure core (Compare.Evaluate), so that a row may regress and
// the test still pass when that is the expected verdict.
func TestWhatARegressionLooksLike(t *testing.T) {
	base, err := sloassert.LoadBaseline(baseline)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		prof       fakeprovider.Profile
		regression bool
		why        string
	}{
		{"another run", model(2, 450*time.Millisecond), false,
			"other draws move every quantile a little: within the interval, no finding"},
		{"slow path doubled", model(2, 900*time.Millisecond), true,
			"5% of requests twice as slow: p99 about doubles while p50 does not move"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := compare.Evaluate(base, measure(t, tc.prof))
			t.Logf("\n%s", rep)
			if rep.OK() == tc.regression {
				t.Errorf("regression: %v, want %v (%s)", !rep.OK(), tc.regression, tc.why)
			}
			// README.md here says "a doubled slow path failing at p99": the
			// report's verdict names the quantile, and the README the same.
			if m := regexp.MustCompile(`\(regression at (p\d+)\)`).FindStringSubmatch(rep.String()); tc.regression {
				readme, err := os.ReadFile("README.md")
				if err != nil {
					t.Fatal(err)
				}
				if m == nil || !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), "a doubled slow path failing at "+m[1]) {
					t.Errorf("README.md should say \"a doubled slow path failing at\" the quantile the report names:\n%s", rep)
				}
			}
		})
	}
}
