package records_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/compact"
	"github.com/tailguard/tailguard/records"
)

// vegetaStream generates n vegeta results on the fly, as vegeta encode
// writes them (about 244 bytes a line with its URL and method), so that a
// million of them never sit in memory. Latencies cycle over 997 values
// from 200 ms; every 100th result is a 429.
type vegetaStream struct {
	n, i int
	buf  []byte
	t0   time.Time
}

func newVegetaStream(n int) *vegetaStream {
	return &vegetaStream{n: n, t0: time.Date(2025, 12, 1, 10, 15, 0, 0, time.UTC)}
}

func (v *vegetaStream) Read(p []byte) (int, error) {
	for len(v.buf) == 0 {
		if v.i == v.n {
			return 0, io.EOF
		}
		code, errText := 200, ""
		if v.i%100 == 99 {
			code, errText = 429, "429 Too Many Requests"
		}
		ts := v.t0.Add(time.Duration(v.i) * time.Millisecond).Format(time.RFC3339Nano)
		v.buf = fmt.Appendf(v.buf[:0], `{"attack":"chat","seq":%d,"code":%d,"timestamp":%q,"latency":%d,"bytes_out":212,"bytes_in":9120,"error":%q,"body":null,"method":"POST","url":"http://127.0.0.1:8000/v1/chat/completions","headers":null}`+"\n",
			v.i, code, ts, 200*time.Millisecond+time.Duration(v.i%997)*time.Millisecond, errText)
		v.i++
	}
	n := copy(p, v.buf)
	v.buf = v.buf[n:]
	return n, nil
}

// peakHeap samples the live heap every millisecond until stop is called,
// and returns the largest sample.
func peakHeap() (stop func() uint64) {
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			peak = max(peak, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// TestImportStreamsCompact: a vegeta file of more requests than
// compact.Above keeps compact records, at most 100 bytes a
// request, every figure the same as the lines say.
func TestImportStreamsCompact(t *testing.T) {
	n := compact.Above + 20_000
	res, err := records.Import(records.Vegeta, newVegetaStream(n))
	if err != nil {
		t.Fatal(err)
	}
	if !(res.Records == nil && res.Len() > 0) || res.Len() != n {
		t.Fatalf("compact %v, %d records: want compact, %d", (res.Records == nil && res.Len() > 0), res.Len(), n)
	}
	per := float64(compact.RetainedBytes(res)) / float64(n)
	if per > 100 {
		t.Errorf("%.1f bytes a request: want at most 100", per)
	}
	r := res.Record(n - 2) // seq n-2 (n-1 is a 429)
	want := 200*time.Millisecond + time.Duration((n-2)%997)*time.Millisecond
	if r.Total != want || r.ID != fmt.Sprintf("vegeta-%05d", n-2) || r.Err != "" {
		t.Errorf("last record %s total %v err %q: want total %v", r.ID, r.Total, r.Err, want)
	}
	if e := res.Errors(); e["http_429"] != n/100 {
		t.Errorf("errors %v: want %d http_429", e, n/100)
	}
	t.Logf("%d requests: %.1f bytes a request", n, per)
}

// BenchmarkImportVegeta1M imports a million vegeta results (244 MB as
// vegeta writes them; the issue measured 3.0 GB of memory for them)
// generated on the fly: bytes a request kept, the peak live heap, time a
// request.
func BenchmarkImportVegeta1M(b *testing.B) {
	const n = 1_000_000
	for b.Loop() {
		runtime.GC()
		stop := peakHeap()
		res, err := records.Import("", newVegetaStream(n))
		peak := stop()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(compact.RetainedBytes(res))/n, "bytes/request")
		b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
		runtime.KeepAlive(res)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/request")
}

// TestDetectBigDocument: a vLLM document whose per-request arrays come
// after more than detection peeks (long generated texts) is still
// detected, from its whole first document.
func TestDetectBigDocument(t *testing.T) {
	text := strings.Repeat("token ", 30_000)
	doc := map[string]any{"generated_texts": []string{text}, "ttfts": []float64{0.1}, "itls": [][]float64{{0.01}}, "errors": []string{""}, "output_lens": []int{2}}
	b, _ := json.Marshal(doc)
	if i := bytes.Index(b, []byte(`"ttfts"`)); i < 1<<16 {
		t.Fatalf("ttfts at byte %d: the test needs it past 64 KiB", i)
	}
	res, err := records.Import("", bytes.NewReader(b))
	if err != nil || res.Len() != 1 || res.Disclosure.Format != records.VLLM {
		t.Fatalf("%v, %v", res, err)
	}
}
