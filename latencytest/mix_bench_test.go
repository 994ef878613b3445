//go:build unix

package latencytest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// The client's cost with the default prompt mix. BenchmarkLoopbackMix
// runs, against the loopback fake of BenchmarkLoopback, the raw reader and
// latencytest's client in turn (A B A B), both sending the default mix's
// prompts (70% ~800, 20% ~4,000, 10% ~24,000 bytes) behind a 38-byte
// nonce: the raw reader from one body per class built before the run,
// with the nonce written into place per request (the least any client can
// do), latencytest from a Batch with the default Mix. It reports each
// one's process CPU per request and their ratio:
//
//	go test -run '^$' -bench LoopbackMix -benchtime 3x ./latencytest/
func BenchmarkLoopbackMix(b *testing.B) {
	url := fakeURL(b)
	var raw, lt []time.Duration
	for i := 0; b.Loop(); i++ {
		raw = append(raw, runRawMix(b, url, "mraw"+strconv.Itoa(i)))
		lt = append(lt, runLatencytestMix(b, url, "mlt"+strconv.Itoa(i)))
	}
	r := latencytest.Sample(raw).Quantile(0.5)
	l := latencytest.Sample(lt).Quantile(0.5)
	b.ReportMetric(float64(r)/1e3, "raw-cpu-us/req")
	b.ReportMetric(float64(l)/1e3, "latencytest-cpu-us/req")
	b.ReportMetric(float64(l)/float64(r), "cpu-ratio")
}

// runLatencytestMix runs a Batch of the default mix at loopbackConc and
// returns the process CPU per request.
func runLatencytestMix(b *testing.B, url, label string) time.Duration {
	p := latencytest.OpenAI(url + "/v1")
	defer p.CloseIdleConnections()
	before := cpuTime()
	r, err := latencytest.Batch{Requests: loopbackRequests, Warmup: loopbackConc, Concurrency: loopbackConc,
		Load: latencytest.Load{MaxTokens: loopbackTokens, Label: label}}.Run(context.Background(), p)
	cpu := cpuTime() - before
	if err != nil {
		b.Fatal(err)
	}
	for _, rec := range r.Records {
		if !rec.OK() || rec.TokenEvents != loopbackTokens {
			b.Fatalf("latencytest: %s failed: %s %s (%d token events)", rec.ID, rec.Err, rec.Detail, rec.TokenEvents)
		}
	}
	return cpu / time.Duration(len(r.Records))
}

// mixBodies is one request body per class of the default mix, split
// around the nonce's place: head + nonce + tail is what latencytest
// sends for a request of that class.
type mixBodies struct{ head, tail [][]byte }

func newMixBodies() mixBodies {
	var m mixBodies
	for _, c := range latencytest.DefaultMix.Classes {
		text, _ := json.Marshal(latencytest.PromptText(c.PromptTokens * 4))
		m.head = append(m.head, []byte(`{"max_tokens":64,"messages":[{"role":"user","content":"`))
		m.tail = append(m.tail, append(text[1:len(text)-1:len(text)-1], `"}],"model":"fake-model","stream":true,"stream_options":{"include_usage":true}}`...))
	}
	return m
}

// body appends request i's body (trace ID id) to dst.
func (m mixBodies) body(dst []byte, run string, i int, id string) []byte {
	k := latencytest.MixClassIndex(latencytest.DefaultMix, i)
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	dst = append(dst, m.head[k]...)
	dst = fmt.Appendf(dst, "[nonce %s-%016x] ", run, h.Sum64())
	return append(dst, m.tail[k]...)
}

// runRawMix runs the raw reader (see runRaw) with the default mix's
// bodies and returns the process CPU per request.
func runRawMix(b *testing.B, url, label string) time.Duration {
	bodies := newMixBodies()
	return runRawBodies(b, url, label, func(dst []byte, i int, id string) []byte {
		return bodies.body(dst, "0123456789ab", i, id)
	}).cpuPerReq
}
