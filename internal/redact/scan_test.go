package redact

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveFind is find's window scan without its filters: every 8-byte
// window looked up, left to right, into spans as find adds them.
func naiveFind(s *Set, text string) []span {
	var out []span
	for i := 0; i+8 <= len(text); i++ {
		if s.lookup(load64(text, i)) != 0 {
			out = append(out, span{i, i + 8})
		}
	}
	return out
}

// The scan's filters (4-byte runs at every fifth byte, the shift table)
// miss no window: every 8-byte run of every form of a secret, placed at
// every offset from 0 to 9 in text of random filler, is found where a
// lookup of every window finds it, and the cut test at the end finds
// every start of 4 bytes or more.
func TestScanFindsEveryWindowAtEveryOffset(t *testing.T) {
	set := New(Secrets(testKey, nil, nil))
	rng := rand.New(rand.NewPCG(1, 2))
	filler := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = " .,:{}\"zZ"[rng.IntN(9)]
		}
		return string(b)
	}
	checked := 0
	for _, p := range set.pats {
		for a := 0; a+8 <= len(p.s); a++ {
			for b := a + 8; b <= len(p.s); b += 5 {
				for pad := range 10 {
					text := filler(pad) + p.s[a:b] + filler(9)
					got := set.find(text, nil)
					windows := naiveFind(set, text)
					if len(windows) == 0 {
						t.Fatalf("%q: the reference scan finds nothing", text)
					}
					for _, w := range windows {
						if !slices.ContainsFunc(got, func(g span) bool { return g.a <= w.a && w.b <= g.b }) {
							t.Fatalf("%q (a %d-byte run of %q at offset %d): window %v not found, got %v", text, b-a, p.s, pad, w, got)
						}
					}
					checked++
				}
			}
		}
		if !p.cut {
			continue
		}
		for n := minCut; n < len(p.s); n++ {
			for pad := range 4 {
				text := filler(pad+3) + p.s[:n]
				if got := set.find(text, nil); !slices.ContainsFunc(got, func(g span) bool { return g.a <= pad+3 && g.b == len(text) }) {
					t.Fatalf("%q: the cut start %q of %q not found, got %v", text, p.s[:n], p.s, got)
				}
				checked++
			}
		}
	}
	t.Logf("%d texts checked", checked)
}

// The 4-byte-run filter holds a run in any case: a window lookup that
// folds case (hex digits in upper or mixed case) is never kept from the
// windows it would match.
func TestGramFilterFoldsCase(t *testing.T) {
	set := New(Secrets(testKey, nil, nil))
	swap := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			if 'a' <= c|0x20 && c|0x20 <= 'z' {
				b[i] = c ^ 0x20
			}
		}
		return string(b)
	}
	for _, p := range set.pats {
		for _, s := range []string{p.s, swap(p.s)} {
			for i := 0; i+4 <= len(s); i++ {
				if !set.gram(s, i) {
					t.Fatalf("the run %q of %q (a form of the key, in %q) does not pass", s[i:i+4], s, p.s)
				}
			}
		}
	}
}
