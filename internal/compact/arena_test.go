package compact_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tailguard/tailguard/internal/compact"
)

// TestArenaSlots: what Put stores Get returns, in any slot order; chunks
// start at 1 KiB and double (a small run holds little, a large one adds
// 1 MiB chunks); Truncate drops slots; a Clone does not change with
// later Puts.
func TestArenaSlots(t *testing.T) {
	a := compact.NewArena()
	if a.Bytes() != 16+24 { // "" interned
		t.Fatalf("empty arena: %d bytes", a.Bytes())
	}
	first := a.Reserve(3)
	a.Put(first+2, []byte("two"))
	a.Put(first, []byte("zero"))
	if a.Len() != 3 || !bytes.HasPrefix(a.Get(2), []byte("two")) || !bytes.HasPrefix(a.Get(0), []byte("zero")) {
		t.Fatalf("len %d, slot 2 %q, slot 0 %q", a.Len(), a.Get(2), a.Get(0))
	}
	if b := a.Bytes(); b != 8*3+1024+40 {
		t.Errorf("three slots in a first chunk: %d bytes, want %d", b, 8*3+1024+40)
	}
	c := a.Clone()
	a.Put(first+1, []byte("one"))
	a.Truncate(2)
	if a.Len() != 2 || c.Len() != 3 || !bytes.HasPrefix(a.Get(1), []byte("one")) {
		t.Fatalf("after truncate: len %d (clone %d), slot 1 %q", a.Len(), c.Len(), a.Get(1))
	}
	// 3 MiB of 100-byte records: chunks of 1, 2, 4 ... KiB, then 1 MiB.
	rec := bytes.Repeat([]byte{'x'}, 100)
	n := 3 << 20 / 100
	base := a.Reserve(n)
	for i := range n {
		rec[0] = byte(i)
		a.Put(base+i, rec)
	}
	for _, i := range []int{0, 1, n / 2, n - 1} {
		if g := a.Get(base + i); g[0] != byte(i) || len(g) < 100 {
			t.Fatalf("slot %d: %d bytes, first %d", base+i, len(g), g[0])
		}
	}
	if b := a.Bytes(); b < 3<<20 || b > 5<<20 {
		t.Errorf("3 MiB of records hold %d bytes: want 3-5 MiB (1 MiB chunks at most)", b)
	}
}

// TestArenaIntern: a string interned twice has one index; capped strings
// past MaxInterned become DroppedDetail and are counted, uncapped ones
// are still interned.
func TestArenaIntern(t *testing.T) {
	a := compact.NewArena()
	if a.Intern("", true) != 0 || a.Intern("x", false) != a.Intern("x", true) || a.Str(a.Intern("x", true)) != "x" {
		t.Fatal("interning is not stable")
	}
	for i := range compact.MaxInterned {
		a.Intern(fmt.Sprint("d", i), true)
	}
	if a.Dropped() == 0 || a.Str(a.Intern("new", true)) != compact.DroppedDetail {
		t.Fatalf("dropped %d: past MaxInterned a capped string is not replaced", a.Dropped())
	}
	if a.Str(a.Intern("kept", false)) != "kept" || a.Str(a.Intern("d7", true)) != "d7" {
		t.Error("an uncapped string, or one interned before the cap, was lost")
	}
}

// TestSplitID: IDs ending in a number split and join back exactly
// (leading zeros kept); others do not split.
func TestSplitID(t *testing.T) {
	for _, c := range []struct {
		id     string
		prefix string
		width  int
		num    uint64
		split  bool
	}{
		{"c8-r1-0017", "c8-r1-", 4, 17, true},
		{"vegeta-00000", "vegeta-", 5, 0, true},
		{"42", "", 2, 42, true},
		{"no-digits-x", "", 0, 0, false},
		{"", "", 0, 0, false},
		{"0000000000000000000000123", "", 0, 0, false}, // more than 18 digits
	} {
		p, w, n, ok := compact.SplitID(c.id)
		if p != c.prefix || w != c.width || n != c.num || ok != c.split {
			t.Errorf("SplitID(%q) = %q %d %d %v, want %q %d %d %v", c.id, p, w, n, ok, c.prefix, c.width, c.num, c.split)
		}
		if ok && compact.JoinID(p, w, n) != c.id {
			t.Errorf("JoinID(SplitID(%q)) = %q", c.id, compact.JoinID(p, w, n))
		}
	}
}
