package records_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/compact"
	"github.com/tailguard/tailguard/records"
)

// k6Stream generates n k6 requests on the fly as k6 run --out json
// writes them (the metric declarations first, then per request its
// http_reqs, http_req_duration, http_req_waiting and http_req_failed
// points; about 1 KB a request), so that a million of them never sit in
// memory. Durations cycle over 997 values from 200 ms; every 100th
// request is a 429. noFailed leaves out http_req_failed (k6 before 0.31).
type k6Stream struct {
	n, i     int
	noFailed bool
	buf      []byte
	t0       time.Time
}

func newK6Stream(n int) *k6Stream {
	s := &k6Stream{n: n, t0: time.Date(2025, 12, 1, 10, 15, 0, 0, time.UTC)}
	for _, m := range []struct{ name, typ, contains string }{
		{"http_reqs", "counter", "default"}, {"http_req_duration", "trend", "time"},
		{"http_req_waiting", "trend", "time"}, {"http_req_failed", "rate", "default"},
	} {
		s.buf = fmt.Appendf(s.buf, `{"type":"Metric","data":{"name":%q,"type":%q,"contains":%q,"thresholds":[],"submetrics":null},"metric":%q}`+"\n", m.name, m.typ, m.contains, m.name)
	}
	return s
}

// k6Duration is request i's http_req_duration.
func k6Duration(i int) time.Duration {
	return 200*time.Millisecond + time.Duration(i%997)*time.Millisecond
}

func (s *k6Stream) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		if s.i == s.n {
			return 0, io.EOF
		}
		status, expected, failed := 200, "true", 0
		if s.i%100 == 99 {
			status, expected, failed = 429, "false", 1
		}
		ts := s.t0.Add(time.Duration(s.i) * time.Millisecond).Format(time.RFC3339Nano)
		tags := fmt.Sprintf(`{"expected_response":%q,"group":"","method":"POST","name":"http://127.0.0.1:8000/v1/chat/completions","proto":"HTTP/1.1","scenario":"default","status":"%d","url":"http://127.0.0.1:8000/v1/chat/completions"}`, expected, status)
		point := func(metric string, value float64) {
			s.buf = fmt.Appendf(s.buf, `{"metric":%q,"type":"Point","data":{"time":%q,"value":%g,"tags":%s}}`+"\n", metric, ts, value, tags)
		}
		d := k6Duration(s.i)
		point("http_reqs", 1)
		point("http_req_duration", float64(d)/1e6)
		point("http_req_waiting", float64(d/4)/1e6)
		if !s.noFailed {
			point("http_req_failed", float64(failed))
		}
		s.i++
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

// A k6 file streams into records as it is read: each request is added
// once its http_req_failed point (its last) is read, or, in a file
// without them, once 1,024 newer requests are open. The records are the
// same either way, in the file's order.
func TestImportK6Streams(t *testing.T) {
	const n = 3000
	with, err := records.Import(records.K6, newK6Stream(n))
	if err != nil {
		t.Fatal(err)
	}
	s := newK6Stream(n)
	s.noFailed = true
	without, err := records.Import(records.K6, s)
	if err != nil {
		t.Fatal(err)
	}
	if with.Len() != n || without.Len() != n {
		t.Fatalf("%d and %d records, want %d", with.Len(), without.Len(), n)
	}
	for i := range n {
		a, b := with.Record(i), without.Record(i)
		if a.ID != fmt.Sprintf("k6-%05d", i) || a.Total != k6Duration(i) || a.TTFB != k6Duration(i)/4 || a.ID != b.ID || a.Total != b.Total || a.Err != b.Err || !a.Start.Equal(b.Start) {
			t.Fatalf("record %d: %s %v %v %q / %s %v %q", i, a.ID, a.Total, a.TTFB, a.Err, b.ID, b.Total, b.Err)
		}
	}
	if e := with.Errors(); e["http_429"] != n/100 {
		t.Errorf("errors %v: want %d http_429", e, n/100)
	}
}

