package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/servermetrics"
)

// TestServesMetrics: fakellm answers GET /metrics with vLLM's names,
// which servermetrics reads: one request served is one observation of
// each stage.
func TestServesMetrics(t *testing.T) {
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- run([]string{"-addr", "127.0.0.1:0", "-profile", profile}, pw, io.Discard, stop)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := urlRe.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("printed %q, want a loopback URL", line)
	}
	src := servermetrics.Source{URL: m[1] + "/metrics"}
	before, err := src.Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	body := `{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(m[1]+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	after, err := src.Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	iv, err := servermetrics.Delta(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if iv.Server != servermetrics.VLLM || len(iv.Stages) != 6 {
		t.Fatalf("read %s with %d stages, want vllm with 6: %+v", iv.Server, len(iv.Stages), iv)
	}
	for _, d := range iv.Stages {
		if d.N != 1 {
			t.Errorf("%s (%s): %d observations, want 1", d.Stage, d.Metric, d.N)
		}
	}
	close(stop)
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
	http.DefaultClient.CloseIdleConnections()
}
