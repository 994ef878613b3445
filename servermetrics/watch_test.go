package servermetrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/servermetrics"
)

// TestBatchServerMetrics: a Batch that names the endpoint carries the
// server's interval on its Result, with the gauges scraped every 700ms
// of the 4s run (virtual time; off the instants where a slot changes
// hands, 1s, 2s, 3s).
func TestBatchServerMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(oneSlot())
		defer f.Close()
		b := latencytest.Batch{Requests: 4, NoWarmup: true, Concurrency: 4,
			ServerMetrics: servermetrics.Source{URL: "http://fake/metrics", Client: f.Client(), Every: 700 * time.Millisecond}}
		res, err := b.Run(context.Background(), latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client())))
		require.NoError(t, err)
		iv := res.Server
		require.NotNil(t, iv)
		assert.Empty(t, iv.Problems)
		assert.Equal(t, servermetrics.VLLM, iv.Server)
		q, ok := iv.Stage(servermetrics.Queue)
		require.True(t, ok)
		assert.Equal(t, 4, q.N)
		assert.Equal(t, 6*time.Second, q.Sum)
		// before, windows at 0.7, 1.4, 2.1, 2.8, 3.5s, after (4s).
		require.Len(t, iv.Points, 7)
		var waiting, running []float64
		for _, p := range iv.Points {
			waiting = append(waiting, p.Values[servermetrics.Waiting])
			running = append(running, p.Values[servermetrics.Running])
		}
		// Request k runs from k s to k+1 s; the others wait.
		assert.Equal(t, []float64{0, 3, 2, 1, 1, 0, 0}, waiting)
		assert.Equal(t, []float64{0, 1, 1, 1, 1, 1, 0}, running)
		peak, ok := iv.Peak(servermetrics.Running)
		assert.True(t, ok)
		assert.Equal(t, 1.0, peak)

		// Each Sweep level is a run with its own interval.
		sw := latencytest.Sweep{Batch: b, Levels: []int{1, 2}}
		sr, err := sw.Run(context.Background(), latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client())))
		require.NoError(t, err)
		for i, r := range sr.Results {
			q, ok := r.Server.Stage(servermetrics.Queue)
			require.True(t, ok)
			assert.Equal(t, 4, q.N, "level %d counts its own requests only", sr.Levels[i])
		}
	})
}

// TestOpenLoopServerMetrics: an open loop carries the interval too.
func TestOpenLoopServerMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(oneSlot())
		defer f.Close()
		o := latencytest.OpenLoop{Rate: 2, Requests: 6, Seed: 1,
			ServerMetrics: servermetrics.Source{URL: "http://fake/metrics", Client: f.Client(), Every: -1}}
		res, err := o.Run(context.Background(), latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client())))
		require.NoError(t, err)
		require.NotNil(t, res.Server)
		e2e, ok := res.Server.Stage(servermetrics.E2E)
		require.True(t, ok)
		assert.Equal(t, len(res.Measured()), e2e.N)
		assert.Len(t, res.Server.Points, 2, "Every < 0: before and after only")
	})
}

// TestScrapeFailuresAreReported: an endpoint that fails leaves the run
// alone: the Result has its records, and the interval says what failed,
// the URL's credentials hidden.
func TestScrapeFailuresAreReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(oneSlot())
		defer f.Close()
		b := latencytest.Batch{Requests: 2, NoWarmup: true,
			ServerMetrics: servermetrics.Source{URL: "http://user:hunter2secret@fake/nope?token=abc123secret", Client: f.Client(), Every: -1}}
		res, err := b.Run(context.Background(), latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client())))
		require.NoError(t, err)
		assert.Len(t, res.Measured(), 2)
		assert.Zero(t, res.ErrorRate())
		require.NotNil(t, res.Server)
		assert.Empty(t, res.Server.Stages)
		require.Len(t, res.Server.Problems, 2)
		assert.Equal(t, "before the run: servermetrics: scrape http://fake/nope: HTTP 404", res.Server.Problems[0])
		assert.Equal(t, "after the run: servermetrics: scrape http://fake/nope: HTTP 404", res.Server.Problems[1])
	})
}

