package latencytest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"
)

// Func returns a Provider that measures any Go call: a gRPC method, a
// database query, a whole agent step, or a call made with your own HTTP
// client. Each Call runs fn once and records its total time, from just
// before fn starts to its return; fn's error becomes the record's error
// class. fn must honour ctx: the request's timeouts reach it through ctx
// (TotalTimeout and the hard cap as a cancellation, FirstTokenTimeout too
// when the call streams through Instrument), and the run's end cancels it.
// A panic in fn is not caught (it is a bug in the test, not a failure of
// the provider). Func panics when fn is nil.
//
// When fn's HTTP requests go through a client whose transport is wrapped
// with Instrument (and carry ctx), each request is an Attempt of the call
// (Record.Attempts), and the record also gets the stream's figures: time
// to first byte, first token and first answer, every gap and the longest,
// token counts, usage, model and answer, timed from the call's start (so
// they include earlier attempts and backoff, as the user waited them).
// These figures come from one attempt: the last, in the order they were
// sent, that succeeded; when none did, or when the call failed on its last
// attempt, the last attempt. A call that made no instrumented request has
// no token figures (its TTFT enters samples as Failed, never as 0).
//
// The record's class, in order:
//   - total_timeout or first_token_timeout when the request's timeout
//     ended the call (FirstTokenTimeout binds only a call that has sent a
//     request through Instrument and seen no token by then);
//   - canceled when fn failed after the run's context ended;
//   - when fn returned an error: its last attempt's class if that attempt
//     failed (http_529 once your client's retries ran out, truncated,
//     transport, ...), else call_error; Detail is fn's error text;
//   - when fn returned nil but its last attempt (leaving out attempts the
//     client canceled, such as a hedged request's loser) was a 2xx event
//     stream or chat.completion that failed (empty_answer, empty_stream,
//     refusal, content_filter, bad_stream, truncated), that class: the
//     call got no good answer, as the OpenAI provider would judge it;
//   - when fn returned nil but every attempt failed (an HTTP 500 or 401
//     your client did not turn into an error, a reset it swallowed), the
//     last attempt's class: a call none of whose requests succeeded is
//     not a success because fn looked away. One attempt that succeeded is
//     enough (a retry that worked, the winner of a hedged pair whose
//     loser was canceled);
//   - else success.
//
// So a call whose answer comes from somewhere Instrument does not see (a
// cache, a fallback client) after its instrumented request failed counts
// as failed: instrument the fallback's transport too.
//
// Func's Describe names it "Go function (Func)".
func Func(fn func(ctx context.Context, req Request) error) Provider {
	if fn == nil {
		panic("latencytest: Func of a nil function")
	}
	return funcProvider{fn: fn}
}

type funcProvider struct {
	fn func(ctx context.Context, req Request) error
}

// Describe says what the provider is.
func (funcProvider) Describe() Description { return Description{Kind: "Go function (Func)"} }

// Call runs fn once and measures it.
func (p funcProvider) Call(parent context.Context, req Request) Record {
	return runFunc(parent, req, p.fn)
}

// runFunc measures one call of fn.
func runFunc(parent context.Context, req Request, fn func(ctx context.Context, req Request) error) Record {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	c := newCall(req, ctx, parent)
	total := afterFunc(parent, req.limit(), func() { cancel(errTotalTimeout) })
	defer total.Stop()
	if req.FirstTokenTimeout > 0 {
		c.mu.Lock()
		c.firstTimeout = afterFunc(parent, req.FirstTokenTimeout, func() {
			if c.boundByFirstToken() {
				cancel(errFirstTokenTimeout)
			}
		})
		c.mu.Unlock()
		defer c.firstTimeout.Stop()
	}
	err := fn(context.WithValue(ctx, callKey{}, c), req)
	took := time.Since(c.start)
	attempts := c.finish()

	rec := Record{ID: req.ID, MaxTokens: req.MaxTokens, Start: c.start, Total: took,
		TTFB: NotObserved, TTFT: NotObserved, FirstAnswer: NotObserved, LastToken: NotObserved}
	var last, live, good *attempt
	for _, a := range attempts {
		rec.Attempts = append(rec.Attempts, a.export())
		last = a
		if a.rec.Err != ClassCanceled {
			live = a
		}
		if a.rec.OK() {
			good = a
		}
	}
	// The call is judged on its last attempt when fn failed; when fn
	// returned nil, on its last attempt the client did not cancel (a
	// hedged request's loser says nothing of the call).
	judged := last
	if err == nil && live != nil {
		judged = live
	}
	// The figures: the last attempt that succeeded, else the judged one;
	// the judged one too when the call failed on it.
	from := good
	lastFailed := judged != nil && !judged.rec.OK()
	if from == nil || (lastFailed && (err != nil || judged.streamFailed())) {
		from = judged
	}
	if from != nil {
		from.figures(&rec)
	}

	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errTotalTimeout):
		rec.Err, rec.Detail = ClassTotalTimeout, fmt.Sprintf("not done within %v", req.limit())
	case errors.Is(cause, errFirstTokenTimeout):
		rec.Err, rec.Detail = ClassFirstTokenTimeout, fmt.Sprintf("no token within %v", req.FirstTokenTimeout)
	case err != nil && parent.Err() != nil:
		rec.Err, rec.Detail = ClassCanceled, "the run ended: "+context.Cause(parent).Error()
	case err != nil && lastFailed:
		rec.Err, rec.Detail = judged.rec.Err, err.Error()
	case err != nil:
		rec.Err, rec.Detail = ClassCallError, err.Error()
	case lastFailed && judged.streamFailed():
		rec.Err, rec.Detail = judged.rec.Err, judged.rec.Detail
	case lastFailed && good == nil:
		rec.Err = judged.rec.Err
		rec.Detail = fmt.Sprintf("the call returned no error, but none of its %d HTTP request(s) succeeded; the last: %s",
			len(attempts), cmp.Or(judged.rec.Detail, judged.rec.Err))
	}
	if !rec.OK() && rec.LastToken >= 0 {
		rec.MaxGap = max(rec.MaxGap, rec.Total-rec.LastToken)
	}
	enforceLimits(c.req, &rec) // deadlines.go: a request past its limit is no success (c.req: see finish)
	c.mu.Lock()
	secrets := c.secrets
	c.mu.Unlock()
	scrubRecord(secrets, &rec)
	return rec
}
