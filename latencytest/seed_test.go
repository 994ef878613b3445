package latencytest_test

import (
	"context"
	"reflect"
	"testing"
	"testing/synctest"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// seedPrompt is the fixed prompt of the published sweep the presets were
// fitted to (source 000 in docs/sources.md).
const seedPrompt = "Reply with a two-sentence summary of why caching matters for LLM inference."

// seedProtocol runs that sweep's protocol against a preset in the current
// bubble: concurrency 1, 5 and 20 × 75 requests, then 30 chains × 10
// calls, all with 64-token answers.
func seedProtocol(t *testing.T, preset string) (*latencytest.SweepResult, *latencytest.ChainResult) {
	t.Helper()
	prof, err := fakeprovider.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	f := fakeprovider.New(prof)
	defer f.Close()
	p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(prof.Model))
	temp := 0.0
	sr, err := latencytest.Sweep{Batch: latencytest.Batch{Requests: 75, Load: latencytest.Load{Prompt: seedPrompt, MaxTokens: 64, Temperature: &temp}}, Levels: []int{1, 5, 20}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := latencytest.Chain{Chains: 30, Length: 10, Load: latencytest.Load{MaxTokens: 64, Temperature: &temp}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return sr, cr
}

// The seed's whole protocol runs in virtual time, and the same run twice
// gives identical records, to the nanosecond.
func TestSeedProtocolDeterministic(t *testing.T) {
	var runs [2]struct {
		sr *latencytest.SweepResult
		cr *latencytest.ChainResult
	}
	for i := range runs {
		synctest.Test(t, func(t *testing.T) { runs[i].sr, runs[i].cr = seedProtocol(t, "llama-4-maverick") })
	}
	a, b := runs[0], runs[1]
	sent := 0
	for i := range a.sr.Results {
		if !reflect.DeepEqual(a.sr.Results[i].Records, b.sr.Results[i].Records) {
			t.Errorf("level %d: records differ between two runs", a.sr.Levels[i])
		}
		sent += a.sr.Results[i].Counts().Sent
	}
	if !reflect.DeepEqual(a.cr.Chains, b.cr.Chains) {
		t.Errorf("chains differ between two runs")
	}
	if sent != 3*(75+latencytest.DefaultWarmup) || len(a.cr.Chains) != 30 || a.cr.Calls().Counts().Sent != 300 {
		t.Fatalf("sent %d sweep requests and %d chains", sent, len(a.cr.Chains))
	}
	// The run is not trivial: the TTFT tail is several times the median.
	c1 := a.sr.Results[0].TTFT()
	if c1.Finite().Len() == 0 || c1.Finite().TailRatio() < 2 {
		t.Errorf("c=1 TTFT p99/p50 %.2f: the preset's fat tail is missing", c1.Finite().TailRatio())
	}
}

// BenchmarkSeedProtocol measures the wall time of the whole seed protocol
// (525 streamed requests, 64 tokens each) run in virtual time. Goal: under
// 1 s on 2 cores. synctest.Test needs a *testing.T, so each iteration runs
// as a test through testing.RunTests.
func BenchmarkSeedProtocol(b *testing.B) {
	requests := 0
	for b.Loop() {
		ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{
			Name: "SeedProtocol",
			F: func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					sr, cr := seedProtocol(t, "llama-4-maverick")
					requests = cr.Calls().Counts().Sent
					for _, r := range sr.Results {
						requests += r.Counts().Sent
					}
				})
			},
		}})
		if !ok {
			b.Fatal("the seed protocol failed")
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/protocol")
	b.ReportMetric(float64(requests), "requests/protocol")
}
