package latencytest_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// Measure writes the raw records and the summary as artifacts, and the
// records read back give the same figures.
func TestMeasureWritesArtifacts(t *testing.T) {
	var dir string
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(0, 0, 8)
		prof.TTFT = fakeprovider.LogNormal(200*time.Millisecond, time.Second)
		prof.Faults.HTTP529 = 0.05
		_, p := fake(t, prof)
		r := latencytest.Batch{Requests: 200, Warmup: 5, Concurrency: 10, Load: latencytest.Load{MaxTokens: 8, Location: "loopback, in memory"}}.Measure(t, p)
		dir = artifactDir(t)

		recs, err := latencytest.LoadRecords(filepath.Join(dir, "records.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		// The artifact has the timings; the answers stay in memory only
		// (Batch.KeepContent is off).
		want := stripMonotonic(r.Records)
		for i := range want {
			if want[i].OK() && want[i].Content == "" {
				t.Fatalf("record %d: the in-memory result lost its answer", i)
			}
			want[i].Content = ""
		}
		for i := range recs {
			if !recs[i].Start.Equal(want[i].Start) {
				t.Fatalf("record %d: start %v, want %v", i, recs[i].Start, want[i].Start)
			}
			recs[i].Start = want[i].Start
		}
		if !reflect.DeepEqual(recs, want) {
			for i := range recs {
				if !reflect.DeepEqual(recs[i], want[i]) {
					t.Fatalf("record %d read back:\n%+v\nwant\n%+v", i, recs[i], want[i])
				}
			}
		}
		back := &latencytest.Result{Records: recs}
		for _, q := range []float64{0.5, 0.9, 0.99} {
			if back.TTFT().Quantile(q) != r.TTFT().Quantile(q) || back.Total().Quantile(q) != r.Total().Quantile(q) {
				t.Errorf("p%g recomputed from the raw records differs", q*100)
			}
		}
		if back.ErrorRate() != r.ErrorRate() || r.ErrorRate() == 0 {
			t.Errorf("error rate %v vs %v", back.ErrorRate(), r.ErrorRate())
		}
		var sum map[string]any
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil || json.Unmarshal(b, &sum) != nil {
			t.Fatalf("summary.json: %v", err)
		}
		if c := sum["counts"].(map[string]any); c["sent"] != 205.0 || c["discarded"] != 5.0 {
			t.Errorf("summary counts %v", c)
		}
		if box := r.Disclosure.Box(3); box.Missing || !strings.Contains(box.Answer, "records.jsonl (") {
			t.Errorf("box 3 %+v", box)
		}
		if box := r.Disclosure.Box(13); !strings.Contains(box.Answer, "virtual time") {
			t.Errorf("box 13 %+v", box)
		}
		if box := r.Disclosure.Box(14); box.Missing || box.Answer != "loopback, in memory" {
			t.Errorf("box 14 %+v", box)
		}
	})
	if dir == "" {
		t.Fatal("no artifact dir")
	}
}

// stripMonotonic drops the monotonic clock reading, which JSON cannot keep.
func stripMonotonic(recs []latencytest.Record) []latencytest.Record {
	out := make([]latencytest.Record, len(recs))
	for i, r := range recs {
		r.Start = r.Start.Round(0)
		out[i] = r
	}
	return out
}

func TestMeasureChainsAndSweep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(100*time.Millisecond, 10*time.Millisecond, 16))
		cr := latencytest.Chain{Chains: 4, Length: 3, Concurrency: 2}.Measure(t, p)
		recs, err := latencytest.LoadRecords(filepath.Join(artifactDir(t), "records.jsonl"))
		if err != nil || len(recs) != 12 || recs[0].ID != "chain00-call00" {
			t.Fatalf("chain records: %d, %v", len(recs), err)
		}
		if cr.Totals().Len() != 4 {
			t.Errorf("totals %v", cr.Totals())
		}
		// Inside a bubble t.Run is not allowed: the levels run in turn.
		sr := latencytest.Sweep{Batch: latencytest.Batch{NoWarmup: true, Requests: 10, Load: latencytest.Load{MaxTokens: 4}}, Levels: []int{1, 2, 4}}.Measure(t, p)
		if len(sr.Results) != 3 || sr.Results[2].Records[0].ID != "c4-0000" {
			t.Errorf("sweep %v", sr.Levels)
		}
		// One test, four runs: none overwrites another's artifacts.
		for _, l := range []string{"c1", "c2", "c4"} {
			recs, err := latencytest.LoadRecords(filepath.Join(artifactDir(t), "records-"+l+".jsonl"))
			if err != nil || len(recs) != 10 || !strings.HasPrefix(recs[0].ID, l+"-") {
				t.Errorf("level %s: %d records, %v", l, len(recs), err)
			}
			if _, err := os.Stat(filepath.Join(artifactDir(t), "summary-"+l+".json")); err != nil {
				t.Errorf("level %s: %v", l, err)
			}
			if box := sr.Results[0].Disclosure.Box(3); !strings.Contains(box.Answer, "records-c1.jsonl") {
				t.Errorf("box 3 %+v", box)
			}
		}
		if recs, err := latencytest.LoadRecords(filepath.Join(artifactDir(t), "records.jsonl")); err != nil || recs[0].ID != "chain00-call00" {
			t.Errorf("the chain's records were overwritten: %v", err)
		}
	})
}

