package latencytest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// deafAttempt is one scripted answer of deafTransport: a status, then
// (for 200) one chat-completion token event at each of tokens (from the
// request), then [DONE] at end, or a cut at end when cut is set; another
// status comes at end.
type deafAttempt struct {
	status int
	tokens []time.Duration
	end    time.Duration
	cut    bool
}

// deafTransport answers its n-th request with script[n] and ignores
// every cancellation, as a late timer leaves a stream running: the body
// sleeps to each event's time whatever the request's context says.
type deafTransport struct {
	script []deafAttempt
	n      int
}

func (d *deafTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	a := d.script[d.n]
	d.n++
	start := time.Now()
	h := http.Header{"Content-Type": {"text/event-stream"}}
	if a.status != 200 {
		time.Sleep(a.end)
		return &http.Response{StatusCode: a.status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"error":{"message":"overloaded"}}`)), Request: req}, nil
	}
	return &http.Response{StatusCode: 200, Header: h, Body: &deafBody{a: a, start: start}, Request: req}, nil
}

type deafBody struct {
	a     deafAttempt
	start time.Time
	i     int
	buf   string
}

func (b *deafBody) Read(p []byte) (int, error) {
	for b.buf == "" {
		switch {
		case b.i < len(b.a.tokens):
			time.Sleep(time.Until(b.start.Add(b.a.tokens[b.i])))
			b.buf = fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d\"}}]}\n\n", b.i)
			b.i++
		case b.i == len(b.a.tokens):
			time.Sleep(time.Until(b.start.Add(b.a.end)))
			b.i++
			if b.a.cut {
				return 0, io.ErrUnexpectedEOF
			}
			b.buf = "data: [DONE]\n\n"
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

func (b *deafBody) Close() error { return nil }

// Instrument's attempts are held to the request's limits on the call's
// clock, whatever the timers did: a stream that ran on past its
// TotalTimeout or brought its first token after FirstTokenTimeout (its
// transport deaf to the cancel, as a late timer leaves it) is no
// successful attempt, so first-attempt figures never count it; an
// attempt within the limits stays a success, and a first token in time
// in an earlier attempt frees the later ones from FirstTokenTimeout.
// Inside synctest: exact.
func TestInstrumentAttemptsHeldToTheLimits(t *testing.T) {
	const ms = time.Millisecond
	ok := func(end time.Duration, tokens ...time.Duration) deafAttempt {
		return deafAttempt{status: 200, tokens: tokens, end: end}
	}
	for _, c := range []struct {
		name     string
		req      latencytest.Request
		script   []deafAttempt
		attempts []string // each attempt's class
		class    string   // the call's
	}{
		{"past TotalTimeout", latencytest.Request{TotalTimeout: 400 * ms}, []deafAttempt{ok(500*ms, 100*ms, 200*ms)},
			[]string{latencytest.ClassTotalTimeout}, latencytest.ClassTotalTimeout},
		{"within TotalTimeout", latencytest.Request{TotalTimeout: 400 * ms}, []deafAttempt{ok(390*ms, 100*ms, 200*ms)},
			[]string{""}, ""},
		{"a retry past TotalTimeout on the call's clock", latencytest.Request{TotalTimeout: 400 * ms},
			[]deafAttempt{{status: 529, end: 100 * ms}, ok(390*ms, 100*ms)}, []string{"http_529", latencytest.ClassTotalTimeout}, latencytest.ClassTotalTimeout},
		{"first token past FirstTokenTimeout", latencytest.Request{FirstTokenTimeout: 200 * ms}, []deafAttempt{ok(350*ms, 300*ms)},
			[]string{latencytest.ClassFirstTokenTimeout}, latencytest.ClassFirstTokenTimeout},
		{"a token in time, then a retry's later token", latencytest.Request{FirstTokenTimeout: 200 * ms},
			[]deafAttempt{{status: 200, tokens: []time.Duration{50 * ms}, end: 100 * ms, cut: true}, ok(250*ms, 150*ms)},
			[]string{latencytest.ClassTruncated, ""}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := latencytest.Instrument(&deafTransport{script: c.script})
				p := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error {
					for range c.script {
						req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://fake/v1/chat/completions", strings.NewReader("{}"))
						resp, err := rt.RoundTrip(req)
						if err != nil {
							return err
						}
						_, rerr := io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode == 200 && rerr == nil {
							return nil
						}
					}
					return nil
				})
				req := c.req
				req.ID = "f"
				rec := p.Call(context.Background(), req)
				if len(rec.Attempts) != len(c.attempts) {
					t.Fatalf("%d attempts %+v, want %d", len(rec.Attempts), rec.Attempts, len(c.attempts))
				}
				for i, a := range rec.Attempts {
					if a.Err != c.attempts[i] {
						t.Errorf("attempt %d (start %v, total %v): %q (%s), want %q", i+1, a.Start, a.Total, a.Err, a.Detail, c.attempts[i])
					}
				}
				if rec.Err != c.class {
					t.Errorf("the call: %q (%s), want %q", rec.Err, rec.Detail, c.class)
				}
			})
		})
	}
}
