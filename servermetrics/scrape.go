package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/tailguard/tailguard/internal/redact"
	"github.com/tailguard/tailguard/internal/scrub"
)

// Source is a server's metrics endpoint.
type Source struct {
	// URL is the metrics endpoint ("http://host:8000/metrics"). Empty: no
	// scraping (Watch returns nil).
	URL string
	// Names picks the metric names: VLLM, SGLang, TGI, or Auto (also "").
	Names Server
	// Client sends the scrapes. Default http.DefaultClient.
	Client *http.Client
	// Timeout bounds each scrape. Default 5s.
	Timeout time.Duration
	// Every is the gap between the scrapes Watch takes during a run, for
	// the gauges over time. Default 10s; negative: only before and after.
	Every time.Duration
	// Labels selects series by label value ({"model_name": "m"}): only
	// the series that carry every one of them are read (summed), so one
	// server serving several models gives the measured model's figures.
	// A text in which no series of the server's metrics carries them is
	// an error. Empty: Model decides.
	Labels map[string]string
	// Model is the measured model: with no Labels, when the series carry
	// a model label (model_name, else model), only those of this model
	// are read; when none is this model's, or there is no model label,
	// every series is summed. Snapshot.Series says which. The runners set
	// it to the model they request (WithModel).
	Model string
}

// Parse is the package's Parse with s's names, reading only the series
// s selects (Labels, Model; Snapshot.Series says which). A text in which
// no series of the server's metrics carries s.Labels is an error.
func (s Source) Parse(data []byte, contentType string) (Snapshot, error) {
	return parse(s, data, contentType)
}

// WithModel returns s with Model set to model, unless s names one.
func (s Source) WithModel(model string) Source {
	if s.Model == "" {
		s.Model = model
	}
	return s
}

// Scrape defaults.
const (
	defaultTimeout = 5 * time.Second
	defaultEvery   = 10 * time.Second
)

// accept asks for the Prometheus text format first.
const accept = "text/plain;version=0.0.4;q=0.9,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1"

// Scrape reads the endpoint once (within Timeout) and parses the answer
// (Parse, with the answer's Content-Type). Errors name the endpoint with
// any credential in its URL hidden; a status other than 200 and a text
// over 32 MiB are errors.
func (s Source) Scrape(ctx context.Context) (Snapshot, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	where := redact.URL(s.URL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return Snapshot{}, fmt.Errorf("servermetrics: scrape %s: bad URL", where)
	}
	req.Header.Set("Accept", accept)
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Snapshot{}, fmt.Errorf("servermetrics: scrape %s: %s", where, scrub.Text(stripURL(err, s.URL)))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Snapshot{}, fmt.Errorf("servermetrics: scrape %s: HTTP %d", where, resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxText+1))
	if err != nil {
		return Snapshot{}, fmt.Errorf("servermetrics: scrape %s: reading the answer: %s", where, scrub.Text(stripURL(err, s.URL)))
	}
	if len(data) > maxText {
		return Snapshot{}, fmt.Errorf("servermetrics: scrape %s: the text is over %d MiB", where, maxText>>20)
	}
	at := time.Now()
	snap, err := s.Parse(data, resp.Header.Get("Content-Type"))
	if err != nil {
		return Snapshot{}, fmt.Errorf("%w (from %s)", err, where)
	}
	snap.At = at
	return snap, nil
}

// stripURL is err's text with the raw URL (which net/http quotes whole)
// replaced by its redacted form.
func stripURL(err error, raw string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + " " + redact.URL(raw) + ": " + ue.Err.Error()
	}
	return err.Error()
}

// Watch is a scraping session around a run: Source.Watch starts it,
// Stop ends it.
type Watch struct {
	src    Source
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	before   Snapshot
	ok       bool
	points   []Point
	problems []string
}

// Watch scrapes the endpoint now (the "before" snapshot), then every
// Every in a goroutine of its own for the gauges, until Stop. It returns
// nil for a Source without URL, and Stop of nil is nil, so a runner calls
// both unconditionally. A failed scrape is noted in the Interval's
// Problems, never an error.
func (s Source) Watch(ctx context.Context) *Watch {
	if s.URL == "" {
		return nil
	}
	w := &Watch{src: s, done: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if snap, err := s.Scrape(ctx); err != nil {
		w.problems = append(w.problems, "before the run: "+err.Error())
	} else {
		w.before, w.ok = snap, true
		if s.Names == "" || s.Names == Auto {
			w.src.Names = snap.Server // the later scrapes read the same names
		}
	}
	every := s.Every
	if every == 0 {
		every = defaultEvery
	}
	if every < 0 {
		close(w.done)
		return w
	}
	go w.windows(every)
	return w
}

// windows scrapes every d until Stop.
func (w *Watch) windows(d time.Duration) {
	defer close(w.done)
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-tick.C:
		}
		snap, err := w.src.Scrape(w.ctx)
		if w.ctx.Err() != nil {
			return
		}
		w.mu.Lock()
		if err != nil {
			w.problems = append(w.problems, "during the run: "+err.Error())
		} else {
			w.points = append(w.points, point(snap))
		}
		w.mu.Unlock()
	}
}

// Stop ends the windows' goroutine, scrapes the "after" snapshot and
// returns the interval between before and after (nil for a nil Watch).
// When either scrape failed, the Interval has no stage, its Problems say
// why, and its Points hold the gauges that were read.
func (w *Watch) Stop() *Interval {
	if w == nil {
		return nil
	}
	w.cancel()
	<-w.done
	after, err := w.src.Scrape(context.Background())
	iv := &Interval{Server: w.src.Names}
	switch {
	case err != nil:
		w.problems = append(w.problems, "after the run: "+err.Error())
		if w.ok { // the gauges read so far still tell
			iv.Start, iv.Series, iv.Points = w.before.At, w.before.Series, []Point{point(w.before)}
			iv.Points = append(iv.Points, w.points...)
		}
	case w.ok:
		d, derr := Delta(w.before, after)
		if derr != nil {
			w.problems = append(w.problems, derr.Error())
			break
		}
		iv = d
		if len(w.points) > 0 { // before, the windows, after
			iv.Points = append(append([]Point{iv.Points[0]}, w.points...), iv.Points[1])
		}
	default:
		iv.Server, iv.Series, iv.End, iv.Points = after.Server, after.Series, after.At, append(w.points, point(after))
	}
	if iv.Server == Auto || iv.Server == "" {
		iv.Server = w.before.Server
	}
	iv.Problems = append(w.problems, iv.Problems...)
	return iv
}
