package agent_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a run leaves a goroutine behind (a
// step's copies, an abandoned sub-agent, an open-loop arrival).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
