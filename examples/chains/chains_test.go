// Package chains judges an agent task by its measured chain totals. As
// measured on a real endpoint (docs/sources.md): the model 4x faster to
// its first answer token loses a 10-call task; on the preset here, the one
// that wins at the median leaves over a third of its tasks unfinished.
package chains_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// prompt is the measured single-call prompt; its answers were capped at 64
// tokens, as are the chains' calls by default.
const prompt = "Reply with a two-sentence summary of why caching matters for LLM inference."

// run is one model measured two ways: single calls, and 10-call chains in
// which every answer joins the conversation that feeds the next call.
type run struct {
	single *latencytest.Result
	chains *latencytest.ChainResult
}

// measure runs both against a fake preset, in virtual time: 30 chains of
// 10 calls take about 15 minutes of the fake clock and no real wait.
func measure(t *testing.T, preset string) run {
	var r run
	synctest.Test(t, func(t *testing.T) {
		prof, err := fakeprovider.Preset(preset)
		if err != nil {
			t.Fatal(err)
		}
		fake := fakeprovider.New(prof)
		t.Cleanup(fake.Close)
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(fake.Client()), latencytest.WithModel(prof.Model))
		// 200 single calls: enough for the p99.488 that the task target
		// below asks of each call (it needs n >= 196).
		r.single = latencytest.Batch{Requests: 200, Load: latencytest.Load{Prompt: prompt, MaxTokens: 64}}.Measure(t, p)
		r.chains = latencytest.Chain{Chains: 30, Length: 10}.Measure(t, p)
	})
	return r
}

func TestFasterModelLosesTheTask(t *testing.T) {
	maverick, gptOSS := measure(t, "llama-4-maverick"), measure(t, "gpt-oss-120b")

	// 1. Single calls: maverick starts answering about 4x sooner (gpt-oss
	// reasons first, and its first answer token comes after it).
	m, g := maverick.single.FirstAnswer().Quantile(0.5), gptOSS.single.FirstAnswer().Quantile(0.5)
	t.Logf("median first answer token: llama-4-maverick %s, gpt-oss-120b %s", format.Duration(m), format.Duration(g))
	if 3*m > g {
		t.Errorf("maverick's median first answer %v is not several times faster than gpt-oss's %v", m, g)
	}

	// 2. The task, judged on measured chain totals: gpt-oss finishes the
	// median 10-call task in about 21 s, maverick in about 36 s: its slower
	// decode (~44 ms a token against ~28 ms) costs it on every call, and
	// the faster start saves little.
	const median = 25 * time.Second
	sloassert.Check(t, gptOSS.chains, sloassert.ChainQ(0.5, median))
	if rep := sloassert.Evaluate(maverick.chains, sloassert.ChainQ(0.5, median)); rep.OK() {
		t.Errorf("maverick's median chain should miss %v:\n%s", median, rep)
	}

	// 3. The task target: 10 calls done within 100 s for 95% of tasks.
	// Worked back to one call: the p99.488 of a call's total within 10 s,
	// since 0.99488^10 = 0.95. Single-call data can be judged against it.
	task := sloassert.Task{Calls: 10, Budget: 100 * time.Second, TailTasks: 0.05}
	q, perCall := task.PerCall()
	t.Logf("task target: each call's %s within %v", sloassert.QuantileName(q), perCall)

	// maverick meets it, per call and as measured chains. (Its c=1 calls,
	// as the study measured them, reach 8.4 s: a 50 s task budget, 5 s a
	// call, would fail them.)
	sloassert.Check(t, maverick.single, task.Objective(sloassert.Total))
	sloassert.Check(t, maverick.chains, sloassert.ChainQ(1-task.TailTasks, task.Budget))

	// gpt-oss does not: about 2-4% of its calls spend the whole 64-token
	// cap on reasoning and answer nothing, and a task with an empty answer
	// never finished. A failed call counts as infinitely slow, so its
	// p99.488 is a failure, and so is the p95 of its chains.
	if rep := sloassert.Evaluate(gptOSS.single, task.Objective(sloassert.Total)); rep.OK() {
		t.Errorf("gpt-oss's empty answers should break the per-call target:\n%s", rep)
	}
	if rep := sloassert.Evaluate(gptOSS.chains, sloassert.ChainQ(1-task.TailTasks, task.Budget)); rep.OK() {
		t.Errorf("gpt-oss's unfinished chains should break the task target:\n%s", rep)
	}

	// The chain arithmetic: a per-call failure rate f reaches
	// 1-(1-f)^10 of 10-call tasks.
	f := gptOSS.chains.Calls().ErrorRate()
	t.Logf("gpt-oss-120b: %.1f%% of chain calls failed; P(a 10-call task meets one) = %.1f%%; measured: %.1f%% of chains",
		100*f, 100*sloassert.TailProbability(f, 10), 100*gptOSS.chains.ErrorRate())
	t.Logf("a 1%% tail per call reaches %.1f%% of 10-call tasks and %.1f%% of 20-call tasks",
		100*sloassert.TailProbability(0.01, 10), 100*sloassert.TailProbability(0.01, 20))
}
