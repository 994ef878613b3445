package fakeprovider_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// The fake tells the client's close from its own: a request the client
// cancels mid-stream is ClientClosed with no token generated after it; a
// stream the fake's Close ends is Canceled, not ClientClosed.
func TestServedTellsTheClientsClose(t *testing.T) {
	prof := fakeprovider.Profile{Model: "m", TTFT: fakeprovider.Fixed(100 * time.Millisecond),
		ITL: fakeprovider.Fixed(10 * time.Millisecond), OutputTokens: fakeprovider.Fixed(50)}
	t.Run("client", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := fakeprovider.New(prof)
			defer f.Close()
			p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("m"))
			rec := p.Call(context.Background(), latencytest.Request{ID: "x", Messages: []latencytest.Message{{Role: "user", Content: "hi"}}, CancelAfter: 135 * time.Millisecond})
			synctest.Wait()
			sv := f.Served()[0]
			// tokens at 100, 110, 120 and 130 ms; the close at 135 ms
			if rec.Err != "cancelled" || !sv.ClientClosed || !sv.Canceled || sv.AfterClose != 0 || sv.Tokens != 4 {
				t.Errorf("client %s; fake closed %v canceled %v, %d tokens, %d after the close", rec.Err, sv.ClientClosed, sv.Canceled, sv.Tokens, sv.AfterClose)
			}
		})
	})
	t.Run("fake", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := fakeprovider.New(prof)
			p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("m"))
			done := make(chan latencytest.Record)
			go func() {
				done <- p.Call(context.Background(), latencytest.Request{ID: "x", Messages: []latencytest.Message{{Role: "user", Content: "hi"}}})
			}()
			time.Sleep(135 * time.Millisecond)
			f.Close()
			rec := <-done
			sv := f.Served()[0]
			if rec.OK() || !sv.Canceled || sv.ClientClosed {
				t.Errorf("client %s; fake canceled %v, client closed %v", rec.Err, sv.Canceled, sv.ClientClosed)
			}
		})
	})
}
