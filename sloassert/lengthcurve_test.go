package sloassert_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/sloassert"
)

// A chain report draws chain totals against chain length: the
// prediction from single calls labelled as one, lines for lengths 1..10
// (twice the 5-call chains, at least 10), the measured chains as dots at
// length 5 (p99 left out: 40 chains are too few); Check writes it as
// chain-length.svg and a table in report.md, the measured row at length
// 5 only.
func TestChainLengthCurveReport(t *testing.T) {
	cr := synthChains()
	rep := sloassert.Evaluate(cr, sloassert.ChainQ(0.5, 6e9))
	if rep.LengthCurve != nil {
		t.Error("Evaluate computed the length curve (WriteReport does)")
	}
	svg := string(byName(t, sloassert.Charts(cr, rep), "chain-length").SVG())
	for _, want := range []string{"chain total against chain length", "a prediction", "the ground truth", "p50 predicted", "p95 predicted",
		"p99 predicted", "p50 measured", "p95 measured", "measured p99 left out at", "(n=40): needs n", "chain length (calls)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chain-length.svg lacks %q", want)
		}
	}
	if strings.Contains(svg, "p99 measured") {
		t.Error("chain-length.svg draws a measured p99 from 40 chains")
	}
	t.Setenv(sloassert.EnvStepSummary, "")
	sloassert.Check(t, cr, sloassert.ChainQ(0.5, 6e9))
	md, err := os.ReadFile(filepath.Join(artifactDirOf(t), "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	c := cr.LengthCurve(10, 1)
	at5 := c.Points[4]
	row5 := "| 5 | "
	rows := 0
	for _, line := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(line, "| ") && strings.Count(line, "|") == 9 && line[2] >= '0' && line[2] <= '9' {
			rows++
			measured := !strings.HasSuffix(line, "|  |  |  |")
			if measured != strings.HasPrefix(line, row5) {
				t.Errorf("row %q: measured %v", line, measured)
			}
		}
	}
	if rows != 10 || at5.Measured.N != 40 {
		t.Errorf("%d rows in report.md, %d chains measured at length 5; want 10 and 40", rows, at5.Measured.N)
	}
	for _, want := range []string{"### Chain total against chain length", "a prediction, not a measurement", "| 5 | ", " | 40 | "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	page, err := os.ReadFile(filepath.Join(artifactDirOf(t), "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `<tr><td class="num">`); n != 10 {
		t.Errorf("report.html's chain-length table has %d rows, want 10", n)
	}
	for _, want := range []string{"<h2>Chain total against chain length</h2>", "a prediction, not a measurement", `<td class="num">5</td>`, `<td class="num">40</td>`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
