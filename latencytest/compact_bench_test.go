//go:build unix

package latencytest_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// Compact records at scale, in virtual time against the in-memory fake
// (1 ms TTFT, 1 ms ITL, 8 tokens, so 7 gaps a request): wall time, CPU
// per request, the bytes a kept request retains (after a GC, the Result
// alive and the fake gone), and the process's peak RSS (VmHWM: run one
// benchmark per process for a clean figure). 100k runs under any -bench;
// 1M and 10M only when named ("Compact1M", "Compact10M") or with
// TAILGUARD_BENCH_MILLION=1 (1M) / TAILGUARD_BENCH_10M=1 (10M). A 10M
// run takes longer than go test's default timeout: add -timeout 0.

func BenchmarkCompactBatch100k(b *testing.B)    { benchCompact(b, "batch", 100_000) }
func BenchmarkCompactOpenLoop100k(b *testing.B) { benchCompact(b, "openloop", 100_000) }

func BenchmarkCompactBatch1M(b *testing.B) {
	gate(b, "Compact", "1M", envBenchMillion)
	benchCompact(b, "batch", 1_000_000)
}

func BenchmarkCompactOpenLoop1M(b *testing.B) {
	gate(b, "Compact", "1M", envBenchMillion)
	benchCompact(b, "openloop", 1_000_000)
}

func BenchmarkCompactBatch10M(b *testing.B) {
	gate(b, "Compact", "10M", "TAILGUARD_BENCH_10M")
	benchCompact(b, "batch", 10_000_000)
}

func BenchmarkCompactOpenLoop10M(b *testing.B) {
	gate(b, "Compact", "10M", "TAILGUARD_BENCH_10M")
	benchCompact(b, "openloop", 10_000_000)
}

// BenchmarkFullBatch100k is BenchmarkCompactBatch100k with full records,
// for the comparison.
func BenchmarkFullBatch100k(b *testing.B) { benchMode(b, "batch", 100_000, latencytest.RecordsFull) }

func gate(b *testing.B, word, size, env string) {
	if os.Getenv(env) == "" && !(benchNamed(word) && benchNamed(size)) {
		b.Skip("takes minutes: name it in -bench (" + word + ".*" + size + ") or set " + env + "=1")
	}
}

func benchCompact(b *testing.B, kind string, n int) {
	benchMode(b, kind, n, latencytest.RecordsCompact)
}

func benchMode(b *testing.B, kind string, n int, mode latencytest.RecordMode) {
	var retained, cpu, held float64
	for b.Loop() {
		var r *latencytest.Result
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cpu0 := cpuTime()
		ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{
			Name: "Compact",
			F: func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					prof := fixed(time.Millisecond, time.Millisecond, 8)
					prof.PrefixCache.Disabled = true
					prof.SlotsPerReplica = 256
					f := fakeprovider.New(prof)
					defer f.Close()
					p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
					var err error
					if kind == "batch" {
						r, err = latencytest.Batch{Requests: n, NoWarmup: true, Concurrency: 64, Load: latencytest.Load{MaxTokens: 8, Prompt: "Say eight words."}, RecordMode: mode}.Run(context.Background(), p)
					} else {
						r, err = latencytest.OpenLoop{Rate: 10_000, Arrivals: "constant", Requests: n, Load: latencytest.Load{MaxTokens: 8, Prompt: "Say eight words."}, RecordMode: mode}.Run(context.Background(), p)
					}
					if err != nil {
						t.Fatal(err)
					}
				})
			},
		}})
		if !ok || r == nil {
			b.Fatal("the run failed")
		}
		cpu = (cpuTime() - cpu0).Seconds() / float64(n)
		if c := r.Counts(); c.Sent != n || c.Kept != n {
			b.Fatalf("counts %+v", c)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		retained = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
		held = float64(latencytest.RetainedBytes(r)) / float64(n)
		runtime.KeepAlive(r)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
	b.ReportMetric(cpu*1e3, "cpu-ms/request")
	b.ReportMetric(retained, "retained-B/request")
	b.ReportMetric(held, "store-B/request")
	b.ReportMetric(peakRSS()/(1<<20), "peak-RSS-MiB")
}

// peakRSS is the process's peak resident set (VmHWM), in bytes; 0 where
// /proc is missing.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}
