package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
	"github.com/tailguard/tailguard/slospec"
)

// compareMetrics are the clocks compare takes, by -metric.
var compareMetrics = []string{"ttft", "first_answer", "total", "itl", "max_gap"}

// defaultMetrics are the metrics compare defaults to, the first one both
// files measure: TTFT, else total (which every format measures).
var defaultMetrics = []string{"ttft", "total"}

func compare(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("tailguard compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := formatFlag(fs)
	metric := fs.String("metric", "", "clock compared: "+strings.Join(compareMetrics, ", ")+" (default: ttft when both files measure it, else total)")
	quantiles := fs.String("quantiles", "", "quantiles compared, fractions separated by commas (default 0.5,0.95,0.99)")
	maxInc := fs.Float64("max-increase", 0, "allowed increase of a quantile, a fraction (default 0.20)")
	mixed := fs.Bool("mixed", false, "compare files measured by two different tools (their clocks differ)")
	if err := parseFlags(fs, args, format); err != nil {
		return exitBad, err
	}
	if fs.NArg() != 2 {
		return exitBad, errors.New("compare: give two records files: tailguard compare base.jsonl new.jsonl")
	}
	if *metric != "" && !slices.Contains(compareMetrics, *metric) {
		return exitBad, fmt.Errorf("compare: -metric %q: want one of %s", *metric, strings.Join(compareMetrics, ", "))
	}
	if !(*maxInc >= 0) || math.IsInf(*maxInc, 0) {
		return exitBad, fmt.Errorf("compare: -max-increase %v: want a positive fraction (0.2 for +20%%)", *maxInc)
	}
	qs, err := parseQuantiles(*quantiles)
	if err != nil {
		return exitBad, err
	}
	base, err := load(*format, fs.Arg(0))
	if err != nil {
		return exitBad, err
	}
	cur, err := load(*format, fs.Arg(1))
	if err != nil {
		return exitBad, err
	}
	fb, fc := slospec.RecordsFormat(base), slospec.RecordsFormat(cur)
	if fb != fc && !*mixed {
		return exitBad, fmt.Errorf("compare: %s holds %s records, %s holds %s records: two tools time requests differently (give -mixed to compare them anyway)", fs.Arg(0), fb, fs.Arg(1), fc)
	}
	m, note, err := compareMetric(*metric, fb, fc)
	if err != nil {
		return exitBad, err
	}
	if note != "" {
		fmt.Fprintf(stdout, "%s\n", note)
	}
	if fb != fc {
		fmt.Fprintf(stdout, "mixed: the baseline holds %s records, the current run %s records (-mixed)\n", fb, fc)
	}
	rep := sloassert.Compare{Metric: sloassert.Metric(m), Quantiles: qs, MaxIncrease: *maxInc}.Evaluate(base, cur)
	fmt.Fprint(stdout, rep.String())
	code := compareCode(rep)
	if code == exitBad {
		var rows []string
		for _, ch := range rep.Changes {
			if ch.Problem != "" {
				rows = append(rows, sloassert.QuantileName(ch.Q))
			}
		}
		what := "the comparison"
		if rep.Problem == "" && len(rows) > 0 {
			what = strings.Join(rows, ", ")
		}
		fmt.Fprintf(stdout, "CANNOT JUDGE %s (exit status 2)\n", what)
	}
	return code, nil
}

// compareMetric is the metric compared: the one asked for, which both
// formats must measure, or the first of defaultMetrics both measure (note
// says why, when it is not TTFT).
func compareMetric(asked, fb, fc string) (m, note string, err error) {
	hb, hc := records.Metrics(fb), records.Metrics(fc)
	for _, f := range []struct {
		format string
		have   []string
	}{{fb, hb}, {fc, hc}} {
		if asked != "" && !slices.Contains(f.have, asked) {
			return "", "", fmt.Errorf("compare: -metric %s: %s records do not measure %s (they measure %s)", asked, f.format, asked, strings.Join(f.have, ", "))
		}
	}
	if asked != "" {
		return asked, "", nil
	}
	for _, d := range defaultMetrics {
		if slices.Contains(hb, d) && slices.Contains(hc, d) {
			if d != defaultMetrics[0] {
				by := fb
				if slices.Contains(hb, defaultMetrics[0]) {
					by = fc
				}
				note = fmt.Sprintf("metric: %s (%s records do not measure %s; -metric picks another)", d, by, defaultMetrics[0])
			}
			return d, note, nil
		}
	}
	return "", "", fmt.Errorf("compare: %s and %s records measure no clock in common among %s", fb, fc, strings.Join(defaultMetrics, ", "))
}

// parseQuantiles reads -quantiles: fractions in (0,1) separated by
// commas; "" is the default. A percent (99) is refused with what to
// write.
func parseQuantiles(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var qs []float64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		q, err := strconv.ParseFloat(part, 64)
		switch {
		case err != nil:
			return nil, fmt.Errorf("compare: -quantiles: %q is not a number (write fractions such as 0.5,0.95,0.99)", part)
		case q >= 1 && q < 100:
			return nil, fmt.Errorf("compare: -quantiles: %s is a percent, not a fraction: write %s for p%s", part, strconv.FormatFloat(q/100, 'g', -1, 64), part)
		case !(q > 0 && q < 1):
			return nil, fmt.Errorf("compare: -quantiles: %s is outside (0,1) (write fractions such as 0.99 for p99)", part)
		case slices.Contains(qs, q):
			return nil, fmt.Errorf("compare: -quantiles: %s given twice", part)
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// compareCode is compare's exit status (see the command's doc): 2 when
// nothing could be judged (no data, a partial run, a baseline of
// failures); 1 when a quantile or the failure rate regressed; else 2
// when a quantile could not be judged (too few samples); else 0.
func compareCode(rep sloassert.BaselineReport) int {
	if rep.Problem != "" || len(rep.Changes) == 0 {
		return exitBad
	}
	verdicts := []sloassert.Verdict{sloassert.Pass}
	if rep.Failures.Regression {
		verdicts = append(verdicts, sloassert.Fail)
	}
	for _, ch := range rep.Changes {
		switch {
		case ch.Regression:
			verdicts = append(verdicts, sloassert.Fail)
		case ch.Problem != "":
			verdicts = append(verdicts, sloassert.Inconclusive)
		}
	}
	return exitCode(verdicts...)
}
