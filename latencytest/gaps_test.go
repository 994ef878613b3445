package latencytest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRecordGapsJSON(t *testing.T) {
	t.Run("omitted when empty", func(t *testing.T) {
		b, err := json.Marshal(Record{ID: "c1-0001"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "gaps_ns") {
			t.Errorf("empty Gaps written: %s", b)
		}
		var back Record
		if err := json.Unmarshal(b, &back); err != nil || back.Gaps.Len() != 0 {
			t.Errorf("read back %v gaps, err %v", back.Gaps.All(), err)
		}
	})
	t.Run("written and read back", func(t *testing.T) {
		var rec Record
		rec.ID = "c8-0017"
		for _, d := range []time.Duration{0, 20 * ms, 1 << 40} {
			rec.Gaps.Add(d)
		}
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"gaps_ns":[0,20000000,1099511627776]`; !strings.Contains(string(b), want) {
			t.Errorf("record JSON %s\nlacks %s", b, want)
		}
		var back Record
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Gaps.Len() != 3 || !slices.Equal(back.Gaps.All(), rec.Gaps.All()) {
			t.Errorf("read back %v (Len %d), want %v", back.Gaps.All(), back.Gaps.Len(), rec.Gaps.All())
		}
	})
	t.Run("null", func(t *testing.T) {
		var back Record
		if err := json.Unmarshal([]byte(`{"id":"x","gaps_ns":null}`), &back); err != nil || back.Gaps.Len() != 0 {
			t.Errorf("gaps_ns null: %v gaps, err %v", back.Gaps.All(), err)
		}
	})
}

// benchContentTokens is 64 answer tokens of 300 characters in all (44 of
// 5 and 20 of 4).
func benchContentTokens() []string {
	out := make([]string, 64)
	for i := range out {
		if i < 44 {
			out[i] = "word "
		} else {
			out[i] = "abc "
		}
	}
	return out
}

// benchRecord builds a successful record the way LLMProvider.do does: the
// content in a strings.Builder, one gap per token after the first, and
// strings decoded from the stream (model, finish reason) as their own
// allocations.
func benchRecord(i int, tokens []string, gaps []time.Duration) Record {
	rec := Record{
		ID:          fmt.Sprintf("c8-%04d", i),
		Concurrency: 8,
		PromptClass: "short",
		MaxTokens:   64,
		Start:       time.Unix(1_700_000_000, int64(i)),
		TTFB:        180 * ms,
		Status:      200,
	}
	var content strings.Builder
	now := 200 * ms
	for k, tok := range tokens {
		if k > 0 {
			now += gaps[k-1]
		}
		content.WriteString(tok)
		if k == 0 {
			rec.TTFT, rec.FirstAnswer = now, now
		} else {
			gap := now - rec.LastToken
			rec.Gaps.Add(gap)
			rec.MaxGap = max(rec.MaxGap, gap)
		}
		rec.LastToken = now
		rec.TokenEvents++
	}
	rec.Total = now + ms
	rec.Content = strings.Clone(content.String()) // as openai.go does
	rec.Model = strings.Clone("gpt-4o-mini-2024-07-18")
	rec.FinishReason = strings.Clone("stop")
	rec.PromptTokens, rec.CompletionTokens = 120, 64
	return rec
}

// BenchmarkRecordMemory measures the heap a finished Record keeps for a
// 64-token request (63 gaps of ~20ms, 300 characters of content): the live
// heap after GC, with b.N records alive, divided by b.N. The goal is under
// 1 KiB beyond the content. B/op (allocated, garbage included) is reported
// beside it.
func BenchmarkRecordMemory(b *testing.B) {
	tokens := benchContentTokens()
	contentLen := len(strings.Join(tokens, ""))
	if contentLen != 300 {
		b.Fatalf("content is %d characters, want 300", contentLen)
	}
	r := rand.New(rand.NewPCG(8, 9))
	gaps := make([]time.Duration, 63)
	for i := range gaps {
		gaps[i] = 19*ms + time.Duration(r.Int64N(int64(2*ms))) // 19..21ms
	}
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	recs := make([]Record, b.N)
	b.ResetTimer()
	for i := range recs {
		recs[i] = benchRecord(i, tokens, gaps)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if recs[b.N-1].Gaps.Len() != 63 || len(recs[b.N-1].Content) != 300 {
		b.Fatalf("record has %d gaps, %d bytes of content", recs[b.N-1].Gaps.Len(), len(recs[b.N-1].Content))
	}
	runtime.KeepAlive(recs)
	perRecord := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(b.N)
	b.ReportMetric(perRecord, "B/record")
	b.ReportMetric(perRecord-float64(contentLen), "B/record-beyond-content")
}
