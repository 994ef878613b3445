package records_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
)

// spread is a profile whose every figure is drawn from the trace ID
// (lognormal TTFT and ITL, varied lengths), with more slots than any test
// here keeps in flight: a request's timing depends on its trace ID only,
// never on which shard sent it or when.
func spread(t *testing.T) fakeprovider.Profile {
	t.Helper()
	p, err := fakeprovider.ParseProfile([]byte(`
model: fake-model
seed: 11
ttft: {dist: lognormal, median: 300ms, p99: 2s}
itl: {dist: lognormal, median: 20ms, p99: 120ms}
output_tokens: {dist: uniform, min: 8, max: 40}
slots_per_replica: 64
`))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeRun writes a result's records to dir/records.jsonl and returns the
// path.
func writeRun(t *testing.T, dir string, r *latencytest.Result) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "records.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := latencytest.WriteRecords(f, r.Records); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// runShards runs n shards of b at once against one fake in the current
// bubble, the first `delay` apart, and writes each one's records under
// dir/shard-i.
func runShards(t *testing.T, b latencytest.Batch, n int, delay time.Duration, dir string) {
	t.Helper()
	_, p := fake(t, spread(t))
	results := make([]*latencytest.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * delay)
			b := b
			b.Shard = latencytest.Shard{Index: i, Count: n}
			r, err := b.Run(context.Background(), p)
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = r
		})
	}
	wg.Wait()
	for i, r := range results {
		if r != nil {
			writeRun(t, filepath.Join(dir, "shard-"+string(rune('0'+i))), r)
		}
	}
}

// Two halves merged equal the whole run, to the nanosecond, in virtual
// time: the same trace IDs with the same warm-up marks, the same counts,
// and every sample (so every percentile) equal.
func TestMergeOfShardsEqualsTheWholeRun(t *testing.T) {
	dir := t.TempDir()
	b := latencytest.Batch{Requests: 120, Warmup: 6, Concurrency: 4, Load: latencytest.Load{MaxTokens: 64}}
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, spread(t))
		whole, err := b.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		runShards(t, b, 2, 0, dir)
		merged, err := records.Merge(filepath.Join(dir, "shard-*", "records.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		ids := func(r *latencytest.Result) []string {
			var out []string
			for _, rec := range r.Records {
				out = append(out, rec.ID+map[bool]string{true: " warm-up"}[rec.Warmup])
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(ids(merged), ids(whole)) {
			t.Errorf("trace IDs differ:\nmerged %v\nwhole  %v", ids(merged), ids(whole))
		}
		if mc, wc := merged.Counts(), whole.Counts(); mc != wc {
			t.Errorf("counts: merged %+v, whole %+v", mc, wc)
		}
		for _, m := range []struct {
			name string
			get  func(*latencytest.Result) latencytest.Sample
		}{
			{"ttft", (*latencytest.Result).TTFT}, {"first answer", (*latencytest.Result).FirstAnswer},
			{"total", (*latencytest.Result).Total}, {"max gap", (*latencytest.Result).MaxGap}, {"itl", (*latencytest.Result).ITL},
		} {
			ms, ws := m.get(merged), m.get(whole)
			slices.Sort(ms)
			slices.Sort(ws)
			if !slices.Equal(ms, ws) {
				t.Errorf("%s samples differ", m.name)
			}
			for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
				if a, b := ms.Quantile(q), ws.Quantile(q); a != b {
					t.Errorf("%s q%v: merged %v, whole %v", m.name, q, a, b)
				}
			}
		}
		// The fake drew different latencies per request: the equality is not trivial.
		if s := whole.TTFT(); s.Quantile(0.99) <= s.Quantile(0.5) {
			t.Errorf("ttft p50 %v p99 %v: the profile should spread", s.Quantile(0.5), s.Quantile(0.99))
		}
		d := merged.Disclosure
		if len(d.Sources) != 2 || d.Sources[0].Counts.Sent != 63 || d.Sources[1].Counts.Sent != 63 || len(d.Warnings) != 0 {
			t.Errorf("sources %+v, warnings %v", d.Sources, d.Warnings)
		}
		if b := d.Box(9); b.Missing || !strings.Contains(b.Answer, "the sources' windows overlap") || !strings.Contains(b.Answer, "virtual time") {
			t.Errorf("box 9 %+v", b)
		}
	})
}

