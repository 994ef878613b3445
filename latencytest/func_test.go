package latencytest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// Func measures any Go call: its total time, exactly in synctest, with no
// token figures (TTFT enters samples as Failed, never as 0), and its error
// as call_error with the message in Detail.
func TestFuncMeasuresAnyCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []Request
		p := Func(func(ctx context.Context, req Request) error {
			got = append(got, req)
			time.Sleep(1500 * time.Millisecond) // a database query
			if req.ID == "c1-0002" {
				return errors.New("no rows")
			}
			return nil
		})
		r, err := Batch{Requests: 4, NoWarmup: true, Load: Load{MaxTokens: 7}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 || got[0].ID != "c1-0000" || got[0].MaxTokens != 7 || len(got[0].Messages) != 1 {
			t.Fatalf("requests %+v", got)
		}
		for _, rec := range r.Records {
			if rec.Total != 1500*time.Millisecond || rec.Attempts != nil || rec.TTFT != NotObserved || rec.TTFB != NotObserved {
				t.Errorf("record %+v", rec)
			}
		}
		if e := r.Errors(); e[ClassCallError] != 1 || len(e) != 1 || r.Records[2].Detail != "no rows" {
			t.Errorf("errors %v, detail %q", e, r.Records[2].Detail)
		}
		if s := r.TTFT(); s.Failures() != 4 {
			t.Errorf("TTFT %v: a call that observes no token has none", s)
		}
		if s := r.Total(); s.Quantile(0.5) != 1500*time.Millisecond {
			t.Errorf("total %v", s)
		}
		if box := r.Disclosure.Box(2).Answer; strings.Contains(box, "retries") {
			t.Errorf("no call went through Instrument, yet box 2 says %q", box)
		}
		if calls, attempts := r.Attempts(); calls != 4 || attempts != 4 {
			t.Errorf("calls %d attempts %d", calls, attempts)
		}
	})
}

// The run's end cancels fn through ctx; its failure is canceled, not a
// call error.
func TestFuncCanceledByTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		rec := Func(func(ctx context.Context, _ Request) error {
			<-ctx.Done()
			return ctx.Err()
		}).Call(ctx, Request{ID: "x"})
		if rec.Err != ClassCanceled || rec.Total != 300*time.Millisecond || !strings.Contains(rec.Detail, "deadline") {
			t.Errorf("record %+v", rec)
		}
	})
}

func TestFuncNilPanics(t *testing.T) {
	defer func() {
		if e, _ := recover().(string); !strings.HasPrefix(e, "latencytest: ") {
			t.Errorf("panic %q", e)
		}
	}()
	Func(nil)
}

