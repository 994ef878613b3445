package summary

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/disclosure"
	"github.com/tailguard/tailguard/sample"
)

func summaryOf(n int, ms time.Duration) sample.Summary {
	return sample.Summary{N: n, Min: ms, P50: 2 * ms, P90: 3 * ms, P95: 4 * ms, P99: 5 * ms, Max: 6 * ms, CV: 12, TailRatio: 2.5}
}

// TestSummaryRenders: the screen, the log lines and the JSON of a
// summary say what the counts, errors, clocks, client load and partial
// run were; NaN rates are JSON null, not an error.
func TestSummaryRenders(t *testing.T) {
	ms := time.Millisecond
	s := Summary{
		Label: "c8", Shard: "1/2", Concurrency: 8, Model: "m",
		Counts:        disclosure.Counts{Planned: 100, Sent: 100, Kept: 88, Discarded: 10, Failed: 2},
		ErrorRate:     math.NaN(),
		Errors:        map[string]int{"http_529": 2},
		ErrorExamples: []ErrorExample{{Class: "http_529", Count: 2, ID: "c8-0017", Detail: "overloaded"}},
		TTFT:          summaryOf(88, 100*ms), Total: summaryOf(88, 400*ms),
		CPUPerWall: 0.9,
		Partial:    "stopped at 100 of 120",
	}
	screen := s.String()
	for _, want := range []string{
		"requests: planned 100, sent 100, kept 88, discarded 10, failed 2",
		`http_529 2 (e.g. c8-0017: "overloaded")`,
		"ttft           100.0ms   200.0ms   300.0ms   400.0ms   500.0ms   600.0ms      12    2.50",
		"client CPU/wall: 0.90 (above 0.7: the client is part of the tail)",
		"PARTIAL: stopped at 100 of 120",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("String lacks %q:\n%s", want, screen)
		}
	}
	log := s.Brief("out/records.jsonl")
	for _, want := range []string{
		"latency c8 (shard 1/2: one part of the run; merge the shards to judge it): 90 measured at concurrency 8, model m",
		"sent 100 of 100 planned: 88 kept, 10 discarded (warm-up), 2 failed",
		"ttft p50 200.0ms p99 500.0ms; total p50 800.0ms p99 2000.0ms",
		`errors: http_529 2 (e.g. c8-0017: "overloaded")`,
		"raw records: out/records.jsonl",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("Brief lacks %q:\n%s", want, log)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if v, ok := back["error_rate"]; !ok || v != nil {
		t.Errorf("error_rate NaN written as %v (present %v), want null", v, ok)
	}
	if back["cpu_per_wall"] != 0.9 || back["shard"] != "1/2" || back["label"] != "c8" {
		t.Errorf("JSON %s", b)
	}
	if Finite(math.Inf(1)) != nil || *Finite(2) != 2 {
		t.Error("Finite")
	}
}

// TestErrorExampleString: an example without a detail names only its
// class, count and trace ID.
func TestErrorExampleString(t *testing.T) {
	if got := (ErrorExample{Class: "transport", Count: 1, ID: "c1-0000"}).String(); got != "transport 1 (e.g. c1-0000)" {
		t.Errorf("got %q", got)
	}
}
