package recfile

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

type rec struct {
	ID string `json:"id"`
	N  int    `json:"n"`
}

func id(r *rec) string { return r.ID }

func TestWriteRead(t *testing.T) {
	recs := []rec{{"a", 1}, {"b", 2}}
	var buf bytes.Buffer
	if err := Write(&buf, recs, End{Shard: "1/2", Label: "c8"}, id); err != nil {
		t.Fatal(err)
	}
	want := "{\"id\":\"a\",\"n\":1}\n{\"id\":\"b\",\"n\":2}\n{\"end_of_records\":2,\"shard\":\"1/2\",\"label\":\"c8\"}\n"
	if buf.String() != want {
		t.Fatalf("wrote %q, want %q", buf.String(), want)
	}
	// Two files joined with cat, and one without an end line, read whole.
	joined := buf.String() + buf.String() + "{\"id\":\"c\",\"n\":3}\n"
	got, err := Read[rec](strings.NewReader(joined))
	if w := append(append(recs, recs...), rec{"c", 3}); err != nil || !reflect.DeepEqual(got, w) {
		t.Errorf("read %v, %v; want %v", got, err, w)
	}
	for in, msg := range map[string]string{
		"{\"id\":\"a\"}\n{\"end_of_records\":2}\n":   "records line 2: the end line counts 2 records, but 1 precede it",
		"{\"id\":\"a\"}\n\n{\"id\":\"b\",\"x\":1}\n": `records line 3: json: unknown field "x"`,
		"{\"end_of_records\":0,\"more\":1}\n":        "records line 1:",
	} {
		if _, err := Read[rec](strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", in, err, msg)
		}
	}
	if e, ok := EndLine([]byte(`{"end_of_records":3} {}`)); ok {
		t.Errorf("two values read as an end line: %+v", e)
	}
}

func TestPath(t *testing.T) {
	dir := t.TempDir()
	var got []string
	for range 3 {
		p := Path(dir, "c8")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.Base(p))
	}
	if want := []string{"records.jsonl", "records-c8.jsonl", "records-c8-2.jsonl"}; !reflect.DeepEqual(got, want) {
		t.Errorf("paths %v, want %v", got, want)
	}
}

func TestStream(t *testing.T) {
	dir := t.TempDir()
	s := &Stream{Dir: dir, Label: "x"}
	if p, err := s.Finish("1/1"); p != "" || err != nil {
		t.Errorf("empty stream: %q, %v", p, err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { s.Write(rec{"r", i}, "r") })
	}
	wg.Wait()
	p, err := s.Finish("2/3")
	if err != nil || p != filepath.Join(dir, "records.jsonl") {
		t.Fatalf("finish %q, %v", p, err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read[rec](bytes.NewReader(b))
	if err != nil || len(got) != 50 || !strings.HasSuffix(string(b), "{\"end_of_records\":50,\"shard\":\"2/3\",\"label\":\"x\"}\n") {
		t.Errorf("%d records, %v; file ends %q", len(got), err, b[max(0, len(b)-60):])
	}
	// An error sticks and is returned by Finish.
	bad := &Stream{File: filepath.Join(dir, "missing", "r.jsonl")}
	bad.Write(rec{}, "a")
	if _, err := bad.Finish(""); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("uncreatable file: %v", err)
	}
	un := &Stream{File: filepath.Join(dir, "u.jsonl")}
	un.Write(func() {}, "fn")
	if _, err := un.Finish(""); err == nil || !strings.Contains(err.Error(), "writing record fn") {
		t.Errorf("unencodable value: %v", err)
	}
}

// TestSummaryPath: the summary sits beside its records, named after them,
// as Measure writes it and a merge reads it.
func TestSummaryPath(t *testing.T) {
	for _, c := range []struct{ records, summary string }{
		{"/a/records.jsonl", "/a/summary.json"},
		{"/a/records-c8.jsonl", "/a/summary-c8.json"},
		{"/a/records-c8-2.jsonl", "/a/summary-c8-2.json"},
	} {
		if got := SummaryPath(c.records); got != c.summary {
			t.Errorf("SummaryPath(%q) = %q, want %q", c.records, got, c.summary)
		}
	}
}