// Outside a bubble the sweep makes a subtest per level.
func TestMeasureSweepSubtests(t *testing.T) {
	f := fakeprovider.New(fixed(0, 0, 2))
	defer f.Close()
	p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
	sr := latencytest.Sweep{Batch: latencytest.Batch{NoWarmup: true, Requests: 5, Load: latencytest.Load{MaxTokens: 2}}, Levels: []int{1, 3}}.Measure(t, p)
	if len(sr.Results) != 2 {
		t.Fatalf("levels %v", sr.Levels)
	}
	for _, r := range sr.Results {
		if r.Counts().Kept != 5 {
			t.Errorf("counts %+v", r.Counts())
		}
	}
}

// artifactDir is t.ArtifactDir(), reached through an interface because the
// module says go 1.25 and ArtifactDir came in Go 1.26.
func artifactDir(t testing.TB) string {
	a, ok := t.(interface{ ArtifactDir() string })
	if !ok {
		t.Skip("this Go has no testing.T.ArtifactDir (Go 1.26)")
	}
	return a.ArtifactDir()
}

// attrTB records the attributes a wrapper reports.
type attrTB struct {
	testing.TB
	attrs map[string]string
}

func (a *attrTB) Attr(k, v string) { a.attrs[k] = v }

// Measure reports the key figures as test attributes.
func TestMeasureReportsAttributes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(200*time.Millisecond, 10*time.Millisecond, 64))
		a := &attrTB{TB: t, attrs: map[string]string{}}
		latencytest.Batch{NoWarmup: true, Requests: 10, Load: latencytest.Load{MaxTokens: 64}}.Measure(a, p)
		want := map[string]string{"tailguard.sent": "10", "tailguard.failed": "0", "tailguard.ttft.p50": "200.0ms",
			"tailguard.ttft.p99": "200.0ms", "tailguard.total.p50": "830.0ms", "tailguard.total.p99": "830.0ms", "tailguard.error_rate": "0.0000"}
		if !reflect.DeepEqual(a.attrs, want) {
			t.Errorf("attributes %v, want %v", a.attrs, want)
		}
	})
}

// logTB captures what a wrapper logs, and where each log line would point:
// like testing, it skips the frames of functions that called Helper.
type logTB struct {
	testing.TB
	helpers map[string]bool
	logs    []string
	sites   []string
}

func newLogTB(t testing.TB) *logTB { return &logTB{TB: t, helpers: map[string]bool{}} }

func (l *logTB) Helper() {
	pc, _, _, _ := runtime.Caller(1)
	l.helpers[runtime.FuncForPC(pc).Name()] = true
}

func (l *logTB) Log(args ...any) { l.logs = append(l.logs, fmt.Sprint(args...)); l.site() }

func (l *logTB) Logf(format string, args ...any) {
	l.logs = append(l.logs, fmt.Sprintf(format, args...))
	l.site()
}

// site records file:function of the first caller that is not a helper.
func (l *logTB) site() {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if !l.helpers[f.Function] {
			l.sites = append(l.sites, filepath.Base(f.File)+" "+f.Function[strings.LastIndex(f.Function, ".")+1:])
			return
		}
		if !more {
			l.sites = append(l.sites, "(no caller outside helpers)")
			return
		}
	}
}

