package latencytest_test

import (
	"context"
	"fmt"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/compact"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
)

// varied is a profile whose every request differs (lognormal TTFT, ITL
// and length, stalls, 529s and disconnects mid-stream), seeded.
func varied() fakeprovider.Profile {
	return fakeprovider.Profile{
		Seed:            11,
		TTFT:            fakeprovider.LogNormal(150*time.Millisecond, 900*time.Millisecond),
		ITL:             fakeprovider.LogNormal(12*time.Millisecond, 60*time.Millisecond),
		OutputTokens:    fakeprovider.Uniform(2, 40),
		SlotsPerReplica: 64,
		Stall:           fakeprovider.Stall{Probability: 0.05, AfterToken: 3, Duration: fakeprovider.Fixed(2 * time.Second)},
		Faults:          fakeprovider.Faults{HTTP529: 0.03, Disconnect: 0.03, AfterToken: 2},
	}
}

// sameExceptGaps checks that compact record i equals the full one, but
// for its gaps and answer (which compact records do not keep).
func sameExceptGaps(t *testing.T, full, compact *latencytest.Result) {
	t.Helper()
	if full.Len() != compact.Len() || compact.Records != nil || !latencytest.Compacted(compact) {
		t.Fatalf("full %d records, compact %d (Records %d, compacted %v)", full.Len(), compact.Len(), len(compact.Records), latencytest.Compacted(compact))
	}
	for i := range full.Records {
		want := full.Records[i]
		want.Gaps, want.Content = latencytest.Gaps{}, ""
		got := compact.Record(i)
		if !got.Start.Equal(want.Start) {
			t.Fatalf("record %d: start %v, want %v", i, got.Start, want.Start)
		}
		got.Start = want.Start
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("record %d differs:\n got %+v\nwant %+v", i, got, want)
		}
	}
}

// sameFigures checks that every exact figure of the two results is
// equal, and ITL's quantiles are within the sketch's bound.
func sameFigures(t *testing.T, full, compact *latencytest.Result) {
	t.Helper()
	for name, get := range map[string]func(*latencytest.Result) latencytest.Sample{
		"ttft": (*latencytest.Result).TTFT, "first answer": (*latencytest.Result).FirstAnswer,
		"total": (*latencytest.Result).Total, "max gap": (*latencytest.Result).MaxGap,
		"from schedule": (*latencytest.Result).FromSchedule, "cold starts": (*latencytest.Result).ColdStarts,
	} {
		if a, b := get(full), get(compact); !slices.Equal(a, b) {
			t.Errorf("%s differs: full %v, compact %v", name, a.Summarize(), b.Summarize())
		}
	}
	if !reflect.DeepEqual(full.Counts(), compact.Counts()) || !reflect.DeepEqual(full.Errors(), compact.Errors()) ||
		!reflect.DeepEqual(latencytest.ErrorExamples(full), latencytest.ErrorExamples(compact)) || !slices.Equal(latencytest.DecodeRates(full), latencytest.DecodeRates(compact)) {
		t.Errorf("counts or errors differ: %+v %v / %+v %v", full.Counts(), full.Errors(), compact.Counts(), compact.Errors())
	}
	fi, ci := full.ITL(), compact.ITL()
	if len(fi) != len(ci) || fi.Failures() != ci.Failures() || len(fi) == 0 {
		t.Fatalf("ITL: full %d gaps (%d failed), compact %d (%d failed)", len(fi), fi.Failures(), len(ci), ci.Failures())
	}
	for _, q := range []float64{0.01, 0.1, 0.5, 0.9, 0.95, 0.97} {
		checkWithin(t, "ITL", q, fi.Quantile(q), ci.Quantile(q))
		sq := latencytest.ITLSketch(compact).Quantile(q)
		checkWithin(t, "ITL sketch", q, fi.Quantile(q), sq)
		if got := compact.ITLQuantile(q); got != sq {
			t.Errorf("ITLQuantile(%g) %v of compact records, their sketch's %v", q, got, sq)
		}
		if got := full.ITLQuantile(q); !latencytest.Compacted(full) && got != fi.Quantile(q) {
			t.Errorf("ITLQuantile(%g) %v of full records, ITL's %v", q, got, fi.Quantile(q))
		}
	}
	fs, cs := full.Summarize(), compact.Summarize()
	if !reflect.DeepEqual(fs.TTFT, cs.TTFT) || !reflect.DeepEqual(fs.Total, cs.Total) || fs.Model != cs.Model || fs.Counts != cs.Counts {
		t.Errorf("summaries differ:\n%v\n%v", fs, cs)
	}
	if fs.ITL.N != cs.ITL.N || fs.ITL.Min != cs.ITL.Min || fs.ITL.Max != cs.ITL.Max || fs.ITL.Mean != cs.ITL.Mean {
		t.Errorf("ITL summaries: full %+v, compact %+v", fs.ITL, cs.ITL)
	}
}

