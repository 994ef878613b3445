// Package servermetrics reads an inference server's own Prometheus
// metrics (vLLM, SGLang, TGI) so a latency test can say where the time
// went: queued, prefilling, decoding, or outside the server.
//
// A [Source] names the endpoint and its names ([VLLM], [SGLang], [TGI] or
// [Auto]). [Source.Scrape] reads it once; [Parse] reads a text in the
// Prometheus text format or OpenMetrics 1.0 with prometheus/common's
// text-format parser (the few OpenMetrics lines that differ are rewritten
// first: openmetrics.go). [Source.Watch] scrapes before a run, every [Source.Every]
// during it, and after it ([Watch.Stop]); [Delta] turns the two
// snapshots into an [Interval]: each [Stage]'s [Distribution] over
// exactly the requests the server finished in between, and the [Gauge]
// values (waiting, running, KV cache) at every scrape.
//
// # Stages
//
// Queue (waiting for a slot), Prefill (start to first token), Decode
// (first to last token), Inference (prefill and decode), TTFT and E2E
// (from arrival at the server). Which a server exports is its name table:
// vLLM all six; SGLang queue, TTFT and E2E; TGI queue, inference and E2E.
// A stage the server does not export is absent, never zero.
//
// # Resolution
//
// A histogram keeps counts per bucket, not values: [Distribution.Quantile]
// returns the bucket that holds the quantile (its bounds are the honest
// uncertainty) and a linear interpolation inside it, as Prometheus's
// histogram_quantile does. A quantile above the last finite bound is
// only known to be above it.
//
// # Series
//
// One server may serve several models, each metric a series per model.
// [Source.Labels] reads only the series that carry the labels given
// ({"model_name": "m"}); without them, [Source.Model] (which the runners
// set to the model they request: [Source.WithModel]) reads the series of
// that model when the series carry a model label, and every series is
// summed otherwise. [Snapshot.Series] says which; two snapshots of
// different series do not subtract.
//
// # Limits
//
// The server's histograms count every client's requests, and the
// requests that finished between the scrapes, on the server's clock: a
// request in flight at a scrape is counted by the next. Scrape failures,
// counters that go down (a restart) and changed buckets are noted in
// [Interval.Problems] and never fail a run.
package servermetrics
