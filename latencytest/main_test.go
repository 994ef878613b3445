package latencytest_test

import (
	"flag"
	"testing"

	"go.uber.org/goleak"

	"github.com/tailguard/tailguard/internal/chathook"
)

// TestMain fails the package if a runner, a provider or a fake leaves a
// goroutine behind. When benchmarks run (-bench), the tests' cross-check
// of the chat fast path (chathook.Check, see chunk_test.go) is taken out
// of the decoder, so that the benchmarks time the client a user runs.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		chathook.Check = nil
	}
	goleak.VerifyTestMain(m)
}
