package sse

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/internal/sse/ssetest"
)

// sseRun feeds the chunks in order to a fresh parser and returns the
// events, whether an event was left pending, and the first error (feeding
// stops there).
func sseRun(chunks ...[]byte) (events []Event, pending bool, err error) {
	var p Parser
	emit := func(ev Event) { events = append(events, ev) }
	for _, c := range chunks {
		if err = p.feedEvents(c, emit); err != nil {
			return events, p.Pending(), err
		}
	}
	return events, p.Pending(), nil
}

// sseStrings turns strings into chunks.
func sseStrings(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, c := range s {
		out[i] = []byte(c)
	}
	return out
}

// feedEvents is Feed with each event copied into an Event.
func (p *Parser) feedEvents(b []byte, emit func(Event)) error { return p.Feed(b, eventEmitter(emit)) }

// endEvents is End with each event copied into an Event.
func (p *Parser) endEvents(emit func(Event)) { p.End(eventEmitter(emit)) }

// eventEmitter adapts an Event callback.
func eventEmitter(emit func(Event)) Emit {
	return func(typ string, data []byte, id string) { emit(Event{Type: typ, Data: string(data), ID: id}) }
}

// sseFormat prints events one per line, for failure messages.
func sseFormat(evs []Event) string {
	if len(evs) == 0 {
		return "(no events)"
	}
	var b strings.Builder
	for _, ev := range evs {
		d := ev.Data
		if len(d) > 80 {
			d = fmt.Sprintf("%s…(%d bytes)", d[:80], len(d))
		}
		fmt.Fprintf(&b, "\n  {Type:%q ID:%q Data:%q}", ev.Type, ev.ID, d)
	}
	return b.String()
}

