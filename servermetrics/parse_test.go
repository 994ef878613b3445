package servermetrics_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailguard/tailguard/servermetrics"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := readFixture(name)
	require.NoError(t, err)
	return b
}

func readFixture(name string) ([]byte, error) { return os.ReadFile(filepath.Join("testdata", name)) }

// TestParseRealTexts reads the servers' own exposition texts (see
// testdata/README.md), names given and detected.
func TestParseRealTexts(t *testing.T) {
	for _, tc := range []struct {
		file   string
		server servermetrics.Server
		stages map[servermetrics.Stage][2]float64 // count, sum
		gauges map[servermetrics.Gauge]float64
	}{
		{"vllm.txt", servermetrics.VLLM,
			map[servermetrics.Stage][2]float64{
				servermetrics.Queue: {6, 7.358146831393242e-05}, servermetrics.Prefill: {6, 0.2140041133388877},
				servermetrics.Decode: {6, 0.6237391703762114}, servermetrics.Inference: {6, 0.8377432837150991},
				servermetrics.TTFT: {1, 0.31326723098754883}, servermetrics.E2E: {1, 0.5034303665161133}},
			// kv_cache_usage_perc is preferred over gpu_cache_usage_perc; both 0 here.
			map[servermetrics.Gauge]float64{servermetrics.Waiting: 0, servermetrics.Running: 0, servermetrics.KVCache: 0}},
		{"sglang.txt", servermetrics.SGLang,
			map[servermetrics.Stage][2]float64{
				servermetrics.TTFT: {11008, 2.3518979474117756e+06}, servermetrics.E2E: {11228, 3.116093850019932e+06}},
			map[servermetrics.Gauge]float64{servermetrics.Waiting: 2826, servermetrics.Running: 162, servermetrics.KVCache: 0.28}},
		{"tgi.txt", servermetrics.TGI,
			map[servermetrics.Stage][2]float64{servermetrics.Inference: {109, 245.91743839099996}},
			map[servermetrics.Gauge]float64{servermetrics.Waiting: 0, servermetrics.Running: 0}},
	} {
		for _, names := range []servermetrics.Server{tc.server, servermetrics.Auto} {
			t.Run(tc.file+"/"+string(names), func(t *testing.T) {
				s, err := servermetrics.Parse(fixture(t, tc.file), "text/plain; version=0.0.4; charset=utf-8", names)
				require.NoError(t, err)
				assert.Equal(t, tc.server, s.Server)
				assert.Len(t, s.Histograms, len(tc.stages), "only the stages the server exports")
				for st, want := range tc.stages {
					h, ok := s.Histograms[st]
					require.True(t, ok, "stage %s", st)
					assert.Equal(t, want[0], h.Count, "%s count", st)
					assert.InDelta(t, want[1], h.Sum, 1e-9*want[1], "%s sum", st)
					assert.LessOrEqual(t, h.Cumulative[len(h.Cumulative)-1], h.Count)
				}
				assert.Equal(t, tc.gauges, s.Gauges)
			})
		}
	}
}

// TestParseBuckets: the SGLang TTFT buckets as written (+Inf left out).
func TestParseBuckets(t *testing.T) {
	s, err := servermetrics.Parse(fixture(t, "sglang.txt"), "", servermetrics.Auto)
	require.NoError(t, err)
	h := s.Histograms[servermetrics.TTFT]
	assert.Equal(t, "sglang:time_to_first_token_seconds", h.Metric)
	assert.Equal(t, []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 15, 20, 25, 30}, h.Bounds)
	assert.Equal(t, []float64{0, 0, 0, 0, 1, 3, 6, 6, 6, 6, 6, 27, 140, 314, 941, 1330, 1970, 2326, 2417, 2513}, h.Cumulative)
}

