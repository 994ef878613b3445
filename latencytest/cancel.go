package latencytest

import (
	"errors"
	"fmt"
	"time"

	"github.com/tailguard/tailguard/internal/cancel"
)

// Cancel makes the client cancel requests on purpose, as a user who
// abandons a slow stream does (Load.Cancel, for Batch, OpenLoop and
// Chain; spec key cancel:). A chosen request is cancelled After its send
// or once AfterTokens token events arrived, whichever comes first: the
// client closes its connection then. Its Record has the class
// "cancelled" (not ClassCanceled, the run's context ending): neither a
// failure nor a success. Error rates (ErrorRate, Errors, Counts.Failed,
// sloassert.MaxErrorRate) leave it out of numerator and denominator;
// Counts.Cancelled counts it. Record.CancelAt is when the client
// cancelled and Record.CancelClose how long the connection then took to
// close. In latency samples a cancelled request counts what it observed
// before the cancel (a TTFT before it, its gaps); a time the cancel cut
// short (a first token it never saw, its Total) is Failed, so a cancel
// never makes a figure easier. The LLM providers (OpenAI, Responses,
// Anthropic, NewLLM) honour it; AfterTokens needs a streamed answer. The
// zero Cancel cancels nothing.
type Cancel struct {
	// After cancels a chosen request this long after it was sent (0: not
	// by time).
	After time.Duration
	// AfterTokens cancels a chosen request once this many token events
	// arrived (0: not by tokens).
	AfterTokens int
	// Share is the share of requests chosen, in (0,1], drawn per trace
	// ID from Seed (so concurrency never changes which ones). 0 chooses
	// every request.
	Share float64
	// Seed seeds the draw. Default 0.
	Seed uint64
}

// classCancelled is the class of a request the client cancelled on
// purpose (see Cancel).
const classCancelled = cancel.Class

// errCancelled is the cause of a call the client cancelled on purpose.
var errCancelled = errors.New("cancelled by the client on purpose (Cancel)")

// set reports whether c cancels anything.
func (c Cancel) set() bool { return c.After > 0 || c.AfterTokens > 0 }

// check appends what is wrong with c to errs.
func (c Cancel) check(errs []error) []error {
	if why := cancel.Check(c.After, c.AfterTokens, c.Share); why != "" {
		errs = append(errs, errors.New(why))
	}
	return errs
}

// apply sets req's cancel when the draw chooses it.
func (c Cancel) apply(req *Request) {
	share := c.Share
	if share == 0 {
		share = 1
	}
	if c.set() && cancel.Draw(c.Seed, req.ID, share) {
		req.CancelAfter, req.CancelAfterTokens = c.After, c.AfterTokens
	}
}

// String describes the cancel for the disclosure.
func (c Cancel) String() string {
	share := "every request"
	if c.Share > 0 && c.Share < 1 {
		share = fmt.Sprintf("%g%% of requests (seed %d)", c.Share*100, c.Seed)
	}
	switch {
	case c.After > 0 && c.AfterTokens > 0:
		return fmt.Sprintf("%s cancelled after %v or %d token events, whichever first", share, c.After, c.AfterTokens)
	case c.After > 0:
		return fmt.Sprintf("%s cancelled after %v", share, c.After)
	}
	return fmt.Sprintf("%s cancelled after %d token events", share, c.AfterTokens)
}

// cancelled reports whether the client cancelled r on purpose.
func (r *Record) cancelled() bool { return r.Err == classCancelled }

// cancelledValue is a latency of a cancelled record as samples take it:
// v when it was observed before the cancel, else Failed.
func (r *Record) cancelledValue(v time.Duration) time.Duration {
	if v < 0 || v > r.CancelAt {
		return Failed
	}
	return v
}
