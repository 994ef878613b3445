package servermetrics_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tailguard/tailguard/servermetrics"
)

// FuzzParse: any text parses or fails with an error, never a panic; what
// parses gives buckets that rise, counts that do not fall, and quantiles
// that are monotone in q and lie within the bounds of the bucket they
// name.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"vllm.txt", "sglang.txt", "tgi.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "")
	}
	f.Add([]byte("# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 1\n# EOF\n"), "application/openmetrics-text; version=1.0.0")
	f.Add([]byte("vllm:request_queue_time_seconds_bucket{le=\"1\"} 3\n"), "text/plain")
	f.Fuzz(func(t *testing.T, data []byte, contentType string) {
		if len(data) > 4096 {
			return // the OpenMetrics grammar parser is superlinear in a line's length
		}
		s, err := servermetrics.Parse(data, contentType, servermetrics.Auto)
		if err != nil {
			return
		}
		zero := servermetrics.Snapshot{Server: s.Server}
		for st, h := range s.Histograms {
			for i := 1; i < len(h.Bounds); i++ {
				if h.Bounds[i] <= h.Bounds[i-1] || h.Cumulative[i] < h.Cumulative[i-1] {
					t.Fatalf("%s: bounds %v counts %v", st, h.Bounds, h.Cumulative)
				}
			}
			zero.Histograms = map[servermetrics.Stage]servermetrics.Histogram{st: {Metric: h.Metric, Bounds: h.Bounds, Cumulative: make([]float64, len(h.Bounds))}}
			iv, err := servermetrics.Delta(zero, servermetrics.Snapshot{Server: s.Server, Histograms: map[servermetrics.Stage]servermetrics.Histogram{st: h}})
			if err != nil {
				t.Fatal(err)
			}
			d, ok := iv.Stage(st)
			if !ok || d.N == 0 || d.N > 1e9 {
				continue
			}
			prev := time.Duration(-1)
			for q := 0.05; q < 1; q += 0.05 {
				e := d.Quantile(q)
				if !e.OK {
					continue
				}
				if e.Value < prev || e.Value < e.Lo || (!e.Above && e.Value > e.Hi) {
					t.Fatalf("%s q=%v: %+v after %v", st, q, e, prev)
				}
				prev = e.Value
			}
		}
	})
}
