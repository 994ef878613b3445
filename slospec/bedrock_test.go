package slospec_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/slospec"
)

// `protocol: bedrock` speaks Amazon Bedrock's ConverseStream to the fake:
// every chain is 5 calls of 350ms, 1750ms exactly (1750ms passes, 1749ms
// fails).
func TestRunFileBedrock(t *testing.T) {
	slospec.RunFile(t, "testdata/specs/bedrock.yaml")
	ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/bedrock-failing.yaml") })
	if want := []string{"inner", "inner/chains", "inner/chains/chain_total_p50"}; ok || !slices.Equal(failedTestNames(out), want) {
		t.Errorf("bedrock-failing.yaml: ok %v, failed %v, want %v:\n%s", ok, failedTestNames(out), want, out)
	}
	for _, w := range []string{"chain total p50 <= 1749.0ms", "1750.0ms"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if _, err := slospec.ParseSpec([]byte("target:\n  endpoint: {protocol: bedrock}\nobjectives: {error_rate: 1%}\n")); err != nil {
		t.Errorf("an endpoint target speaks bedrock: %v", err)
	}
}
