package latencytest_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// benchResult is n measured requests with TTFT i+1 ms and total TTFT+100
// ms for request i; the last failed of them failed (http_529).
func benchResult(n, failed int) *latencytest.Result {
	r := &latencytest.Result{Run: latencytest.Run{Planned: n}}
	for i := range n {
		ttft := time.Duration(i+1) * time.Millisecond
		rec := latencytest.Record{ID: fmt.Sprintf("b-%04d", i), TTFT: ttft, FirstAnswer: ttft, Total: ttft + 100*time.Millisecond,
			TokenEvents: 8, Status: 200}
		if i >= n-failed {
			rec.Status, rec.Err = 529, "http_529"
		}
		r.Records = append(r.Records, rec)
	}
	return r
}

// ReportMetrics reports the quantiles in nanoseconds, the CVs in percent
// and the failures; a quantile that reaches a failed request, or that has
// too few requests behind it, is left out rather than reported as a
// better number.
func TestReportMetrics(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n, failed int
		want      map[string]float64
	}{
		{"clean", 200, 0, map[string]float64{
			// n=200, q=0.99: h = 199*0.99 = 197.01, between 198 and 199 ms: 198.01 ms.
			"ttft-p50-ns": 100.5e6, "ttft-p95-ns": 190.05e6, "ttft-p99-ns": 198.01e6,
			"total-p50-ns": 200.5e6, "total-p95-ns": 290.05e6, "total-p99-ns": 298.01e6,
			"failed-requests": 0,
		}},
		{"failures", 200, 3, map[string]float64{
			// 3 failed of 200: p99 (rank 197.01 of 0..199) reaches a failed
			// value; p95 (189.05) does not; CV is infinite: left out.
			"ttft-p50-ns": 100.5e6, "ttft-p95-ns": 190.05e6,
			"total-p50-ns": 200.5e6, "total-p95-ns": 290.05e6,
			"failed-requests": 3,
		}},
		{"small", 30, 0, map[string]float64{
			// p99 needs n >= 100: left out.
			"ttft-p50-ns": 15.5e6, "ttft-p95-ns": 28.55e6,
			"total-p50-ns": 115.5e6, "total-p95-ns": 128.55e6,
			"failed-requests": 0,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := benchResult(tc.n, tc.failed)
			res := testing.Benchmark(func(b *testing.B) {
				for b.Loop() {
				}
				latencytest.ReportMetrics(b, r)
			})
			got := maps.Clone(res.Extra)
			for _, k := range []string{"ttft-cv-%", "total-cv-%"} {
				cv, ok := got[k]
				if tc.failed > 0 {
					if ok {
						t.Errorf("%s reported (%v) with failures", k, cv)
					}
					continue
				}
				if !ok || !(cv > 0) {
					t.Errorf("%s = %v, %v; want a positive percentage", k, cv, ok)
				}
				delete(got, k)
			}
			for _, k := range slices.Sorted(maps.Keys(tc.want)) {
				if v, ok := got[k]; !ok || v != tc.want[k] {
					t.Errorf("%s = %v (reported %v), want %v", k, v, ok, tc.want[k])
				}
				delete(got, k)
			}
			if len(got) > 0 {
				t.Errorf("unexpected metrics %v", got)
			}
		})
	}
}
