package sloassert

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/latencytest"
)

// Markdown renders a report as GitHub-flavoured Markdown, for a file or a
// job summary: the verdict, the objectives table (observed, interval,
// budget, margin, verdict, note), the distribution table (one unit per
// column), a chain run's chain-length table (rep.LengthCurve), the
// counts, errors by class with an example each, the slowest requests by
// trace ID, the disclosure boxes left empty, where the raw
// records are, and each of charts (a path or URL of an SVG file, relative
// to where the Markdown is read) as an image. A sweep's report renders as
// an overview, a row per level with its verdict, n, failures and p50, p95
// and p99 of each metric in one unit; each level's own report is
// Markdown(rep.Levels[i]).
func Markdown(rep Report, charts ...string) string {
	if rep.Levels != nil {
		return sweepMarkdown(rep.Levels, rep.Title, charts, true)
	}
	return markdown(rep, rep.Title, charts, true)
}

// markdown renders rep under heading; charts are embedded as images when
// embed is set, else named as files.
func markdown(rep Report, heading string, charts []string, embed bool) string {
	var sb strings.Builder
	verdict := "PASS"
	if !rep.OK() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&sb, "## %s: %s%s\n\n", mdText(heading), verdict, mdText(rep.shardLine()))
	if rep.Problem != "" {
		fmt.Fprintf(&sb, "> **Problem:** %s\n\n", mdText(rep.Problem))
	}
	if rep.Partial != "" {
		fmt.Fprintf(&sb, "> **Partial run:** %s\n\n", mdText(rep.Partial))
	}
	if len(rep.Outcomes) > 0 {
		sb.WriteString(mdOutcomes(rep.Outcomes))
		sb.WriteString("\n")
	}
	if len(rep.Distributions) > 0 {
		sb.WriteString(mdDistributions(rep.Distributions))
		sb.WriteString("\n")
	}
	if rep.LengthCurve != nil {
		sb.WriteString(mdLengthCurve(rep.LengthCurve) + "\n")
	}
	sb.WriteString(rep.size() + ".")
	if rep.Setup != "" {
		fmt.Fprintf(&sb, " Setup: %s.", mdText(rep.Setup))
	}
	sb.WriteString("\n\n")
	if rep.CPUPerWall > defaults.BusyClient {
		fmt.Fprintf(&sb, "> **Warning:** client CPU/wall %.2f is above %.1f: the client is part of the tail it measured.\n\n", rep.CPUPerWall, defaults.BusyClient)
	}
	if rep.Machine != "" {
		fmt.Fprintf(&sb, "> **Warning:** %s.\n\n", mdText(rep.Machine))
	}
	switch {
	case len(rep.ErrorExamples) > 0:
		sb.WriteString("### Errors by class\n\n| class | requests | example |\n|---|--:|---|\n")
		for _, e := range rep.ErrorExamples {
			ex := "`" + mdCode(e.ID) + "`"
			if e.Detail != "" {
				ex += ": " + mdText(format.ShortDetail(e.Detail))
			}
			fmt.Fprintf(&sb, "| %s | %d | %s |\n", mdText(e.Class), e.Count, ex)
		}
		sb.WriteString("\n")
	case len(rep.Errors) > 0:
		sb.WriteString("### Errors by class\n\n| class | requests |\n|---|--:|\n")
		for _, k := range slices.Sorted(maps.Keys(rep.Errors)) {
			fmt.Fprintf(&sb, "| %s | %d |\n", mdText(k), rep.Errors[k])
		}
		sb.WriteString("\n")
	}
	if len(rep.Slowest) > 0 {
		var vs []time.Duration
		for _, s := range rep.Slowest {
			vs = append(vs, s.Value)
		}
		u := format.UnitFor(vs...)
		fmt.Fprintf(&sb, "### Slowest requests\n\n| trace ID | latency (%s) | error | injected by the fake |\n|---|--:|---|---|\n", unitName2(u))
		for _, s := range rep.Slowest {
			fmt.Fprintf(&sb, "| `%s` | %s | %s | %s |\n", mdCode(s.ID), inUnitText(s.Value, u), mdText(s.Err), mdText(s.Injected))
		}
		sb.WriteString("\n")
	}
	if len(rep.Missing) > 0 {
		fmt.Fprintf(&sb, "### Disclosure: %d boxes left empty\n\n", len(rep.Missing))
		for _, b := range rep.Missing {
			line := fmt.Sprintf("- %d. %s", b.N, mdText(b.Question))
			if b.Answer != "" {
				line += ": " + mdText(b.Answer)
			}
			sb.WriteString(line + "\n")
		}
		sb.WriteString("\n")
	}
	if rep.RawRecords != "" {
		fmt.Fprintf(&sb, "Raw records: `%s`\n\n", mdCode(rep.RawRecords))
	}
	if len(charts) > 0 {
		sb.WriteString("### Charts\n\n")
		if embed {
			sb.WriteString(mdChartImages(charts))
		} else {
			sb.WriteString(mdChartNames(charts) + "\n\n")
		}
	}
	return strings.TrimRight(sb.String(), "\n") + "\n"
}

