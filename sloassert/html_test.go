package sloassert_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// refAttr finds attributes that could make a browser fetch something.
var refAttr = regexp.MustCompile(`(?i)\b(src|href|action|poster|data)\s*=\s*"([^"]*)"`)

// selfContained fails t when page refers to anything outside itself.
func selfContained(t *testing.T, page string) {
	t.Helper()
	for _, m := range refAttr.FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[2], "#") {
			t.Errorf("the page refers outside itself: %s", m[0])
		}
	}
	for _, bad := range []string{"<link", "@import", "url(", "<iframe", "<img"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if !strings.Contains(page, "default-src 'none'") {
		t.Error("the page has no Content-Security-Policy forbidding fetches")
	}
}

// The HTML page holds the verdict table with intervals, the distribution,
// the CDF charts and the timeline inline, errors with an example, the
// slowest trace IDs and the disclosure, and fetches nothing.
func TestWriteHTML(t *testing.T) {
	r := mdRun()
	rep := sloassert.Evaluate(r, chartSpec...)
	rep.Title = "c8 <b>"
	var buf bytes.Buffer
	if err := sloassert.WriteHTML(&buf, r, rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`<span class="verdict FAIL">FAIL</span>`,
		"c8 &lt;b&gt;", // the title escaped
		"<th class=\"\" data-sortable>interval (95%)</th>",
		"ttft p99 &lt;= 1500.0ms",
		`<tr class="fail">`,
		"min (ms)",
		"http_529", "c8-0059", "overloaded",
		"Slowest requests",
		"load levels: only concurrency [8] tested",
		"Raw records: records.jsonl",
		"<figcaption>total over time</figcaption>", // the timeline, though the run is short
		"<svg ",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<svg "); n != 3 {
		t.Errorf("%d charts inline, want 3 (CDF of ttft and total, the timeline)", n)
	}
	selfContained(t, page)
}

// A description (tailguard report) has no verdict badge; an empty spec's
// report fails with its problem said.
func TestWriteHTMLDescribedAndEmpty(t *testing.T) {
	r := mdRun()
	var buf bytes.Buffer
	if err := sloassert.WriteHTML(&buf, r, sloassert.Describe(r)); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, `class="verdict`) {
		t.Error("a description shows a verdict")
	}
	for _, want := range []string{"first_answer", "max_gap", "Distributions"} {
		if !strings.Contains(page, want) {
			t.Errorf("the description lacks %q", want)
		}
	}
	if rep := sloassert.Describe(r); rep.OK() {
		t.Error("a description passes")
	}
	buf.Reset()
	if err := sloassert.WriteHTML(&buf, r, sloassert.Evaluate(r)); err != nil {
		t.Fatal(err)
	}
	if p := buf.String(); !strings.Contains(p, `verdict FAIL`) || !strings.Contains(p, "an empty spec never passes") {
		t.Errorf("an empty spec's page does not fail with its problem:\n%.600s", p)
	}
	buf.Reset()
	if err := sloassert.WriteHTML(&buf, (*latencytest.Result)(nil), sloassert.Describe(nil)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "no result to describe") {
		t.Error("a nil result's page does not say so")
	}
}

// Check writes report.html beside report.md; a sweep's overview page
// lists its levels.
func TestCheckWritesHTML(t *testing.T) {
	t.Setenv(sloassert.EnvStepSummary, "")
	sr := &latencytest.SweepResult{Planned: []int{1, 8}}
	for _, c := range []int{1, 8} {
		sr.Levels, sr.Results = append(sr.Levels, c), append(sr.Results, synthRun(120, c, 10*time.Millisecond, 0, 0, false))
	}
	sloassert.Check(t, sr, sloassert.Q(sloassert.TTFT, 0.5, time.Second))
	dir := artifactDirOf(t)
	page, err := os.ReadFile(filepath.Join(dir, "report-sweep.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`<span class="verdict PASS">PASS</span>`, "<td class=\"\">c1</td>", "<td class=\"\">c8</td>", "ttft p99 (ms)", "<svg "} {
		if !strings.Contains(string(page), w) {
			t.Errorf("report-sweep.html lacks %q", w)
		}
	}
	selfContained(t, string(page))
	level, err := os.ReadFile(filepath.Join(dir, "report-c8.html"))
	if err != nil || !strings.Contains(string(level), "total over time") {
		t.Errorf("report-c8.html (%v) lacks its timeline", err)
	}
}
