package latencytest

import (
	"slices"
	"strings"
	"testing"
)

// A stream framed in lines gives each non-empty line as an event, its
// LF or CRLF cut, however the bytes are split, a last line without its
// line end included; a line over the limit fails the stream.
func TestLineParser(t *testing.T) {
	const stream = "{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}"
	want := []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}
	for size := 1; size <= len(stream); size++ {
		var p lineParser
		var got []string
		emit := func(typ string, data []byte, id string) {
			if typ != "" || id != "" {
				t.Fatalf("line event with type %q id %q", typ, id)
			}
			got = append(got, string(data))
		}
		for i := 0; i < len(stream); i += size {
			if err := p.feed([]byte(stream[i:min(i+size, len(stream))]), emit); err != nil {
				t.Fatal(err)
			}
		}
		p.end(emit)
		if !slices.Equal(got, want) {
			t.Fatalf("pieces of %d bytes: lines %q, want %q", size, got, want)
		}
	}
	var p lineParser
	if err := p.feed([]byte(strings.Repeat("x", maxLineBytes+1)), func(string, []byte, string) {}); err == nil {
		t.Error("a line over the limit was accepted")
	}
}
