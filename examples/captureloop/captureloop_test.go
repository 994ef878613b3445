// Package captureloop closes the capture loop from another load tool:
// import a vllm bench serve run (one file per --max-concurrency), fit a
// fake to it, serve the fake, and run the same spec against it with the
// same objectives. The README shows what it prints; TestCaptureLoop
// checks that the README's output is what the test produces.
package captureloop_test

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/fit"
	"github.com/tailguard/tailguard/internal/readmetest"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
)

var update = flag.Bool("update", false, "rewrite README.md's output block with what the test produces")

// levels are the concurrencies of the vLLM run (--max-concurrency).
var levels = []int{1, 4}

// spec is the run vLLM made, as a tailguard Batch at concurrency c: 200
// requests, prompts of 50 to 330 tokens, at most 32 tokens out.
func spec(c int) latencytest.Batch {
	return latencytest.Batch{Requests: 200, Concurrency: c, Mix: latencytest.Mix{Seed: 9, Classes: []latencytest.PromptClass{
		{Name: "p50", Weight: 0.25, PromptTokens: 50, MaxTokens: 32},
		{Name: "p120", Weight: 0.25, PromptTokens: 120, MaxTokens: 32},
		{Name: "p200", Weight: 0.25, PromptTokens: 200, MaxTokens: 32},
		{Name: "p330", Weight: 0.25, PromptTokens: 330, MaxTokens: 32},
	}}}
}

// objectives are the SLO, judged on the vLLM run and on the fake alike.
var objectives = []sloassert.Objective{
	sloassert.Q(sloassert.TTFT, 0.50, 3*time.Second),
	sloassert.Q(sloassert.TTFT, 0.95, 5*time.Second),
	sloassert.Q(sloassert.MaxGap, 0.95, 1*time.Second),
	sloassert.MaxErrorRate(0.02),
}

func TestCaptureLoop(t *testing.T) {
	// 1. Import the run, level by level (Record.Concurrency from
	// max_concurrency).
	files := []string{"testdata/vllm-c1.json", "testdata/vllm-c4.json"}
	run, err := records.ImportLevels(records.VLLM, files...)
	if err != nil {
		t.Fatal(err)
	}
	var recs []latencytest.Record
	for _, c := range levels {
		recs = append(recs, run[c].Records...)
	}

	// 2. Fit a profile and write it as the YAML you would commit.
	prof, rep, err := fit.Fit(recs)
	if err != nil {
		t.Fatal(err)
	}
	var yaml bytes.Buffer
	if err := fit.WriteProfile(&yaml, prof, rep); err != nil {
		t.Fatal(err)
	}
	loaded, err := fakeprovider.ParseProfile(yaml.Bytes())
	if err != nil {
		t.Fatal(err)
	}

	// 3. Serve it and run the same spec against it, level by level.
	fake := map[int]*latencytest.Result{}
	for _, c := range levels {
		synctest.Test(t, func(t *testing.T) {
			f := fakeprovider.New(loaded)
			defer f.Close()
			p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(loaded.Model))
			res, err := spec(c).Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			fake[c] = res
		})
	}

	// 4. The same objectives on both: the verdicts must agree.
	var out strings.Builder
	fmt.Fprintf(&out, "imported %s (%s): %d requests at concurrency 1, %d at 4\n",
		strings.Join(files, ", "), "vLLM bench serve", len(run[1].Records), len(run[4].Records))
	pf := prof.Prefill
	fmt.Fprintf(&out, "fitted: prefill %v per (1k tokens)^%g from %d tokens; stall probability %.3g at c=1, %.3g at c=4; http_503 %.3g at c=1, %.3g at c=4\n",
		pf.Per1kTokens.Round(time.Millisecond), cmp.Or(pf.Exponent, 1), pf.FromTokens, prof.Stall.Probability, prof.Load[0].Stall.Probability, prof.Faults.HTTP503, prof.Load[0].Faults.HTTP503)
	for _, c := range levels {
		r, f := longPromptTTFT(run[c]), longPromptTTFT(fake[c])
		fmt.Fprintf(&out, "c=%d: median TTFT of prompts over 300 tokens: vLLM run %v, fitted fake %v\n", c, r.Round(time.Millisecond), f.Round(time.Millisecond))
		if d := float64(f)/float64(r) - 1; d > 0.2 || d < -0.2 {
			t.Errorf("c=%d: long-prompt TTFT %v on the fake, %v in the run: prefill lost", c, f, r)
		}
	}
	fmt.Fprintf(&out, "%-24s %-5s %-26s %s\n", "objective", "level", "vLLM run", "fitted fake")
	for _, c := range levels {
		real, faked := sloassert.Evaluate(run[c], objectives...), sloassert.Evaluate(fake[c], objectives...)
		for i, o := range real.Outcomes {
			f := faked.Outcomes[i]
			fmt.Fprintf(&out, "%-24s %-5s %-26s %s\n", o.Objective, fmt.Sprintf("c=%d", c), o.Observed+" "+string(o.Verdict), f.Observed+" "+string(f.Verdict))
			if o.OK != f.OK {
				t.Errorf("c=%d %s: the vLLM run %s (%s), the fitted fake %s (%s)", c, o.Objective, o.Verdict, o.Observed, f.Verdict, f.Observed)
			}
		}
	}
	got := out.String()
	t.Log("\n" + got)
	if got != readmetest.Output(t, "README.md", got, *update) {
		t.Errorf("README.md's output block is not what the test produces (go test -run TestCaptureLoop -update rewrites it):\n%s", got)
	}
}

// longPromptTTFT is the median TTFT of the successes with prompts over
// 300 tokens.
func longPromptTTFT(r *latencytest.Result) time.Duration {
	var s latencytest.Sample
	for _, rec := range r.Records {
		if rec.OK() && !rec.Warmup && rec.PromptTokens > 300 {
			s = append(s, rec.TTFT)
		}
	}
	return s.Quantile(0.5)
}
