package compact

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/tailguard/tailguard/internal/gaps"
	"github.com/tailguard/tailguard/internal/httpattempt"
)

// filled is a Rec with every field set to a value other than its zero,
// each distinct (field k's numbers are k+1, its strings "f<k>"): a field
// the encoding forgets decodes as zero and the comparison names it.
func filled(t *testing.T, start time.Time) Rec {
	t.Helper()
	var r Rec
	v := reflect.ValueOf(&r).Elem()
	for k := range v.NumField() {
		f, name := v.Field(k), v.Type().Field(k).Name
		switch f.Interface().(type) {
		case string:
			f.SetString(fmt.Sprintf("f%d", k))
		case bool:
			f.SetBool(true)
		case int:
			f.SetInt(int64(k + 1))
		case time.Duration:
			f.SetInt(int64(k+1) * int64(time.Millisecond))
		case time.Time:
			f.Set(reflect.ValueOf(start.Add(time.Duration(k) * time.Second)))
		case []string:
			f.Set(reflect.ValueOf([]string{"a", "", "b"}))
		case gaps.Gaps, []httpattempt.Attempt:
			// Gaps go to the sketch; Attempts keep a record whole (below).
		default:
			t.Fatalf("field %s of type %s: teach filled and the encoding its type", name, f.Type())
		}
	}
	return r
}

// TestStoreRoundTrip: every field of a record (each set, each distinct)
// comes back from Put and Decode, Gaps and Content excepted; a record
// with attempts comes back whole without its content; the measured
// record's gaps and the failure reach the sketch, a warm-up's do not.
func TestStoreRoundTrip(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("x", 3600))
	rec := filled(t, start)
	rec.ID = "c8-r2-00017"
	rec.Warmup = false
	rec.Gaps.Add(3 * time.Millisecond)
	rec.Gaps.Add(4 * time.Millisecond)
	warm := rec
	warm.Warmup = true
	whole := rec
	whole.Attempts = []httpattempt.Attempt{{ID: "a", TTFB: 1}}

	s := NewStore(start)
	first := s.Reserve(3)
	s.Put(first, &rec, true)
	s.Put(first+1, &warm, true)
	s.Put(first+2, &whole, false)

	var got Rec
	s.Decode(first, &got)
	want := rec
	want.Gaps, want.Content = gaps.Gaps{}, ""
	if !got.Start.Equal(want.Start) || got.Start.Location() != start.Location() {
		t.Fatalf("start %v, want %v in %v", got.Start, want.Start, start.Location())
	}
	got.Start = want.Start
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for k := range gv.NumField() {
		if !reflect.DeepEqual(gv.Field(k).Interface(), wv.Field(k).Interface()) {
			t.Errorf("%s: got %v, want %v", gv.Type().Field(k).Name, gv.Field(k), wv.Field(k))
		}
	}
	s.Decode(first+1, &got)
	if !got.Warmup || got.PromptChars != rec.PromptChars {
		t.Errorf("warm-up decoded as %+v", got)
	}
	s.Decode(first+2, &got)
	if got.Content != "" || len(got.Attempts) != 1 || got.Gaps.Len() != 2 || got.PromptChars != rec.PromptChars {
		t.Errorf("whole record decoded as %+v", got)
	}
	// rec's 2 gaps and its failure, and whole's 2 gaps; not warm's.
	if n, f := s.ITL().Len(), s.ITL().Failures(); n != 5 || f != 1 {
		t.Errorf("sketch holds %d values, %d failures; want 5, 1", n, f)
	}
	if s.Len() != 3 {
		t.Errorf("Len %d, want 3", s.Len())
	}
}

// TestStoreCloneTruncate: a clone does not see later puts; Truncate drops
// the slots never sent; a record without a send time and with a zero
// prompt count stays so.
func TestStoreCloneTruncate(t *testing.T) {
	start := time.Unix(1000, 0)
	s := NewStore(start)
	s.Reserve(4)
	s.Put(0, &Rec{ID: "c1-0000", Start: start, PromptChars: 812}, false)
	c := s.Clone()
	s.Put(1, &Rec{ID: "imported"}, false)
	s.Truncate(2)
	if s.Len() != 2 || c.Len() != 4 {
		t.Fatalf("Len %d and clone's %d, want 2 and 4", s.Len(), c.Len())
	}
	var r Rec
	s.Decode(1, &r)
	if r.ID != "imported" || !r.Start.IsZero() || r.PromptChars != 0 {
		t.Errorf("record without a start decoded as %+v", r)
	}
	c.Decode(0, &r)
	if r.PromptChars != 812 || !r.Start.Equal(start) {
		t.Errorf("clone's record %+v", r)
	}
	if s.Bytes() <= 0 || s.Dropped() != 0 {
		t.Errorf("Bytes %d, Dropped %d", s.Bytes(), s.Dropped())
	}
}