// A call none of whose requests succeeded is a failure even when fn
// returns nil: an HTTP 500 or 401 the client did not turn into an error,
// a reset it swallowed. One attempt that succeeded is enough: a retry
// that worked, the winner of a hedged pair.
func TestFuncIgnoredFailures(t *testing.T) {
	ms := time.Millisecond
	steps := []step{{100 * ms, tok("a")}, {120 * ms, done}}
	// ignore sends one request per attempt ID and returns nil whatever
	// happened.
	ignore := func(hc *http.Client, tries int) func(ctx context.Context, req Request) error {
		return func(ctx context.Context, req Request) error {
			for range tries {
				if _, err := askStream(ctx, hc, req); err == nil {
					return nil
				}
			}
			return nil
		}
	}
	for _, tc := range []struct {
		name, why    string
		status       map[string]int
		reset        bool
		tries        int
		class        string
		detailPrefix string
	}{
		{name: "500 ignored", why: "the client got a 500 and fn returned nil",
			status: map[string]int{"i-1": 500}, tries: 1, class: "http_500",
			detailPrefix: "the call returned no error, but none of its 1 HTTP request(s) succeeded; the last: overloaded_error: Overloaded"},
		{name: "401 ignored", why: "a wrong key is not a fast success",
			status: map[string]int{"i-1": 401}, tries: 1, class: "http_401"},
		{name: "every retry failed", why: "three attempts, all 529, and fn returned nil",
			status: map[string]int{"i-1": 529, "i-1-a2": 529, "i-1-a3": 529}, tries: 3, class: "http_529",
			detailPrefix: "the call returned no error, but none of its 3 HTTP request(s) succeeded"},
		{name: "reset swallowed", why: "no HTTP answer at all, and fn returned nil",
			reset: true, tries: 1, class: ClassTransport},
		{name: "retry worked", why: "a 529, then a good stream: the call succeeded",
			status: map[string]int{"i-1": 529}, tries: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &byID{status: tc.status, steps: steps}
				hc := srv.client()
				if tc.reset {
					hc = &http.Client{Transport: Instrument(roundTrip(func(*http.Request) (*http.Response, error) {
						return nil, errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: connection reset by peer")
					}))}
				}
				rec := Func(ignore(hc, tc.tries)).Call(context.Background(), Request{ID: "i-1"})
				if rec.Err != tc.class || len(rec.Attempts) != tc.tries {
					t.Fatalf("%s: class %q with %d attempt(s) (detail %q), want %q with %d", tc.why, rec.Err, len(rec.Attempts), rec.Detail, tc.class, tc.tries)
				}
				if !strings.HasPrefix(rec.Detail, tc.detailPrefix) {
					t.Errorf("detail %q, want it to start %q", rec.Detail, tc.detailPrefix)
				}
				if r := (&Result{Records: []Record{rec}}); tc.class != "" && (r.ErrorRate() != 1 || r.Total()[0] != Failed) {
					t.Errorf("a failed call must count as failed: error rate %v, total %v", r.ErrorRate(), r.Total())
				}
			})
		})
	}

	// A hedged pair: a second request sent at 200 ms; fn takes the first
	// answer and cancels the other request. Whichever wins, the call
	// succeeded: when the second wins, the first (canceled) attempt
	// failed; when the first wins, the last attempt sent failed.
	for _, tc := range []struct {
		name      string
		first     []step // the answer to the first request (h-1)
		second    []step // to the hedge (h-1-a2), sent at 200 ms
		total     time.Duration
		goodIndex int
	}{
		{"second wins", []step{{time.Second, tok("slow")}, {time.Second + 20*ms, done}}, steps, 320 * ms, 1},
		{"first wins", []step{{300 * ms, tok("a")}, {320 * ms, done}}, []step{{time.Second, tok("slow")}, {time.Second + 20*ms, done}}, 320 * ms, 0},
	} {
		synctest.Test(t, func(t *testing.T) {
			first, second := scripted(tc.first, false, nil).Transport, scripted(tc.second, false, nil).Transport
			hc := &http.Client{Transport: Instrument(roundTrip(func(r *http.Request) (*http.Response, error) {
				if r.Header.Get("X-Request-ID") == "h-1" {
					return first.RoundTrip(r)
				}
				return second.RoundTrip(r)
			}))}
			rec := Func(func(ctx context.Context, req Request) error {
				hedge, cancel := context.WithCancel(ctx)
				defer cancel()
				won := make(chan error, 2)
				go func() { _, err := askStream(hedge, hc, req); won <- err }()
				select {
				case err := <-won: // answered before the hedge was due
					return err
				case <-time.After(200 * ms):
				}
				go func() { _, err := askStream(hedge, hc, req); won <- err }()
				err := <-won
				cancel()
				<-won
				return err
			}).Call(context.Background(), Request{ID: "h-1"})
			if rec.Err != "" || rec.Total != tc.total || len(rec.Attempts) != 2 || !rec.Attempts[tc.goodIndex].OK() || rec.Attempts[1-tc.goodIndex].Err != ClassCanceled {
				t.Fatalf("%s: record %+v", tc.name, rec)
			}
		})
	}
}