// mdChartImages embeds the chart files, a paragraph each, named by their
// file names.
func mdChartImages(charts []string) string {
	var sb strings.Builder
	for _, c := range charts {
		fmt.Fprintf(&sb, "![%s](%s)\n\n", mdText(strings.TrimSuffix(filepath.Base(c), ".svg")), mdLink(c))
	}
	return sb.String()
}

// mdChartNames lists the chart files as code spans, comma-separated.
func mdChartNames(charts []string) string {
	names := make([]string, len(charts))
	for i, c := range charts {
		names[i] = "`" + mdCode(c) + "`"
	}
	return strings.Join(names, ", ")
}

// mdOutcomes is the objectives table.
func mdOutcomes(outs []Outcome) string {
	head, interval := intervalColumn(outs, "interval (%s)")
	var sb strings.Builder
	fmt.Fprintf(&sb, "| objective | observed | %s | budget | margin | verdict | note |\n|---|--:|---|--:|--:|---|---|\n", head)
	for _, o := range outs {
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s |\n", mdText(o.Objective), mdText(o.Observed), mdText(interval(o)),
			mdText(o.Budget), mdText(o.Margin), verdictMark(o, "pass", "**FAIL**", " (inconclusive)"), mdText(noteAndServer(o)))
	}
	return sb.String()
}

// mdDistributions is the distribution table, in one unit.
func mdDistributions(ds []Distribution) string {
	var all []time.Duration
	for _, d := range ds {
		s := d.Summary
		all = append(all, s.Min, s.P50, s.P90, s.P95, s.P99, s.Max)
	}
	u := format.UnitFor(all...)
	un := unitName2(u)
	var sb strings.Builder
	fmt.Fprintf(&sb, "| metric | n | failed | min (%[1]s) | p50 (%[1]s) | p90 (%[1]s) | p95 (%[1]s) | p99 (%[1]s) | max (%[1]s) | CV%% | p99/p50 |\n", un)
	sb.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, d := range ds {
		s := d.Summary
		fmt.Fprintf(&sb, "| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdText(d.Metric), s.N, s.Failed,
			inUnitText(s.Min, u), inUnitText(s.P50, u), inUnitText(s.P90, u), inUnitText(s.P95, u), inUnitText(s.P99, u), inUnitText(s.Max, u),
			format.Float(s.CV, "%.0f"), format.Float(s.TailRatio, "%.2f"))
	}
	return sb.String()
}

// inUnitText is format.In without the unit (the column header
// names it): "1327.9", "failed", "-".
func inUnitText(d, u time.Duration) string {
	s := format.In(d, u)
	if d == latencytest.Failed || d == latencytest.NotObserved {
		return s
	}
	if u == time.Second {
		return strings.TrimSuffix(s, "s")
	}
	return strings.TrimSuffix(s, "ms")
}

