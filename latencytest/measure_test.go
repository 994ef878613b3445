package latencytest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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
		r := latencytest.Batch{Requests: 200, Warmup: 5, Concurrency: 10, MaxTokens: 8, Location: "loopback, in memory"}.Measure(t, p)
		dir = artifactDir(t)

		recs, err := latencytest.LoadRecords(filepath.Join(dir, "records.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		want := stripMonotonic(r.Records)
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
		if box := r.Disclosure.Box(3); box.Missing || !strings.HasSuffix(box.Answer, "records.jsonl") {
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
		sr := latencytest.Sweep{Batch: latencytest.Batch{Requests: 10, MaxTokens: 4}, Levels: []int{1, 2, 4}}.Measure(t, p)
		if len(sr.Results) != 3 || sr.Results[2].Records[0].ID != "c4-0000" {
			t.Errorf("sweep %v", sr.Levels)
		}
	})
}

// Outside a bubble the sweep makes a subtest per level.
func TestMeasureSweepSubtests(t *testing.T) {
	f := fakeprovider.New(fixed(0, 0, 2))
	defer f.Close()
	p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()))
	sr := latencytest.Sweep{Batch: latencytest.Batch{Requests: 5, MaxTokens: 2}, Levels: []int{1, 3}}.Measure(t, p)
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
		latencytest.Batch{Requests: 10, MaxTokens: 64}.Measure(a, p)
		want := map[string]string{"tailguard.sent": "10", "tailguard.failed": "0", "tailguard.ttft.p50": "200.0ms",
			"tailguard.ttft.p99": "200.0ms", "tailguard.total.p50": "830.0ms", "tailguard.total.p99": "830.0ms", "tailguard.error_rate": "0.0000"}
		if !reflect.DeepEqual(a.attrs, want) {
			t.Errorf("attributes %v, want %v", a.attrs, want)
		}
	})
}
