package sloassert_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// chartT0 is the start of every synthetic run: charts plot offsets from
// it, so any fixed instant gives the same bytes.
var chartT0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// synthRun is a run built without a provider: n measured requests at
// concurrency c sent every gap, TTFT lognormal around 300 ms (seeded),
// total TTFT + 64 tokens at 10 ms, every coldEvery-th TTFT 40x slower
// (0: none), every failEvery-th an http_529 (0: none). Values are rounded
// to the microsecond, so the float maths of another platform cannot move
// a golden file.
func synthRun(n, c int, gap time.Duration, coldEvery, failEvery int, open bool) *latencytest.Result {
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	r := &latencytest.Result{Run: latencytest.Run{Planned: n, Start: chartT0, CPUPerWall: 0.05}}
	for i := range n {
		ttft := time.Duration(300e3*math.Exp(0.35*rng.NormFloat64())) * time.Microsecond
		if coldEvery > 0 && i%coldEvery == coldEvery-1 {
			ttft *= 40
		}
		rec := latencytest.Record{
			ID: fmt.Sprintf("c%d-%04d", c, i), Concurrency: c, OpenLoop: open,
			Start: chartT0.Add(time.Duration(i) * gap), TTFT: ttft, FirstAnswer: ttft,
			Total:  ttft + 640*time.Millisecond + time.Duration(rng.IntN(200))*time.Millisecond,
			MaxGap: 20 * time.Millisecond, TokenEvents: 64, CompletionTokens: 64, Status: 200,
		}
		if failEvery > 0 && i%failEvery == failEvery-1 {
			rec.Status, rec.Err, rec.Detail = 529, "http_529", "overloaded"
			rec.TTFT, rec.FirstAnswer, rec.Total, rec.TokenEvents = latencytest.NotObserved, latencytest.NotObserved, 0, 0
		}
		r.Records = append(r.Records, rec)
	}
	return r
}

// chartSpec judges TTFT and total at p50 and p99.
var chartSpec = []sloassert.Objective{
	sloassert.Q(sloassert.TTFT, 0.5, 400*time.Millisecond),
	sloassert.Q(sloassert.TTFT, 0.99, 1500*time.Millisecond),
	sloassert.Q(sloassert.Total, 0.99, 2*time.Second),
	sloassert.MaxErrorRate(0.05),
}

// chartGolden compares a chart with testdata/report/<name>.svg (rewritten
// with -update) and checks that it is well-formed enough to render.
func chartGolden(t *testing.T, c sloassert.Chart) {
	t.Helper()
	svg := c.SVG()
	if !bytes.HasPrefix(svg, []byte("<svg ")) || !bytes.HasSuffix(svg, []byte("</svg>\n")) {
		t.Errorf("%s: not one svg element", c.Name)
	}
	if !bytes.Equal(svg, c.SVG()) {
		t.Errorf("%s: two renderings differ", c.Name)
	}
	golden(t, filepath.Join("report", c.Name+".svg"), string(svg))
}

// byName finds a chart.
func byName(t *testing.T, charts []sloassert.Chart, name string) sloassert.Chart {
	t.Helper()
	var names []string
	for _, c := range charts {
		if c.Name == name {
			return c
		}
		names = append(names, c.Name)
	}
	t.Fatalf("no chart %q (have %v)", name, names)
	return sloassert.Chart{}
}

// A closed-loop run gives the CDF of TTFT and of total, no timeline; cold
// starts spread TTFT 40x, so its axis is logarithmic, total's linear.
func TestChartsCDF(t *testing.T) {
	r := synthRun(300, 8, 50*time.Millisecond, 50, 60, false)
	rep := sloassert.Evaluate(r, chartSpec...)
	rep.Title = "c8"
	charts := sloassert.Charts(r, rep)
	if len(charts) != 2 {
		t.Fatalf("got %d charts, want cdf-ttft and cdf-total", len(charts))
	}
	ttft, total := byName(t, charts, "cdf-ttft"), byName(t, charts, "cdf-total")
	// 5 failures in 300 put p99 on a failed value (rank 297.01 of 300);
	// the 12 s cold starts make TTFT and total spread over 20x. One unit
	// per axis: seconds, as 12 s is above 10 s.
	for _, want := range []string{"log scale", ">p50 0.303s<", ">p95 0.599s<", "p99 failed", ">p99 budget 1.500s: fail<", ">p50 budget 0.400s: pass<", "5 of 300 failed"} {
		if !strings.Contains(string(ttft.SVG()), want) {
			t.Errorf("cdf-ttft lacks %q", want)
		}
	}
	if !strings.Contains(string(total.SVG()), "log scale") {
		t.Errorf("cdf-total is not on a log scale; its spread is above 20x")
	}
	chartGolden(t, ttft)
	chartGolden(t, total)
}

// Below MinSamples a quantile is not marked: a p99 from 30 requests is an
// interpolation between the largest values, not a tail.
func TestChartsFewSamples(t *testing.T) {
	r := synthRun(30, 1, time.Second, 0, 0, false)
	rep := sloassert.Evaluate(r, chartSpec...)
	svg := string(byName(t, sloassert.Charts(r, rep), "cdf-ttft").SVG())
	for _, want := range []string{"p99 not marked: needs n &gt;= 100", "(have 30)", ">p95 ", ">p50 ", "(ms)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("cdf-ttft lacks %q", want)
		}
	}
	if regexp.MustCompile(`>p99 [0-9]`).MatchString(svg) {
		t.Errorf("cdf-ttft marks a p99 of 30 requests")
	}
	if strings.Contains(svg, "log scale") {
		t.Errorf("cdf-ttft is on a log scale; its spread is below 20x")
	}
}

