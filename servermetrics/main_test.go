package servermetrics_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a Watch leaves its goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
