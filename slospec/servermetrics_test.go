package slospec_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/servermetrics"
	"github.com/tailguard/tailguard/slospec"
)

// TestRunFileServerMetrics: a fake target's levels scrape their own fake;
// the failed TTFT row says where the time went, and server_queue judges
// the server's queue histogram.
func TestRunFileServerMetrics(t *testing.T) {
	ok, skipped, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/server-metrics-failing.yaml") })
	if ok || skipped {
		t.Fatalf("ok %v, skipped %v; output:\n%s", ok, skipped, out)
	}
	want := []string{"inner", "inner/c4", "inner/c4/server_queue_p90", "inner/c4/ttft_p99"}
	if got := failedTestNames(out); !slices.Equal(got, want) {
		t.Errorf("failed tests %v, want %v; output:\n%s", got, want, out)
	}
	for _, w := range []string{
		"where the time went: client ttft p99 1250.0ms; server (vllm) queue p99 in 1s-1.5s, prefill p99 in 0s-300ms, ttft p99 in 1s-2.5s over the same interval; the rest (client + network) 0.0ms-250.0ms: queueing",
		"server queue p90 <= 500.0ms",
		"bucket 1s-1.5s, n = 100 on the server (every client's)",
		"server metrics (vllm, ",
		"the server finished 100 requests, this run sent 100 (warm-up included); peak waiting 3, running 1, KV cache 100%",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// TestSpecServerMetricsKeys: server_metrics and server_queue as written,
// and the errors that say what is wrong.
func TestSpecServerMetricsKeys(t *testing.T) {
	s, err := slospec.ParseSpec([]byte(`
target: {preset: llama-4-maverick}
load:
  requests: 100
server_metrics: {url: "http://127.0.0.1:8000/metrics", names: sglang, every: 5s, timeout: 2s}
objectives:
  server_queue: {p99: 500ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	src := s.ServerMetrics
	if src.URL != "http://127.0.0.1:8000/metrics" || src.Names != servermetrics.SGLang || src.Every != 5*time.Second || src.Timeout != 2*time.Second {
		t.Errorf("server_metrics read as %+v", src)
	}
	o := s.Objectives[0]
	if o.Key != "server_queue_p99" || o.Kind != "server_queue" || o.Q != 0.99 || o.Budget != 500*time.Millisecond || o.Line != 7 {
		t.Errorf("server_queue read as %+v", o)
	}
	if got := o.Objective().Name; got != "server queue p99 <= 500.0ms" {
		t.Errorf("objective %q", got)
	}
	const target = "target: {preset: llama-4-maverick}\nload: {requests: 100}\n"
	for _, tc := range []struct{ name, spec, want string }{
		{"no endpoint", target + "objectives:\n  server_queue: {p99: 1s}\n",
			"slospec: line 4: objectives.server_queue_p99: judges the server's own queue histogram: name its endpoint in server_metrics: {url: ...}"},
		{"records", "target: {records: \"x/*.jsonl\"}\nobjectives:\n  server_queue: {p99: 1s}\n",
			"slospec: line 3: objectives.server_queue_p99: judges the server's metrics scraped around a live run: records hold none"},
		{"records and endpoint", "target: {records: \"x/*.jsonl\"}\nserver_metrics: {url: \"http://h/metrics\"}\nobjectives:\n  ttft: {p50: 1s}\n",
			"slospec: line 2: server_metrics: records hold no server metrics"},
		{"nothing to scrape around", "target: {preset: llama-4-maverick}\nserver_metrics: {url: \"http://h/metrics\"}\n",
			"slospec: line 2: server_metrics: scraped around each level of the load and the chains: add objectives or chains"},
		{"no url", target + "server_metrics: {names: vllm}\nobjectives:\n  ttft: {p50: 1s}\n",
			"slospec: line 3: server_metrics: no url"},
		{"bad url", target + "server_metrics: {url: \"localhost:8000\"}\nobjectives:\n  ttft: {p50: 1s}\n",
			"want an http(s) URL of the metrics endpoint"},
		{"bad names", target + "server_metrics: {url: \"http://h/metrics\", names: triton}\nobjectives:\n  ttft: {p50: 1s}\n",
			`server_metrics.names: "triton": want vllm, sglang, tgi or auto`},
		{"unknown key", target + "server_metrics: {url: \"http://h/metrics\", interval: 1s}\nobjectives:\n  ttft: {p50: 1s}\n",
			"interval"},
		{"under load", "target: {preset: llama-4-maverick}\nload: {requests: 100, server_metrics: {url: \"http://h/metrics\"}}\nobjectives:\n  ttft: {p50: 1s}\n",
			"server_metrics"},
		{"small sample", "target: {preset: llama-4-maverick}\nload: {requests: 75}\nserver_metrics: {url: \"http://h/metrics\"}\nobjectives:\n  server_queue: {p99: 1s}\n",
			"p99 needs n >= 100"},
		{"empty", target + "server_metrics: {url: \"http://h/metrics\"}\nobjectives:\n  server_queue: {}\n",
			"server_queue: no objective"},
		{"not a duration", target + "server_metrics: {url: \"http://h/metrics\"}\nobjectives:\n  server_queue: {p99: 5}\n",
			"server_queue.p99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := slospec.ParseSpec([]byte(tc.spec))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestSpecServerMetricsLabels: server_metrics' labels select the series
// read; an empty labels map is an error.
func TestSpecServerMetricsLabels(t *testing.T) {
	s, err := slospec.ParseSpec([]byte("target: {preset: llama-4-maverick}\nserver_metrics: {url: \"http://h/metrics\", labels: {model_name: m, replica: \"2\"}}\nobjectives:\n  ttft: {p50: 1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.ServerMetrics.Labels; len(got) != 2 || got["model_name"] != "m" || got["replica"] != "2" {
		t.Errorf("labels read as %v", got)
	}
	_, err = slospec.ParseSpec([]byte("target: {preset: llama-4-maverick}\nserver_metrics: {url: \"http://h/metrics\", labels: {}}\nobjectives:\n  ttft: {p50: 1s}\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2: server_metrics.labels: no label") {
		t.Errorf("empty labels: %v", err)
	}
}

// TestRunFileServerMetricsChains: the chains of a spec scrape the
// server named in server_metrics (a fake target: its own fake), and the
// chains' report gives the server's figures.
func TestRunFileServerMetricsChains(t *testing.T) {
	ok, skipped, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/server-metrics-chains.yaml") })
	if ok || skipped {
		t.Fatalf("ok %v, skipped %v; output:\n%s", ok, skipped, out)
	}
	for _, w := range []string{
		"chain total p50 <= 2000.0ms  7000.0ms",
		"server metrics (vllm, ",
		"the server finished 40 requests, this run sent 40 (warm-up included)",
		`series read: model_name="fixed-model" (the measured model)`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