func checkWithin(t *testing.T, what string, q float64, exact, got time.Duration) {
	t.Helper()
	if exact == latencytest.Failed || got == latencytest.Failed {
		if exact != got {
			t.Errorf("%s p%g: exact %v, sketch %v", what, q*100, exact, got)
		}
		return
	}
	if math.Abs(float64(got-exact)) > compact.Alpha*float64(exact)+1 { // compact.Alpha's bound: 1% + 1ns
		t.Errorf("%s p%g: exact %v, sketch %v: off by more than %g", what, q*100, exact, got, compact.Alpha)
	}
}

func verdicts(r *latencytest.Result) []string {
	rep := sloassert.Evaluate(r,
		sloassert.Q(sloassert.TTFT, 0.5, 200*time.Millisecond), sloassert.Q(sloassert.TTFT, 0.95, time.Second, sloassert.Demonstrate(0.9)),
		sloassert.Q(sloassert.Total, 0.9, 2*time.Second), sloassert.Q(sloassert.FirstAnswer, 0.5, 150*time.Millisecond, sloassert.Refute(0.9)),
		sloassert.Q(sloassert.MaxGap, 0.9, 100*time.Millisecond), sloassert.MaxErrorRate(0.05),
		sloassert.Q(sloassert.FromSchedule, 0.5, time.Second))
	var out []string
	for _, o := range rep.Outcomes {
		out = append(out, o.String())
	}
	return out
}