// The same requests from two files are an error that names both files:
// merged, they would count twice.
func TestMergeOverlappingTraceIDsIsAnError(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, spread(t))
		r, err := latencytest.Batch{Requests: 10, NoWarmup: true}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		a := writeRun(t, filepath.Join(dir, "a"), r)
		b := writeRun(t, filepath.Join(dir, "b"), &latencytest.Result{Records: r.Records[4:]})
		_, err = records.Merge(a, b)
		want := a + " and " + b + ` overlap in 6 trace ID(s), "c1-0004" the first`
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "records: merge: ") {
			t.Errorf("error %v\nwant %s", err, want)
		}
		// The same file named twice counts once: not an overlap.
		if m, err := records.Merge(a, filepath.Join(dir, "a", "..", "a", "records.jsonl")); err != nil || len(m.Records) != 10 {
			t.Errorf("the same file twice: %v", err)
		}
		dup := writeRun(t, filepath.Join(dir, "dup"), &latencytest.Result{Records: append(r.Records[:2:2], r.Records[1])})
		if _, err := records.Merge(dup); err == nil || !strings.Contains(err.Error(), `holds trace ID "c1-0001" twice`) {
			t.Errorf("a file with a trace ID twice: %v", err)
		}
	})
}

// Shards that ran one after the other did not load the provider together:
// the merged result warns, in Warnings and in box 9 (marked missing, so
// reports list it).
func TestMergeWarnsWhenWindowsDoNotOverlap(t *testing.T) {
	dir := t.TempDir()
	b := latencytest.Batch{Requests: 20, NoWarmup: true, Concurrency: 2}
	synctest.Test(t, func(t *testing.T) {
		runShards(t, b, 2, time.Minute, dir) // shard 1 starts a minute after shard 0 (which takes seconds)
		merged, err := records.Merge(filepath.Join(dir, "shard-*", "records.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		w := merged.Disclosure.Warnings
		if len(w) != 1 || !strings.HasPrefix(w[0], "run windows do not overlap (concurrency 2): ") ||
			!strings.Contains(w[0], "shard-0") || !strings.Contains(w[0], "align the shards with TAILGUARD_START_AT") {
			t.Errorf("warnings %q", w)
		}
		if b := merged.Disclosure.Box(9); !b.Missing || !strings.Contains(b.Answer, "WARNING: run windows do not overlap") {
			t.Errorf("box 9 %+v", b)
		}
		if s := merged.Disclosure.String(); !strings.Contains(s, "\nWARNING: run windows do not overlap") {
			t.Errorf("disclosure:\n%s", s)
		}
	})
}

func TestMergeErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"id\":\"a\"}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{nil, "records: merge: no records files given"},
		{[]string{filepath.Join(dir, "none-*.jsonl")}, `records: merge: no records file matches "` + filepath.Join(dir, "none-*.jsonl") + `"`},
		{[]string{filepath.Join(dir, "[")}, "records: merge: pattern"},
		{[]string{filepath.Join(dir, "a**b", "x")}, "** must be a whole path element"},
		{[]string{bad}, "records: merge: " + bad + ": records line 2: "},
	} {
		if _, err := records.Merge(c.paths...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MergeRecords(%q): %v\nwant %s", c.paths, err, c.want)
		}
	}
}

