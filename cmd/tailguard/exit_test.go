package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// truncate writes src cut inside its last line: a partial run.
func truncate(t *testing.T, src, dst string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.TrimRight(string(b), "\n"))
	if err := os.WriteFile(dst, b[:len(b)-40], 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestExitRule: the command's one exit rule, row by row: 0 pass, 1 an
// objective failed (or a regression) on the data, 2 cannot judge.
func TestExitRule(t *testing.T) {
	dir := t.TempDir()
	k6 := filepath.Join(fixtures, "k6-real.json.gz")       // 40 requests, total only
	vegeta := filepath.Join(fixtures, "vegeta-real.jsonl") // 60 requests, total only
	partial := truncate(t, vegeta, filepath.Join(dir, "partial.jsonl"))
	writeVLLM(t, filepath.Join(dir, "run.json"), 200, 0.2)
	writeVLLM(t, filepath.Join(dir, "few.json"), 40, 0.2)
	spec := func(name, text string) string { return writeFile(t, filepath.Join(dir, name), text) }
	noTarget := spec("notarget.yaml", "objectives:\n  ttft: {p99: 200ms}\n")
	// a live target whose planned load (75 requests) cannot support p99:
	// with records given, the records' sample is what counts
	preset := spec("preset.yaml", "target: {preset: mistral-3-14b}\nobjectives:\n  ttft: {p99: 200ms}\n")
	p99 := spec("p99.yaml", "objectives:\n  total: {p99: 10s}\n")
	p99Over := spec("p99over.yaml", "objectives:\n  ttft: {p99: 100ms}\n")
	ratio := spec("ratio.yaml", "objectives:\n  total: {tail_ratio: 5}\n")
	p50 := spec("p50.yaml", "objectives:\n  total: {p50: 10s}\n")
	both := spec("both.yaml", "objectives:\n  ttft: {p50: 100ms}\n  total: {p99: 10s}\n")
	ttft100 := spec("ttft100.yaml", "objectives:\n  ttft: {p50: 100ms}\n")
	ttft := spec("ttft.yaml", "objectives:\n  ttft: {p50: 1s}\n")
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		want    string
		notWant string
	}{
		{"judge: files, spec without target", []string{"judge", noTarget, filepath.Join(dir, "run.json")}, 0, "PASS", ""},
		{"judge: files, the planned load is not checked", []string{"judge", preset, filepath.Join(dir, "run.json")}, 0, "PASS", "load gives"},
		{"judge: no files, no target", []string{"judge", noTarget}, 2, "target: missing", ""},
		{"judge: fails on the data", []string{"judge", ttft100, filepath.Join(dir, "run.json")}, 1, "FAIL", "CANNOT JUDGE"},
		{"judge: too few samples for p99", []string{"judge", p99, filepath.Join(dir, "few.json")}, 2,
			"CANNOT JUDGE total_p99: p99 needs n >= 100 (the records hold 40 at c8)", "load gives"},
		// 40 TTFTs of 200ms: the lower bound of p99 is 200ms, over 100ms on any n
		{"judge: too few samples, failure proven", []string{"judge", p99Over, filepath.Join(dir, "few.json")}, 1, "FAIL", "CANNOT JUDGE"},
		{"judge: tail ratio on too few samples", []string{"judge", ratio, k6}, 2, "CANNOT JUDGE total_tail_ratio: p99/p50 needs n >= 100 (the records hold 40 at all)", ""},
		{"judge: a failure outweighs what cannot be judged", []string{"judge", both, filepath.Join(dir, "few.json")}, 1, "CANNOT JUDGE total_p99", ""},
		{"judge: a partial run", []string{"judge", p50, partial}, 2, "PARTIAL", ""},
		{"judge: a metric the tool did not measure", []string{"judge", ttft, k6}, 2, "k6 records do not measure ttft", ""},
		{"judge: a bad flag", []string{"judge", "-records", p50, k6}, 2, "flag provided but not defined", ""},
		{"judge: a bad flag value", []string{"judge", "-format", "jmeter", p50, k6}, 2, "jmeter", ""},
		{"judge: pass", []string{"judge", p50, k6}, 0, "PASS", ""},

		{"compare: k6 defaults to total", []string{"compare", "-quantiles", "0.5,0.95", k6, k6}, 0, "metric: total (k6 records do not measure ttft", "baseline of failures"},
		{"compare: a file against itself, p99 cannot be judged", []string{"compare", k6, k6}, 2, "n/a", "<0.0001"},
		{"compare: says what it cannot judge", []string{"compare", k6, k6}, 2, "CANNOT JUDGE p99 (exit status 2)", ""},
		{"compare: -quantiles", []string{"compare", "-quantiles", "0.5,0.9", vegeta, vegeta}, 0, "p90", "p95"},
		{"compare: -quantiles in percent", []string{"compare", "-quantiles", "50,99", vegeta, vegeta}, 2, "50 is a percent, not a fraction: write 0.5 for p50", ""},
		{"compare: -quantiles not numbers", []string{"compare", "-quantiles", "p99", vegeta, vegeta}, 2, `"p99" is not a number`, ""},
		{"compare: -metric not measured", []string{"compare", "-metric", "ttft", vegeta, vegeta}, 2, "vegeta records do not measure ttft (they measure total)", ""},
		{"compare: -metric unknown", []string{"compare", "-metric", "latency", vegeta, vegeta}, 2, `-metric "latency"`, ""},
		{"compare: -max-increase negative", []string{"compare", "-max-increase", "-0.1", vegeta, vegeta}, 2, "-max-increase -0.1", ""},
		{"compare: a bad flag", []string{"compare", "-quantile", "0.5", vegeta, vegeta}, 2, "flag provided but not defined: -quantile", ""},
		{"compare: two tools", []string{"compare", "-quantiles", "0.5", k6, vegeta}, 2, "give -mixed", ""},
		{"compare: two tools, -mixed", []string{"compare", "-mixed", "-quantiles", "0.5", k6, vegeta}, 0, "mixed: the baseline holds k6 records, the current run vegeta records", ""},
		{"compare: a partial run", []string{"compare", "-quantiles", "0.5", vegeta, partial}, 2, "cut short", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCmd(tc.args...)
			if code != tc.code || !strings.Contains(out+errs, tc.want) || tc.notWant != "" && strings.Contains(out+errs, tc.notWant) {
				t.Errorf("exit %d (want %d); output lacks %q or holds %q:\n%s%s", code, tc.code, tc.want, tc.notWant, out, errs)
			}
		})
	}
}

// TestCompareRegressionExits1: a regression on the data is 1, whatever
// the metric.
func TestCompareRegressionExits1(t *testing.T) {
	dir := t.TempDir()
	writeVLLM(t, filepath.Join(dir, "base.json"), 300, 0.2)
	writeVLLM(t, filepath.Join(dir, "slow.json"), 300, 0.4)
	for _, m := range []string{"ttft", "total"} {
		if code, out, errs := runCmd("compare", "-metric", m, filepath.Join(dir, "base.json"), filepath.Join(dir, "slow.json")); code != 1 || !strings.Contains(out, "REGRESSION") {
			t.Errorf("-metric %s: exit %d, want 1\n%s%s", m, code, out, errs)
		}
	}
}
