package latencytest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/compact"
)

// TestCompactRoundTrip: every field a compact record keeps comes back
// exact, the rare ones too (connection setup, tool calls, hosted tools
// alone, chains, notes, the prompt's characters, the server's latency, an ID that does not end in digits, negative
// clocks); a record with attempts is kept whole; gaps go to the sketch
// and the answer is dropped.
func TestCompactRoundTrip(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var g Gaps
	g.Add(3 * time.Millisecond)
	g.Add(0)
	recs := []Record{
		{ID: "c8-r2-00017", Run: 2, Concurrency: 8, PromptClass: "long", PromptChars: 24034, MaxTokens: 600, Start: start.Add(time.Second),
			DNS: 1, Connect: 2, TLS: 3, TTFB: 4, TTFT: 5, FirstAnswer: 7, LastToken: 9, Total: 11, MaxGap: 3, Gaps: g,
			TokenEvents: 3, PromptTokens: 6000, CompletionTokens: 3, CachedTokens: 1024, ReasoningTokens: 1,
			UsageReported: true, CachedReported: true, ToolCalls: 2, FirstToolCall: 6, ToolArgsDone: 8, HostedTools: 1,
			FinishReason: "stop", Model: "m", ServerLatency: 10, Status: 200, Notes: []string{"a", "", "b"}, Content: "dropped"},
		{ID: "chain03-call04", Chain: 3, Call: 4, Start: start.Add(-time.Second), TTFB: NotObserved, TTFT: NotObserved,
			FirstAnswer: NotObserved, LastToken: NotObserved, Total: 2 * time.Second, Err: "http_529", Status: 529,
			Detail: "overloaded", Injected: "stall", Warmup: true},
		{ID: "no-digits-x", HostedTools: 3, OpenLoop: true, Scheduled: time.Hour, StartDelay: 5, FromSchedule: 5 + 77 + 1, Total: 77, Start: start},
		{ID: "f-0001", Start: start, Total: 9, Attempts: []Attempt{{ID: "f-0001", Start: 0, TTFB: 1}}, Gaps: g},
		{ID: "0000000000000000000000123", Start: start},
	}
	c := newCompactStore(start)
	for i := range recs {
		c.append(&recs[i])
	}
	for i, want := range recs {
		var got Record
		c.decode(i, &got)
		want.Content = ""
		if len(want.Attempts) == 0 {
			want.Gaps = Gaps{}
		}
		if !got.Start.Equal(want.Start) {
			t.Fatalf("record %d: start %v, want %v", i, got.Start, want.Start)
		}
		got.Start = want.Start
		if !reflect.DeepEqual(got, want) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	// Gaps of the measured records (0 and 3: record 1 is warm-up, and
	// failed), each record with attempts included.
	if s := c.ITL().Sample(); len(s) != 4 || c.ITL().Failures() != 0 {
		t.Errorf("sketch %v", s)
	}
}

// TestCompactDetailsCapped: past compact.MaxInterned distinct texts a
// detail is replaced by compact.DroppedDetail, and the earlier ones stay exact.
func TestCompactDetailsCapped(t *testing.T) {
	start := time.Unix(0, 0)
	c := newCompactStore(start)
	n := compact.MaxInterned + 10
	for i := range n {
		c.append(&Record{ID: fmt.Sprintf("c1-%d", i), Start: start, Err: ClassTransport, Detail: fmt.Sprintf("dial %d refused", i)})
	}
	var r Record
	c.decode(0, &r)
	if r.Detail != "dial 0 refused" {
		t.Errorf("first detail %q", r.Detail)
	}
	c.decode(n-1, &r)
	if r.Detail != compact.DroppedDetail || c.Dropped() == 0 || r.ID != fmt.Sprintf("c1-%d", n-1) {
		t.Errorf("last detail %q, dropped %d, id %s", r.Detail, c.Dropped(), r.ID)
	}
}

// smallRunRecords is n records as a streamed run keeps them: trace IDs,
// a class, usage, 7 gaps, an answer.
func smallRunRecords(n int) []Record {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	recs := make([]Record, n)
	for i := range recs {
		var g Gaps
		for k := range 7 {
			g.Add(time.Duration(20+k) * time.Millisecond)
		}
		recs[i] = Record{ID: fmt.Sprintf("c4-%04d", i), Concurrency: 4, PromptClass: "short", MaxTokens: 100,
			Start: start.Add(time.Duration(i) * 300 * time.Millisecond), TTFB: 190 * time.Millisecond, TTFT: 200 * time.Millisecond,
			FirstAnswer: 200 * time.Millisecond, LastToken: 360 * time.Millisecond, Total: 362 * time.Millisecond, MaxGap: 26 * time.Millisecond,
			Gaps: g, TokenEvents: 8, PromptTokens: 200, CompletionTokens: 8, UsageReported: true, FinishReason: "stop",
			Model: "m", Status: 200, Content: "one short sentence of an answer, about eight tokens"}
	}
	return recs
}

// TestCompactSmallRunIsSmall: compact records of a 300-request run hold
// what they need (chunks that double from 1 KiB: measured 35,157 bytes,
// 117 a request with the slots, strings and sketch), not a 1 MiB chunk
// (1,051,989 bytes before), and a fifth of the same run's full records
// (166,200 bytes).
func TestCompactSmallRunIsSmall(t *testing.T) {
	recs := smallRunRecords(300)
	c := newCompactStore(recs[0].Start)
	c.Reserve(len(recs))
	for i := range recs {
		c.put(i, &recs[i])
	}
	compact, full := c.Bytes(), (&Result{Records: recs}).retainedBytes()
	t.Logf("300 requests: compact %d bytes, full %d bytes", compact, full)
	if compact > 300*128 || compact*4 >= full {
		t.Errorf("300 requests: compact %d bytes (more than 128 a request, or not under a quarter of full's %d)", compact, full)
	}
}

// BenchmarkCompactBytes300 reports the bytes compact and full records of
// a 300-request run hold.
func BenchmarkCompactBytes300(b *testing.B) {
	recs := smallRunRecords(300)
	var compact int
	for b.Loop() {
		c := newCompactStore(recs[0].Start)
		c.Reserve(len(recs))
		for i := range recs {
			c.put(i, &recs[i])
		}
		compact = c.Bytes()
	}
	b.ReportMetric(float64(compact), "compact-bytes")
	b.ReportMetric(float64((&Result{Records: recs}).retainedBytes()), "full-bytes")
}