// TestCompactSameVerdicts runs one batch and one open loop on a varied
// fake twice, full and compact: the records are the same but for gaps,
// every exact figure is equal, ITL is within compact.Alpha, and
// sloassert's verdicts on TTFT, first answer, total, max gap, error rate
// and from-schedule are the same, word for word.
func TestCompactSameVerdicts(t *testing.T) {
	runs := map[string]func(latencytest.RecordMode, latencytest.Provider) (*latencytest.Result, error){
		"batch": func(m latencytest.RecordMode, p latencytest.Provider) (*latencytest.Result, error) {
			return latencytest.Batch{Requests: 400, Concurrency: 8, RecordMode: m}.Run(context.Background(), p)
		},
		"open loop": func(m latencytest.RecordMode, p latencytest.Provider) (*latencytest.Result, error) {
			return latencytest.OpenLoop{Rate: 40, Requests: 400, Seed: 3, RecordMode: m}.Run(context.Background(), p)
		},
	}
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			var res [2]*latencytest.Result
			for i, m := range []latencytest.RecordMode{latencytest.RecordsFull, latencytest.RecordsCompact} {
				synctest.Test(t, func(t *testing.T) { // each run from the same virtual instant
					_, p := fake(t, varied())
					r, err := run(m, p)
					if err != nil {
						t.Fatal(err)
					}
					res[i] = r
				})
			}
			{
				full, compact := res[0], res[1]
				if latencytest.Compacted(full) || len(full.Records) != 400+10*boolInt(name == "batch") {
					t.Fatalf("full run: %d records, compacted %v", len(full.Records), latencytest.Compacted(full))
				}
				if full.Counts().Failed == 0 || len(full.ITL()) < 1000 {
					t.Fatalf("the profile should fail some requests and stream many gaps: %+v, %d gaps", full.Counts(), len(full.ITL()))
				}
				sameExceptGaps(t, full, compact)
				sameFigures(t, full, compact)
				for _, box := range []int{1, 2, 5, 7, 12} { // what the records tell the disclosure
					if a, b := full.Disclosure.Box(box), compact.Disclosure.Box(box); a != b || a.Answer == "" {
						t.Errorf("box %d: full %q, compact %q", box, a.Answer, b.Answer)
					}
				}
				if a, b := verdicts(full), verdicts(compact); !slices.Equal(a, b) {
					t.Errorf("verdicts differ:\nfull    %q\ncompact %q", a, b)
				}
				// Compact converts a full result into the same.
				latencytest.Compact(full)
				sameFigures(t, compact, full)
				if !slices.Equal(full.ITL(), compact.ITL()) {
					t.Error("Compact's sketch differs from the compact run's")
				}
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRecordModeDefault: RecordsAuto keeps full records up to
// compact.Above planned requests and compact ones above; an unknown mode is
// an error naming it.
func TestRecordModeDefault(t *testing.T) {
	p := latencytest.Func(func(ctx context.Context, req latencytest.Request) error { return nil })
	r, err := latencytest.Batch{Requests: compact.Above + 1, NoWarmup: true, Concurrency: 16, Load: latencytest.Load{Prompt: "hi"}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !latencytest.Compacted(r) || r.Len() != compact.Above+1 || r.Counts().Kept != compact.Above+1 {
		t.Fatalf("compacted %v, %d records, %+v", latencytest.Compacted(r), r.Len(), r.Counts())
	}
	if b := float64(latencytest.RetainedBytes(r)) / float64(r.Len()); b > 100 {
		t.Errorf("compact records retain %.0f bytes each, more than 100", b)
	}
	for _, m := range []latencytest.RecordMode{latencytest.RecordsAuto, latencytest.RecordsFull} {
		r, err := latencytest.Batch{Requests: 20, RecordMode: m}.Run(context.Background(), p)
		if err != nil || latencytest.Compacted(r) || len(r.Records) != 30 {
			t.Fatalf("a small batch, mode %q: err %v, compacted %v", m, err, latencytest.Compacted(r))
		}
	}
	if _, err := (latencytest.Batch{RecordMode: "tiny"}).Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), `record_mode "tiny"`) {
		t.Errorf("an unknown mode: %v", err)
	}
}

// TestMergeCompactShards: two shards of a compact batch stream their
// records to files; records.Merge of the files, compacted, equals the
// compact of the merge of the same shards' full records, and the shards'
// sketches merged equal the merged result's sketch bucket for bucket.
func TestMergeCompactShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		var compactFiles, fullFiles []string
		var sketches []*compact.Sketch
		for i := range 2 {
			for _, m := range []latencytest.RecordMode{latencytest.RecordsCompact, latencytest.RecordsFull} {
				_, p := fake(t, varied())
				b := latencytest.Batch{Requests: 200, Concurrency: 8, Load: latencytest.Load{Shard: latencytest.Shard{Index: i, Count: 2}}, RecordMode: m}
				path := filepath.Join(dir, string(m)+"-"+string(rune('0'+i))+".jsonl")
				r, err := latencytest.RunStreamed(b, p, path)
				if err != nil {
					t.Fatal(err)
				}
				if m == latencytest.RecordsCompact {
					compactFiles = append(compactFiles, path)
					sketches = append(sketches, latencytest.ITLSketch(r))
				} else {
					fullFiles = append(fullFiles, path)
				}
			}
		}
		a, err := records.Merge(compactFiles...)
		if err != nil {
			t.Fatal(err)
		}
		b, err := records.Merge(fullFiles...)
		if err != nil {
			t.Fatal(err)
		}
		if a.Partial || b.Partial {
			t.Fatalf("partial merge: %q / %q", a.PartialReason, b.PartialReason)
		}
		full := b
		latencytest.Compact(a)
		bc := *b
		bc.Records = slices.Clone(b.Records)
		latencytest.Compact(&bc)
		sameFigures(t, full, a)
		if !slices.Equal(a.ITL(), bc.ITL()) {
			t.Error("the merged compact shards' ITL differs from the compact of the merged run")
		}
		for i := range a.Len() {
			if x, y := a.Record(i), bc.Record(i); !reflect.DeepEqual(x.ID, y.ID) || x.TTFT != y.TTFT || x.Total != y.Total {
				t.Fatalf("record %d: %s/%s", i, x.ID, y.ID)
			}
		}
		var s compact.Sketch
		for _, sk := range sketches {
			s.Merge(sk)
		}
		if !slices.Equal(s.Sample(), latencytest.ITLSketch(a).Sample()) {
			t.Error("the shards' sketches merged differ from the merged result's")
		}
	})
}

