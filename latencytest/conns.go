// Connections: the providers' transports and pools per load level, and
// their release when a run ends.

package latencytest

import (
	"context"
	"net/http"
	"slices"
	"sync"
)

// defaultMaxIdleConnsPerHost is how many idle connections the OpenAI
// provider's default transport keeps per host (see WithHTTPClient): more
// than any concurrency a run is likely to use. The provider does not know
// a run's concurrency up front; a run above it opens new connections.
const defaultMaxIdleConnsPerHost = 1024

// defaultTransport is net/http's default transport keeping
// defaultMaxIdleConnsPerHost idle connections per host (and no overall
// limit).
func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0
	t.MaxIdleConnsPerHost = defaultMaxIdleConnsPerHost
	return t
}

// noRedirects makes the provider's own clients return a redirect as the
// answer: a request that followed it would time two requests as one, and
// a redirected endpoint is a base URL to correct (the record says where
// it pointed). A client of your own (WithHTTPClient) keeps its policy.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// concurrencyKey is the context key under which a runner tells the
// provider how many requests it keeps in flight (a *runConns: see
// withConcurrency).
type concurrencyKey struct{}

// runConns is one run's hold on its providers' connections: the
// concurrency it keeps in flight, and the providers whose pools for that
// concurrency it used (see withConcurrency).
type runConns struct {
	n     int
	mu    sync.Mutex
	ended bool
	held  []connHolder
}

// connHolder is a provider whose connection pools are per concurrency:
// hold counts a run using the pool for n requests in flight, release ends
// that run's use, closing the pool's idle connections when no other run
// uses it.
type connHolder interface {
	hold(n int)
	release(n int)
}

// join records that the run uses h's pool (once per provider); false when
// the run has ended (a late call uses the pool without holding it).
func (rc *runConns) join(h connHolder) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.ended || slices.Contains(rc.held, h) {
		return
	}
	rc.held = append(rc.held, h)
	h.hold(rc.n)
}

// end releases every pool the run used; later calls do nothing.
func (rc *runConns) end() {
	rc.mu.Lock()
	held := rc.held
	rc.held, rc.ended = nil, true
	rc.mu.Unlock()
	for _, h := range held {
		h.release(rc.n)
	}
}

// runConnsOf is the run's hold carried by ctx, nil when none.
func runConnsOf(ctx context.Context) *runConns {
	rc, _ := ctx.Value(concurrencyKey{}).(*runConns)
	return rc
}

// withConcurrency tells providers that a run keeps at most n requests in
// flight. The OpenAI provider, on its default transport, then uses a
// transport that opens at most n connections (MaxConnsPerHost n) and keeps
// them all idle between requests, so that a run opens at most n
// connections: without the bound, a request that starts while the first
// round's dials are still pending dials too, and when a finished
// request's connection reaches it first, its own dial is a connection too
// many, its setup inside a measured TTFT. n < 1 says nothing.
//
// The runner calls end when the run's requests have all returned: the
// pools the run used then close their idle connections, unless another
// run of the same concurrency still uses them (a sweep's levels would
// otherwise each keep theirs open until the provider is closed).
func withConcurrency(ctx context.Context, n int) (_ context.Context, end func()) {
	if n < 1 {
		return ctx, func() {}
	}
	rc := &runConns{n: n}
	return context.WithValue(ctx, concurrencyKey{}, rc), rc.end
}

// concurrencyOf is the run's concurrency carried by ctx (0: unknown); a
// provider that uses its pool for it joins the run's hold.
func concurrencyOf(ctx context.Context, h connHolder) int {
	rc := runConnsOf(ctx)
	if rc == nil {
		return 0
	}
	rc.join(h)
	return rc.n
}
