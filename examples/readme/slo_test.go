//go:build tailguard_readme

// The README's "dozen lines" test, verbatim from the //line directive on
// (readme_test.go checks it against the README and runs it).

//line slo_test.go:1
package app_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

func TestChatLatencySLO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // virtual time: no real waiting, same figures every run
		prof, _ := fakeprovider.Preset("mistral-3-14b") // measured on a real serverless endpoint
		fake := fakeprovider.New(prof)
		t.Cleanup(fake.Close)
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(fake.Client()), latencytest.WithModel(prof.Model))
		r := latencytest.Batch{Requests: 200, Concurrency: 4}.Measure(t, p)
		sloassert.Check(t, r,
			sloassert.Q(sloassert.TTFT, 0.50, 300*time.Millisecond),
			sloassert.Q(sloassert.TTFT, 0.99, 475*time.Millisecond),
			sloassert.MaxErrorRate(0.01))
	})
}