func TestSSEParserFeed(t *testing.T) {
	for _, tc := range []struct {
		name, why   string
		chunks      []string
		want        []Event
		wantPending bool
	}{
		{
			name:   "lf",
			why:    "LF ends a line; a blank line dispatches",
			chunks: []string{"data: a\n\ndata: b\n\n"},
			want:   []Event{{Data: "a"}, {Data: "b"}},
		},
		{
			name:   "crlf",
			why:    "CRLF is one line end, not a line end and a blank line",
			chunks: []string{"data: a\r\n\r\ndata: b\r\n\r\n"},
			want:   []Event{{Data: "a"}, {Data: "b"}},
		},
		{
			name:   "bare cr",
			why:    "a CR on its own ends a line",
			chunks: []string{"data: a\r\rdata: b\r\r"},
			want:   []Event{{Data: "a"}, {Data: "b"}},
		},
		{
			name: "mixed in one stream",
			why:  "each line may end differently: CRLF, LF, CR, then LF CR CRLF blank lines",
			chunks: []string{
				"data: a\r\ndata: b\ndata: c\r\n" + // three data lines of one event
					"\r" + // CR blank line: dispatch "a\nb\nc"
					"data: d\r\n\n" + // CRLF then LF blank
					"data: e\n\r\n", // LF then CRLF blank
			},
			want: []Event{{Data: "a\nb\nc"}, {Data: "d"}, {Data: "e"}},
		},
		{
			name:   "cr ends one feed, lf starts the next",
			why:    "the LF belongs to the CR before it: no empty line, so a and b are one event",
			chunks: []string{"data: a\r", "\ndata: b\r\n\r\n"},
			want:   []Event{{Data: "a\nb"}},
		},
		{
			name:   "cr ends a feed, an empty feed, then lf",
			why:    "an empty Feed does not forget the pending CR",
			chunks: []string{"data: a\r", "", "\ndata: b\r\n\r\n"},
			want:   []Event{{Data: "a\nb"}},
		},
		{
			name:   "cr ends a feed, cr starts the next",
			why:    "CR CR is two line ends, so the second one is a blank line",
			chunks: []string{"data: a\r", "\rdata: b\n\n"},
			want:   []Event{{Data: "a"}, {Data: "b"}},
		},
		{
			name:   "crlf blank line split between feeds",
			why:    "data: a CRLF, then the blank line's CR and LF in separate feeds: one dispatch",
			chunks: []string{"data: a\r\n\r", "\n", "data: b\r\n\r\n"},
			want:   []Event{{Data: "a"}, {Data: "b"}},
		},
		{
			name:   "line split mid-field",
			why:    "a line may be cut at any byte, even inside the field name",
			chunks: []string{"da", "ta", ":", " hel", "lo\n", "\n"},
			want:   []Event{{Data: "hello"}},
		},
		{
			name:   "keep-alive comments",
			why:    "lines starting with a colon are comments, dispatch nothing and do not break an event",
			chunks: []string{":keep-alive\n\n: ping\r\ndata: a\n:mid-event comment\ndata: b\n\n:\n\n"},
			want:   []Event{{Data: "a\nb"}},
		},
		{
			name:   "data without the space",
			why:    "the space after the colon is optional",
			chunks: []string{"data:x\n\n"},
			want:   []Event{{Data: "x"}},
		},
		{
			name:   "only one space removed",
			why:    "only the first space after the colon is dropped",
			chunks: []string{"data:  x \n\n"},
			want:   []Event{{Data: " x "}},
		},
		{
			name:   "data with no colon",
			why:    "a bare field name has an empty value; the event is dispatched with empty data",
			chunks: []string{"data\n\n"},
			want:   []Event{{Data: ""}},
		},
		{
			name:   "colons in the value",
			why:    "only the first colon separates the field from the value",
			chunks: []string{`data: {"a":"b:c"}` + "\n\n"},
			want:   []Event{{Data: `{"a":"b:c"}`}},
		},
		{
			name:   "multi-line data",
			why:    "data lines are joined with LF, and an empty data line adds an empty line",
			chunks: []string{"data: one\ndata:\ndata: three\n\n"},
			want:   []Event{{Data: "one\n\nthree"}},
		},
		{
			name:   "event and id",
			why:    "event sets the type, id the ID, in any order around data",
			chunks: []string{"event: delta\ndata: x\nid: 7\n\n"},
			want:   []Event{{Type: "delta", Data: "x", ID: "7"}},
		},
		{
			name:   "type resets, id persists",
			why:    "the type is per event; the ID is the last event ID and carries over (WHATWG)",
			chunks: []string{"event: delta\nid: 7\ndata: x\n\ndata: y\n\n"},
			want:   []Event{{Type: "delta", Data: "x", ID: "7"}, {Data: "y", ID: "7"}},
		},
		{
			name:   "event with no data",
			why:    "an event without a data line is not dispatched, and its type does not leak",
			chunks: []string{"event: ping\n\ndata: x\n\n"},
			want:   []Event{{Data: "x"}},
		},
		{
			name:   "blank lines with nothing pending",
			why:    "a blank line with no data dispatches nothing, whatever the line end",
			chunks: []string{"\n\r\n\r\n\n\r"},
			want:   nil,
		},
		{
			name:   "unknown fields",
			why:    "retry and unknown fields are ignored",
			chunks: []string{"retry: 1000\nfoo: bar\nDATA: no\ndata: x\n\n"},
			want:   []Event{{Data: "x"}},
		},
		{
			name:        "cut off after a data line",
			why:         "a data line without its blank line is never dispatched, and is pending",
			chunks:      []string{"data: a\n\ndata: b\n"},
			want:        []Event{{Data: "a"}},
			wantPending: true,
		},
		{
			name:        "cut off mid-line",
			why:         "an unterminated line is pending",
			chunks:      []string{"data: a\n\ndata: {\"cho"},
			want:        []Event{{Data: "a"}},
			wantPending: true,
		},
		{
			name:        "cut off after a cr",
			why:         "a data line ended by CR without a blank line is pending",
			chunks:      []string{"data: a\r"},
			want:        nil,
			wantPending: true,
		},
		{
			name:   "clean end",
			why:    "after the blank line nothing is pending",
			chunks: []string{"data: a\n\n"},
			want:   []Event{{Data: "a"}},
		},
		{
			name:   "clean end with crlf split",
			why:    "a trailing CR whose LF never comes is still a complete blank line",
			chunks: []string{"data: a\r\n\r"},
			want:   []Event{{Data: "a"}},
		},
		{
			name:   "event without data then end",
			why:    "an event line without data is dropped at the blank line, nothing pending",
			chunks: []string{"event: x\nid: 1\n\n"},
			want:   nil,
		},
		{
			name:   "leading byte-order mark",
			why:    "the standard strips one leading UTF-8 BOM; without that the first field is \"\\uFEFFdata\" and the first event is lost",
			chunks: []string{"\xEF\xBB\xBFdata: a\n\ndata: b\n\n"},
			want:   []Event{{Data: "a"}, {Data: "b"}},
		},
		{
			name:   "byte-order mark split across feeds",
			why:    "the BOM may arrive a byte at a time",
			chunks: []string{"\xEF", "\xBB", "\xBFdata: a\n\n"},
			want:   []Event{{Data: "a"}},
		},
		{
			name:   "only one byte-order mark",
			why:    "a second BOM is part of the first line (an unknown field), as the standard says",
			chunks: []string{"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\ndata: b\n\n"},
			want:   []Event{{Data: "b"}},
		},
		{
			name:   "not a byte-order mark after all",
			why:    "bytes that start like a BOM but differ stay in the first line",
			chunks: []string{"\xEF", "\xBBx: y\ndata: a\n\n"},
			want:   []Event{{Data: "a"}},
		},
		{
			name:   "a byte-order mark later is data",
			why:    "only the stream's first bytes may be a BOM",
			chunks: []string{"data: a\n\ndata: \xEF\xBB\xBFb\n\n"},
			want:   []Event{{Data: "a"}, {Data: "\xEF\xBB\xBFb"}},
		},
		{
			name:        "a partial byte-order mark is pending",
			why:         "two bytes of a BOM and then the end: something was begun",
			chunks:      []string{"\xEF\xBB"},
			want:        nil,
			wantPending: true,
		},
		{
			name:   "nothing",
			why:    "no input, no events, nothing pending",
			chunks: nil,
			want:   nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, pending, err := sseRun(sseStrings(tc.chunks...)...)
			if err != nil {
				t.Fatalf("%s: Feed error %v", tc.why, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s\nchunks %q\ngot %s\nwant %s", tc.why, tc.chunks, sseFormat(got), sseFormat(tc.want))
			}
			if pending != tc.wantPending {
				t.Errorf("%s\nchunks %q: Pending() = %v, want %v", tc.why, tc.chunks, pending, tc.wantPending)
			}
		})
	}
}

