package latencytest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/h1"
)

// Any server's Tailguard-Injected header reaches Record.Injected, on the
// own HTTP/1.1 client, on net/http and through Instrument (HTTP), and the
// fake sets that same header: the client knows no header of the fake's.
func TestInjectedFromAnyServer(t *testing.T) {
	if fakeprovider.HeaderInjected != h1.HeaderInjected {
		t.Fatalf("the fake sets %q, the client reads %q", fakeprovider.HeaderInjected, h1.HeaderInjected)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Tailguard-Injected", "stall,cold_start=30s")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"a"}}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	req := Request{ID: "inj", Messages: []Message{{Role: "user", Content: "hi"}}}
	fast := OpenAI(srv.URL + "/v1")
	slow := OpenAI(srv.URL+"/v1", WithNetHTTP())
	plain := HTTP("GET", srv.URL)
	defer fast.CloseIdleConnections()
	defer slow.CloseIdleConnections()
	defer plain.CloseIdleConnections()
	for name, p := range map[string]Provider{"own client": fast, "net/http": slow, "HTTP": plain} {
		rec := p.Call(context.Background(), req)
		if !rec.OK() || rec.Injected != "stall,cold_start=30s" {
			t.Errorf("%s: record %s %q, injected %q", name, rec.Err, rec.Detail, rec.Injected)
		}
	}
}
