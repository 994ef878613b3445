// Package latencytest measures calls from the client side and runs the
// batches, sweeps, open loops and agent chains that latency SLO tests are
// made of.
//
// A [Provider] makes one call and returns its [Record]. [OpenAI] streams
// chat completions from any OpenAI-compatible endpoint (the in-memory fake
// of package fakeprovider included), [Responses] from OpenAI's Responses
// API, [Anthropic] from Anthropic's Messages API and [Gemini] from
// Google's Gemini API, and [NewLLM] speaks
// any protocol.Protocol (one of your own too), all timed and judged
// alike; [HTTP] times a plain endpoint; [Func] times any Go call;
// [Instrument] wraps your own client's transport. The
// runners [Batch], [Sweep], [OpenLoop] and [Chain] send requests with
// deterministic trace IDs, drop warm-up requests, start every prompt with a
// unique nonce, and return a [Result] holding every record and a
// [Disclosure] of how it was measured. Each runner has a pure core,
// Run(ctx, provider), and a wrapper, Measure(t, provider), that takes its
// deadline from the test, writes the raw records and a summary as
// artifacts, and logs the result:
//
//	synctest.Test(t, func(t *testing.T) {
//		prof, _ := fakeprovider.Preset("mistral-3-14b")
//		fake := fakeprovider.New(prof)
//		t.Cleanup(fake.Close)
//		p := latencytest.OpenAI("http://fake/v1",
//			latencytest.WithHTTPClient(fake.Client()), latencytest.WithModel(prof.Model))
//		r := latencytest.Batch{Requests: 200, Concurrency: 4}.Measure(t, p)
//		sloassert.Check(t, r, sloassert.Q(sloassert.TTFT, 0.99, 475*time.Millisecond))
//	})
//
// Times are taken with the monotonic clock from the moment the request is
// sent: TTFB, TTFT (first token of any kind), first answer, every
// inter-token gap, and Total. Inside synctest.Test against the fake every
// figure is exact.
//
// A failed call is a Record with an error class (see [Classes]). Nothing is
// lost and nothing is flattered: [Counts] shows sent = kept + discarded +
// failed, and a failed request enters every latency [Sample] as [Failed]
// (infinitely slow), so a quantile that reaches it is Failed too.
// Quantiles are fractions in [0,1] (0.99 for p99), computed exactly from
// the raw values by linear interpolation between closest ranks (R type 7),
// so published figures can be recomputed from the records ([WriteRecords],
// [LoadRecords]).
//
// A Batch is a closed loop; an OpenLoop starts requests on a schedule
// (Poisson, constant, or a replayed trace from [LoadSchedule]) and measures
// from it, so the waits a stalled provider causes are counted. One load can
// run as several shards (TAILGUARD_SHARD=i/n, see [Shard]) whose
// records.jsonl files records.Merge joins into one Result. Package
// records reads the per-request output of other load tools into a Result
// with the same semantics.
//
// API keys, header values and URL credentials never reach a Record, a log
// line, an error or an artifact, in any encoding (see [WithAPIKey]).
//
// The full reference (timing, failure classes, usage and decode rates, tool
// calls, retries, secrets, open loops, the client machine's load, shards,
// imports, determinism) is docs/measurement.md in the repository.
package latencytest
