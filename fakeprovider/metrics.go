package fakeprovider

import (
	"bytes"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fake's GET /metrics: vLLM's metric names and buckets, filled from
// the fake's own timeline. Each request that finishes its answer adds one
// observation to each histogram, on the fake's clock:
//
//   - vllm:request_queue_time_seconds: arrival to admission (the wait for
//     a slot and any cold start: Served.Queued + Served.ColdStart);
//   - vllm:request_prefill_time_seconds: admission to the first token;
//   - vllm:request_decode_time_seconds: first token to last;
//   - vllm:request_inference_time_seconds: admission to the last token;
//   - vllm:time_to_first_token_seconds: arrival to the first token
//     (Served.TTFT);
//   - vllm:e2e_request_latency_seconds: arrival to the last token.
//
// A request that gets an HTTP error, is cut by a fault, or whose client
// goes away adds none (vLLM counts finished requests). The gauges are
// vllm:num_requests_waiting (arrived, not admitted),
// vllm:num_requests_running (admitted, slot not yet released) and
// vllm:kv_cache_usage_perc, for which the fake, which has no KV cache,
// reports its busy slots over all slots.

// metricsLatencyBuckets are vLLM's buckets for request latencies (queue,
// prefill, decode, inference, e2e); metricsTTFTBuckets its TTFT buckets.
var (
	metricsLatencyBuckets = secondsList(0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
	metricsTTFTBuckets    = secondsList(0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
)

func secondsList(s ...float64) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, v := range s {
		out[i] = time.Duration(math.Round(v * float64(time.Second)))
	}
	return out
}

// metricsHistograms are /metrics' histograms, in the order written.
var metricsHistograms = []struct {
	name, help string
	buckets    []time.Duration
}{
	{"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", metricsLatencyBuckets},
	{"vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", metricsLatencyBuckets},
	{"vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", metricsLatencyBuckets},
	{"vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", metricsLatencyBuckets},
	{"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", metricsTTFTBuckets},
	{"vllm:e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", metricsLatencyBuckets},
}

// serverMetrics holds what /metrics reports; its zero value is empty.
type serverMetrics struct {
	mu               sync.Mutex
	counts           [6][]uint64 // per histogram: per bucket, +Inf last (not cumulative)
	sums             [6]time.Duration
	waiting, running int
}

// observe adds one finished request: its arrival, admission and last
// token instants, and its TTFT from arrival (0: no token, the first is
// the last).
func (m *serverMetrics) observe(arrival, admitted time.Time, ttft time.Duration, last time.Time) {
	first := last
	if ttft > 0 {
		first = arrival.Add(ttft)
	}
	vals := [6]time.Duration{admitted.Sub(arrival), first.Sub(admitted), last.Sub(first), last.Sub(admitted), first.Sub(arrival), last.Sub(arrival)}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, v := range vals {
		b := metricsHistograms[i].buckets
		if m.counts[i] == nil {
			m.counts[i] = make([]uint64, len(b)+1)
		}
		k := len(b) // +Inf
		for j, ub := range b {
			if v <= ub {
				k = j
				break
			}
		}
		m.counts[i][k]++
		m.sums[i] += v
	}
}

// gauge moves the waiting and running counts.
func (m *serverMetrics) gauge(waiting, running int) {
	m.mu.Lock()
	m.waiting += waiting
	m.running += running
	m.mu.Unlock()
}

// write renders the metrics in the Prometheus text format (0.0.4).
func (m *serverMetrics) write(model string, slots int) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b bytes.Buffer
	label := `model_name="` + escapeLabel(model) + `"`
	gauge := func(name, help string, v float64) {
		b.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n")
		b.WriteString(name + "{" + label + "} " + strconv.FormatFloat(v, 'g', -1, 64) + "\n")
	}
	gauge("vllm:num_requests_running", "Number of requests in model execution batches.", float64(m.running))
	gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", float64(m.waiting))
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", float64(m.running)/float64(max(slots, 1)))
	for i, h := range metricsHistograms {
		b.WriteString("# HELP " + h.name + " " + h.help + "\n# TYPE " + h.name + " histogram\n")
		var cum uint64
		for j := range len(h.buckets) + 1 {
			if m.counts[i] != nil {
				cum += m.counts[i][j]
			}
			le := "+Inf"
			if j < len(h.buckets) {
				le = strconv.FormatFloat(h.buckets[j].Seconds(), 'g', -1, 64)
			}
			b.WriteString(h.name + `_bucket{le="` + le + `",` + label + "} " + strconv.FormatUint(cum, 10) + "\n")
		}
		b.WriteString(h.name + "_sum{" + label + "} " + strconv.FormatFloat(m.sums[i].Seconds(), 'g', -1, 64) + "\n")
		b.WriteString(h.name + "_count{" + label + "} " + strconv.FormatUint(cum, 10) + "\n")
	}
	return b.Bytes()
}

// escapeLabel escapes a label value as the text format requires.
func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// serve answers GET /metrics for a fake serving model on slots slots.
func (m *serverMetrics) serve(w http.ResponseWriter, r *http.Request, model string, slots int) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, http.MethodGet)
		return
	}
	body := m.write(model, slots)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}
