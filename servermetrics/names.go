package servermetrics

import "fmt"

// Server names an inference server's metric names: VLLM, SGLang, TGI, or
// Auto (the first whose names the text holds, in that order).
type Server string

// The servers whose names the package knows.
const (
	Auto   Server = "auto"
	VLLM   Server = "vllm"
	SGLang Server = "sglang"
	TGI    Server = "tgi"
)

// Stage is a part of a request's time that a server measures in a
// histogram, in seconds.
type Stage string

// The stages, in the order an Interval lists them.
const (
	// Queue is the wait before the server starts the request.
	Queue Stage = "queue"
	// Prefill is from the start to the first token (the prompt's pass).
	Prefill Stage = "prefill"
	// Decode is from the first token to the last.
	Decode Stage = "decode"
	// Inference is prefill and decode together (the running phase).
	Inference Stage = "inference"
	// TTFT is from arrival at the server to the first token.
	TTFT Stage = "ttft"
	// E2E is from arrival at the server to the last token.
	E2E Stage = "e2e"
)

// Stages lists every stage, in order.
var stages = []Stage{Queue, Prefill, Decode, Inference, TTFT, E2E}

// Gauge is a count or a fraction the server reports at an instant.
type Gauge string

// The gauges.
const (
	// Waiting is the requests queued.
	Waiting Gauge = "waiting"
	// Running is the requests being served.
	Running Gauge = "running"
	// KVCache is the KV cache's use, a fraction in [0,1].
	KVCache Gauge = "kv_cache"
)

var gauges = []Gauge{Waiting, Running, KVCache}

// table is one server's names: for each stage and gauge, the metric
// names that carry it, the first one present taken.
type table struct {
	server Server
	stages map[Stage][]string
	gauges map[Gauge][]string
}

// tables is every server's names, in the order Auto tries them. Sources:
// vLLM's metrics design doc and its v1 loggers, SGLang's production
// metrics reference and its collector, TGI's metrics reference (see
// testdata/README.md for the fixtures).
var tables = []table{
	{server: VLLM,
		stages: map[Stage][]string{
			Queue:     {"vllm:request_queue_time_seconds"},
			Prefill:   {"vllm:request_prefill_time_seconds"},
			Decode:    {"vllm:request_decode_time_seconds"},
			Inference: {"vllm:request_inference_time_seconds"},
			TTFT:      {"vllm:time_to_first_token_seconds"},
			E2E:       {"vllm:e2e_request_latency_seconds"},
		},
		gauges: map[Gauge][]string{
			Waiting: {"vllm:num_requests_waiting"},
			Running: {"vllm:num_requests_running"},
			KVCache: {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
		}},
	{server: SGLang,
		stages: map[Stage][]string{
			Queue: {"sglang:queue_time_seconds"},
			TTFT:  {"sglang:time_to_first_token_seconds"},
			E2E:   {"sglang:e2e_request_latency_seconds"},
		},
		gauges: map[Gauge][]string{
			Waiting: {"sglang:num_queue_reqs"},
			Running: {"sglang:num_running_reqs"},
			KVCache: {"sglang:token_usage"},
		}},
	{server: TGI,
		stages: map[Stage][]string{
			Queue:     {"tgi_request_queue_duration"},
			Inference: {"tgi_request_inference_duration"},
			E2E:       {"tgi_request_duration"},
		},
		gauges: map[Gauge][]string{
			Waiting: {"tgi_queue_size"},
			Running: {"tgi_batch_current_size"},
		}},
}

// tableFor returns the names of server s (not Auto).
func tableFor(s Server) (*table, error) {
	for i := range tables {
		if tables[i].server == s {
			return &tables[i], nil
		}
	}
	return nil, fmt.Errorf("servermetrics: unknown names %q (want vllm, sglang, tgi or auto)", string(s))
}

// ParseServer checks a names value as a spec writes it: "vllm",
// "sglang", "tgi", "auto", or "" (Auto).
func ParseServer(s string) (Server, error) {
	if s == "" || Server(s) == Auto {
		return Auto, nil
	}
	if _, err := tableFor(Server(s)); err != nil {
		return "", err
	}
	return Server(s), nil
}
