package fakeprovider

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: a
// canceled stream, a closed Fake or a closed Server must end all of theirs.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
