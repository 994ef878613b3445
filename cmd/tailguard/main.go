// Command tailguard judges latency records in CI, from tailguard's own
// records or any other load tool's per-request output (AIPerf, vllm bench
// serve, GuideLLM, llmperf, k6, vegeta):
//
//	tailguard judge [-format F] [-markdown FILE] [-html FILE] [-svg DIR] slo.yaml [records...]
//	tailguard compare [-format F] [-metric M] [-quantiles 0.5,0.95,0.99] [-mixed] base new
//	tailguard report [-format F] [-svg DIR] [-html FILE] records.jsonl
//	tailguard fit [-format F] [-seed N] [-tail] [-mix M] [-force] records.jsonl > profile.yaml
//
// judge judges the records (the spec's target.records when none are
// given) with the spec's objectives, level by level, and prints the
// one-screen report of each level; -markdown writes the reports as
// Markdown, -html as one self-contained HTML page (sloassert.WriteHTML),
// -svg writes each level's charts into a directory. A spec
// given records on the command line needs no target, and its load is not
// planned: each level's sample is checked against each objective's rule
// when it is judged (slospec.JudgeFile). A spec with an agent section is
// judged on the one tasks.json its run wrote (agent.ReadTasks): the
// agent's task objectives on the tasks' totals, the spec's objectives on
// the tasks' calls.
//
// compare compares a run with a baseline (sloassert's Compare: quantile
// changes with bootstrap intervals, the tail and failure tests). -metric
// defaults to ttft when both files measure it, else total (k6 and vegeta
// time HTTP only: no TTFT); a metric a file's tool did not measure is
// refused. -quantiles lists the quantiles compared, as fractions (default
// 0.5,0.95,0.99; 99 is refused: write 0.99). Two files measured by
// different tools are refused unless -mixed. A row that cannot be judged
// (too few samples) prints n/a.
//
// report prints a distribution: n, p50 p90 p95 p99 max, CV, errors by
// class (-svg writes its CDF charts; -html writes one self-contained HTML
// page of the distributions, charts, errors, slowest requests and
// disclosure, with no verdict: sloassert.Describe). fit writes a fakeprovider profile
// fitted to the records (package fit); -tail adds a generalised Pareto
// tail past the largest TTFT and ITL (fit.WithTail); -mix names the
// records' prompt mix (fit.ParseMix); when fit's own check fails
// (fit.FitReport.Check) it writes nothing and exits 1, unless -force.
//
// -format names the records' format (tailguard, aiperf, vllm, guidellm,
// llmperf, k6, vegeta); by default each file's is detected, and a file
// that fits none or several is refused.
//
// Exit status, one rule for every subcommand:
//
//	0  pass (judge, compare), or done (report, fit)
//	1  an objective failed, or the comparison found a regression, on the
//	   data; fit: the fitted profile failed fit's own check (-force writes it)
//	2  cannot judge: bad input (a file, a spec, a flag or its value), a
//	   partial run, too few samples for an objective or a quantile, a
//	   metric the tool did not measure, two tools' files without -mixed,
//	   or a row left inconclusive where the spec demands a decision
//	   (demonstrate or refute: more data is needed)
//
// When some of what was asked failed on the data and the rest cannot be
// judged, the status is 1: a proven failure is a failure.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fit"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
	"github.com/tailguard/tailguard/slospec"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitPass = 0
	exitFail = 1
	exitBad  = 2
)

const usage = `usage:
  tailguard judge [-format F] [-markdown FILE] [-svg DIR] slo.yaml [records...]
  tailguard compare [-format F] [-metric M] [-quantiles Q,...] [-mixed] base new
  tailguard report [-format F] [-svg DIR] records
  tailguard fit [-format F] [-seed N] [-tail] [-mix M] [-force] records
exit status: 0 pass, 1 failed on the data (an objective, a regression, fit's own check), 2 cannot judge (bad input or flag, partial run, too few samples, a metric not measured)
formats: `

// run runs one subcommand and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage+strings.Join(records.Formats(), ", ")+"\n")
		return exitBad
	}
	var code int
	var err error
	switch args[0] {
	case "judge":
		code, err = judge(args[1:], stdout, stderr)
	case "compare":
		code, err = compare(args[1:], stdout, stderr)
	case "report":
		code, err = report(args[1:], stdout, stderr)
	case "fit":
		code, err = fitCmd(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage+strings.Join(records.Formats(), ", ")+"\n")
		return exitPass
	default:
		err = fmt.Errorf("unknown subcommand %q: want judge, compare, report or fit", args[0])
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	if err != nil {
		fmt.Fprintln(stderr, "tailguard:", err)
		return exitBad
	}
	return code
}

// formatFlag adds -format to a flag set.
func formatFlag(fs *flag.FlagSet) *string {
	return fs.String("format", "", "records format: "+strings.Join(records.Formats(), ", ")+" (default: detected from each file)")
}

