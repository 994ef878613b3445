package latencytest

import (
	"math"
	"testing"
	"time"
)

// ReportMetrics reports r's latency figures as benchmark metrics
// (b.ReportMetric), so benchstat compares them across commits like
// ns/op: p50, p95 and p99 of TTFT and of total time in nanoseconds
// ("ttft-p50-ns", "ttft-p95-ns", "ttft-p99-ns", "total-p50-ns",
// "total-p95-ns", "total-p99-ns"; benchstat shows them in seconds with SI
// prefixes), the CV of each in percent ("ttft-cv-%", "total-cv-%"), and
// the count of failed measured requests ("failed-requests", always
// reported, 0 included).
//
// A failed request counts as infinitely slow: a quantile that reaches one,
// and the CV of a sample that holds one, has no finite value and is left
// out (benchstat then shows the metric as missing for that run, never as
// a better number), and the log says which. A metric is left out too when
// the sample is below MinSamples for it (p99 needs 100 requests), as a p99
// of 30 requests would be a number without a tail behind it.
//
// benchstat needs several runs to give a confidence interval and a
// p-value: run each benchmark at least 6 times, one batch per run, and
// compare the files:
//
//	go test -run '^$' -bench Latency -benchtime=1x -count=6 > new.txt
//	benchstat old.txt new.txt
//
// Call it once per benchmark run, after the measured batch; a later call
// replaces the values (ReportMetric keeps the last value of each unit).
// A nil r reports nothing and logs why.
func ReportMetrics(b *testing.B, r *Result) {
	b.Helper()
	if r == nil {
		b.Logf("latencytest: ReportMetrics: no result")
		return
	}
	for _, m := range []struct {
		name string
		s    Sample
	}{{"ttft", r.TTFT()}, {"total", r.Total()}} {
		for _, q := range []struct {
			name string
			q    float64
			min  int
		}{{"p50", 0.5, 2}, {"p95", 0.95, 20}, {"p99", 0.99, 100}} {
			unit := m.name + "-" + q.name + "-ns"
			switch v := m.s.Quantile(q.q); {
			case len(m.s) < q.min:
				b.Logf("latencytest: %s not reported: %s needs n >= %d (have %d)", unit, q.name, q.min, len(m.s))
			case v == Failed:
				b.Logf("latencytest: %s not reported: it reaches a failed request (%d of %d failed)", unit, m.s.Failures(), len(m.s))
			default:
				b.ReportMetric(float64(v/time.Nanosecond), unit)
			}
		}
		unit := m.name + "-cv-%"
		if cv := m.s.CV(); math.IsNaN(cv) || math.IsInf(cv, 0) {
			b.Logf("latencytest: %s not reported: no finite CV (%d of %d failed)", unit, m.s.Failures(), len(m.s))
		} else {
			b.ReportMetric(cv, unit)
		}
	}
	b.ReportMetric(float64(r.Counts().Failed), "failed-requests")
}
