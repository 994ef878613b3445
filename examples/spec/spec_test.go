// Package spec keeps an SLO in a YAML file and runs it with one line.
package spec_test

import (
	"testing"

	"github.com/tailguard/tailguard/slospec"
)

// TestChatSLO runs slo.yaml: each level and each objective is a subtest
// (TestChatSLO/c8/ttft_p99), so a failure names exactly what broke. A fake
// target runs in virtual time, in its own synctest bubble: no
// synctest.Test here.
func TestChatSLO(t *testing.T) {
	slospec.RunFile(t, "slo.yaml")
}