// Measure logs a few lines (the whole distribution and disclosure only
// under -v): what ran, the counts, p50/p99 of TTFT and total, errors by
// class with an example, and where the raw records are and whether they
// outlive the test. No Go map or struct is printed, and every line points
// at the user's test.
func TestMeasureLogsOneScreen(t *testing.T) {
	kept := flag.Lookup("test.artifacts").Value.String() == "true"
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(200*time.Millisecond, 10*time.Millisecond, 8)
		prof.Script = []fakeprovider.ScriptEntry{{ID: "c2-0003", Status: 529}, {ID: "c2-0007", Status: 529}, {ID: "c2-0005", Fault: fakeprovider.FaultEmpty}}
		_, p := fake(t, prof)
		l := newLogTB(t)
		latencytest.Batch{NoWarmup: true, Requests: 20, Concurrency: 2, Load: latencytest.Load{MaxTokens: 8}}.Measure(l, p)
		cr := latencytest.Chain{Chains: 2, Length: 2}.Measure(l, p)
		if len(cr.Chains) != 2 {
			t.Fatalf("chains %d", len(cr.Chains))
		}
		if len(l.logs) == 0 {
			t.Fatal("nothing logged")
		}
		brief := l.logs[0]
		if n := strings.Count(brief, "\n") + 1; n > 8 {
			t.Errorf("the compact summary has %d lines, want at most 8:\n%s", n, brief)
		}
		for _, want := range []string{
			"c2", "concurrency 2", "fake-model", // what ran
			"sent 20 of 20 planned: 17 kept, 0 discarded (warm-up), 3 failed",
			"ttft p50 200.0ms p99 failed; total p50 270.0ms p99 failed",
			`http_529 2 (e.g. c2-0003: "`, "empty_stream 1 (e.g. c2-0005: \"the stream ended without a token\")",
			"records.jsonl",
		} {
			if !strings.Contains(brief, want) {
				t.Errorf("the summary lacks %q:\n%s", want, brief)
			}
		}
		vanish := "(deleted when the test ends; run go test -artifacts to keep it)"
		if kept {
			vanish = "(kept: -artifacts)"
		}
		if !strings.Contains(brief, vanish) {
			t.Errorf("the summary does not say whether the records outlive the test (%q):\n%s", vanish, brief)
		}
		if !testing.Verbose() && strings.Contains(strings.Join(l.logs, "\n"), "what was timed") {
			t.Errorf("the disclosure was logged without -v")
		}
		for i, line := range l.logs {
			if strings.Contains(line, "map[") || strings.Contains(line, "{") {
				t.Errorf("log %d prints a Go map or struct:\n%s", i, line)
			}
		}
		for i, site := range l.sites {
			if !strings.HasPrefix(site, "measure_test.go ") {
				t.Errorf("log %d points at %s, not the test", i, site)
			}
		}
	})
}

// summary.json explains itself: snake_case keys, durations in _ns, Failed
// and undefined values as null, and the test, label, level and model.
func TestSummaryJSONExplainsItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof := fixed(100*time.Millisecond, 10*time.Millisecond, 4)
		prof.Script = []fakeprovider.ScriptEntry{{ID: "load-0002", Status: 400}}
		_, p := fake(t, prof)
		latencytest.Batch{NoWarmup: true, Requests: 10, Concurrency: 3, Load: latencytest.Load{MaxTokens: 4, Label: "load"}}.Measure(t, p)
		b, err := os.ReadFile(filepath.Join(artifactDir(t), "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var sum map[string]any
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]any{"test": t.Name(), "label": "load", "concurrency": 3.0, "model": "fake-model", "error_rate": 0.1} {
			if sum[k] != want {
				t.Errorf("%s = %v, want %v", k, sum[k], want)
			}
		}
		ttft, _ := sum["ttft"].(map[string]any)
		// 1 of 10 failed: p99 (rank 9.91, between the 9th and the failed
		// 10th value) is Failed, so null; CV and p99/p50 are infinite,
		// null too; p50 is 100 ms.
		for _, k := range []string{"n", "failed", "min_ns", "p50_ns", "p90_ns", "p95_ns", "p99_ns", "max_ns", "mean_ns", "stddev_ns", "cv_percent", "tail_ratio"} {
			if _, ok := ttft[k]; !ok {
				t.Errorf("ttft lacks %q: %v", k, ttft)
			}
		}
		if ttft["p99_ns"] != nil || ttft["max_ns"] != nil || ttft["cv_percent"] != nil || ttft["p50_ns"] != 1e8 || ttft["failed"] != 1.0 {
			t.Errorf("ttft %v: want p99, max and CV null, p50 1e8 ns", ttft)
		}
		ex, _ := sum["error_examples"].([]any)
		if len(ex) != 1 || ex[0].(map[string]any)["id"] != "load-0002" || ex[0].(map[string]any)["class"] != "http_400" {
			t.Errorf("error_examples %v", sum["error_examples"])
		}
		// Every key is snake_case, every duration ends in _ns, and no
		// Failed value leaks as 9223372036854775807.
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if path != ".errors" && strings.ToLower(k) != k || strings.ContainsAny(k, " -") {
						t.Errorf("key %s.%s is not snake_case", path, k)
					}
					walk(path+"."+k, x)
				}
			case []any:
				for _, x := range v {
					walk(path+"[]", x)
				}
			case float64:
				if v >= 9e18 {
					t.Errorf("%s = %v: a Failed value written as a number", path, v)
				}
			}
		}
		walk("", sum)
		for _, k := range []string{`"N"`, `"P50"`, `"CV"`, `"TailRatio"`, `"Min"`} {
			if strings.Contains(string(b), k) {
				t.Errorf("summary.json still has the key %s", k)
			}
		}
	})
}

