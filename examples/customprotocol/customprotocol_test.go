// The tests are in the package itself, so that the directory copied into
// a module of any path builds and passes as it is.
package customprotocol

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// words is what the server answers, one token a line.
var words = []string{"Caches", " keep", " hot", " data", " near."}

// server serves TokenStream on a loopback port: after first, the answer's
// tokens every gap, then the done line. It records the paths it served.
type server struct {
	first, gap time.Duration
	mu         sync.Mutex
	paths      map[string]int
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.paths[r.URL.EscapedPath()]++
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.Header.Get("X-Token") != "secret-token-123" {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"detail":"bad token"}`)
		return
	}
	var req struct {
		Prompt string `json:"prompt"`
		Stream bool   `json:"stream"`
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil || req.Prompt == "" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"detail":"no prompt"}`)
		return
	}
	usage := fmt.Sprintf(`"usage":{"in":%d,"out":%d}`, len(strings.Fields(req.Prompt)), len(words))
	if !req.Stream {
		time.Sleep(s.first)
		fmt.Fprintf(w, `{"text":%q,"finish":"eos",%s}`, strings.Join(words, ""), usage)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	flush := w.(http.Flusher).Flush
	time.Sleep(s.first) // the server's own delay: no request is faster
	for i, word := range words {
		if i > 0 {
			time.Sleep(s.gap)
		}
		fmt.Fprintf(w, "{\"token\":%q}\n", word)
		flush()
	}
	fmt.Fprintf(w, "{\"done\":true,\"finish\":\"eos\",%s}\n", usage)
}

// serve starts a TokenStream server on a loopback port for the test.
func serve(t testing.TB, first, gap time.Duration) (*server, string) {
	s := &server{first: first, gap: gap, paths: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// A TokenStream endpoint measured by Batch and judged by sloassert, as a
// built-in protocol is: the record holds the streamed text, the token
// events and the usage of the last line.
func Example() {
	srv := httptest.NewServer(&server{paths: map[string]int{}})
	defer srv.Close()
	p := latencytest.NewLLM(srv.URL, TokenStream,
		latencytest.WithModel("tiny-1"), latencytest.WithAPIKey("secret-token-123"))
	defer p.CloseIdleConnections()

	r, err := latencytest.Batch{Requests: 20, Concurrency: 2, NoWarmup: true}.Run(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	rec := r.Records[0]
	fmt.Printf("%q: %d token events, %d completion tokens, finish %s\n", rec.Content, rec.TokenEvents, rec.CompletionTokens, rec.FinishReason)
	fmt.Println(p.Describe().Kind)
	report := sloassert.Evaluate(r,
		sloassert.Q(sloassert.TTFT, 0.50, 10*time.Second),
		sloassert.MaxErrorRate(0),
	)
	fmt.Println("SLO met:", report.OK())
	// Output:
	// "Caches keep hot data near.": 5 token events, 5 completion tokens, finish stop
	// tokenstream-ndjson (streaming)
	// SLO met: true
}

// The server's own first-token delay is a floor no request beats, so a
// budget under it fails and one far above it passes; every request went
// to the path built from the model.
func TestTokenStreamJudged(t *testing.T) {
	const first = 30 * time.Millisecond
	s, url := serve(t, first, time.Millisecond)
	p := latencytest.NewLLM(url, TokenStream,
		latencytest.WithModel("tiny/1"), latencytest.WithAPIKey("secret-token-123"))
	t.Cleanup(p.CloseIdleConnections)
	r, err := latencytest.Batch{Requests: 20, Concurrency: 4, Warmup: 2}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range r.Measured() {
		if !rec.OK() || rec.TTFT < first || rec.TokenEvents != len(words) || rec.CompletionTokens != len(words) || !rec.UsageReported {
			t.Fatalf("record %+v: want a success after %v with %d tokens", rec, first, len(words))
		}
	}
	if got := s.paths["/models/tiny%2F1/generate"]; got != 22 {
		t.Errorf("paths served %v, want 22 requests to the model's path", s.paths)
	}
	if rep := sloassert.Evaluate(r, sloassert.Q(sloassert.TTFT, 0.50, 10*time.Second), sloassert.MaxErrorRate(0)); !rep.OK() {
		t.Errorf("a budget far above the server's delay failed:\n%s", rep)
	}
	if rep := sloassert.Evaluate(r, sloassert.Q(sloassert.TTFT, 0.50, first/2)); rep.OK() {
		t.Errorf("a budget under the server's own delay passed:\n%s", rep)
	}
}

// A wrong key is the protocol's error body, named; a whole answer is read
// by the protocol's Whole; a stream cut before its done line is truncated.
func TestTokenStreamFailuresAndWholeAnswers(t *testing.T) {
	_, url := serve(t, 0, 0)
	req := latencytest.Request{ID: "t-1", Messages: []latencytest.Message{{Role: "user", Content: "hello there"}}}

	bad := latencytest.NewLLM(url, TokenStream, latencytest.WithAPIKey("wrong-key-456"))
	t.Cleanup(bad.CloseIdleConnections)
	if rec := bad.Call(context.Background(), req); rec.Err != "http_401" || rec.Detail != "bad token" {
		t.Errorf("wrong key: %s %q, want http_401 \"bad token\"", rec.Err, rec.Detail)
	}

	whole := latencytest.NewLLM(url, TokenStream, latencytest.WithAPIKey("secret-token-123"), latencytest.WithoutStreaming())
	t.Cleanup(whole.CloseIdleConnections)
	if rec := whole.Call(context.Background(), req); !rec.OK() || rec.Content != strings.Join(words, "") || rec.PromptTokens != 2 || rec.TTFT != latencytest.NotObserved {
		t.Errorf("whole answer: %+v", rec)
	}

	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "{\"token\":\"Hi\"}\n")
	}))
	t.Cleanup(cut.Close)
	p := latencytest.NewLLM(cut.URL, TokenStream)
	t.Cleanup(p.CloseIdleConnections)
	if rec := p.Call(context.Background(), req); rec.Err != latencytest.ClassTruncated || !strings.Contains(rec.Detail, `a line {"done": true}`) {
		t.Errorf("cut stream: %s %q, want truncated naming the done line", rec.Err, rec.Detail)
	}
}
