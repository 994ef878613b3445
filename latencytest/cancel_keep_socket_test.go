package latencytest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// Over loopback, against a fake that goes on generating after the
// client's close (AfterClose.KeepGenerating): each request is cancelled
// after its second token and its connection closes, yet the fake
// generates all 40 tokens, as GET /fake/served says, and the report
// names the cost. The margins cannot flake: Tokens is 40 whenever the
// close was seen (the answer's planned end does not depend on it), and
// "kept generating" needs more than one token after the close, which
// only a close seen less than 50 ms before the last token (1.9 s after
// the cancel) would miss.
func TestCancelAgainstAServerThatKeepsGenerating(t *testing.T) {
	prof := fixed(50*ms, 50*ms, 40) // second token at 100 ms, last at 2 s
	prof.AfterClose.KeepGenerating = 1
	f := fakeprovider.New(prof)
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()
	p := latencytest.OpenAI(srv.URL+"/v1", latencytest.WithModel(f.Profile().Model))
	defer p.CloseIdleConnections()
	r, err := latencytest.Batch{Requests: 4, NoWarmup: true, Concurrency: 4, Load: latencytest.Load{
		Label: "k", Prompt: "hi", MaxTokens: 40, Cancel: latencytest.Cancel{AfterTokens: 2}}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range r.Records {
		if rec.Err != "cancelled" || rec.TokenEvents >= 40 {
			t.Errorf("%s: %s after %d events", rec.ID, rec.Err, rec.TokenEvents)
		}
	}
	served := fakeServed(t, srv.URL, len(r.Records))
	byID := map[string]fakeprovider.Served{}
	for _, sv := range served {
		byID[sv.ID] = sv
		if !sv.ClientClosed || sv.Tokens != 40 || sv.AfterClose <= 1 {
			t.Errorf("%s: the fake saw the close %v, generated %d of 40 tokens, %d after the close", sv.ID, sv.ClientClosed, sv.Tokens, sv.AfterClose)
		}
	}
	for i := range r.Records {
		if sv, ok := byID[r.Records[i].ID]; ok && sv.ClientClosed {
			r.Records[i].ServerAfterClose, r.Records[i].ServerCloseReported = sv.AfterClose, true
		}
	}
	rep := sloassert.Evaluate(r, sloassert.Q(sloassert.TTFT, 0.5, time.Second, sloassert.AllowSmallSample())).String()
	if !strings.Contains(rep, "server stopped within one event: 0 of 4 reported; KEPT GENERATING after the client's close: 4 (a cost") {
		t.Errorf("report:\n%s", rep)
	}
}