// TestSSEParserEnd: at the end of the stream, End dispatches what a
// server sent without its closing blank line ("data: [DONE]" at EOF).
func TestSSEParserEnd(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		chunks    []string
		want      []Event
	}{
		{"done without a line end", "the last line has no line end: End completes it and dispatches", []string{"data: a\n\ndata: [DONE]"}, []Event{{Data: "a"}, {Data: "[DONE]"}}},
		{"done with one lf", "one line end but no blank line", []string{"data: a\n\ndata: [DONE]\n"}, []Event{{Data: "a"}, {Data: "[DONE]"}}},
		{"done with one crlf", "CRLF then EOF", []string{"data: [DONE]\r\n"}, []Event{{Data: "[DONE]"}}},
		{"clean end", "nothing pending: End adds nothing", []string{"data: a\n\n"}, []Event{{Data: "a"}}},
		{"comment at the end", "an unterminated comment dispatches nothing", []string{"data: a\n\n: bye"}, []Event{{Data: "a"}}},
		{"partial byte-order mark only", "two BOM bytes are an unknown field, not an event", []string{"\xEF\xBB"}, nil},
		{"nothing", "no input, no events", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Parser
			var got []Event
			emit := func(ev Event) { got = append(got, ev) }
			for _, c := range tc.chunks {
				if err := p.feedEvents([]byte(c), emit); err != nil {
					t.Fatal(err)
				}
			}
			p.endEvents(emit)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s\nchunks %q\ngot %s\nwant %s", tc.why, tc.chunks, sseFormat(got), sseFormat(tc.want))
			}
			if p.Pending() {
				t.Errorf("%s: pending after End", tc.why)
			}
		})
	}
}

// TestSSEParserLongLine: a 1 MiB line is one event whatever the pieces it
// arrives in (bufio.Scanner would stop at 64 KiB).
func TestSSEParserLongLine(t *testing.T) {
	payload := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	stream := []byte("data: " + payload + "\r\n\r\ndata: after\n\n")
	want := []Event{{Data: payload}, {Data: "after"}}
	for _, tc := range []struct {
		name  string
		piece int
	}{
		{"whole", len(stream)},
		{"1-byte pieces", 1},
		{"4093-byte pieces", 4093}, // prime: pieces end anywhere, CRLF included
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, pending, err := sseRun(ssetest.Pieces(stream, tc.piece)...)
			if err != nil {
				t.Fatalf("Feed error %v", err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %s\nwant %s", sseFormat(got), sseFormat(want))
			}
			if pending {
				t.Error("Pending() after a clean end")
			}
		})
	}
}

