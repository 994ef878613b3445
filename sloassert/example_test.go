package sloassert_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// printT prints failures: it pins the exact failure text in an example.
type printT struct{}

func (printT) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }

// Too few requests for a p99 is a failure that says how many are needed.
func ExampleCheck() {
	r := &latencytest.Result{Run: latencytest.Run{Planned: 75}}
	for i := range 75 {
		d := time.Duration(100+i) * time.Millisecond
		r.Records = append(r.Records, latencytest.Record{ID: fmt.Sprintf("c1-%04d", i), Concurrency: 1, TTFT: d, Total: 2 * d})
	}
	ok := sloassert.Check(printT{}, r, sloassert.Q(sloassert.TTFT, 0.99, time.Second))
	fmt.Println(ok)
	// Output:
	// result: FAIL
	//   objective             observed  interval 95%  budget    margin    verdict
	//   ttft p99 <= 1000.0ms  173.3ms   [172.0ms, ?]  1000.0ms  +826.7ms  FAIL, inconclusive  (p99 needs n >= 100 (have 75))
	//   distribution       min       p50       p90       p95       p99       max     CV%  p99/p50
	//   ttft           100.0ms   137.0ms   166.6ms   170.3ms   173.3ms   174.0ms      16     1.26
	//   n = 75 measured (75 kept, 0 failed), 0 warm-up discarded, 75 sent of 75 planned; concurrency 1
	//   slowest: c1-0074 174.0ms; c1-0073 173.0ms; c1-0072 172.0ms; c1-0071 171.0ms; c1-0070 170.0ms;
	//   raw records: not recorded
	// false
}

// A 10-call task that must finish in 5 s for 95% of tasks: a per-call
// p99.488 within 500 ms is enough to plan with (sufficient, not required:
// judge the task on measured chain totals).
func ExampleTask_PerCall() {
	q, budget := sloassert.Task{Calls: 10, Budget: 5 * time.Second, TailTasks: 0.05}.PerCall()
	fmt.Printf("%.5f %v\n", q, budget)
	fmt.Printf("%.1f%% of 10-call tasks meet a 1%% tail\n", sloassert.TailProbability(0.01, 10)*100)
	// Output:
	// 0.99488 500ms
	// 9.6% of 10-call tasks meet a 1% tail
}

// One Evaluate judges a result, chains or a sweep: a sweep's report holds
// a report per level, each judged as a result, and passes only when every
// level does.
func ExampleEvaluate_sweep() {
	level := func(c int, ttft time.Duration) *latencytest.Result {
		r := &latencytest.Result{Run: latencytest.Run{Planned: 100}}
		for i := range 100 {
			d := ttft + time.Duration(i)*time.Millisecond
			r.Records = append(r.Records, latencytest.Record{ID: fmt.Sprintf("c%d-%04d", c, i), Concurrency: c, TTFT: d, Total: 2 * d})
		}
		return r
	}
	sr := &latencytest.SweepResult{Levels: []int{1, 8},
		Results: []*latencytest.Result{level(1, 100*time.Millisecond), level(8, 1100*time.Millisecond)}}
	rep := sloassert.Evaluate(sr, sloassert.Q(sloassert.TTFT, 0.5, time.Second))
	for _, l := range rep.Levels {
		fmt.Println(l.Title, l.Outcomes[0].Observed, l.Outcomes[0].Verdict)
	}
	fmt.Println(rep.Title, "passes:", rep.OK())
	// Output:
	// c1 149.5ms pass
	// c8 1149.5ms fail
	// sweep passes: false
}

// inDir prints failures as printT does, with paths relative to dir.
type inDir struct{ dir string }

func (d inDir) Errorf(format string, args ...any) {
	text := strings.ReplaceAll(fmt.Sprintf(format, args...), d.dir+string(filepath.Separator), "")
	fmt.Println(strings.TrimRight(text, "\n"))
}

// Regression compares a run with a baseline file of raw records (kept
// under testdata/ and committed, in a real project; SaveBaseline or the
// -update flag writes it). Here the current run's slowest 5% take twice
// as long as the baseline's: the p99 and the tail regressed, the median
// did not.
func ExampleRegression() {
	run := func(slow time.Duration) *latencytest.Result {
		r := &latencytest.Result{Run: latencytest.Run{Planned: 300}}
		for i := range 300 {
			d := 200*time.Millisecond + time.Duration(i)*time.Millisecond // 200 ms to 499 ms
			if i >= 285 {
				d = slow + time.Duration(i)*time.Millisecond // the slowest 15 requests
			}
			r.Records = append(r.Records, latencytest.Record{ID: fmt.Sprintf("c8-%04d", i), Concurrency: 8, TTFT: d, Total: 2 * d})
		}
		return r
	}
	dir, err := os.MkdirTemp("", "baseline")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ttft.jsonl")
	if err := sloassert.SaveBaseline(path, run(200*time.Millisecond)); err != nil {
		fmt.Println(err)
		return
	}
	ok := sloassert.Regression(inDir{dir}, path, run(800*time.Millisecond), sloassert.Compare{})
	fmt.Println(ok)
	// Output:
	// ttft vs ttft.jsonl: FAIL (regression at p99)
	//            baseline    current    delta  95% CI of ratio   tail        p        verdict
	//   p50       349.5ms    349.5ms    +0.0%  [0.94, 1.07]      79 vs 150   1.0000   ~
	//   p95       484.1ms    514.0ms    +6.2%  [0.98, 2.28]      15 vs 15    0.5000   ~
	//   p99       496.0ms   1096.0ms  +121.0%  [2.19, 2.23]      15 vs 3     0.0010   +121.0% REGRESSION (interval and tail)
	//   tail "a vs j": a successful current requests slower than the baseline's j-th slowest (j: those above its quantile) +max(20%, run gap) and +50.0ms; p: exact exceedance test
	//   failed requests: 0 of 300 current (0%) vs 0 of 300 baseline (0%), +0.0 points, Fisher p = 1.0000: ~
	//   regression: the interval's lower end > 1+max(20%, run gap) and current - baseline > 50.0ms; or tail p < 0.05; or failed requests' p < 0.05 and more than +0.5 points
	//   Mann-Whitney U (current slower?): U = 45112.5, z = 0.05, p = 0.4790, P(current > baseline) = 0.501: no evidence of a whole-distribution shift
	//   n = 300 baseline (0 failed, 1 run) vs 300 current (0 failed); 2000 bootstrap resamples, seed 1
	// false
}
