package latencytest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a runner, a provider or a fake leaves a
// goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