// TestSSEParserLimit: an event may hold 64 MiB of line bytes (line ends not
// counted); one byte more is ErrTooLarge, whether the excess arrives
// in an unterminated line or in a finished one. The same arithmetic runs
// with the limit scaled down to 64 KiB (a "MiB" of 1 KiB), always, and at
// full size unless -short (3 s under -race since events reach the stream
// timer without a string copy and lines are found with vectorised
// searches; it took 40 s).
func TestSSEParserLimit(t *testing.T) {
	t.Run("64 KiB", func(t *testing.T) { testSSEParserLimit(t, 1<<10) })
	t.Run("64 MiB", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: feeds 64 MiB")
		}
		testSSEParserLimit(t, 1<<20)
	})
}

// testSSEParserLimit runs TestSSEParserLimit with a limit of 64 units of
// mib bytes.
func testSSEParserLimit(t *testing.T, mib int) {
	chunk := bytes.Repeat([]byte("x"), mib)
	prefix := []byte("data: ")
	full := mib == 1<<20
	limit := 64 * mib
	if full {
		limit = 0 // the parser's own limit, maxEventBytes
	}

	t.Run("unterminated line at the limit", func(t *testing.T) {
		// 6 bytes of "data: " + 63 MiB + (1 MiB-6) = exactly 64 MiB.
		p := Parser{Limit: limit}
		emit := func(Event) { t.Error("emitted an event") }
		feeds := [][]byte{prefix}
		for range 63 {
			feeds = append(feeds, chunk)
		}
		feeds = append(feeds, chunk[:mib-len(prefix)])
		for i, f := range feeds {
			if err := p.feedEvents(f, emit); err != nil {
				t.Fatalf("feed %d: %v at exactly 64 MiB, want no error", i, err)
			}
		}
		if !p.Pending() {
			t.Error("Pending() = false for an unterminated 64 MiB line")
		}
		err := p.feedEvents([]byte("x"), emit)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("one byte over 64 MiB: err = %v, want ErrTooLarge", err)
		}
		if got, want := err.Error(), "latencytest: SSE event exceeds 64 MiB"; full && got != want {
			t.Errorf("error text %q, want %q", got, want)
		}
	})

	t.Run("finished lines over the limit", func(t *testing.T) {
		// 64 data lines of 6+1 MiB bytes each, all in one event: the line
		// that crosses 64 MiB fails as it completes.
		p := Parser{Limit: limit}
		line := append(append(slices.Clip(prefix), chunk...), '\n')
		var err error
		n := 0
		for n = 1; n <= 64 && err == nil; n++ {
			err = p.feedEvents(line, func(Event) { t.Error("emitted an event") })
		}
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("64 lines of 1 MiB+6 in one event: err = %v, want ErrTooLarge", err)
		}
		// (1 MiB+6)×63 = 63 MiB+378 <= 64 MiB; the 64th line crosses.
		if n-1 != 64 {
			t.Errorf("failed at line %d, want line 64", n-1)
		}
	})

	t.Run("the limit is per event", func(t *testing.T) {
		// 80 events of 1 MiB each: 80 MiB in all, but no event is too large.
		p := Parser{Limit: limit}
		ev := append(append(slices.Clip(prefix), chunk...), '\n', '\n')
		got := 0
		for i := range 80 {
			if err := p.feedEvents(ev, func(Event) { got++ }); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
		if got != 80 {
			t.Errorf("%d events, want 80", got)
		}
	})
}

func TestSSEParserOpenAIStream(t *testing.T) {
	var want []Event
	for _, d := range ssetest.OpenAIStreamData() {
		want = append(want, Event{Data: d})
	}
	if len(want) != 6 || want[5].Data != "[DONE]" || !strings.Contains(want[4].Data, `"choices":[]`) {
		t.Fatalf("ssetest.OpenAIStream fixture is broken: %s", sseFormat(want))
	}
	for name, stream := range ssetest.Variants() {
		t.Run(name, func(t *testing.T) {
			s := []byte(stream)
			// Whole, a byte at a time, and cut in two at every byte.
			splits := [][][]byte{{s}, ssetest.Pieces(s, 1)}
			for i := range len(s) + 1 {
				splits = append(splits, [][]byte{s[:i], s[i:]})
			}
			for _, chunks := range splits {
				got, pending, err := sseRun(chunks...)
				if err != nil || pending || !slices.Equal(got, want) {
					t.Fatalf("fed as %d chunks (first %d bytes): err %v, pending %v, got %s\nwant %s",
						len(chunks), len(chunks[0]), err, pending, sseFormat(got), sseFormat(want))
				}
			}
		})
	}
}

