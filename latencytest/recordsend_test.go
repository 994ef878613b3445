package latencytest_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/latencytest"
)

// WriteRecords ends a file with its count; ReadRecords checks it, reads
// files joined with cat, and reads old files without one.
func TestRecordsEndLine(t *testing.T) {
	recs := []latencytest.Record{{ID: "c1-0000"}, {ID: "c1-0001"}, {ID: "c1-0002"}}
	var buf bytes.Buffer
	if err := latencytest.WriteRecords(&buf, recs); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	if len(lines) != 5 || lines[3] != `{"end_of_records":3}`+"\n" {
		t.Fatalf("written:\n%s", buf.String())
	}
	read := func(s string) ([]latencytest.Record, error) { return latencytest.ReadRecords(strings.NewReader(s)) }
	if got, err := read(buf.String()); err != nil || len(got) != 3 {
		t.Errorf("round trip: %d records, %v", len(got), err)
	}
	if got, err := read(buf.String() + buf.String()); err == nil { // the same IDs twice: the merge's business, not the reader's
		if len(got) != 6 {
			t.Errorf("two files joined: %d records", len(got))
		}
	} else {
		t.Errorf("two files joined: %v", err)
	}
	if got, err := read(lines[0] + lines[1] + lines[2]); err != nil || len(got) != 3 {
		t.Errorf("an old file (no end line): %d records, %v", len(got), err)
	}
	_, err := read(lines[0] + lines[2] + lines[3])
	if want := "latencytest: records line 3: the end line counts 3 records, but 2 precede it: lines were lost or added"; err == nil || err.Error() != want {
		t.Errorf("a line lost: %v\nwant %s", err, want)
	}
	_, err = read(buf.String() + lines[0] + `{"end_of_records":3}` + "\n")
	if err == nil || !strings.Contains(err.Error(), "records line 6: the end line counts 3 records, but 1 precede it") {
		t.Errorf("the second of two joined files short: %v", err)
	}
	if _, err := read(`{"end_of_records":1,"extra":2}` + "\n"); err == nil || !strings.Contains(err.Error(), "records line 1: ") {
		t.Errorf("an end line with an unknown key: %v", err)
	}
	if got, err := read(`{"end_of_records":0}` + "\n"); err != nil || len(got) != 0 {
		t.Errorf("no records, ended: %d records, %v", len(got), err)
	}
}
