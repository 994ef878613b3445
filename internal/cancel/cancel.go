// Package cancel holds what the client's deliberate cancellations share
// between latencytest (which cancels and records), sloassert (which
// leaves them out of error rates and shows them) and slospec (which reads
// the cancel: key): the class name, the seeded draw of which requests a
// share cancels, and the summary a report shows.
//
// # Class
//
// A request the client cancelled on purpose (latencytest.Cancel) has the
// error class "cancelled". It is neither a failure nor a success: error
// rates leave it out of both their numerator and their denominator, and
// reports count it on its own. It is not "canceled", the class of a
// request the run's own context ended.
//
// # Draw
//
// Which requests a share of them cancels is drawn per trace ID from a
// seed, so concurrency and goroutine order never change which ones.
package cancel

import (
	"errors"
	"fmt"
	"math"
	randv2 "math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Class is the error class of a request the client cancelled on purpose.
const Class = "cancelled"

// Draw reports whether the request with trace ID id is among the share
// (in (0,1]) of requests that seed cancels: a draw from a generator
// seeded by (seed, FNV-1a of id).
func Draw(seed uint64, id string, share float64) bool {
	if share >= 1 {
		return true
	}
	h := uint64(14695981039346656037)
	for i := range len(id) {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	return randv2.New(randv2.NewPCG(seed, h)).Float64() < share
}

// Check returns what is wrong with a cancel configuration ("" when
// nothing): after and tokens are the cancel instant and token count (0:
// not by that), share the share of requests cancelled (0: every one).
func Check(after time.Duration, tokens int, share float64) string {
	switch {
	case after < 0:
		return fmt.Sprintf("cancel after %v < 0", after)
	case tokens < 0:
		return fmt.Sprintf("cancel after_tokens %d < 0", tokens)
	case math.IsNaN(share) || share < 0 || share > 1:
		return fmt.Sprintf("cancel share %v is outside [0,1] (a fraction: 0.1 for 10%%)", share)
	case share > 0 && after == 0 && tokens == 0:
		return fmt.Sprintf("cancel share %v without after or after_tokens: say when to cancel", share)
	}
	return ""
}

// Stop is one cancelled request as a report sees it: when the client
// cancelled, how long its connection took to close, and what the server
// said it generated after the close (Reported false: the server said
// nothing).
type Stop struct {
	ID         string
	CancelAt   time.Duration
	Close      time.Duration
	AfterClose int
	Reported   bool
}

// StoppedWithin is how many tokens a server may generate after it saw the
// client's close and still count as having stopped: the one event it was
// generating.
const StoppedWithin = 1

// Summary is the cancelled requests of a run, for a report: how many,
// the time from cancel to close (median and longest), and, where the
// server reported it, how many stopped within one event and the
// requests it kept generating for (a cost: tokens paid for and never
// read).
type Summary struct {
	N                  int
	CloseP50, CloseMax time.Duration
	Reported, Stopped  int
	KeptGenerating     []Stop // server reported more than StoppedWithin tokens after the close, most tokens first
}

// Summarize summarizes stops (nil: none cancelled).
func Summarize(stops []Stop) Summary {
	s := Summary{N: len(stops)}
	if s.N == 0 {
		return s
	}
	closes := make([]time.Duration, len(stops))
	for i, st := range stops {
		closes[i] = st.Close
		if !st.Reported {
			continue
		}
		s.Reported++
		if st.AfterClose <= StoppedWithin {
			s.Stopped++
		} else {
			s.KeptGenerating = append(s.KeptGenerating, st)
		}
	}
	slices.Sort(closes)
	s.CloseP50 = median(closes)
	s.CloseMax = closes[len(closes)-1]
	slices.SortStableFunc(s.KeptGenerating, func(a, b Stop) int { return b.AfterClose - a.AfterClose })
	return s
}

// median is the median of sorted d (R type 7).
func median(d []time.Duration) time.Duration {
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return d[n/2-1] + (d[n/2]-d[n/2-1])/2
}

// String renders the summary on one line: "cancelled 12 (the client's
// own: not counted as failures or successes); cancel to close p50 1ms, max
// 3ms; server stopped within one event: 11 of 12; kept generating: c1-0003
// (40 tokens after the close)". "" when nothing was cancelled.
func (s Summary) String() string {
	if s.N == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cancelled %d (the client's own cancels: neither failures nor successes); cancel to close p50 %v, max %v",
		s.N, s.CloseP50, s.CloseMax)
	if s.Reported == 0 {
		b.WriteString("; whether the server stopped generating: not reported")
		return b.String()
	}
	fmt.Fprintf(&b, "; server stopped within one event: %d of %d reported", s.Stopped, s.Reported)
	if k := len(s.KeptGenerating); k > 0 {
		ex := make([]string, 0, 3)
		for _, st := range s.KeptGenerating[:min(k, 3)] {
			ex = append(ex, fmt.Sprintf("%s (%d tokens after the close)", st.ID, st.AfterClose))
		}
		fmt.Fprintf(&b, "; KEPT GENERATING after the client's close: %d (a cost: tokens paid for, never read), e.g. %s", k, strings.Join(ex, ", "))
	}
	return b.String()
}

// Cancel is latencytest.Cancel (see its doc): which requests the client
// cancels on purpose, and when.
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

// Check returns an error naming what is wrong with c, or nil.
func (c Cancel) Check() error {
	if why := Check(c.After, c.AfterTokens, c.Share); why != "" {
		return errors.New(why)
	}
	return nil
}

// For is when the request with trace ID id is cancelled: c's After and
// AfterTokens when the draw chooses it, else zeros.
func (c Cancel) For(id string) (after time.Duration, tokens int) {
	share := c.Share
	if share == 0 {
		share = 1
	}
	if (c.After > 0 || c.AfterTokens > 0) && Draw(c.Seed, id, share) {
		return c.After, c.AfterTokens
	}
	return 0, 0
}

// String describes c for a disclosure: "10% of requests (seed 3)
// cancelled after 4 token events"; "" when c cancels nothing.
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
	case c.AfterTokens > 0:
		return fmt.Sprintf("%s cancelled after %d token events", share, c.AfterTokens)
	}
	return ""
}
