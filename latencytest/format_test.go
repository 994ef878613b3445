package latencytest

import (
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/format"
)

// internal/format renders Failed and NotObserved by their values, which
// it holds as constants of its own: they must agree with these.
func TestFormatKnowsFailedAndNotObserved(t *testing.T) {
	if got := format.Duration(Failed); got != "failed" {
		t.Errorf("Failed renders as %q", got)
	}
	if got := format.In(NotObserved, time.Millisecond); got != "-" {
		t.Errorf("NotObserved renders as %q", got)
	}
	if got := format.UnitFor(time.Second, Failed); got != time.Millisecond {
		t.Errorf("Failed picked the unit %v", got)
	}
}
