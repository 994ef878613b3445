package latencytest

import (
	"errors"
	"time"

	"github.com/tailguard/tailguard/internal/cancel"
)

// Cancel makes the client cancel requests on purpose, as a user who
// abandons a slow stream does (Load.Cancel; spec key cancel:): a Share of
// requests (default all; drawn per trace ID from Seed) is cancelled After
// a time or AfterTokens token events, whichever first, and the client
// closes its connection. Such a Record has the class "cancelled" (not
// ClassCanceled, the run's context ending): neither a failure nor a
// success. ErrorRate, Errors and sloassert.MaxErrorRate leave it out;
// Counts.Cancelled counts it; Record.CancelAt and CancelClose time the
// cancel and the close. A latency sample takes what it observed before the
// cancel (its TTFT, its gaps) and Failed for what the cancel cut short (a
// first token never seen, its Total). The LLM providers honour it
// (AfterTokens needs a streamed answer); the zero Cancel cancels nothing.
type Cancel = cancel.Cancel

// classCancelled is the class of a cancel on purpose (cancel.Class).
const classCancelled = cancel.Class

// errCancelled is the cause of a call the client cancelled on purpose.
var errCancelled = errors.New("cancelled by the client on purpose (Cancel)")

// cancelled reports whether the client cancelled r on purpose.
func cancelled(r *Record) bool { return r.Err == classCancelled }

// ended is v, or NotObserved for a cancelled x: it never ended.
func ended(x *Record, v time.Duration) time.Duration {
	if cancelled(x) {
		return NotObserved
	}
	return v
}