// An open-loop run of 40 minutes gets a timeline with window medians and
// p99s; failed requests sit on the top edge.
func TestTimelineChart(t *testing.T) {
	r := synthRun(2400, 0, time.Second, 0, 97, true)
	// A slow stretch in minutes 20 to 25.
	for i := 1200; i < 1500; i++ {
		if r.Records[i].Err == "" {
			r.Records[i].Total += 2 * time.Second
		}
	}
	rep := sloassert.Evaluate(r, chartSpec...)
	tl := byName(t, sloassert.Charts(r, rep), "timeline-total")
	svg := string(tl.SVG())
	for _, want := range []string{"open-loop", "windows of 2m0s", "window p50", "window p99", "failed (top edge)", "(min)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("timeline lacks %q", want)
		}
	}
	chartGolden(t, tl)
	if c := sloassert.TimelineChart(r, sloassert.TTFT, 10*time.Minute); !strings.Contains(string(c.SVG()), "windows of 10m0s") {
		t.Errorf("an explicit window is not used")
	}
}

// TimelineChart refuses ITL: pooled gaps have no one start time.
func TestTimelineChartITL(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "sloassert: ") {
			t.Errorf("recovered %v, want a sloassert panic", r)
		}
	}()
	sloassert.TimelineChart(synthRun(10, 1, time.Second, 0, 0, false), sloassert.ITL, 0)
}

// A sweep gives p50/p95/p99 against concurrency, one chart per metric,
// with the budgets; the concurrency axis is logarithmic from 1 to 64.
func TestSweepCharts(t *testing.T) {
	sr := &latencytest.SweepResult{Planned: []int{1, 8, 64, 128}}
	for i, c := range []int{1, 8, 64} {
		r := synthRun(150, c, 10*time.Millisecond, 0, 0, false)
		for j := range r.Records { // latency grows with load
			r.Records[j].TTFT *= time.Duration(1 + i)
			r.Records[j].Total += time.Duration(i*i) * 300 * time.Millisecond
		}
		sr.Levels, sr.Results = append(sr.Levels, c), append(sr.Results, r)
	}
	charts := sloassert.Charts(sr, sloassert.Evaluate(sr, chartSpec...))
	if len(charts) != 2 {
		t.Fatalf("got %d sweep charts, want ttft and total", len(charts))
	}
	ttft := byName(t, charts, "sweep-ttft")
	svg := string(ttft.SVG())
	for _, want := range []string{"3 levels: c1, c8, c64", "p99 budget 1500.0ms", ">p95<", "left out: level c128 never ran"} {
		if !strings.Contains(svg, want) {
			t.Errorf("sweep-ttft lacks %q", want)
		}
	}
	chartGolden(t, ttft)
	chartGolden(t, byName(t, charts, "sweep-total"))
	var none *latencytest.SweepResult
	if got := sloassert.Charts(none, sloassert.Evaluate(none)); got != nil {
		t.Errorf("a sweep that did not run gives %d charts", len(got))
	}
}

// WriteCharts writes Name.svg files and returns their names.
func TestWriteCharts(t *testing.T) {
	r := synthRun(120, 4, 10*time.Millisecond, 0, 0, false)
	dir := t.TempDir()
	names, err := sloassert.WriteCharts(dir, sloassert.Charts(r, sloassert.Evaluate(r, chartSpec...))...)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, " "); got != "cdf-ttft.svg cdf-total.svg" {
		t.Errorf("wrote %s", got)
	}
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || !bytes.HasPrefix(b, []byte("<svg ")) {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := sloassert.WriteCharts(filepath.Join(dir, "missing"), sloassert.Charts(r, sloassert.Report{})...); err == nil || !strings.HasPrefix(err.Error(), "sloassert: ") {
		t.Errorf("writing to a missing directory: %v", err)
	}
}

// synthChains is 40 chains of 5 calls from synthRun's requests; chain
// total is the sum of its calls' totals.
func synthChains() *latencytest.ChainResult {
	r := synthRun(200, 4, 10*time.Millisecond, 0, 67, false)
	cr := &latencytest.ChainResult{Run: latencytest.Run{Planned: 40, Start: chartT0, CPUPerWall: 0.05}}
	for i := range 40 {
		ch := latencytest.ChainRun{ID: fmt.Sprintf("chain%02d", i)}
		for j := range 5 {
			rec := r.Records[i*5+j]
			rec.ID, rec.Chain, rec.Call = fmt.Sprintf("chain%02d-call%02d", i, j), i, j
			ch.Calls = append(ch.Calls, rec)
			ch.Total += rec.Total
			if rec.Err != "" && ch.Err == "" {
				ch.Err = rec.Err
			}
		}
		cr.Chains = append(cr.Chains, ch)
	}
	return cr
}

// Chain charts: the CDF of chain totals with the chain budget marked (read
// from ChainQ's name), and of the calls' totals; Check writes them.
func TestChainCharts(t *testing.T) {
	cr := synthChains()
	rep := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, 6*time.Second), sloassert.MaxChainErrorRate(0.1))
	charts := sloassert.Charts(cr, rep)
	chain := byName(t, charts, "cdf-chain-total")
	byName(t, charts, "cdf-call-total")
	for _, want := range []string{"n = 40 chains, 2 failed", ">p50 budget 6000.0ms: pass<", "p99 not marked"} {
		if !strings.Contains(string(chain.SVG()), want) {
			t.Errorf("cdf-chain-total lacks %q", want)
		}
	}
	t.Setenv(sloassert.EnvStepSummary, "")
	sloassert.Check(t, cr, sloassert.ChainQ(0.5, 6*time.Second))
	if got := strings.Join(listDir(t, artifactDirOf(t)), " "); got != "cdf-call-total.svg cdf-chain-total.svg chain-length.svg report.html report.md" {
		t.Errorf("artifacts: %s", got)
	}
}
