package arrivals

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func offsets(a *Seq) []time.Duration {
	var out []time.Duration
	for {
		_, at, ok := a.Take()
		if !ok {
			return out
		}
		out = append(out, at)
	}
}

func TestSeq(t *testing.T) {
	const ms = time.Millisecond
	given := []time.Duration{0, 5 * ms, 5 * ms, 40 * ms}
	at := func(i int) (time.Duration, bool) {
		if i >= len(given) {
			return 0, false
		}
		return given[i], true
	}
	for _, tc := range []struct {
		name string
		seq  Seq
		want []time.Duration
	}{
		{"constant by limit", Seq{Constant: true, Rate: 4, Limit: 3}, []time.Duration{0, 250 * ms, 500 * ms}},
		{"constant by until", Seq{Constant: true, Rate: 3, Until: time.Second}, []time.Duration{0, 333333333, 666666667}},
		{"given", Seq{Given: at}, given},
		{"given by limit", Seq{Given: at, Limit: 2}, given[:2]},
		{"given by until", Seq{Given: at, Until: 40 * ms}, given[:3]},
		{"constant saturates", Seq{Constant: true, Rate: 1e-300, Limit: 2}, []time.Duration{0, math.MaxInt64}},
	} {
		if got := offsets(&tc.seq); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if n := (&Seq{Given: at}).Count(3); n != 3 {
		t.Errorf("Count(3) of 4: %d", n)
	}
	// The same seed gives the same gaps; another seed, others.
	a := offsets(&Seq{Rate: 100, Limit: 50, Rng: Rand(1)})
	b := offsets(&Seq{Rate: 100, Limit: 50, Rng: Rand(1)})
	c := offsets(&Seq{Rate: 100, Limit: 50, Rng: Rand(2)})
	if len(a) != 50 || a[0] != 0 || !reflect.DeepEqual(a, b) || reflect.DeepEqual(a, c) {
		t.Errorf("seeded gaps: %v / %v / %v", a[:3], b[:3], c[:3])
	}
}

func TestReadLimits(t *testing.T) {
	got, err := Read(strings.NewReader("0s 5 2\n1s,3\n"), 5, 2)
	if want := []Arrival{{0, 5, 2}, {time.Second, 3, 0}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	for in, want := range map[string]string{
		"0s 6\n":    "line 1: prompt tokens 6: above the limit of 5",
		"0s 1 3\n":  "line 1: max tokens 3: above the limit of 2",
		"0s\n1\n":   `line 2: offset "1" has no unit`,
		"# only\n":  "no arrivals",
		"2s\n1s\n":  "line 2: offset 1s is before the previous line's 2s",
		"0s +0 1\n": `line 1: prompt tokens "+0": want a whole number >= 1`,
	} {
		if _, err := Read(strings.NewReader(in), 5, 2); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}
