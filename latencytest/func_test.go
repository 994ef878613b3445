package latencytest

import (
	"context"
	"errors"
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
