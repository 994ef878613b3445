package sloassert_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// mdRun is synthRun's closed-loop run with a disclosure: two boxes left
// empty, the raw records named.
func mdRun() *latencytest.Result {
	r := synthRun(300, 8, 50*time.Millisecond, 50, 60, false)
	r.Disclosure = latencytest.Disclosure{Boxes: []latencytest.Box{
		{N: 3, Question: "where the raw records are", Answer: "records.jsonl"},
		{N: 8, Question: "load levels", Answer: "only concurrency [8] tested (fewer than three load levels)", Missing: true},
		{N: 15, Question: "network location of the client", Missing: true},
	}}
	return r
}

// The Markdown report holds the objectives table, the distribution in one
// unit, errors by class with an example, the slowest trace IDs, the empty
// disclosure boxes and the charts as images.
func TestMarkdownGolden(t *testing.T) {
	rep := sloassert.Evaluate(mdRun(), chartSpec...)
	rep.Title = "c8"
	md := sloassert.Markdown(rep, "cdf-ttft.svg", "cdf-total.svg")
	for _, want := range []string{
		"## c8: FAIL",
		"| objective | observed | interval (95%) | budget | margin | verdict | note |",
		"| ttft p99 <= 1500.0ms |",
		"| metric | n | failed | min (ms) |",
		"| http_529 | 5 | `c8-0059`: overloaded |",
		"### Slowest requests",
		"- 8. load levels: only concurrency [8] tested",
		"- 15. network location of the client",
		"Raw records: `records.jsonl`",
		"![cdf-ttft](cdf-ttft.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	golden(t, filepath.Join("report", "c8.md"), md)
}

// A report that could not judge says why, and a pipe in a cell does not
// split the table.
func TestMarkdownProblem(t *testing.T) {
	rep := sloassert.Evaluate((*latencytest.Result)(nil))
	md := sloassert.Markdown(rep)
	if !strings.Contains(md, "## result: FAIL") || !strings.Contains(md, "> **Problem:** no result to judge") {
		t.Errorf("report:\n%s", md)
	}
	rep = sloassert.Report{Title: "a|b", Outcomes: []sloassert.Outcome{{Objective: "x | y", Note: "<b>bold</b> <= 2", OK: true, Verdict: sloassert.Pass}}}
	md = sloassert.Markdown(rep)
	if !strings.Contains(md, "&lt;b>bold&lt;/b> <= 2") {
		t.Errorf("HTML in a cell is not escaped:\n%s", md)
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| x") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 8 {
			t.Errorf("row splits on a pipe: %s", line)
		}
	}
}

// Check writes report.md and the charts to the test's artifact directory;
// a second result judged in the same test goes to report-<title>.md.
func TestCheckWritesReport(t *testing.T) {
	t.Setenv(sloassert.EnvStepSummary, "")
	r := mdRun()
	spec := []sloassert.Objective{sloassert.Q(sloassert.TTFT, 0.5, time.Second), sloassert.MaxErrorRate(0.05)}
	if !sloassert.Check(t, r, spec...) {
		t.Fatal("the spec fails")
	}
	sloassert.Check(t, r, spec...)
	dir := artifactDirOf(t)
	got := listDir(t, dir)
	want := []string{"cdf-total-result.svg", "cdf-total.svg", "cdf-ttft-result.svg", "cdf-ttft.svg", "report-result.html", "report-result.md", "report.html", "report.md"}
	if !slices.Equal(got, want) {
		t.Errorf("artifacts %v, want %v", got, want)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report-result.md"))
	if err != nil || !strings.Contains(string(md), "![cdf-ttft-result](cdf-ttft-result.svg)") {
		t.Errorf("report-result.md (%v):\n%s", err, md)
	}
}

// Check of a sweep writes a report per level, the sweep charts and an
// overview; of chains, the chain totals' CDF.
func TestCheckSweepWritesReports(t *testing.T) {
	t.Setenv(sloassert.EnvStepSummary, "")
	sr := &latencytest.SweepResult{Planned: []int{1, 8}}
	for _, c := range []int{1, 8} {
		sr.Levels, sr.Results = append(sr.Levels, c), append(sr.Results, synthRun(120, c, 10*time.Millisecond, 0, 0, false))
	}
	sloassert.Check(t, sr, sloassert.Q(sloassert.TTFT, 0.5, time.Second))
	got := listDir(t, artifactDirOf(t))
	want := []string{"cdf-total-c1.svg", "cdf-total-c8.svg", "cdf-ttft-c1.svg", "cdf-ttft-c8.svg",
		"report-c1.html", "report-c1.md", "report-c8.html", "report-c8.md", "report-sweep.html", "report-sweep.md", "sweep-ttft.svg"} // total is not judged: no sweep-total
	if !slices.Equal(got, want) {
		t.Errorf("artifacts %v, want %v", got, want)
	}
	md, _ := os.ReadFile(filepath.Join(artifactDirOf(t), "report-sweep.md"))
	for _, w := range []string{"## sweep: PASS", "| c1 | pass | 120 | 0 |", "![sweep-ttft](sweep-ttft.svg)", "[c8](report-c8.md)"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report-sweep.md lacks %q:\n%s", w, md)
		}
	}
}

// artifactDirOf is t.ArtifactDir() (Go 1.26); the test is skipped on
// an older Go, whose T has none.
func artifactDirOf(t *testing.T) string {
	t.Helper()
	a, ok := any(t).(interface{ ArtifactDir() string })
	if !ok {
		t.Skip("testing.T has no ArtifactDir before Go 1.26")
	}
	return a.ArtifactDir()
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// TestErrorExampleKeepsTheCause: a transport error wrapped in a long
// request line ends with its cause; the text report and the Markdown
// keep both ends of it (cut in the middle at 160 characters), where a
// cut at 80 kept only the URL.
func TestErrorExampleKeepsTheCause(t *testing.T) {
	detail := `Post "http://127.0.0.1:41234/v1/chat/completions?deployment=eastus-gpt-4o-2024-08-06&api-version=2024-10-21&trace=c1-0007": ` +
		`read tcp 127.0.0.1:51812->127.0.0.1:41234: read: connection reset by peer`
	r := streamed(100)
	for i := range 5 {
		r.Records[i].Err, r.Records[i].Detail = latencytest.ClassTransport, detail
	}
	rep := sloassert.Evaluate(r, sloassert.MaxErrorRate(0.01))
	text, md := rep.String(), sloassert.Markdown(rep)
	for name, out := range map[string]string{"text": text, "markdown": md} {
		if !strings.Contains(out, "connection reset by peer") || !strings.Contains(out, "127.0.0.1:41234/v1/chat/completions") {
			t.Errorf("%s report lost an end of the error:\n%s", name, out)
		}
	}
	short := format.ShortDetail(detail)
	if n := utf8.RuneCountInString(short); n != 160 || !strings.Contains(short, "…") {
		t.Errorf("cut to %d characters: %q", n, short)
	}
	if d := format.ShortDetail("dial tcp: connection refused"); d != "dial tcp: connection refused" {
		t.Errorf("a short detail changed: %q", d)
	}
}
