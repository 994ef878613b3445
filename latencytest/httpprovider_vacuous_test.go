package latencytest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// Endpoints that only ever redirect give no measurement of the endpoint:
// a batch of HTTP() against them fails every request as http_3xx, and no
// objective passes on it (they measured 0.1 ms with 0% errors before).
func TestHTTPRedirectsNeverPassAnObjective(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-slow":
			http.Redirect(w, r, "/slow", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusMovedPermanently)
		default:
			time.Sleep(time.Second) // never reached: not followed
		}
	}))
	defer srv.Close()
	for _, tc := range []struct{ path, class string }{{"/to-slow", "http_302"}, {"/loop", "http_307"}, {"/moved", "http_301"}} {
		t.Run(tc.path, func(t *testing.T) {
			p := latencytest.HTTP("GET", srv.URL+tc.path)
			defer p.CloseIdleConnections()
			r, err := latencytest.Batch{NoWarmup: true, Requests: 20, Concurrency: 2}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if r.ErrorRate() != 1 || r.Errors()[tc.class] != 20 {
				t.Fatalf("errors %v, rate %v: a redirect counted as a success", r.Errors(), r.ErrorRate())
			}
			for _, o := range []sloassert.Objective{
				sloassert.Q(sloassert.Total, 0.5, time.Hour, sloassert.AllowSmallSample()),
				sloassert.Q(sloassert.TTFT, 0.5, time.Hour, sloassert.AllowSmallSample()),
				sloassert.MaxErrorRate(0.5),
			} {
				if rep := sloassert.Evaluate(r, o); rep.OK() {
					t.Errorf("%s passed on redirects only:\n%s", o.Name, rep)
				}
			}
		})
	}
}