// TestParseOpenMetrics: OpenMetrics 1.0 (# EOF, # UNIT, _created
// samples, float counts) reads as the text format does, by Content-Type
// or, without one, by its # EOF line.
func TestParseOpenMetrics(t *testing.T) {
	om := "# TYPE vllm:request_queue_time_seconds histogram\n" +
		"# UNIT vllm:request_queue_time_seconds seconds\n" +
		"# HELP vllm:request_queue_time_seconds Histogram of time spent in WAITING phase for request.\n" +
		`vllm:request_queue_time_seconds_bucket{le="0.3",model_name="m"} 6.0` + "\n" +
		`vllm:request_queue_time_seconds_bucket{le="0.5",model_name="m"} 9.0` + "\n" +
		`vllm:request_queue_time_seconds_bucket{le="+Inf",model_name="m"} 10.0` + "\n" +
		`vllm:request_queue_time_seconds_count{model_name="m"} 10.0` + "\n" +
		`vllm:request_queue_time_seconds_sum{model_name="m"} 3.5` + "\n" +
		`vllm:request_queue_time_seconds_created{model_name="m"} 1.7181405583e+09` + "\n" +
		"# TYPE vllm:num_requests_waiting gauge\n" +
		`vllm:num_requests_waiting{model_name="m"} 4.0` + "\n" +
		"# EOF\n"
	for _, ct := range []string{"application/openmetrics-text; version=1.0.0; charset=utf-8", ""} {
		s, err := servermetrics.Parse([]byte(om), ct, servermetrics.Auto)
		require.NoError(t, err, "content type %q", ct)
		h := s.Histograms[servermetrics.Queue]
		assert.Equal(t, []float64{0.3, 0.5}, h.Bounds)
		assert.Equal(t, []float64{6, 9}, h.Cumulative)
		assert.Equal(t, 10.0, h.Count)
		assert.Equal(t, 4.0, s.Gauges[servermetrics.Waiting])
	}
	// The same text without # EOF is not OpenMetrics: an OpenMetrics
	// Content-Type then fails, as the format requires the line.
	_, err := servermetrics.Parse([]byte(strings.TrimSuffix(om, "# EOF\n")), "application/openmetrics-text; version=1.0.0", servermetrics.Auto)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "OpenMetrics")
}