// Measure's summary.json beside each records file gives the sources'
// planned counts, client CPU/wall and location; "**" finds the files at
// any depth, as go test -artifacts lays them out.
func TestMergeReadsSummaries(t *testing.T) {
	nop := latencytest.Func(func(context.Context, latencytest.Request) error { return nil })
	root := t.TempDir()
	for i, loc := range []string{"runner eu-west-1", "runner us-east-1"} {
		t.Run(loc, func(t *testing.T) {
			latencytest.Batch{Requests: 9, Warmup: 2, Concurrency: 2, Load: latencytest.Load{Location: loc, Shard: latencytest.Shard{Index: i, Count: 2}}}.Measure(t, nop)
			ad, ok := any(t).(interface{ ArtifactDir() string }) // Go 1.26; go.mod says 1.25
			if !ok {
				t.Skip("no t.ArtifactDir before Go 1.26: Measure writes no records")
			}
			dir := ad.ArtifactDir()
			dst := filepath.Join(root, loc, "deep", "er")
			for _, name := range []string{"records.jsonl", "summary.json"} {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(dst, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	m, err := records.Merge(filepath.Join(root, "**", "records*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Counts(); c.Planned != 11 || c.Sent != 11 || c.Discarded != 2 || c.Kept != 9 {
		t.Errorf("counts %+v", c)
	}
	src := m.Disclosure.Sources
	if len(src) != 2 || src[0].Location != "runner eu-west-1" || src[1].Location != "runner us-east-1" ||
		src[0].Counts.Planned != 6 || src[1].Counts.Planned != 5 || !strings.HasSuffix(src[0].Summary, "summary.json") {
		t.Fatalf("sources %+v", src)
	}
	if math.IsNaN(src[0].CPUPerWall) != math.IsNaN(m.CPUPerWall) {
		t.Errorf("CPU/wall: merged %v, sources %v %v", m.CPUPerWall, src[0].CPUPerWall, src[1].CPUPerWall)
	}
	if b := m.Disclosure.Box(14); b.Missing || !strings.Contains(b.Answer, "runner eu-west-1") || !strings.Contains(b.Answer, "runner us-east-1") {
		t.Errorf("box 14 %+v", b)
	}
	if b := m.Disclosure.Box(7); b.Answer != "2 request(s) in flight (closed loop), shared by 2 shards: 1 each" {
		t.Errorf("box 7, which both shards gave alike: %+v", b)
	}
	if b := m.Disclosure.Box(2); !strings.Contains(b.Answer, "merged from 2 source(s): planned 11, sent 11: 9 kept, 2 discarded (warm-up), 0 failed") {
		t.Errorf("box 2 %+v", b)
	}
}

// MergeLevels splits merged records by load level, each level judged on
// its own; trace IDs order by their numbers (c8-9999 before c8-10000).
func TestMergeLevels(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, spread(t))
		for i := range 2 {
			sr, err := latencytest.Sweep{Batch: latencytest.Batch{Requests: 12, Warmup: 2, Load: latencytest.Load{Shard: latencytest.Shard{Index: i, Count: 2}}},
				Levels: []int{2, 4}}.Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			var all latencytest.Result
			for _, r := range sr.Results {
				all.Records = append(all.Records, r.Records...)
			}
			writeRun(t, filepath.Join(dir, "s"+string(rune('0'+i))), &all)
		}
		levels, err := records.MergeLevels(filepath.Join(dir, "*", "records.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if len(levels) != 2 || levels[2] == nil || levels[4] == nil {
			t.Fatalf("levels %v", levels)
		}
		for l, r := range levels {
			if c := r.Counts(); c.Sent != 14 || c.Discarded != 2 {
				t.Errorf("level %d: %+v", l, c)
			}
			for _, rec := range r.Records {
				if rec.Concurrency != l {
					t.Errorf("level %d holds %s at %d", l, rec.ID, rec.Concurrency)
				}
			}
		}
	})
	recs := []latencytest.Record{{ID: "c8-10000"}, {ID: "c8-9999"}, {ID: "c8-0002"}}
	f := writeRun(t, filepath.Join(dir, "ids"), &latencytest.Result{Records: recs})
	m, err := records.Merge(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{m.Records[0].ID, m.Records[1].ID, m.Records[2].ID}; !slices.Equal(got, []string{"c8-0002", "c8-9999", "c8-10000"}) {
		t.Errorf("order %v", got)
	}
}
