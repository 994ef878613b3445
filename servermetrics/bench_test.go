package servermetrics_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/tailguard/tailguard/servermetrics"
)

// BenchmarkParse reads the vLLM fixture (its 84 lines without counters)
// as the text format and
// as OpenMetrics, and, for comparison, with prometheus/common's own
// OpenMetrics decoder, which Parse does not use (openmetrics.go says
// why): µs per scrape and per line.
func BenchmarkParse(b *testing.B) {
	text, err := readFixture("vllm.txt")
	if err != nil {
		b.Fatal(err)
	}
	// Counters are left out: OpenMetrics names them without _total in
	// # TYPE, which the fixture (text format) does not, and the strict
	// decoder refuses.
	var kept [][]byte
	for line := range bytes.Lines(text) {
		if !bytes.Contains(line, []byte("_total")) {
			kept = append(kept, line)
		}
	}
	text = bytes.Join(kept, nil)
	om := append(bytes.Clone(text), "# EOF\n"...)
	lines := float64(bytes.Count(text, []byte("\n")))
	for _, bc := range []struct {
		name string
		run  func() error
	}{
		{"text", func() error {
			_, err := servermetrics.Parse(text, "text/plain; version=0.0.4", servermetrics.Auto)
			return err
		}},
		{"openmetrics", func() error {
			_, err := servermetrics.Parse(om, "application/openmetrics-text; version=1.0.0", servermetrics.Auto)
			return err
		}},
		{"expfmt-openmetrics-decoder", func() error {
			dec := expfmt.NewDecoder(bytes.NewReader(om), expfmt.FmtOpenMetrics_1_0_0)
			for {
				var mf dto.MetricFamily
				if err := dec.Decode(&mf); errors.Is(err, io.EOF) {
					return nil
				} else if err != nil {
					return err
				}
			}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if err := bc.run(); err != nil {
					b.Fatal(err)
				}
			}
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(per/1e3, "µs/scrape")
			b.ReportMetric(per/lines/1e3, "µs/line")
		})
	}
}