// Answers reach records.jsonl only when the test asks for them; the result
// keeps them either way.
func TestKeepContent(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		keep      bool
	}{
		{"default", "answer text is left out of the artifact", false},
		{"KeepContent", "the test asked for the answers", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, p := fake(t, fixed(10*time.Millisecond, time.Millisecond, 4))
				r := latencytest.Batch{NoWarmup: true, Requests: 3, Load: latencytest.Load{MaxTokens: 4, KeepContent: tc.keep}}.Measure(t, p)
				recs, err := latencytest.LoadRecords(filepath.Join(artifactDir(t), "records.jsonl"))
				if err != nil || len(recs) != 3 {
					t.Fatalf("%d records, %v", len(recs), err)
				}
				if (recs[0].Content != "") != tc.keep || r.Records[0].Content == "" {
					t.Errorf("%s: artifact content %q, result content %q", tc.why, recs[0].Content, r.Records[0].Content)
				}
			})
			synctest.Test(t, func(t *testing.T) {
				_, p := fake(t, fixed(10*time.Millisecond, time.Millisecond, 4))
				cr := latencytest.Chain{Chains: 1, Length: 2, Load: latencytest.Load{KeepContent: tc.keep}}.Measure(t, p)
				recs, err := latencytest.LoadRecords(filepath.Join(artifactDir(t), "records.jsonl"))
				if err != nil || len(recs) != 2 {
					t.Fatalf("%d records, %v", len(recs), err)
				}
				if (recs[1].Content != "") != tc.keep || cr.Chains[0].Calls[1].Content == "" {
					t.Errorf("chain: %s: artifact content %q", tc.why, recs[1].Content)
				}
			})
		})
	}
}

func TestErrorExamples(t *testing.T) {
	long := strings.Repeat("é", 100) + strings.Repeat("ü", 100)
	r := &latencytest.Result{Records: []latencytest.Record{
		{ID: "w-0", Warmup: true, Err: "http_500", Detail: "warm-up failures do not count"},
		{ID: "c1-0000", Err: "http_400", Detail: "you must provide a model parameter"},
		{ID: "c1-0001", Err: "total_timeout", Detail: "not done within 30s"},
		{ID: "c1-0002"},
		{ID: "c1-0003", Err: "http_400", Detail: "other"},
		{ID: "c1-0004", Err: "bad_stream", Detail: long},
		{ID: "c1-0005", Err: "http_529"},
	}}
	got := latencytest.ErrorExamples(r)
	var lines []string
	for _, e := range got {
		lines = append(lines, e.String())
	}
	// By count, then class; the example is the first in submission order;
	// a detail of 200 characters is cut to 160 in the middle (80, "…",
	// the last 79), so a wrapped error's cause at its end stays.
	want := []string{
		`http_400 2 (e.g. c1-0000: "you must provide a model parameter")`,
		`bad_stream 1 (e.g. c1-0004: "` + strings.Repeat("é", 80) + `…` + strings.Repeat("ü", 79) + `")`,
		`http_529 1 (e.g. c1-0005)`,
		`total_timeout 1 (e.g. c1-0001: "not done within 30s")`,
	}
	if !slices.Equal(lines, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if latencytest.ErrorExamples(&latencytest.Result{Records: []latencytest.Record{{ID: "ok"}}}) != nil {
		t.Error("examples without a failure")
	}
}
