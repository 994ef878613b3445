package sample

import (
	"encoding/binary"
	"testing"
	"time"
)

// FuzzQuantile: for any sample, Quantile is monotone in q and lies within
// [Min, Max], and the sample is never reordered.
func FuzzQuantile(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0}, 0.5, 0.99)
	f.Add([]byte{9, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 0}, 0.0, 1.0)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 128}, 0.1, 0.2)
	f.Fuzz(func(t *testing.T, raw []byte, q1, q2 float64) {
		var s Sample
		for len(raw) >= 8 {
			v := int64(binary.LittleEndian.Uint64(raw))
			raw = raw[8:]
			if v < 0 {
				v = -v / 2 // latencies are >= 0; keep the magnitude varied
			}
			if v < 0 {
				v = 0
			}
			s = append(s, time.Duration(v))
		}
		if len(s) == 0 || !(q1 >= 0 && q1 <= 1) || !(q2 >= 0 && q2 <= 1) {
			return
		}
		if q1 > q2 {
			q1, q2 = q2, q1
		}
		orig := append(Sample(nil), s...)
		a, b := s.Quantile(q1), s.Quantile(q2)
		if a > b {
			t.Fatalf("Quantile(%v) = %v > Quantile(%v) = %v on %v", q1, a, q2, b, s)
		}
		if lo, hi := s.Min(), s.Max(); a < lo || b > hi {
			t.Fatalf("quantiles %v, %v outside [%v, %v]", a, b, lo, hi)
		}
		for i := range s {
			if s[i] != orig[i] {
				t.Fatalf("the sample was reordered")
			}
		}
	})
}