// TestStreamedRecordsSurviveACrash runs a compact batch in a child
// process that dies (os.Exit) in its 50th request: the records file it
// streamed holds the 49 requests that completed, readable, and without
// its end line, so records.Merge calls the run partial.
func TestStreamedRecordsSurviveACrash(t *testing.T) {
	if path := os.Getenv("TAILGUARD_CRASH_FILE"); path != "" {
		n := 0
		p := latencytest.Func(func(ctx context.Context, req latencytest.Request) error {
			if n++; n == 50 {
				os.Exit(3)
			}
			return nil
		})
		latencytest.RunStreamed(latencytest.Batch{Requests: 100, NoWarmup: true, RecordMode: latencytest.RecordsCompact}, p, path)
		return
	}
	path := filepath.Join(t.TempDir(), "records.jsonl")
	cmd := crashChild(t, path)
	if err := cmd.Run(); err == nil {
		t.Fatal("the child should have crashed")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := latencytest.ReadRecords(f)
	if err != nil || len(recs) != 49 {
		t.Fatalf("read %d records from the crashed run (%v), want 49", len(recs), err)
	}
	for i, rec := range recs {
		if want := "c1-" + pad4(i); rec.ID != want {
			t.Fatalf("record %d is %s, want %s", i, rec.ID, want)
		}
	}
	m, err := records.Merge(path)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Partial || m.Len() != 49 {
		t.Fatalf("merge of the crashed run: partial %v (%q), %d records", m.Partial, m.PartialReason, m.Len())
	}
}

// crashChild is this test binary rerun as the crashing child.
func crashChild(t *testing.T, path string) *osexec.Cmd {
	cmd := osexec.Command(os.Args[0], "-test.run=^TestStreamedRecordsSurviveACrash$")
	cmd.Env = append(os.Environ(), "TAILGUARD_CRASH_FILE="+path)
	return cmd
}

// TestCompactBaselines: a compact result saves as a baseline (its records
// written from the compact store) and compares with the full run of the
// same fake exactly as the full result does, both ways round.
func TestCompactBaselines(t *testing.T) {
	var res [2]*latencytest.Result
	for i, m := range []latencytest.RecordMode{latencytest.RecordsFull, latencytest.RecordsCompact} {
		synctest.Test(t, func(t *testing.T) {
			_, p := fake(t, varied())
			r, err := latencytest.Batch{Requests: 300, Concurrency: 8, RecordMode: m}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			res[i] = r
		})
	}
	full, compact := res[0], res[1]
	dir := t.TempDir()
	var loaded [2]*latencytest.Result
	for i, r := range res {
		path := filepath.Join(dir, fmt.Sprintf("base%d.jsonl", i))
		if err := sloassert.SaveBaseline(path, r); err != nil {
			t.Fatal(err)
		}
		b, err := sloassert.LoadBaseline(path)
		if err != nil {
			t.Fatal(err)
		}
		loaded[i] = b
	}
	if !slices.Equal(loaded[0].TTFT(), loaded[1].TTFT()) || !slices.Equal(loaded[0].Total(), loaded[1].Total()) || loaded[1].Len() != full.Len() {
		t.Fatal("the compact baseline's figures differ from the full one's")
	}
	c := sloassert.Compare{}
	a, b := c.Evaluate(loaded[0], full).String(), c.Evaluate(loaded[0], compact).String()
	if a != b || a == "" {
		t.Errorf("compare against a full and a compact run differ:\n%s\n---\n%s", a, b)
	}
}

// TestMeasureStreamsCompactRecords: Measure of a compact batch streams
// every record, gaps included, to its records file, ended by the end
// line, and the file's gaps give exactly the ITL the sketch summarises.
func TestMeasureStreamsCompactRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, varied())
		r := latencytest.Batch{Requests: 60, Concurrency: 4, RecordMode: latencytest.RecordsCompact}.Measure(t, p)
		if !latencytest.Compacted(r) {
			t.Fatal("not compact")
		}
		recs, err := latencytest.LoadRecords(filepath.Join(t.ArtifactDir(), "records.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != r.Len() {
			t.Fatalf("the file holds %d records, the result %d", len(recs), r.Len())
		}
		file := &latencytest.Result{Records: recs}
		if fi, ci := file.ITL(), r.ITL(); len(fi) != len(ci) || len(fi) == 0 {
			t.Fatalf("the file holds %d gaps, the sketch %d", len(fi), len(ci))
		}
		latencytest.Compact(file)
		if !slices.Equal(file.ITL(), r.ITL()) {
			t.Error("the sketch of the file's gaps differs from the run's")
		}
		b, err := os.ReadFile(filepath.Join(t.ArtifactDir(), "records.jsonl"))
		if err != nil || !strings.Contains(string(b), fmt.Sprintf(`{"end_of_records":%d,"label":"c4"}`, r.Len())) {
			t.Errorf("no end line counting %d records (%v)", r.Len(), err)
		}
	})
}
