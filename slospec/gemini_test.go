package slospec_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/slospec"
)

// protocol: gemini in a spec: chains speak Gemini's generateContent to
// the fake, every chain exactly 2750ms (a 2.749s p50 fails by 1.0ms, no
// request fails). Endpoint targets: see TestEndpointProtocol and
// TestEndpointGeminiDefaults.
func TestRunFileGemini(t *testing.T) {
	ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/gemini.yaml") })
	if want := []string{"inner", "inner/chains", "inner/chains/chain_total_p50"}; ok || !slices.Equal(failedTestNames(out), want) {
		t.Errorf("gemini.yaml: ok %v, failed %v, want %v:\n%s", ok, failedTestNames(out), want, out)
	}
	for _, w := range []string{"chain total p50 <= 2749.0ms", "2750.0ms", "-1.0ms", ":streamGenerateContent"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}

}
