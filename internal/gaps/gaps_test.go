package gaps

import (
	"encoding/json"
	"math"
	"slices"
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

// ms is a millisecond, for the cases' readability.
const ms = time.Millisecond