var (
	mdEscaper = strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "*", `\*`, "`", "\\`", "](", `\](`)
	mdTag     = regexp.MustCompile(`<([A-Za-z/!?])`)
)

// mdText escapes text for a Markdown table cell or line: pipes, HTML
// tags, emphasis, code spans, inline links and line breaks ("<=", ">",
// and underscores inside words render as written).
func mdText(s string) string { return mdTag.ReplaceAllString(mdEscaper.Replace(s), "&lt;$1") }

// mdCode makes s safe inside a code span (no backquote, no line break, no
// pipe: a table would split on it even there).
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "\n", " ", "\r", " ", "|", `\|`).Replace(s)
}

// mdLink makes a relative path safe as a link target.
func mdLink(s string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29").Replace(filepath.ToSlash(s))
}

// sweepMarkdown renders a sweep's level reports as one overview under
// heading (Markdown).
func sweepMarkdown(reps []Report, heading string, charts []string, embed bool) string {
	var sb strings.Builder
	verdict := "PASS"
	for _, r := range reps {
		if !r.OK() {
			verdict = "FAIL"
		}
	}
	if len(reps) == 0 {
		verdict = "FAIL"
	}
	fmt.Fprintf(&sb, "## %s: %s\n\n", mdText(heading), verdict)
	metrics, u := levelColumns(reps)
	sb.WriteString("| level | verdict | n | failed |")
	align := "|---|---|--:|--:|"
	for _, m := range metrics {
		for _, q := range markedQuantiles {
			fmt.Fprintf(&sb, " %s %s (%s) |", mdText(m), QuantileName(q), unitName2(u))
			align += "--:|"
		}
	}
	sb.WriteString("\n" + align + "\n")
	for _, r := range reps {
		v := "pass"
		if !r.OK() {
			v = "**FAIL**"
			if r.Problem != "" {
				v += ": " + mdText(r.Problem)
			} else if f := r.Failed(); len(f) > 0 {
				names := make([]string, len(f))
				for i, o := range f {
					names[i] = mdText(o.Objective)
				}
				v += ": " + strings.Join(names, "; ")
			}
		}
		fmt.Fprintf(&sb, "| %s | %s | %d | %d |", mdText(r.Title), v, r.Counts.Kept+r.Counts.Failed, r.Counts.Failed)
		for _, cell := range levelCells(r, metrics, u) {
			fmt.Fprintf(&sb, " %s |", cell)
		}
		sb.WriteString("\n")
	}
	if len(charts) > 0 {
		sb.WriteString("\n")
		if embed {
			sb.WriteString(mdChartImages(charts))
		} else {
			sb.WriteString("Charts: " + mdChartNames(charts) + "\n")
		}
	}
	return strings.TrimRight(sb.String(), "\n") + "\n"
}

// WriteReport writes the report of s where people look: the charts
// (Charts: SVG files) and the Markdown report (report.md; when the test
// judges several subjects, report-<title>.md, charts suffixed likewise;
// for a sweep, each level's report, the sweep charts and an overview) to
// t's artifact directory when t has one (t.ArtifactDir(), Go 1.26: kept
// with go test -artifacts, else deleted when the test ends), and the
// report appended to the GitHub Actions job summary (the file named by
// GITHUB_STEP_SUMMARY) unless TAILGUARD_SUMMARY=off. Check calls it; call
// it yourself after Evaluate, with Evaluate's report of s. A file that
// cannot be written is reported with t.Errorf; a job summary that cannot
// be written is logged (when t has Logf).
func WriteReport[S Subject](t TestingT, s S, rep Report) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	switch s := any(s).(type) {
	case *latencytest.SweepResult:
		writeSweepReport(t, s, rep.Levels)
	case *latencytest.ChainResult:
		if rep.LengthCurve == nil {
			rep.LengthCurve = chainLengthCurve(s)
		}
		writeReport(t, rep, chainCharts(s, rep), pageCharts(s, rep))
	case *latencytest.Result:
		writeReport(t, rep, resultCharts(s, rep), pageCharts(s, rep))
	}
}