// A k6 file of more requests than compact.Above keeps compact records,
// at most 100 bytes a request, and never holds the file's requests whole
// on the way: with the garbage collector at 10% (so the heap is nearly
// all live), the live heap's peak stays under 1,300 bytes a request.
// The builder's full records before it compacts at 100,000 peak at about
// 900 (a latencytest.Record is 464 bytes, and its slice doubles to
// 131,072 of them while the old half is copied); the file's requests
// held whole as well peaked at about 1,700. Long: skipped under -short
// (BenchmarkImportK6 measures it).
func TestImportK6StreamsCompact(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 120,000 k6 requests (about 2 s)")
	}
	n := compact.Above + 20_000
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	stop := peakHeap()
	res, err := records.Import(records.K6, newK6Stream(n))
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	if !(res.Records == nil && res.Len() > 0) || res.Len() != n {
		t.Fatalf("compact %v, %d records: want compact, %d", res.Records == nil && res.Len() > 0, res.Len(), n)
	}
	per := float64(compact.RetainedBytes(res)) / float64(n)
	if per > 100 {
		t.Errorf("%.1f bytes a request: want at most 100", per)
	}
	if r := res.Record(n - 2); r.Total != k6Duration(n-2) || r.ID != fmt.Sprintf("k6-%05d", n-2) || r.Err != "" {
		t.Errorf("record %d: %s total %v err %q", n-2, r.ID, r.Total, r.Err)
	}
	if perPeak := float64(peak) / float64(n); perPeak > 1300 {
		t.Errorf("peak live heap %.0f bytes a request: the file was held whole", perPeak)
	}
	t.Logf("%d requests: %.1f bytes a request kept, peak live heap %.0f bytes a request", n, per, float64(peak)/float64(n))
	runtime.KeepAlive(res)
}

// BenchmarkImportK6 imports 200,000 k6 requests (about 200 MB as k6
// writes them) generated on the fly: bytes a request kept, the peak live
// heap, time a request.
func BenchmarkImportK6(b *testing.B) {
	const n = 200_000
	for b.Loop() {
		runtime.GC()
		stop := peakHeap()
		res, err := records.Import("", newK6Stream(n))
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

// The same request twice in one file (a file pasted onto itself, a
// request written again) is refused, naming both lines, never counted
// twice: k6 and vegeta. Two requests that differ by a nanosecond are not
// the same.
func TestDuplicateRequestInAFileRefused(t *testing.T) {
	var k6 bytes.Buffer
	if _, err := io.Copy(&k6, newK6Stream(5)); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(k6.String(), "\n")
	// Lines 1-4 declare the metrics; request 2 is lines 13-16.
	dup := strings.Join(lines[:20], "") + strings.Join(lines[12:16], "") + strings.Join(lines[20:], "")
	_, err := records.Import(records.K6, strings.NewReader(dup))
	if err == nil || !strings.Contains(err.Error(), "line 14 and line 22 hold the same request") {
		t.Fatalf("k6 request twice: %v; want a refusal naming lines 14 and 22", err)
	}
	if res, err := records.Import(records.K6, &k6); err != nil || res.Len() != 5 {
		t.Fatalf("once: %v, %v", res, err)
	}

	v := vegetaLines(10, 300*time.Millisecond)
	vl := bytes.SplitAfter(v, []byte("\n"))
	dupV := bytes.Join([][]byte{bytes.Join(vl[:8], nil), vl[3], bytes.Join(vl[8:], nil)}, nil)
	_, err = records.Import("", bytes.NewReader(dupV))
	if err == nil || !strings.Contains(err.Error(), "line 4 and line 9 hold the same request") {
		t.Fatalf("vegeta result twice: %v; want a refusal naming lines 4 and 9", err)
	}
	// The copy 1 ns later is another request.
	other := bytes.Replace(vl[3], []byte(`"latency":300000000`), []byte(`"latency":300000001`), 1)
	ok := bytes.Join([][]byte{bytes.Join(vl[:8], nil), other, bytes.Join(vl[8:], nil)}, nil)
	if res, err := records.Import("", bytes.NewReader(ok)); err != nil || res.Len() != 11 {
		t.Fatalf("a request 1 ns apart: %v, %v", res, err)
	}
}
