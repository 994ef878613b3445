package latencytest_test

import (
	"context"
	"flag"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// The open loop's own cost at scale, in virtual time against the
// in-memory fake (fixed 1 ms TTFT and ITL, 4 tokens, 1,000 requests/s, so
// a handful are in flight): wall time per run, allocations per request,
// and the heap a kept record retains (after a GC, with the Result alive
// and the fake gone, divided by the records).

// EnvBenchMillion, when set to a non-empty value, lets
// BenchmarkOpenLoopMillion run under any -bench pattern; without it the
// million-request run needs a -bench pattern that names it ("Million").
const envBenchMillion = "TAILGUARD_BENCH_MILLION"

func BenchmarkOpenLoop100k(b *testing.B) { benchOpenLoop(b, 100_000) }

// BenchmarkOpenLoopMillion takes minutes: it runs only when asked by name
// (go test -run '^$' -bench OpenLoopMillion -benchtime 1x ./latencytest/)
// or with TAILGUARD_BENCH_MILLION=1.
func BenchmarkOpenLoopMillion(b *testing.B) {
	if os.Getenv(envBenchMillion) == "" && !benchNamed("Million") {
		b.Skip("a million requests take minutes: name it in -bench (OpenLoopMillion) or set " + envBenchMillion + "=1")
	}
	benchOpenLoop(b, 1_000_000)
}

// benchNamed reports whether the -bench pattern names word explicitly.
func benchNamed(word string) bool {
	f := flag.Lookup("test.bench")
	return f != nil && strings.Contains(f.Value.String(), word)
}

func benchOpenLoop(b *testing.B, n int) {
	var (
		retained, allocs, records float64
		before, after             runtime.MemStats
	)
	for b.Loop() {
		var r *latencytest.Result
		runtime.GC()
		runtime.ReadMemStats(&before)
		ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{
			Name: "OpenLoop",
			F: func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					prof := fixed(time.Millisecond, time.Millisecond, 4)
					prof.PrefixCache.Disabled = true
					f := fakeprovider.New(prof)
					defer f.Close()
					p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
					var err error
					r, err = latencytest.OpenLoop{Rate: 1000, Arrivals: "constant", Requests: n, Load: latencytest.Load{MaxTokens: 4, Prompt: "Say four words."}}.Run(context.Background(), p)
					if err != nil {
						t.Fatal(err)
					}
				})
			},
		}})
		if !ok || r == nil {
			b.Fatal("the open loop failed")
		}
		if c := r.Counts(); c.Sent != n || c.Kept != n {
			b.Fatalf("counts %+v", c)
		}
		runtime.ReadMemStats(&after)
		allocs = float64(after.Mallocs-before.Mallocs) / float64(n)
		runtime.GC()
		runtime.ReadMemStats(&after)
		records = float64(r.Len())
		retained = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / records
		runtime.KeepAlive(r)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
	b.ReportMetric(allocs, "allocs/request")
	b.ReportMetric(retained, "retained-B/record")
	b.ReportMetric(float64(unsafe.Sizeof(latencytest.Record{})), "B/Record-struct")
	b.ReportMetric(records, "records/run")
}