// parseFlags parses a subcommand's args and checks its -format (from
// formatFlag).
func parseFlags(fs *flag.FlagSet, args []string, format *string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f := *format; f != "" && !slices.Contains(records.Formats(), f) {
		return fmt.Errorf("-format %q: want one of %s", f, strings.Join(records.Formats(), ", "))
	}
	return nil
}

// load reads one records file of any format as one Result.
func load(format, path string) (*latencytest.Result, error) {
	return records.ImportFile(format, path)
}

func judge(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("tailguard judge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := formatFlag(fs)
	md := fs.String("markdown", "", "write the reports as Markdown to this file")
	html := fs.String("html", "", "write the reports as one self-contained HTML page to this file")
	svg := fs.String("svg", "", "write each level's SVG charts into this directory")
	if err := parseFlags(fs, args, format); err != nil {
		return exitBad, err
	}
	if fs.NArg() < 1 {
		return exitBad, errors.New("judge: give a spec: tailguard judge slo.yaml [records...]")
	}
	reps, err := slospec.JudgeFile(fs.Arg(0), *format, fs.Args()[1:]...)
	if err != nil {
		return exitBad, err
	}
	var verdicts []sloassert.Verdict
	var mdText strings.Builder
	for _, lr := range reps {
		fmt.Fprint(stdout, lr.Report.String())
		for _, u := range lr.Undecided {
			fmt.Fprintf(stdout, "  CANNOT JUDGE %s\n", u)
		}
		fmt.Fprintln(stdout)
		verdicts = append(verdicts, lr.Verdict())
		var charts []string
		if *svg != "" {
			if err := os.MkdirAll(*svg, 0o755); err != nil {
				return exitBad, err
			}
			for _, c := range sloassert.Charts(lr.Result, lr.Report) {
				name := lr.Name + "-" + c.Name + ".svg"
				if err := os.WriteFile(filepath.Join(*svg, name), c.SVG(), 0o644); err != nil {
					return exitBad, err
				}
				charts = append(charts, filepath.Join(*svg, name))
			}
		}
		mdText.WriteString(sloassert.Markdown(lr.Report, charts...))
	}
	if *md != "" {
		if err := os.WriteFile(*md, []byte(mdText.String()), 0o644); err != nil {
			return exitBad, err
		}
	}
	if *html != "" {
		if err := writeJudgedHTML(*html, fs.Arg(0), reps); err != nil {
			return exitBad, err
		}
	}
	return exitCode(verdicts...), nil
}

// exitCode is the exit status of verdicts (see the command's doc): 1 when
// any failed on the data, else 2 when any cannot be judged
// (sloassert.Inconclusive), else 0; 2 for none at all.
func exitCode(verdicts ...sloassert.Verdict) int {
	switch {
	case slices.Contains(verdicts, sloassert.Fail):
		return exitFail
	case len(verdicts) == 0 || slices.Contains(verdicts, sloassert.Inconclusive):
		return exitBad
	}
	return exitPass
}

func report(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("tailguard report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := formatFlag(fs)
	svg := fs.String("svg", "", "write the CDF charts (TTFT, total) into this directory")
	html := fs.String("html", "", "write the distribution as one self-contained HTML page to this file")
	if err := parseFlags(fs, args, format); err != nil {
		return exitBad, err
	}
	if fs.NArg() != 1 {
		return exitBad, errors.New("report: give one records file: tailguard report records.jsonl")
	}
	res, err := load(*format, fs.Arg(0))
	if err != nil {
		return exitBad, err
	}
	writeDistribution(stdout, fs.Arg(0), res)
	if *html != "" {
		rep := sloassert.Describe(res)
		rep.Title = fs.Arg(0)
		if err := writeHTMLPage(*html, func(w io.Writer) error { return sloassert.WriteHTML(w, res, rep) }); err != nil {
			return exitBad, err
		}
		fmt.Fprintf(stdout, "html: %s\n", *html)
	}
	if *svg != "" {
		if err := os.MkdirAll(*svg, 0o755); err != nil {
			return exitBad, err
		}
		rep := sloassert.Report{Title: fs.Arg(0)}
		for _, c := range sloassert.Charts(res, rep) {
			path := filepath.Join(*svg, c.Name+".svg")
			if err := os.WriteFile(path, c.SVG(), 0o644); err != nil {
				return exitBad, err
			}
			fmt.Fprintf(stdout, "chart: %s (%s)\n", path, c.Title)
		}
	}
	return exitPass, nil
}

// writeDistribution prints n, p50 p90 p95 p99 max, CV and the tail ratio
// of each clock, then the errors by class.
func writeDistribution(w io.Writer, path string, res *latencytest.Result) {
	c := res.Counts()
	fmt.Fprintf(w, "%s: %d requests: %d kept, %d discarded (warm-up), %d failed\n", path, c.Sent, c.Kept, c.Discarded, c.Failed)
	if res.Partial {
		fmt.Fprintf(w, "PARTIAL: %s\n", res.PartialReason)
	}
	fmt.Fprintf(w, "%-13s %5s %10s %10s %10s %10s %10s %7s\n", "clock", "n", "p50", "p90", "p95", "p99", "max", "CV%")
	for _, m := range []struct {
		name string
		s    latencytest.Sample
	}{{"ttft", res.TTFT()}, {"first_answer", res.FirstAnswer()}, {"total", res.Total()}, {"itl", res.ITL()}, {"max_gap", res.MaxGap()}} {
		fin := m.s.Finite()
		if len(fin) == 0 {
			fmt.Fprintf(w, "%-13s %5d %s\n", m.name, len(m.s), "not observed")
			continue
		}
		qs := []float64{0.5, 0.9, 0.95, 0.99, 1}
		var cells []string
		for _, q := range qs {
			cells = append(cells, cell(m.s.Quantile(q)))
		}
		fmt.Fprintf(w, "%-13s %5d %10s %10s %10s %10s %10s %7.1f\n", m.name, len(m.s), cells[0], cells[1], cells[2], cells[3], cells[4], fin.CV())
	}
	if ex := res.Summarize().ErrorExamples; len(ex) > 0 {
		fmt.Fprintln(w, "errors by class:")
		for _, e := range ex {
			fmt.Fprintf(w, "  %s\n", e)
		}
	} else {
		fmt.Fprintln(w, "errors by class: none")
	}
	fmt.Fprintf(w, "measured by: %s\n", res.Disclosure.Box(1).Answer)
}

// cell renders a quantile in milliseconds, "failed" when it reaches a
// failed (or unobserved) request.
func cell(d time.Duration) string {
	if d == latencytest.Failed {
		return "failed"
	}
	return fmt.Sprintf("%.1fms", float64(d)/1e6)
}

func fitCmd(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("tailguard fit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := formatFlag(fs)
	seed := fs.Int64("seed", -1, "random seed of the fitted profile, >= 0 (-1: the fit's default)")
	tail := fs.Bool("tail", false, "fit a generalised Pareto tail past the largest TTFT and ITL (fit.WithTail)")
	mix := fs.String("mix", "", `the records' prompt mix: "default" or class=prompt_tokens pairs, "short=200,long=6000" (fit.WithMix)`)
	force := fs.Bool("force", false, "write the profile even when fit's own check fails (exit 0)")
	if err := parseFlags(fs, args, format); err != nil {
		return exitBad, err
	}
	if fs.NArg() != 1 || *seed < -1 {
		return exitBad, errors.New("fit: give one records file (and -seed >= 0 or -1): tailguard fit records.jsonl")
	}
	res, err := load(*format, fs.Arg(0))
	if err != nil {
		return exitBad, err
	}
	opts := []fit.Option{fit.WithTail(*tail)}
	if *seed >= 0 {
		opts = append(opts, fit.WithSeed(uint64(*seed)))
	}
	if *mix != "" {
		m, err := fit.ParseMix(*mix)
		if err != nil {
			return exitBad, err
		}
		opts = append(opts, fit.WithMix(m))
	}
	p, rep, err := fit.Fit(res.Records, opts...)
	if err != nil {
		return exitBad, err
	}
	if c := rep.Check(fit.DefaultCheckAlpha); !c.OK() {
		if !*force {
			fmt.Fprintln(stderr, "tailguard: "+c.String()+" (nothing written; -force writes it anyway)")
			return exitFail, nil
		}
		fmt.Fprintln(stderr, "tailguard: "+c.String()+" (written anyway: -force)")
	}
	if err := fit.WriteProfile(stdout, p, rep); err != nil {
		return exitBad, err
	}
	return exitPass, nil
}

// writeJudgedHTML writes judge's reports to path as one page: a level's
// own page when the spec judged one, else the overview of every level
// followed by each level's objectives.
func writeJudgedHTML(path, spec string, reps []slospec.LevelReport) error {
	return writeHTMLPage(path, func(w io.Writer) error {
		levels := make([]sloassert.Report, len(reps))
		for i, lr := range reps {
			levels[i] = lr.Report
			levels[i].Notes = slices.Clone(lr.Report.Notes)
			for _, u := range lr.Undecided {
				levels[i].Notes = append(levels[i].Notes, "CANNOT JUDGE "+u)
			}
		}
		if len(reps) == 1 {
			rep := levels[0]
			rep.Title = spec + ": " + rep.Title
			return sloassert.WriteHTML(w, reps[0].Result, rep)
		}
		return sloassert.WriteHTML(w, (*latencytest.SweepResult)(nil), sloassert.Report{Title: spec, Levels: levels})
	})
}

// writeHTMLPage writes the page that write renders to path, whole or not
// at all.
func writeHTMLPage(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
