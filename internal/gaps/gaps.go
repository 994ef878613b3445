// Package gaps stores a request's inter-token gaps compactly: the type
// of latencytest.Record's Gaps field, shared with the module's importers
// (records) and fitters (fit), which fill and read it.
package gaps

import (
	"encoding/binary"
	"encoding/json"
	"iter"
	"time"
)

// Gaps holds a request's inter-token gaps compactly (unsigned varint
// nanoseconds, about 4 bytes a gap), so that a record stays small. The
// zero value holds no gap.
type Gaps struct {
	b []byte
	n int
}

// Add appends a gap (a negative one is stored as 0). Add is for the code
// that records a request: a copied Gaps shares its bytes with the original,
// so only one of them may be added to.
func (g *Gaps) Add(d time.Duration) {
	g.b = binary.AppendUvarint(g.b, uint64(max(d, 0)))
	g.n++
}

// Len is the number of gaps.
func (g Gaps) Len() int { return g.n }

// All returns the gaps in order.
func (g Gaps) All() []time.Duration { return g.AppendTo(make([]time.Duration, 0, g.n)) }

// AppendTo appends the gaps, in order, to out and returns the result.
func (g Gaps) AppendTo(out []time.Duration) []time.Duration {
	b := g.b
	for len(b) > 0 {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			break
		}
		out = append(out, time.Duration(v))
		b = b[k:]
	}
	return out
}

// Values yields the gaps in order without allocating.
func (g Gaps) Values() iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		b := g.b
		for len(b) > 0 {
			v, k := binary.Uvarint(b)
			if k <= 0 || !yield(time.Duration(v)) {
				return
			}
			b = b[k:]
		}
	}
}

// Retained is the bytes the gaps hold on to (their buffer's capacity).
func (g Gaps) Retained() int { return cap(g.b) }

// MarshalJSON writes the gaps as an array of nanoseconds.
func (g Gaps) MarshalJSON() ([]byte, error) {
	if g.n == 0 {
		return []byte("[]"), nil
	}
	return json.Marshal(g.All())
}

// UnmarshalJSON reads an array of nanoseconds.
func (g *Gaps) UnmarshalJSON(b []byte) error {
	var ds []time.Duration
	if err := json.Unmarshal(b, &ds); err != nil {
		return err
	}
	*g = Gaps{}
	for _, d := range ds {
		g.Add(d)
	}
	return nil
}

// IsZero lets encoding/json's omitempty drop an empty list.
func (g Gaps) IsZero() bool { return g.n == 0 }