// TestSSEParserMultiLineOpenAI: a proxy that pretty-prints the JSON across
// data lines still yields JSON (joined by LF).
func TestSSEParserMultiLineOpenAI(t *testing.T) {
	stream := "data: {\"choices\":[{\"delta\":\r\ndata: {\"content\":\"Hi\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n"
	got, pending, err := sseRun([]byte(stream))
	want := []Event{{Data: "{\"choices\":[{\"delta\":\n{\"content\":\"Hi\"}}]}"}, {Data: "[DONE]"}}
	if err != nil || pending || !slices.Equal(got, want) {
		t.Errorf("err %v, pending %v, got %s\nwant %s", err, pending, sseFormat(got), sseFormat(want))
	}
}

// sseReference parses a whole stream the simple way (split into lines,
// then apply the field rules), as an oracle for the incremental parser.
// An unterminated last line is ignored.
func sseReference(s []byte) (events []Event) {
	s = bytes.TrimPrefix(s, []byte(bom))
	var (
		lines   []string
		start   int
		data    []string
		hasData bool
		typ, id string
	)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\r':
			lines = append(lines, string(s[start:i]))
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			start = i + 1
		case '\n':
			lines = append(lines, string(s[start:i]))
			start = i + 1
		}
	}
	for _, l := range lines {
		if l == "" {
			if hasData {
				events = append(events, Event{Type: typ, Data: strings.Join(data, "\n"), ID: id})
			}
			data, hasData, typ = nil, false, ""
			continue
		}
		if strings.HasPrefix(l, ":") {
			continue
		}
		field, value, _ := strings.Cut(l, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			data, hasData = append(data, value), true
		case "event":
			typ = value
		case "id":
			id = value
		}
	}
	return events
}

// FuzzSSESplit: the stream fed in pieces (their lengths taken from split,
// one byte each, cycling; 0 is an empty Feed) gives exactly what it gives
// fed whole, which is what a whole-stream reference parser gives; Pending
// agrees too; nothing panics.
func FuzzSSESplit(f *testing.F) {
	for _, stream := range ssetest.Variants() {
		f.Add([]byte(stream), []byte{1})
		f.Add([]byte(stream), []byte{7, 0, 200, 3})
		f.Add([]byte(stream), []byte(nil))
	}
	f.Add([]byte("data: a\r"), []byte{8, 1})
	f.Add([]byte("data: a\r\ndata: b\r\r\n:c\nevent: e\nid: 1\ndata:\n\n"), []byte{8, 1, 2, 0, 9})
	f.Add([]byte("data: {\"x\":\r\ndata: 1}\r\n\r\n"), []byte{13, 1})
	f.Add([]byte("\xEF\xBB\xBFdata: a\n\n"), []byte{1})
	f.Add([]byte("\xEF\xBBdata: a\n\n"), []byte{1, 2})
	f.Fuzz(func(t *testing.T, stream, split []byte) {
		whole, wholePending, err := sseRun(stream)
		if err != nil {
			t.Fatalf("whole: %v", err)
		}
		if ref := sseReference(stream); !slices.Equal(whole, ref) {
			t.Fatalf("stream %q\nfed whole: %s\nreference: %s", stream, sseFormat(whole), sseFormat(ref))
		}
		var chunks [][]byte
		for i, rest := 0, stream; len(rest) > 0; i++ {
			n := 1
			if len(split) > 0 {
				n = min(int(split[i%len(split)]), len(rest))
			}
			if i > 4*len(stream)+len(split) {
				n = len(rest) // split all zeros: stop feeding empty pieces
			}
			chunks = append(chunks, rest[:n:n]) // capped: Feed must not rely on what follows
			rest = rest[n:]
		}
		got, pending, err := sseRun(chunks...)
		if err != nil {
			t.Fatalf("split: %v", err)
		}
		if !slices.Equal(got, whole) || pending != wholePending {
			t.Fatalf("stream %q\nsplit %q\nsplit gives (pending %v) %s\nwhole gives (pending %v) %s",
				stream, chunks, pending, sseFormat(got), wholePending, sseFormat(whole))
		}
	})
}
