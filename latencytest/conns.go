// Connections: the providers' transports and pools per load level, and
// their release when a run ends.

package latencytest

import (
	"context"
	"net/http"
	"slices"
	"sync"

	"github.com/tailguard/tailguard/internal/h1"
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

// transport is defaultTransport, dialing through o.dial when a test set
// it, its connections stamping their reads (see h1.StampConn) and timing
// their lag (see lagDial).
func (o *LLMProvider) transport() *http.Transport {
	t := defaultTransport()
	if o.dial != nil {
		t.DialContext = o.dial
	}
	t.DialContext = h1.StampingDial(lagDial(t.DialContext)) // reads timed against the socket (readlag.go)
	return t
}

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

// hold counts a run using the pools for n requests in flight.
func (o *LLMProvider) hold(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.users == nil {
		o.users = map[int]int{}
	}
	o.users[n]++
}

// release ends a run's use of the pools for n requests in flight; the
// last run's end closes their idle connections (a connection returned
// later is closed, not kept: see h1.Pool.CloseIdle and net/http's
// CloseIdleConnections).
func (o *LLMProvider) release(n int) {
	o.mu.Lock()
	o.users[n]--
	if o.users[n] > 0 {
		o.mu.Unlock()
		return
	}
	delete(o.users, n)
	c, p := o.bounded[n], o.pools[n]
	o.mu.Unlock()
	if c != nil {
		c.CloseIdleConnections()
	}
	if p != nil {
		p.CloseIdle()
	}
}

// clientFor returns the client for a run of n requests in flight (0:
// unknown): with the default transport, one bounded to n connections.
func (o *LLMProvider) clientFor(ctx context.Context) *http.Client {
	if !o.ownTransport {
		return o.client
	}
	n := concurrencyOf(ctx, o)
	if n < 1 {
		return o.client
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.bounded[n]
	if c == nil {
		t := o.transport()
		t.MaxConnsPerHost, t.MaxIdleConnsPerHost = n, max(n, defaultMaxIdleConnsPerHost)
		c = &http.Client{Transport: t, CheckRedirect: noRedirects}
		if o.bounded == nil {
			o.bounded = map[int]*http.Client{}
		}
		o.bounded[n] = c
	}
	return c
}

// poolFor returns the fast path's pool for a run of n requests in flight
// (0: unknown, no bound), as clientFor does for net/http.
func (o *LLMProvider) poolFor(ctx context.Context) *h1.Pool {
	n := concurrencyOf(ctx, o)
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.pools[n]
	if p == nil {
		p = &h1.Pool{Addr: o.h1req.Addr, Limit: n, MaxIdle: max(n, defaultMaxIdleConnsPerHost), Dialer: lagDial(o.dial)}
		if o.pools == nil {
			o.pools = map[int]*h1.Pool{}
		}
		o.pools[n] = p
	}
	return p
}

// CloseIdleConnections closes the idle connections of the provider's own
// transports (see WithHTTPClient); a client of your own is yours to close.
// A run closes those of the pool it used when it ends (see
// withConcurrency); call it when a test ends against a server that stays
// up, so that no connection of calls outside a run outlives the test
// (goleak).
func (o *LLMProvider) CloseIdleConnections() {
	if !o.ownTransport {
		return
	}
	o.client.CloseIdleConnections()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.bounded {
		c.CloseIdleConnections()
	}
	for _, p := range o.pools {
		p.CloseIdle()
	}
}
