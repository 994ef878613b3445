package shard

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Shard
		err  string // a part of the error; "" for none
		why  string
	}{
		{"0/1", Shard{Index: 0, Count: 1}, "", "one shard: the whole run"},
		{"1/4", Shard{Index: 1, Count: 4}, "", "the second of four, counted from 0"},
		{"3/4", Shard{Index: 3, Count: 4}, "", "the last of four"},
		{" 2/3 ", Shard{Index: 2, Count: 3}, "", "white space around is trimmed (a YAML or shell artefact)"},
		{"4/4", Shard{}, "the last of 4 is 3/4", "1-based by mistake: the error says shards count from 0"},
		{"-1/4", Shard{}, "index -1 < 0", "negative index"},
		{"0/0", Shard{}, "count 0 < 1", "no shards"},
		{"1/-2", Shard{}, "count -2 < 1", "negative count"},
		{"1", Shard{}, "want i/n", "no slash"},
		{"a/b", Shard{}, "want i/n", "not numbers"},
		{"1/2/3", Shard{}, "want i/n", "two slashes"},
		{"+1/2", Shard{}, "want i/n", "a sign is not a shard"},
		{"", Shard{}, "want i/n", "empty"},
	} {
		got, err := Parse(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: Parse(%q) = %v, %v; want %v", c.why, c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: Parse(%q) error %v; want one containing %q", c.why, c.in, err, c.err)
		}
	}
	if got := (Shard{Index: 1, Count: 4}).String(); got != "1/4" {
		t.Errorf("String %q", got)
	}
}

// Owns and Share split a whole run's requests among the shards: every
// request is one shard's, and the shares add up to the whole run; Slots
// splits the concurrency, or says why it cannot.
func TestOwnsShareSlots(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7} {
		for whole := range 20 {
			owners, shares := make([]int, whole), 0
			for i := range n {
				sh := Shard{Index: i, Count: n}
				for k := range whole {
					if sh.Owns(k) {
						owners[k]++
					}
				}
				// request k is shard k mod n's: shard i sends i, i+n, i+2n …
				if got, want := sh.Share(whole), (whole+n-1-i)/n; got != want {
					t.Errorf("shard %v of a %d-request run: share %d, want %d", sh, whole, got, want)
				}
				shares += sh.Share(whole)
				if m := sh.Mark(); m.Sharded() != (n > 1) || (n > 1 && m != sh) {
					t.Errorf("shard %v marks %v", sh, m)
				}
			}
			for k, o := range owners {
				if o != 1 {
					t.Errorf("%d shards, request %d owned %d times", n, k, o)
				}
			}
			if shares != whole {
				t.Errorf("%d shards of %d requests: shares add up to %d", n, whole, shares)
			}
		}
	}
	if !(Shard{}).Owns(5) || (Shard{}).Share(5) != 5 || (Shard{}).Mark() != (Shard{}) || (Shard{}).String() != "" {
		t.Error("the zero Shard is not the whole run")
	}
	if s, err := Slots(8, Shard{Index: 1, Count: 4}, "TAILGUARD_SHARD", "concurrency"); s != 2 || err != nil {
		t.Errorf("Slots(8, 1/4) = %d, %v; want 2", s, err)
	}
	if _, err := Slots(6, Shard{Index: 1, Count: 4}, "TAILGUARD_SHARD", "concurrency"); err == nil || !strings.Contains(err.Error(), "concurrency 6 is not a multiple of the 4 shards (TAILGUARD_SHARD 1/4)") {
		t.Errorf("Slots(6, 1/4): %v", err)
	}
}