// writeReport writes rep with charts to the artifact directory and the job
// summary.
func writeReport(t TestingT, rep Report, charts, page []Chart) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	dir := artifactDir(t)
	var names []string
	if dir != "" {
		names, _ = writeArtifacts(t, dir, rep, charts, page, freeSuffix(dir, rep.Title))
	}
	appendSummary(t, markdown(rep, summaryHeading(t, rep.Title), names, false)+chartsWhere(dir, names))
}

// writeArtifacts writes the charts, report<suffix>.md and, with the
// page's charts, report<suffix>.html to dir; it returns the chart files
// and the Markdown report file written.
func writeArtifacts(t TestingT, dir string, rep Report, charts, page []Chart, suffix string) (names []string, report string) {
	for i := range charts {
		charts[i].Name += suffix
	}
	names, err := writeCharts(dir, charts...)
	if err != nil {
		t.Errorf("%v", err)
	}
	report = "report" + suffix + ".md"
	if err := os.WriteFile(filepath.Join(dir, report), []byte(Markdown(rep, names...)), 0o644); err != nil {
		t.Errorf("sloassert: writing the report: %v", err)
		return names, ""
	}
	writeHTMLFile(t, filepath.Join(dir, "report"+suffix+".html"), rep, page)
	return names, report
}

// writeHTMLFile writes rep's HTML page to path (WriteHTML).
func writeHTMLFile(t TestingT, path string, rep Report, charts []Chart) {
	var buf bytes.Buffer
	err := writeHTML(&buf, rep, charts)
	if err == nil {
		err = os.WriteFile(path, buf.Bytes(), 0o644)
	}
	if err != nil {
		t.Errorf("sloassert: writing the HTML report: %v", err)
	}
}

// writeSweepReport writes each level's report (report-c8.md, its charts
// suffixed -c8), the sweep charts and report-sweep.md to the artifact
// directory, and the overview and every level's report to the job
// summary.
func writeSweepReport(t TestingT, sr *latencytest.SweepResult, reps []Report) {
	if h, ok := t.(helper); ok {
		h.Helper()
	}
	dir := artifactDir(t)
	sections := make([]string, len(reps))
	var links []string
	for i, rep := range reps {
		var charts []Chart
		if sr != nil && len(rep.Concurrency) == 1 {
			if j := slices.Index(sr.Levels, rep.Concurrency[0]); j >= 0 && j < len(sr.Results) {
				charts = resultCharts(sr.Results[j], rep)
			}
		}
		var names []string
		if dir != "" {
			var file string
			page := charts
			if j := slices.Index(sr.Levels, rep.Concurrency[0]); len(rep.Concurrency) == 1 && j >= 0 && j < len(sr.Results) {
				page = pageCharts(sr.Results[j], rep)
			}
			names, file = writeArtifacts(t, dir, rep, charts, page, freeSuffix(dir, "\x00"+rep.Title))
			if file != "" {
				links = append(links, fmt.Sprintf("[%s](%s)", mdText(rep.Title), mdLink(file)))
			}
		}
		sections[i] = markdown(rep, summaryHeading(t, rep.Title), names, false) + chartsWhere(dir, names)
	}
	var names []string
	if dir != "" {
		suffix := freeSuffix(dir, "\x00sweep")
		charts := sweepCharts(reps)
		for i := range charts {
			charts[i].Name += strings.TrimPrefix(suffix, "-sweep")
		}
		var err error
		if names, err = writeCharts(dir, charts...); err != nil {
			t.Errorf("%v", err)
		}
		md := sweepMarkdown(reps, "sweep", names, true)
		if len(links) > 0 {
			md += "\nLevels: " + strings.Join(links, ", ") + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, "report"+suffix+".md"), []byte(md), 0o644); err != nil {
			t.Errorf("sloassert: writing the report: %v", err)
		}
		writeHTMLFile(t, filepath.Join(dir, "report"+suffix+".html"), Report{Title: "sweep", Levels: reps}, charts)
	}
	appendSummary(t, sweepMarkdown(reps, summaryHeading(t, "sweep"), names, false)+chartsWhere(dir, names)+"\n"+strings.Join(sections, "\n"))
}