// TestParseOpenMetricsDifferences: each line where OpenMetrics differs
// from the text format (types the text format lacks, exemplars, float
// timestamps, _total and _created samples) reads, and label values that
// hold "#", "}" or an escaped quote stay whole.
func TestParseOpenMetricsDifferences(t *testing.T) {
	om := "# TYPE vllm:cache_config info\n" +
		`vllm:cache_config_info{block_size="16"} 1` + "\n" +
		"# TYPE engine_state stateset\n" +
		`engine_state{engine_state="awake"} 1` + "\n" +
		"# TYPE vllm:mystery unknown\nvllm:mystery 3\n" +
		"# TYPE vllm:request_success counter\n" +
		`vllm:request_success_total{model_name="m"} 12 1700000000.250` + "\n" +
		`vllm:request_success_created{model_name="m"} 1.7e9` + "\n" +
		"# TYPE vllm:e2e_request_latency_seconds histogram\n" +
		"# UNIT vllm:e2e_request_latency_seconds seconds\n" +
		`vllm:e2e_request_latency_seconds_bucket{le="1.0",model_name="a # {b} \"c\""} 3 # {trace_id="abc"} 0.7 1700000000.1` + "\n" +
		`vllm:e2e_request_latency_seconds_bucket{le="+Inf",model_name="a # {b} \"c\""} 4` + "\n" +
		`vllm:e2e_request_latency_seconds_count{model_name="a # {b} \"c\""} 4 1700000000` + "\n" +
		`vllm:e2e_request_latency_seconds_sum{model_name="a # {b} \"c\""} 5.5` + "\n" +
		"# TYPE vllm:num_requests_running gauge\n" +
		"vllm:num_requests_running 2 1700000000.5\n" +
		"# EOF\n"
	s, err := servermetrics.Parse([]byte(om), "application/openmetrics-text; version=1.0.0; charset=utf-8", servermetrics.Auto)
	require.NoError(t, err)
	h := s.Histograms[servermetrics.E2E]
	assert.Equal(t, []float64{1}, h.Bounds)
	assert.Equal(t, []float64{3}, h.Cumulative)
	assert.Equal(t, 4.0, h.Count)
	assert.Equal(t, 5.5, h.Sum)
	assert.Equal(t, 2.0, s.Gauges[servermetrics.Running])

	// The vLLM fixture as OpenMetrics (# EOF added) reads as the text does.
	text := fixture(t, "vllm.txt")
	a, err := servermetrics.Parse(text, "text/plain; version=0.0.4", servermetrics.Auto)
	require.NoError(t, err)
	b, err := servermetrics.Parse(append(text, "# EOF\n"...), "application/openmetrics-text; version=1.0.0", servermetrics.Auto)
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

// TestParseSumsSeries: two models on one server are summed bucket by
// bucket; different buckets cannot be.
func TestParseSumsSeries(t *testing.T) {
	two := "# TYPE vllm:e2e_request_latency_seconds histogram\n" +
		`vllm:e2e_request_latency_seconds_bucket{le="1.0",model_name="a"} 1` + "\n" +
		`vllm:e2e_request_latency_seconds_bucket{le="+Inf",model_name="a"} 2` + "\n" +
		`vllm:e2e_request_latency_seconds_count{model_name="a"} 2` + "\n" +
		`vllm:e2e_request_latency_seconds_sum{model_name="a"} 3` + "\n" +
		`vllm:e2e_request_latency_seconds_bucket{le="1.0",model_name="b"} 4` + "\n" +
		`vllm:e2e_request_latency_seconds_bucket{le="+Inf",model_name="b"} 4` + "\n" +
		`vllm:e2e_request_latency_seconds_count{model_name="b"} 4` + "\n" +
		`vllm:e2e_request_latency_seconds_sum{model_name="b"} 2` + "\n"
	s, err := servermetrics.Parse([]byte(two), "", servermetrics.VLLM)
	require.NoError(t, err)
	h := s.Histograms[servermetrics.E2E]
	assert.Equal(t, []float64{5}, h.Cumulative)
	assert.Equal(t, 6.0, h.Count)
	assert.Equal(t, 5.0, h.Sum)

	mixed := strings.Replace(two, `le="1.0",model_name="b"`, `le="2.0",model_name="b"`, 1)
	_, err = servermetrics.Parse([]byte(mixed), "", servermetrics.VLLM)
	require.ErrorContains(t, err, "different buckets")
}

// TestParseMalformed: texts that must not parse, each with the error
// that says what is wrong.
func TestParseMalformed(t *testing.T) {
	const h = "# TYPE vllm:request_queue_time_seconds histogram\n"
	for _, tc := range []struct{ name, text, names, want string }{
		{"empty", "", "auto", "empty metrics text"},
		{"blank", "\n\n  \n", "auto", "empty metrics text"},
		{"garbage", "this is not a metrics text\n", "auto", "parse Prometheus text"},
		{"no value", "vllm:num_requests_waiting\n", "auto", "parse Prometheus text"},
		{"bad value", "vllm:num_requests_waiting abc\n", "auto", "parse Prometheus text"},
		{"unclosed labels", `vllm:num_requests_waiting{model_name="m" 1` + "\n", "auto", "parse Prometheus text"},
		{"duplicate type", "# TYPE x gauge\n# TYPE x counter\nx 1\n", "auto", "parse Prometheus text"},
		{"buckets falling", h + `vllm:request_queue_time_seconds_bucket{le="0.3"} 5` + "\n" +
			`vllm:request_queue_time_seconds_bucket{le="0.5"} 4` + "\n" + "vllm:request_queue_time_seconds_count 5\n", "auto", "buckets out of order"},
		{"count below buckets", h + `vllm:request_queue_time_seconds_bucket{le="0.3"} 5` + "\n" +
			"vllm:request_queue_time_seconds_count 3\n", "auto", "do not fit its buckets"},
		{"NaN bucket", h + `vllm:request_queue_time_seconds_bucket{le="0.3"} NaN` + "\n", "auto", "not a count"},
		{"NaN gauge", "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting NaN\n", "auto", "not a number"},
		{"gauge typed as histogram", "# TYPE vllm:num_requests_waiting histogram\nvllm:num_requests_waiting_count 1\nvllm:num_requests_waiting_sum 1\n", "auto", "not a gauge"},
		{"stage typed as counter", "# TYPE vllm:request_queue_time_seconds counter\nvllm:request_queue_time_seconds 1\n", "auto", "not a histogram"},
		{"no known metric", "# TYPE up gauge\nup 1\n", "auto", "no vLLM, SGLang or TGI metric"},
		{"wrong server", string(fixture(t, "sglang.txt")), "vllm", "none of vllm's metrics"},
		{"unknown names", "up 1\n", "triton", `unknown names "triton"`},
		{"OpenMetrics cut short", "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 1\n# EOF\nvllm:num_requests_waiting 2\n", "auto", "does not end with # EOF (cut short?)"},
		{"OpenMetrics after # EOF", "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 1\n# EOF\nvllm:num_requests_waiting 2\n# EOF\n", "auto", "a line follows # EOF"},
		{"OpenMetrics bad value", "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{a=\"b\"} x # {t=\"1\"} 1\n# EOF\n", "auto", "parse OpenMetrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct := ""
			if strings.Contains(tc.name, "OpenMetrics") {
				ct = "application/openmetrics-text; version=1.0.0"
			}
			_, err := servermetrics.Parse([]byte(tc.text), ct, servermetrics.Server(tc.names))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "servermetrics: "), err.Error())
		})
	}
}

func TestParseServer(t *testing.T) {
	for in, want := range map[string]servermetrics.Server{"": servermetrics.Auto, "auto": servermetrics.Auto, "vllm": servermetrics.VLLM, "sglang": servermetrics.SGLang, "tgi": servermetrics.TGI} {
		got, err := servermetrics.ParseServer(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := servermetrics.ParseServer("VLLM")
	assert.ErrorContains(t, err, "want vllm, sglang, tgi or auto")
}