// TestScrapeErrors: each way a scrape fails is an error naming the
// endpoint without its credentials.
func TestScrapeErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/garbage":
			_, _ = w.Write([]byte("<html>not metrics</html>\n"))
		case "/slow":
			<-r.Context().Done()
		case "/metrics":
			assert.Contains(t, r.Header.Get("Accept"), "text/plain;version=0.0.4")
			_, _ = w.Write([]byte("# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 2\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cred := strings.Replace(srv.URL, "http://", "http://u:s3cretpass@", 1)
	for _, tc := range []struct{ path, want string }{
		{"/missing?api_key=s3cretpass", "HTTP 404"},
		{"/garbage", "parse Prometheus text"},
		{"/slow", "context deadline exceeded"},
	} {
		_, err := servermetrics.Source{URL: cred + tc.path, Timeout: 50 * time.Millisecond}.Scrape(context.Background())
		require.Error(t, err, tc.path)
		assert.Contains(t, err.Error(), tc.want)
		assert.NotContains(t, err.Error(), "s3cretpass")
		assert.Contains(t, err.Error(), srv.URL+strings.SplitN(tc.path, "?", 2)[0])
	}
	_, err := servermetrics.Source{URL: "http://127.0.0.1:1/metrics", Timeout: time.Second}.Scrape(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "servermetrics: scrape http://127.0.0.1:1/metrics: Get http://127.0.0.1:1/metrics:")
	s, err := servermetrics.Source{URL: srv.URL + "/metrics"}.Scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2.0, s.Gauges[servermetrics.Waiting])
	assert.False(t, s.At.IsZero())
	assert.Nil(t, servermetrics.Source{}.Watch(context.Background()), "no URL: no watch")
	assert.Nil(t, (*servermetrics.Watch)(nil).Stop())
}

// canned answers scrapes in turn from a list of (status, text).
type canned struct {
	answers [][2]string
	n       int
}

func (c *canned) RoundTrip(r *http.Request) (*http.Response, error) {
	a := c.answers[min(c.n, len(c.answers)-1)]
	c.n++
	code := http.StatusOK
	if a[0] != "200" {
		code = http.StatusInternalServerError
	}
	return &http.Response{StatusCode: code, Header: http.Header{"Content-Type": {"text/plain; version=0.0.4"}},
		Body: io.NopCloser(strings.NewReader(a[1])), Request: r}, nil
}

// TestWatchAfterFails: when the scrape after the run fails, the interval
// has no stage, says why, and keeps the gauges read before and during
// the run (virtual time: a window at 1s of a 1.5s run).
func TestWatchAfterFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := func(v string) string {
			return "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting " + v + "\n"
		}
		c := &canned{answers: [][2]string{{"200", g("1")}, {"200", g("5")}, {"500", ""}}}
		w := servermetrics.Source{URL: "http://m/metrics", Client: &http.Client{Transport: c}, Every: time.Second}.Watch(context.Background())
		time.Sleep(1500 * time.Millisecond)
		iv := w.Stop()
		assert.Empty(t, iv.Stages)
		assert.Equal(t, []string{"after the run: servermetrics: scrape http://m/metrics: HTTP 500"}, iv.Problems)
		require.Len(t, iv.Points, 2)
		assert.Equal(t, 1.0, iv.Points[0].Values[servermetrics.Waiting])
		assert.Equal(t, 5.0, iv.Points[1].Values[servermetrics.Waiting])
		assert.Equal(t, time.Second, iv.Points[1].At.Sub(iv.Points[0].At))
		peak, _ := iv.Peak(servermetrics.Waiting)
		assert.Equal(t, 5.0, peak)
	})
}
