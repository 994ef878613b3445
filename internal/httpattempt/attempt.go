// Package httpattempt defines one HTTP request made within a measured call:
// the type of latencytest.Record's Attempts, filled by latencytest's
// Instrument transport and read by the reports.
package httpattempt

import "time"

// Attempt is one HTTP request made within a Func call through an
// Instrument transport: the first try, a retry, a tool call.
type Attempt struct {
	// ID is the X-Request-ID the request carried (see latencytest.Instrument).
	ID string `json:"id,omitempty"`
	// Start is when the attempt was sent, from the call's start.
	Start time.Duration `json:"start_ns"`
	// TTFB is the time to the response headers and TTFT the time to the
	// first token (of an event stream), both from the attempt's start;
	// latencytest.NotObserved (-1ns) when there was none.
	TTFB time.Duration `json:"ttfb_ns"`
	TTFT time.Duration `json:"ttft_ns"`
	// Total is from the attempt's start to the end of its body ([DONE],
	// EOF, the client's Close, or the end of the call), or to its failure.
	Total time.Duration `json:"total_ns"`
	// Status is the HTTP status (0 without a response).
	Status int `json:"status"`
	// Err is the attempt's error class ("" when it succeeded): an HTTP
	// status of 400 or more, a transport error, a timeout, or the verdict
	// on its event stream, as the OpenAI provider classifies a call.
	Err string `json:"err,omitempty"`
	// Detail explains Err.
	Detail string `json:"detail,omitempty"`
}

// OK reports whether the attempt succeeded.
func (a Attempt) OK() bool { return a.Err == "" }
