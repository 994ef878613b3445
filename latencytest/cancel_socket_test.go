package latencytest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// Over loopback, against the fake served as fakellm serves it: each
// request is cancelled after its second token (or the read that brought
// it, should a starved client read two at once), its connection closes,
// and the fake sees the close and stops within one event, as it says in
// GET /fake/served; joined into the records, the report says so. The
// margins cannot flake: the fake's next token is 100 ms after the
// cancel and its natural end 3.8 s after it, and AfterClose counts what
// the fake generated after it saw the close, whenever that was. Both
// clients: the provider's own HTTP/1.1 client and net/http.
func TestCancelClosesTheConnectionAndTheFakeStops(t *testing.T) {
	for _, client := range []string{"h1", "net/http"} {
		t.Run(client, func(t *testing.T) {
			prof := fixed(50*ms, 100*ms, 40) // second token at 150 ms, last at 3.95 s
			f := fakeprovider.New(prof)
			defer f.Close()
			srv := fakeprovider.NewServer(f)
			defer srv.Close()
			opts := []latencytest.Option{latencytest.WithModel(f.Profile().Model)}
			if client == "net/http" {
				opts = append(opts, latencytest.WithNetHTTP())
			}
			p := latencytest.OpenAI(srv.URL+"/v1", opts...)
			defer p.CloseIdleConnections()
			r, err := latencytest.Batch{Requests: 6, NoWarmup: true, Concurrency: 3, Load: latencytest.Load{
				Label: "x", Prompt: "hi", MaxTokens: 40, Cancel: latencytest.Cancel{AfterTokens: 2}}}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range r.Records {
				if rec.Err != "cancelled" || rec.TokenEvents < 2 || rec.TokenEvents >= 40 || rec.CancelAt < 150*ms || rec.CancelAt >= 3*time.Second ||
					rec.CancelClose < 0 || rec.CancelClose >= 3*time.Second {
					t.Errorf("%s: %s (%s) after %d events, cancel at %v, close %v", rec.ID, rec.Err, rec.Detail, rec.TokenEvents, rec.CancelAt, rec.CancelClose)
				}
			}
			served := fakeServed(t, srv.URL, len(r.Records))
			for _, sv := range served {
				if !sv.ClientClosed || sv.AfterClose > 1 || sv.Tokens >= 40 {
					t.Errorf("%s: the fake saw the close %v, generated %d of 40 tokens, %d after the close", sv.ID, sv.ClientClosed, sv.Tokens, sv.AfterClose)
				}
			}
			// What the fake saw, joined into the records by trace ID (as
			// slospec joins a fake's), reaches the report.
			byID := map[string]fakeprovider.Served{}
			for _, sv := range served {
				byID[sv.ID] = sv
			}
			for i := range r.Records {
				if sv, ok := byID[r.Records[i].ID]; ok && sv.ClientClosed {
					r.Records[i].ServerAfterClose, r.Records[i].ServerCloseReported = sv.AfterClose, true
				}
			}
			rep := sloassert.Evaluate(r, sloassert.Q(sloassert.TTFT, 0.5, time.Second, sloassert.AllowSmallSample())).String()
			if !strings.Contains(rep, "server stopped within one event: 6 of 6 reported") || strings.Contains(rep, "KEPT GENERATING") {
				t.Errorf("report:\n%s", rep)
			}
		})
	}
}

// fakeServed reads GET /fake/served until it holds n requests (the
// fake records a cancelled request when its handler has seen the close),
// for at most 20 s.
func fakeServed(t *testing.T, base string, n int) []fakeprovider.Served {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(base + "/fake/served")
		if err != nil {
			t.Fatal(err)
		}
		var served []fakeprovider.Served
		err = json.NewDecoder(resp.Body).Decode(&served)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(served) >= n {
			return served
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fake recorded %d of %d requests in 20 s", len(served), n)
		}
		time.Sleep(10 * ms) // polling a real server, not timing it
	}
}