// freeSuffix is "" when dir has no report.md yet, else "-<title>" (made
// safe for a file name), then "-<title>-2", "-<title>-3"…, the first whose
// report file is free. A title starting with "\x00" always gets a suffix.
func freeSuffix(dir, title string) string {
	forced := strings.HasPrefix(title, "\x00")
	if !forced && !exists(filepath.Join(dir, "report.md")) {
		return ""
	}
	base := "-" + slug(strings.TrimPrefix(title, "\x00"))
	suffix := base
	for i := 2; exists(filepath.Join(dir, "report"+suffix+".md")); i++ {
		suffix = base + "-" + strconv.Itoa(i)
	}
	return suffix
}

// slug makes a title safe as part of a file name: lower case letters,
// digits, '.', '_' and '-', other runs of characters as one '-'.
func slug(s string) string {
	var sb strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' || r == '_' || r == '-' {
			sb.WriteRune(r)
			dash = false
		} else if !dash && sb.Len() > 0 {
			sb.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(sb.String(), "-.")
	if out == "" {
		return "result"
	}
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// artifactDir is t.ArtifactDir() (Go 1.26) when t has it, else "".
func artifactDir(t TestingT) string {
	if a, ok := t.(interface{ ArtifactDir() string }); ok {
		return a.ArtifactDir()
	}
	return ""
}

// summaryHeading names the test and what it judged: "TestX (c8)".
func summaryHeading(t TestingT, title string) string {
	if n, ok := t.(interface{ Name() string }); ok {
		return n.Name() + " (" + title + ")"
	}
	return title
}

// chartsWhere says where the charts of a job summary are, and whether
// they outlive the test.
func chartsWhere(dir string, names []string) string {
	if len(names) == 0 {
		return ""
	}
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		return fmt.Sprintf("\nCharts and report.md are in `%s` (kept: -artifacts).\n", mdCode(dir))
	}
	return "\nCharts and report.md were written to a temporary directory: run go test -artifacts to keep them.\n"
}

// levelColumns are the metrics a sweep's levels measured, in order, and
// the one unit of their p50, p95 and p99 (the overview's columns).
func levelColumns(reps []Report) (metrics []string, u time.Duration) {
	var all []time.Duration
	for _, r := range reps {
		for _, d := range r.Distributions {
			if !slices.Contains(metrics, d.Metric) {
				metrics = append(metrics, d.Metric)
			}
			all = append(all, d.Summary.P50, d.Summary.P95, d.Summary.P99)
		}
	}
	return metrics, format.UnitFor(all...)
}

// levelCells are a level's p50, p95 and p99 of each metric in u ("" for a
// metric it did not measure).
func levelCells(r Report, metrics []string, u time.Duration) []string {
	var cells []string
	for _, m := range metrics {
		i := slices.IndexFunc(r.Distributions, func(d Distribution) bool { return d.Metric == m })
		for _, q := range markedQuantiles {
			cell := ""
			if i >= 0 {
				s := r.Distributions[i].Summary
				cell = inUnitText(map[float64]time.Duration{0.5: s.P50, 0.95: s.P95, 0.99: s.P99}[q], u)
			}
			cells = append(cells, cell)
		}
	}
	return cells
}
