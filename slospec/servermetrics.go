// The server's own metrics in a spec: server_metrics names the endpoint
// each level of the load scrapes, and the server_queue kind judges its
// queue histogram.

package slospec

import (
	"net/http"
	"net/url"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/servermetrics"
	"github.com/tailguard/tailguard/sloassert"
)

// kindServerQueue judges the server's queue histogram
// (sloassert.ServerQueue): objectives.server_queue: {p99: 500ms}.
const kindServerQueue ObjectiveKind = "server_queue"

// serverQueueKind is the kinds entry of server_queue.
var serverQueueKind = objectiveKind{name: kindServerQueue, key: "server_queue", at: atTop,
	parse:  parseServerQueue,
	sample: func(o Objective) (sloassert.Metric, float64) { return "", o.Q },
	build: func(o Objective) sloassert.Objective {
		return sloassert.ServerQueue(o.Q, o.Budget, o.options()...)
	}}

// parseServerQueue parses server_queue: {p99: 500ms, allow_small_sample:
// true}.
func parseServerQueue(p *specParser, f specEntry, _ where, out *[]Objective) {
	entries, ok := p.mapping(f.v, f.path, false, []string{"allow_small_sample"}, isQuantileKey)
	if !ok {
		return
	}
	small := false
	if g, has := entry(entries, "allow_small_sample"); has {
		small, _ = p.boolean(g)
	}
	n := 0
	for _, g := range entries {
		if g.key == "allow_small_sample" {
			continue
		}
		n++
		q, okq := p.quantile(g)
		d, okd := p.duration(g, true)
		if okq && okd {
			p.objective(out, Objective{Key: "server_queue_" + g.key, Line: g.k.Line, Kind: kindServerQueue, Q: q, Budget: d, AllowSmallSample: small}, g.path)
		}
	}
	if n == 0 {
		p.errorf(f.k.Line, f.path, "no objective (want a quantile and a budget of the server's queue time, such as p99: 500ms)")
	}
}

// serverMetrics parses server_metrics: {url: ..., names:
// vllm|sglang|tgi|auto, every: 10s, timeout: 5s, labels: {model_name:
// m}}. Without labels, the series of the model the target requests are
// read when the metrics carry a model label (servermetrics.Source.Model).
func serverMetrics(p *specParser, f specEntry) servermetrics.Source {
	var src servermetrics.Source
	entries, ok := p.mapping(f.v, f.path, false, []string{"url", "names", "every", "timeout", "labels"}, nil)
	if !ok {
		return src
	}
	for _, g := range entries {
		switch g.key {
		case "url":
			s, ok := p.str(g)
			u, err := url.Parse(s)
			if ok && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
				p.errorf(g.v.Line, g.path, "want an http(s) URL of the metrics endpoint, such as http://127.0.0.1:8000/metrics")
				continue
			}
			src.URL = s
		case "names":
			s, ok := p.str(g)
			if !ok {
				continue
			}
			names, err := servermetrics.ParseServer(s)
			if err != nil {
				p.errorf(g.v.Line, g.path, "%q: want vllm, sglang, tgi or auto", s)
				continue
			}
			src.Names = names
		case "every":
			src.Every, _ = p.duration(g, true)
		case "timeout":
			src.Timeout, _ = p.duration(g, true)
		case "labels":
			labels, ok := p.mapping(g.v, g.path, false, nil, func(string) bool { return true })
			for _, l := range labels {
				if v, okv := p.str(l); okv {
					if src.Labels == nil {
						src.Labels = map[string]string{}
					}
					src.Labels[l.key] = v
				}
			}
			if ok && len(labels) == 0 {
				p.errorf(g.k.Line, g.path, "no label: name the series to read, such as {model_name: my-model}")
			}
		}
	}
	if src.URL == "" {
		p.errorf(f.k.Line, f.path, "no url: name the server's metrics endpoint, such as {url: http://127.0.0.1:8000/metrics}")
	}
	return src
}

// checkServerMetrics reports server_metrics that nothing scrapes (a
// records target, no load) and server_queue objectives nothing can
// judge: a spec that names no endpoint, or judges records (which hold no
// server metrics).
func checkServerMetrics(p *specParser, s *Spec, line int) {
	records := s.Target.Records != "" || p.records
	if line > 0 && records {
		p.errorf(line, "server_metrics", "records hold no server metrics: the endpoint is scraped around a live run")
	} else if line > 0 && len(s.Objectives) == 0 && s.Chains == nil {
		p.errorf(line, "server_metrics", "scraped around each level of the load and the chains: add objectives or chains")
	}
	for _, o := range s.Objectives {
		switch {
		case o.Kind != kindServerQueue:
		case records:
			p.errorf(o.Line, "objectives."+o.Key, "judges the server's metrics scraped around a live run: records hold none")
		case s.ServerMetrics.URL == "":
			p.errorf(o.Line, "objectives."+o.Key, "judges the server's own queue histogram: name its endpoint in server_metrics: {url: ...}")
		}
	}
}

// roundTrip is an http.RoundTripper function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// withServerMetrics makes a run (the load's levels, the chains) scrape
// src into dst; a fake target's runs scrape their own fake, each run's
// new fake answering in memory, on the virtual clock (its GET /metrics;
// any URL), after rt.onFake's earlier work.
func withServerMetrics(rt *runTarget, dst *servermetrics.Source, src servermetrics.Source) {
	*dst = src
	if src.URL == "" || rt.fake == nil {
		return
	}
	var fake http.RoundTripper // the run's fake, set before its run starts
	dst.Client = &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) { return fake.RoundTrip(r) })}
	prev := rt.onFake
	rt.onFake = func(f *fakeprovider.Fake) {
		fake = f.Transport()
		if prev != nil {
			prev(f)
		}
	}
}
