package latencytest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestGapsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want []time.Duration
	}{
		{"none", nil, []time.Duration{}},
		{"zero", []time.Duration{0}, []time.Duration{0}},
		{
			name: "varint boundaries",
			in:   []time.Duration{1, 127, 128, 16383, 16384, 1<<21 - 1, 1 << 21},
			want: []time.Duration{1, 127, 128, 16383, 16384, 1<<21 - 1, 1 << 21},
		},
		{
			name: "typical decode gaps",
			in:   []time.Duration{20 * ms, 19*ms + 999_999, 21 * ms, 0, 3 * time.Second},
			want: []time.Duration{20 * ms, 19*ms + 999_999, 21 * ms, 0, 3 * time.Second},
		},
		{
			name: "huge",
			in:   []time.Duration{1 << 62, math.MaxInt64 - 1, math.MaxInt64},
			want: []time.Duration{1 << 62, math.MaxInt64 - 1, math.MaxInt64},
		},
		{
			// Add clamps a negative gap to 0 (max(d, 0)); it still counts
			// as a gap. The runner's gaps come from the monotonic clock and
			// are never negative, so this only guards against misuse.
			name: "negative stored as 0",
			in:   []time.Duration{5, -1, math.MinInt64, 7},
			want: []time.Duration{5, 0, 0, 7},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g Gaps
			for _, d := range tc.in {
				g.Add(d)
			}
			if g.Len() != len(tc.want) {
				t.Errorf("Len() = %d, want %d", g.Len(), len(tc.want))
			}
			got := g.All()
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf("All() = %#v, want %v", got, tc.want)
			}
			if g.IsZero() != (len(tc.want) == 0) {
				t.Errorf("IsZero() = %v with %d gaps", g.IsZero(), len(tc.want))
			}
			if len(got) > 0 {
				got[0] = -42 // All is a copy
				if g.All()[0] == -42 {
					t.Error("All() aliases the stored gaps")
				}
			}
		})
	}
}

// TestGapsCompact: ~20ms gaps take 4 bytes each (uvarint of 2e7 < 2^28),
// as the doc says.
func TestGapsCompact(t *testing.T) {
	var g Gaps
	for i := range 63 {
		g.Add(20*ms + time.Duration(i)*17*time.Microsecond)
	}
	if len(g.b) != 63*4 {
		t.Errorf("63 gaps of ~20ms take %d bytes, want %d", len(g.b), 63*4)
	}
}

func TestGapsJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []time.Duration
		json string
	}{
		{"empty is [] not null", nil, `[]`},
		{"zero", []time.Duration{0}, `[0]`},
		{"nanoseconds", []time.Duration{1, 20 * ms, 3 * time.Second}, `[1,20000000,3000000000]`},
		{"huge", []time.Duration{math.MaxInt64}, `[9223372036854775807]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g Gaps
			for _, d := range tc.in {
				g.Add(d)
			}
			b, err := json.Marshal(g)
			if err != nil || string(b) != tc.json {
				t.Fatalf("Marshal = %s, %v; want %s", b, err, tc.json)
			}
			back := Gaps{}
			back.Add(99) // Unmarshal replaces, not appends
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.Len() != g.Len() || !slices.Equal(back.All(), g.All()) {
				t.Errorf("round trip: %v (Len %d), want %v (Len %d)", back.All(), back.Len(), g.All(), g.Len())
			}
		})
	}

	t.Run("negative in JSON is stored as 0", func(t *testing.T) {
		var g Gaps
		if err := json.Unmarshal([]byte(`[3,-5]`), &g); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.All(), []time.Duration{3, 0}) {
			t.Errorf("All() = %v, want [3 0]", g.All())
		}
	})
	t.Run("not an array of integers", func(t *testing.T) {
		for _, in := range []string{`[1,"x"]`, `{"a":1}`, `[1.5]`, `"20ms"`} {
			var g Gaps
			if err := json.Unmarshal([]byte(in), &g); err == nil {
				t.Errorf("Unmarshal(%s) = nil error, gaps %v", in, g.All())
			}
		}
	})
}

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
